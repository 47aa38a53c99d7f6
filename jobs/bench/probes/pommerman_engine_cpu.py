"""Probe for the paired speed check: process CPU time per forward-model tick of
random play (``jobs.bench.pommerman.engine.random_playouts``, the loop behind
``arena bench pommerman``'s ``ticks_per_s``) and per state copy, for a fixed
amount of work, so that the figure holds on a machine busy with other work.

    python -m jobs.cli bench pommerman --ruleset java --against main --script jobs/bench/probes/pommerman_engine_cpu.py

Prints one JSON object: ``ticks`` (the same in both trees when the rules and the
random stream are unchanged), ``ns_per_tick`` and ``ns_per_copy`` (CPU time),
and ``ticks_per_cpu_s`` / ``copies_per_cpu_s``.
"""
import argparse
import json
import time

import numba as nb
import numpy as np

from games.pommerman import PommermanConfig, generate
from jobs.bench.pommerman.engine import random_playouts, repeated_copies
from games.pommerman.kernels import copy_state
from games.rng import make_rng


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ruleset", default="canonical")
    p.add_argument("--mode", default="ffa")
    p.add_argument("--games", type=int, default=40_000)
    p.add_argument("--copies", type=int, default=400_000)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    config = PommermanConfig(mode=a.mode, ruleset=a.ruleset)
    boards = nb.typed.List([generate(config, np.random.SeedSequence(0, spawn_key=(k,))) for k in range(16)])
    scratch = copy_state(boards[0])
    random_playouts(boards, scratch, make_rng(0), 2)  # compile / load the cache
    repeated_copies(boards[0], scratch, 10)
    tick_ns, copy_ns, ticks = [], [], 0
    for _ in range(a.repeats):
        t0 = time.process_time_ns()
        ticks = random_playouts(boards, scratch, make_rng(0), a.games)
        tick_ns.append((time.process_time_ns() - t0) / ticks)
        t0 = time.process_time_ns()
        repeated_copies(boards[0], scratch, a.copies)
        copy_ns.append((time.process_time_ns() - t0) / a.copies)
    t, c = float(np.median(tick_ns)), float(np.median(copy_ns))
    print(json.dumps({"ruleset": a.ruleset, "mode": a.mode, "ticks": int(ticks), "ns_per_tick": t,
                      "ns_per_copy": c, "ticks_per_cpu_s": 1e9 / t, "copies_per_cpu_s": 1e9 / c}))


if __name__ == "__main__":
    main()
