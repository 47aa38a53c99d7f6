"""``arena bench scotland_yard``: engine and search speed on one core.

* ``moves_per_s``: random legal moves per second (whole games, new deal each);
* ``mrx_iters_per_s``: MCTS iterations per second of Mr X at the start of a game;
* ``seeker_iters_per_s``: MCTS iterations per second of the first detective
  (determinization by Location Categorization, general table, shared tree, r = 0.25)
  at the start of a game and after a few rounds.

Each figure also comes per CPU second (``*_per_cpu_s``: process time), which is
what matters on a shared machine; wall-clock figures are lower bounds there.
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from games.rng import make_rng, rng_integer
from games.scotland_yard.kernels import (
    M_TO_MOVE, NUM_ACTIONS, copy_into, is_terminal, legal_actions_into, step,
)

from agents.api import Budget
from agents.episodes import agent_players, begin_game, play
from agents.search import depth_summary


@nb.njit(cache=True)
def random_moves(start, scratch, games, rng):
    """Play ``games`` random games from ``start``; returns the number of moves."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    moves = 0
    for _ in range(games):
        copy_into(scratch, start)
        while not is_terminal(scratch):
            n = legal_actions_into(scratch, scratch.meta[M_TO_MOVE], mask)
            k = rng_integer(rng, n)
            for a in range(NUM_ACTIONS):
                if mask[a]:
                    if k == 0:
                        step(scratch, a)
                        break
                    k -= 1
            moves += 1
    return moves


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def bench_search(iterations: int = 20_000, decisions: int = 3, quick: bool = False) -> dict:
    """The figures of the module docstring (JSON-able dict)."""
    from agents.registry import make_agent
    from games.registry import make_game

    if quick:
        iterations, decisions = 5_000, 2
    game = make_game("scotland_yard")
    game.reset(2024)
    from games.scotland_yard import kernels as K

    scratch = K.empty_state(game.board)
    random_moves(game.state, scratch, 2, make_rng(0))  # compile
    moves, wall, cpu = _timed(lambda: random_moves(game.state, scratch, 200 if quick else 2000, make_rng(1)))
    out = {"moves_per_s": moves / wall, "moves_per_cpu_s": moves / cpu}

    budget = Budget(iterations=iterations)
    mrx = make_agent("sy_mcts_mrx", {}, budget, game.config)
    seekers = make_agent("sy_mcts_seekers", {"determinization": "lc_general"}, budget, game.config)
    tables = {"lc_general_n": np.array([120.0, 300, 400, 300, 200]),
              "lc_general_a": np.array([25.0, 200, 215, 115, 40]),
              "lc_detailed_n": np.ones((32, 5)), "lc_detailed_a": np.ones((32, 5))}
    seekers.load_learned_state(tables)
    mrx.begin_game(0, np.random.SeedSequence(1))
    seekers.begin_game(1, np.random.SeedSequence(2))
    warm = make_game("scotland_yard")
    warm.reset(7)
    mrx_small = make_agent("sy_mcts_mrx", {}, Budget(iterations=50), game.config)
    seek_small = make_agent("sy_mcts_seekers", {"determinization": "lc_general"}, Budget(iterations=50),
                            game.config)
    mrx_small.begin_game(0, np.random.SeedSequence(0))
    seek_small.begin_game(1, np.random.SeedSequence(0))
    mrx_small.act(warm.observation(0))  # compile outside the timing
    warm.step([mrx_small.act(warm.observation(0)), 0])
    seek_small.act(warm.observation(1))

    depths = {}

    def run(agent, seat, obs, key):
        total = 0
        for _ in range(decisions):
            agent.act(obs)
            total += agent.total_iterations
            agent.total_iterations = 0
        depths[key] = depth_summary(agent.search_tree)
        return total

    n, wall, cpu = _timed(lambda: run(mrx, 0, game.observation(0), "mrx"))
    out["mrx_iters_per_s"] = n / wall
    out["mrx_iters_per_cpu_s"] = n / cpu
    game.step([int(mrx.act(game.observation(0))), 0])
    n, wall, cpu = _timed(lambda: run(seekers, 1, game.observation(1), "seeker"))
    out["seeker_iters_per_s"] = n / wall
    out["seeker_iters_per_cpu_s"] = n / cpu
    # later in the game: after 5 rounds of greedy play (shorter playouts)
    later = make_game("scotland_yard")
    later.reset(2024)
    greedy = [make_agent("sy_greedy_mrx", {}, budget, later.config),
              make_agent("sy_greedy_seekers", {}, budget, later.config)]
    begin_game(greedy, [np.random.SeedSequence(3), np.random.SeedSequence(4)])
    play(later, agent_players(greedy), until=lambda game: game.round >= 6)
    if not later.done:  # on to the seekers' turn
        play(later, agent_players(greedy), until=lambda game: list(game.acting_players()) == [1])
        n, wall, cpu = _timed(lambda: run(seekers, 1, later.observation(1), "seeker_round6"))
        out["seeker_iters_per_s_round6"] = n / wall
        out["seeker_iters_per_cpu_s_round6"] = n / cpu
    out["iterations_per_decision"] = iterations
    # what one iteration contains (issue 22 point 6; compare the reference notes on Scotland Yard)
    for key, (mean, deepest) in depths.items():
        out[f"{key}_tree_depth_mean"] = round(mean, 2)
        out[f"{key}_tree_depth_max"] = deepest
    out["iteration"] = {
        "mrx": "copy the root; descend by UCB over every ply (Mr X's filtered moves and each "
               "detective's), expand one move; epsilon-greedy playout to the end of the game "
               "(24 rounds or a capture; round-1 position: up to 24 x 6 moves); back up per player",
        "seeker": "copy the observation and place Mr X on one possible location (LC general "
                  "roulette: one determinization per iteration); descend by UCB over the "
                  "detectives' moves (shared tree), expand one; epsilon-greedy playout of both "
                  "sides to the end of the game; back up with coalition reduction r = 0.25",
        "tree_depth": "plies of the tree part, mean / max over the nodes of the last decision",
    }
    out["note"] = "shared machine: wall-clock figures are lower bounds"
    return out


def bench(options) -> dict:
    """``arena bench scotland_yard``: :func:`bench_search` (``options.quick``: 5,000
    iterations per decision, 2 decisions)."""
    return bench_search(quick=options.quick)
