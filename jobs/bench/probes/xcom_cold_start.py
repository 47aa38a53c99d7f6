"""Probe for the paired check: the first decision of an XCOM agent on a fresh numba cache.

    python -m jobs.cli bench xcom --against main --rounds 1 --script jobs/bench/probes/xcom_cold_start.py

Points ``ARENA_CACHE_DIR`` at a new temporary directory before ``games`` is imported
(so nothing is cached), then times building the game and ``--agent`` and its first
decision on ``--board`` at 100 iterations: ``cold_first_decision_s`` (wall) and
``cold_first_decision_cpu_s`` (process CPU, the steadier on a shared machine); then a
second decision from the cache just filled, in a fresh process
(``warm_first_decision_s``). Prints one JSON object.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

_CHILD = """
import json, time
c0, t0 = time.process_time(), time.perf_counter()
import numpy as np
from agents.api import Budget
from agents.registry import make_agent
from games.registry import make_game
game = make_game("xcom", board={board!r})
game.reset(0)
agent = make_agent({agent!r}, {{}}, Budget(iterations=100), game.config)
agent.begin_game(0, np.random.SeedSequence(0))
agent.act(game.observation(0))
print(json.dumps({{"s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}}))
"""


def first_decision(cache_dir, board, agent):
    env = dict(os.environ, ARENA_CACHE_DIR=cache_dir)
    for key in ("NUMBA_CACHE_DIR", "ARENA_NUMBA_CACHE_AUTO"):
        env.pop(key, None)
    out = subprocess.run([sys.executable, "-c", _CHILD.format(board=board, agent=agent)],
                         env=env, check=True, capture_output=True, text=True, cwd=os.getcwd())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agent", default="xcom_mcts")
    p.add_argument("--board", default="large")
    a = p.parse_args()
    cache_dir = tempfile.mkdtemp(prefix="xcom-cold-")
    try:
        cold = first_decision(cache_dir, a.board, a.agent)
        warm = first_decision(cache_dir, a.board, a.agent)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    print(json.dumps({"agent": a.agent, "board": a.board,
                      "cold_first_decision_s": round(cold["s"], 2),
                      "cold_first_decision_cpu_s": round(cold["cpu_s"], 2),
                      "warm_first_decision_s": round(warm["s"], 2),
                      "warm_first_decision_cpu_s": round(warm["cpu_s"], 2)}))


if __name__ == "__main__":
    main()
