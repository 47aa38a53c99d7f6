"""Probe for the paired speed check: process CPU time per ``Game.step`` (Arena's
checked step) and per ``Game.observation`` of every built-in game, replaying the
same random games, for changes to the game wrappers (``games/<game>/__init__.py``,
``games/api.py``) rather than to their kernels.

    python -m jobs.cli bench xcom --against main --script jobs/bench/probes/game_step_cpu.py

Uses only the long-stable API (``games.registry.make_game`` and the ``Game``
methods) and the shared game loop (``agents.episodes``), so it runs against any
revision that has them. Random games: uniform over
the legal actions of the acting players, seeds 0, 1, ... until ``--steps`` steps
per game; ``<game>.fingerprint`` (the sum of the final states' fingerprints)
shows whether both trees played the same games. Prints one JSON object:
``<game>.step_ns`` and ``<game>.observation_ns`` (CPU nanoseconds, ``--passes``
replays, the median pass).
"""
import argparse
import json
import statistics
import time

import numpy as np

from agents.episodes import play, random_players
from games.registry import make_game

GAMES = ("pommerman", "scotland_yard", "birds", "xcom")


def record(name, steps):
    game = make_game(name)
    games, total, seed = [], 0, 0
    while total < steps:
        game.reset(seed)
        joints = []
        play(game, random_players(np.random.default_rng(seed), game.num_players),
             after_step=lambda game, joint: joints.append(joint))
        games.append((seed, joints, game.fingerprint()))
        total += len(joints)
        seed += 1
    return games, total


def replay(name, games):
    """(CPU seconds in step, CPU seconds in observation) over ``games``."""
    game = make_game(name)
    step_cpu = observe_cpu = 0.0
    for seed, joints, fingerprint in games:
        game.reset(seed)
        for joint in joints:
            c0 = time.process_time()
            game.step(joint)
            c1 = time.process_time()
            for p in range(game.num_players):
                game.observation(p)
            observe_cpu += time.process_time() - c1
            step_cpu += c1 - c0
        assert game.fingerprint() == fingerprint
    return step_cpu, observe_cpu


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--ruleset", default=None, help="ignored (the paired check passes it for pommerman)")
    a = p.parse_args()
    out = {"steps_per_game": a.steps, "passes": a.passes}
    for name in GAMES:
        games, total = record(name, a.steps)
        replay(name, games[:1])  # warm
        passes = [replay(name, games) for _ in range(a.passes)]
        players = make_game(name).num_players
        out[f"{name}.fingerprint"] = sum(f for _, _, f in games) % 1_000_003
        out[f"{name}.step_ns"] = round(1e9 * statistics.median(s for s, _ in passes) / total, 1)
        out[f"{name}.observation_ns"] = round(
            1e9 * statistics.median(o for _, o in passes) / (total * players), 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
