"""Probe for the paired speed check: process CPU time per XCOM search decision at a
fixed iteration budget, on the same positions, and a fingerprint of the actions chosen.

    python -m jobs.cli bench xcom --against main --script jobs/bench/probes/xcom_search_cpu.py

Uses only the long-stable API (``games.xcom.Xcom``, ``agents.registry.make_agent``,
``agents.api.Budget``) and the shared game loop (``agents.episodes``), so it runs
against any revision that has them (the paired check runs this file in both trees).
Positions: every observation of the side to move in ``--games`` rounds of two random
players on ``--board`` (``positions_fingerprint`` shows whether both trees produced the
same ones). Each agent (``--agents``, short names as in ``arena bench xcom``) plays
seat 0's or seat 1's part at every position, ``--passes`` times, with ``--iterations``
iterations (and ``--params``); prints one JSON object:
``ms_per_decision_<agent>`` (CPU milliseconds per decision), ``<agent>_us_per_iteration``
and ``<agent>_actions_fingerprint`` (a hash of every action chosen, in order: equal in
both trees when the search plays the same moves).
"""
import argparse
import json
import time

import numpy as np

from agents.api import Budget
from agents.episodes import begin_game, play
from agents.registry import make_agent
from games.xcom import Xcom, XcomConfig

AGENTS = {"mcts": "xcom_mcts", "mcts_td": "xcom_mcts_td", "mf_fa": "xcom_mf_fa",
          "convae": "xcom_convae_fa", "mcts_reward": "xcom_mcts_reward"}


def positions(config, games):
    """[(side to move, observation)] of ``games`` rounds of two random players."""
    out = []

    def seen(agent):
        def choose(game, seat):
            obs = game.observation(seat)
            out.append((seat, obs))
            return agent.act(obs)
        return choose

    for g in range(games):
        game = Xcom(config)
        game.reset(g)
        players = [make_agent("random", {}, Budget(iterations=1), config) for _ in range(2)]
        begin_game(players, [np.random.SeedSequence([g, s]) for s in range(2)])
        play(game, [seen(agent) for agent in players])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--board", default="large")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--agents", default="mcts,mcts_td,mf_fa,convae")
    p.add_argument("--params", default="{}", help='agent parameters (JSON), e.g. '
                   '\'{"move_encoding": "two_level"}\'')
    a = p.parse_args()
    params = json.loads(a.params)
    config = XcomConfig(board=a.board)
    obs = positions(config, a.games)
    fingerprint = int(sum(int(o.board.astype(np.int64).sum() + 7 * o.units.astype(np.int64).sum())
                          * (i + 1) for i, (_, o) in enumerate(obs)) % 1_000_003)
    out = {"board": a.board, "positions": len(obs), "positions_fingerprint": fingerprint,
           "iterations": a.iterations, "passes": a.passes, "params": a.params}
    for short in a.agents.split(","):
        seats = [make_agent(AGENTS[short], params, Budget(iterations=a.iterations), config)
                 for _ in range(2)]
        for s, agent in enumerate(seats):
            agent.begin_game(s, np.random.SeedSequence([1, s]))
        seats[obs[0][0]].decide(obs[0][1])  # compile or load the cache
        decisions, iterations, cpu, actions = 0, 0, 0.0, 0
        for _ in range(a.passes):
            for side, o in obs:
                c0 = time.process_time()
                action, done = seats[side].decide(o)
                cpu += time.process_time() - c0
                decisions += 1
                iterations += int(done)
                actions = (actions * 1_000_003 + int(action) + 1) % (1 << 61)
        out[f"ms_per_decision_{short}"] = round(1e3 * cpu / decisions, 4)
        out[f"{short}_us_per_iteration"] = round(1e6 * cpu / max(iterations, 1), 3)
        out[f"{short}_actions_fingerprint"] = actions
    print(json.dumps(out))


if __name__ == "__main__":
    main()
