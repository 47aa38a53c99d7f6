"""``arena bench pettingzoo``: what the PettingZoo face costs per step, against the
kernel step, for each built-in game (one process, one core).

Each game first records random games (uniform over the legal actions, seeds
0, 1, ...; default options) until ``steps`` game steps are recorded; every
figure then replays exactly those games, so all of them do the same work:

* ``<game>.kernel_step_us``: ``Game.apply(joint)``, the kernel step behind the
  contract's thinnest Python (no checks);
* ``<game>.game_step_us``: ``Game.step(joint)``, Arena's checked step;
* ``<game>.parallel_step_us``: ``ParallelEnv.step(actions)``, which returns every
  agent's observation (the game's ``observation(seat)`` and its action mask);
* ``<game>.aec_step_us``: one game step of the AEC loop ``for agent in
  agent_iter(): last(); step(action)`` (one agent turn in the turn-based games,
  four in Pommerman), observations included;
* ``<game>.aec_step_no_observe_us``: the same loop with ``last(observe=False)``:
  the AEC bookkeeping alone;
* ``<game>.*_overhead``: each of these divided by ``kernel_step_us``.

Times are CPU microseconds (``time.process_time``: the steadiest figure on a
shared machine) per game step, resets excluded; each is the median of ``runs``
(3) runs, the runs interleaving the five loops. ``loadavg_before`` /
``loadavg_after`` give the machine's load (1, 5, 15 minutes): on a shared
machine the times are upper bounds.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from games.registry import make_game

from agents.episodes import play, random_players
from agents.pettingzoo import ArenaAECEnv, ArenaParallelEnv

GAMES = ("pommerman", "scotland_yard", "birds", "xcom")
LOOPS = ("kernel_step", "game_step", "parallel_step", "aec_step", "aec_step_no_observe")


def record_games(name: str, steps: int) -> list[tuple[int, list[list[int]]]]:
    """Random games of ``name`` (seed, joint action per step) until ``steps`` steps."""
    game = make_game(name)
    games, total, seed = [], 0, 0
    while total < steps:
        game.reset(seed)
        joints = []

        def keep(game, joint):
            joints.append(joint)
            assert game.step_count == len(joints), "a step must advance step_count by one"

        play(game, random_players(np.random.default_rng(seed), game.num_players), after_step=keep)
        games.append((seed, joints))
        total += len(joints)
        seed += 1
    return games


def _kernel_step(name, games) -> float:
    game = make_game(name)
    elapsed = 0.0
    for seed, joints in games:
        game.reset(seed)
        arrays = [np.asarray(j, dtype=np.int64) for j in joints]
        t0 = time.process_time()
        for joint in arrays:
            game.apply(joint)
        elapsed += time.process_time() - t0
    return elapsed


def _game_step(name, games) -> float:
    game = make_game(name)
    elapsed = 0.0
    for seed, joints in games:
        game.reset(seed)
        t0 = time.process_time()
        for joint in joints:
            game.step(joint)
        elapsed += time.process_time() - t0
    return elapsed


def _parallel_step(name, games) -> float:
    env = ArenaParallelEnv(name)
    agents = env.possible_agents
    elapsed = 0.0
    for seed, joints in games:
        env.reset(seed=seed)
        dicts = [dict(zip(agents, joint)) for joint in joints]
        t0 = time.process_time()
        for actions in dicts:
            env.step(actions)
        elapsed += time.process_time() - t0
    return elapsed


def _aec_loop(name, games, observe: bool) -> float:
    env = ArenaAECEnv(name)
    game = env.game
    seat = env.face.seat
    elapsed = 0.0
    for seed, joints in games:
        env.reset(seed=seed)
        t0 = time.process_time()
        for agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last(observe)
            env.step(None if terminated or truncated else joints[game.step_count][seat[agent]])
        elapsed += time.process_time() - t0
    return elapsed


def _time(loop: str, name: str, games) -> float:
    if loop == "kernel_step":
        return _kernel_step(name, games)
    if loop == "game_step":
        return _game_step(name, games)
    if loop == "parallel_step":
        return _parallel_step(name, games)
    return _aec_loop(name, games, observe=loop == "aec_step")


def bench_pettingzoo(quick: bool = False, runs: int = 3) -> dict:
    """The figures of the module docstring for every built-in game."""
    result: dict = {"loadavg_before": [round(x, 2) for x in os.getloadavg()], "runs": runs}
    steps = 300 if quick else 1500
    for name in GAMES:
        games = record_games(name, steps)
        total_steps = sum(len(j) for _, j in games)
        for loop in LOOPS:  # warm-up: compiles and caches everything once
            _time(loop, name, games[:1])
        samples = {loop: [] for loop in LOOPS}
        for _ in range(runs):
            for loop in LOOPS:
                samples[loop].append(_time(loop, name, games) / total_steps * 1e6)
        result[f"{name}.steps"] = total_steps
        medians = {loop: statistics.median(samples[loop]) for loop in LOOPS}
        for loop in LOOPS:
            result[f"{name}.{loop}_us"] = round(medians[loop], 2)
        for loop in LOOPS[1:]:
            result[f"{name}.{loop}_overhead"] = round(medians[loop] / medians["kernel_step"], 2)
    result["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def bench(options) -> dict:
    """``arena bench pettingzoo``: :func:`bench_pettingzoo` (``options.quick``: about
    300 steps per game instead of 1,500)."""
    return bench_pettingzoo(quick=options.quick)
