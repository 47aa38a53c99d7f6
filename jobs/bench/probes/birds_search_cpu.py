"""Probe for the paired speed check: process CPU time per bird-game MCTS
iteration at a fixed iteration budget, on the same positions.

    python -m jobs.cli bench birds --against main --script jobs/bench/probes/birds_search_cpu.py

Uses only the long-stable API (``games.birds.Birds``, ``agents.registry.make_agent``,
``agents.api.Budget``) and the shared game loop (``agents.episodes``), so it runs
against any revision that has them. Positions: every
observation of the player to move in ``--games`` games of two random players
(``positions_fingerprint`` shows whether both trees produced the same ones). Each
variant (the three of ``arena bench birds``) searches every position ``--passes``
times with ``--iterations`` iterations; prints one JSON object
(``*_us_per_iteration``: CPU microseconds per iteration; ``*_iters_per_cpu_s``).
"""
import argparse
import json
import time

import numpy as np

from agents.api import Budget
from agents.episodes import begin_game, play
from agents.registry import make_agent
from games.birds import Birds, BirdsConfig

VARIANTS = {
    "mcts": {"opponent": "random"},
    "mcts_single_det": {"chance_nodes": False, "opponent": "random"},
    "mcts_policy_opp": {},
}


def positions(config, games):
    """Every observation of the player to move in ``games`` games of two random players."""
    out = []

    def seen(agent):
        def choose(game, seat):
            obs = game.observation(seat)
            out.append(obs)
            return agent.act(obs)
        return choose

    for g in range(games):
        game = Birds(config)
        game.reset(g)
        players = [make_agent("random", {}, Budget(iterations=1), config) for _ in range(2)]
        begin_game(players, [np.random.SeedSequence([g, s]) for s in range(2)])
        play(game, [seen(agent) for agent in players])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=5000)
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--passes", type=int, default=2)
    a = p.parse_args()
    config = BirdsConfig()
    obs = positions(config, a.games)
    out = {"positions": len(obs), "iterations": a.iterations, "passes": a.passes,
           "positions_fingerprint": int(sum(int(np.asarray(o.cards).sum() if hasattr(o, "cards") else 0)
                                            * (i + 1) for i, o in enumerate(obs)) % 1_000_003)}
    for name, params in VARIANTS.items():
        agent = make_agent("birds_mcts", params, Budget(iterations=a.iterations), config)
        agent.begin_game(0, np.random.SeedSequence(1))
        agent.decide(obs[0])  # compile or load the cache
        total, cpu = 0, 0.0
        for _ in range(a.passes):
            for o in obs:
                c0 = time.process_time()
                _, iterations = agent.decide(o)
                cpu += time.process_time() - c0
                total += int(iterations)
        out[f"{name}_us_per_iteration"] = round(1e6 * cpu / total, 4)
        out[f"{name}_iters_per_cpu_s"] = round(total / cpu)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
