"""Probe for the paired speed check: process CPU time per MCTS / RHEA iteration
at a fixed iteration budget, on the same positions.

    python -m jobs.cli bench pommerman --against main --script jobs/bench/probes/pommerman_search_cpu.py

Uses only the long-stable API (``games.pommerman.Pommerman``,
``agents.registry.make_agent``, ``agents.api.Budget``) and the shared game loop
(``agents.episodes``), so it runs against any revision that has them (the paired
check runs this file in both trees). Positions:
seat 0's observations every ``--stride`` ticks of ``--games`` games of four
rule-based players; ``positions_fingerprint`` shows whether both trees produced
the same ones. Each agent searches every position ``--passes`` times with
``--iterations`` iterations; prints one JSON object (``*_us_per_iteration``:
CPU microseconds per iteration; ``*_iters_per_40ms_cpu``: 40,000 / that).
"""
import argparse
import json
import time

import numpy as np

from agents.api import Budget
from agents.episodes import agent_players, begin_game, play
from agents.registry import make_agent
from games.pommerman import Pommerman, PommermanConfig


def positions(config, games, stride, seed=0):
    """Seat 0's observations, every ``stride``-th tick, of ``games`` games of four
    rule-based players (until seat 0 dies or the game ends)."""
    out = []

    def keep(game):
        if game.step_count % stride == 0:
            out.append(game.observation(0))

    for g in range(games):
        game = Pommerman(config)
        seeds = np.random.SeedSequence([seed, g]).spawn(5)
        game.reset(seeds[0])
        players = [make_agent("rule_based", {}, Budget(iterations=1), config) for _ in range(4)]
        begin_game(players, seeds[1:])
        play(game, agent_players(players), until=lambda game: not game.is_alive(0), before_step=keep)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ruleset", default="canonical")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--stride", type=int, default=10)
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--agents", default="mcts,rhea")
    a = p.parse_args()
    config = PommermanConfig(ruleset=a.ruleset)
    obs = positions(config, a.games, a.stride)
    fingerprint = int(sum(int(o.board.sum()) * (i + 1) for i, o in enumerate(obs)) % 1_000_003)
    out = {"ruleset": a.ruleset, "positions": len(obs), "positions_fingerprint": fingerprint,
           "iterations": a.iterations, "passes": a.passes}
    for name in a.agents.split(","):
        agent = make_agent(name, {}, Budget(iterations=a.iterations), config)
        agent.begin_game(0, np.random.SeedSequence(1))
        agent.decide(obs[0])  # compile or load the cache
        small = make_agent(name, {}, Budget(iterations=1), config)
        small.begin_game(0, np.random.SeedSequence(2))
        small.decide(obs[0])
        cpu, iters = 0.0, 0
        for _ in range(a.passes):
            for o in obs:
                t0 = time.process_time()
                _, n = agent.decide(o)
                cpu += time.process_time() - t0
                iters += n
        t0 = time.process_time()
        for _ in range(a.passes):
            for o in obs:
                small.decide(o)
        one = time.process_time() - t0
        out[f"{name}_us_per_iteration"] = 1e6 * cpu / iters
        out[f"{name}_iters_per_40ms_cpu"] = 0.040 / (cpu / iters)
        out[f"{name}_us_per_1_iteration_decision"] = 1e6 * one / (a.passes * len(obs))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
