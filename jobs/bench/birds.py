"""Speed of the bird game and its MCTS (``arena bench birds --json``).

* ``games_per_s``: random-play games (numba, uniform random legal moves; 20
  turns a game) per second;
* ``mcts_iters_per_s``: iterations per second of ``birds_mcts`` (chance nodes,
  re-determinized every iteration, random opponent model and rollouts: the search as
  it was before the policy became the default opponent model, so the figure stays
  comparable across revisions), over the 20 decisions of games against a random
  player, ``iterations`` per decision; ``mcts_single_det_iters_per_s`` the same for
  the single-determinization baseline; ``mcts_policy_opp_iters_per_s`` for the
  default agent (the shipped policy as opponent model).

Each figure is given per second of this process's CPU time (``*_per_s``: what
one core does, robust to a shared machine) and per wall-clock second
(``*_per_wall_s``). One process, one thread.
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from agents.api import Budget
from agents.episodes import agent_player, play
from agents.registry import make_agent
from agents.search import depth_summary
from games.rng import make_rng
from games.birds import Birds, BirdsConfig
from games.birds.kernels import M_TO_MOVE, deal, empty_state, is_terminal, step

from agents.birds.features import random_action


@nb.njit(cache=True)
def random_games(state, start_food, games, rng):
    """Play ``games`` uniformly random games from fresh deals; returns the turns played."""
    turns = 0
    for _ in range(games):
        deal(state, start_food, rng)
        while not is_terminal(state):
            step(state, random_action(state, state.meta[M_TO_MOVE], rng))
            turns += 1
    return turns


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    result = fn()
    return result, time.process_time() - c0, time.perf_counter() - w0


def bench_birds(seconds: float = 3.0, quick: bool = False, iterations: int = 2000) -> dict:
    config = BirdsConfig()
    state = empty_state(config.cards().copy())
    rng = make_rng(0)
    random_games(state, 3, 10, rng)  # compile / load the cache
    games = 20_000
    while True:
        _, cpu, wall = _timed(lambda: random_games(state, 3, games, rng))
        if cpu >= (0.3 if quick else seconds / 2) or games >= 10_000_000:
            break
        games *= 4
    result = {"games_per_s": round(games / cpu), "games_per_wall_s": round(games / wall)}
    n_games = 1 if quick else 3
    variants = (("mcts", {"opponent": "random"}),
                ("mcts_single_det", {"chance_nodes": False, "opponent": "random"}),
                ("mcts_policy_opp", {}))
    for key, params in variants:
        agent = make_agent("birds_mcts", params, Budget(iterations=iterations), config)
        opponent = make_agent("random", {}, Budget(iterations=1), config)
        game = Birds(config)
        warm = Birds(config)
        warm.reset(0)
        agent.begin_game(0, np.random.SeedSequence(0))
        agent.act(warm.observation(0))  # compile / load the cache
        total_iterations, cpu, wall = 0, 0.0, 0.0
        depth_means, depth_maxes = [], []
        for g in range(n_games):
            game.reset(g)
            seat = g % 2
            agent.begin_game(seat, np.random.SeedSequence([g, 0]))
            opponent.begin_game(1 - seat, np.random.SeedSequence([g, 1]))

            def timed(game, p):
                nonlocal cpu, wall
                obs = game.observation(p)
                action, c, w = _timed(lambda: agent.act(obs))
                cpu += c
                wall += w
                mean, deepest = depth_summary(agent.tree)
                depth_means.append(mean)
                depth_maxes.append(deepest)
                return action

            players = [timed, agent_player(opponent)] if seat == 0 else [agent_player(opponent), timed]
            play(game, players)
            total_iterations += agent.total_iterations
        result[f"{key}_iters_per_s"] = round(total_iterations / cpu)
        result[f"{key}_iters_per_wall_s"] = round(total_iterations / wall)
        result[f"{key}_decisions"] = n_games * 10
        result[f"{key}_tree_depth_mean"] = round(float(np.median(depth_means)), 2)
        result[f"{key}_tree_depth_max"] = int(np.median(depth_maxes))
    result["mcts_iterations_per_decision"] = iterations
    result["iteration"] = (
        "re-sample the hidden cards (chance_nodes: every iteration; single_det: once per decision); "
        "descend by UCB1 at decision nodes and by the unseen-card frequencies at chance nodes (deck "
        "draws, tray refills), the opponent's turns played by its model; expand one node; random "
        "rollout to the end of the game (10 turns each: at most 20 turns from the start); back up "
        "1 / 0.5 / 0. tree_depth: tree nodes (decision + chance) below the root, median over decisions "
        "of the mean / max")
    result["note"] = "per_s: per CPU-second of one process; per_wall_s: wall clock (shared machine)"
    return result


def bench(options) -> dict:
    """``arena bench birds``: :func:`bench_birds` (``options.seconds`` of random play,
    ``options.quick``: shorter)."""
    return bench_birds(seconds=options.seconds, quick=options.quick)
