"""Probe: process CPU time to plan a tournament of about 100,000 games, and to rate one.

Builds two tournament specs of Pommerman FFA with ``random`` entrants (no game is
played): a round robin of 30 entrants at 4-seat tables (27,405 tables, 109,620
games in one round) and of 100 entrants in 2-player... Pommerman has four seats, so
the second is a gauntlet of 4 candidates against 96 (4 x C(96, 3) would be too many;
``--field`` sets it). Each plan is timed ``--passes`` times (the median pass), with
``time.process_time``. Then the leaderboard (1,000 bootstrap resamples) of 1,120
simulated FFA games among 8 entrants, as the shipped tournament has.

    python -m jobs.bench.probes.tournament_plan_cpu
    python -m jobs.cli bench cluster --against main --script jobs/bench/probes/tournament_plan_cpu.py

Prints one JSON object: ``plan_<name>_s``, ``games_<name>``, ``leaderboard_s``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import numpy as np
import pandas as pd

from cluster.spec.plan import plan_study
from cluster.spec.build import build_spec


def tournament(entrants: int, design: dict) -> object:
    return build_spec({"study": {"name": "plan-probe", "seed": 1}, "game": {"name": "pommerman", "mode": "ffa"},
                       "budget": {"iterations": 10}, "design": design,
                       "lineup": [{"agent": "random", "label": f"E{i}"} for i in range(entrants)],
                       "tracking": {"enabled": False}}, check_files=False)


def simulated_rows(entrants: int = 8, rounds: int = 4, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strengths = np.linspace(0.0, 2.0, entrants)
    rows, game = [], 0
    for r in range(rounds):
        for board, table in enumerate(itertools.combinations(range(entrants), 4)):
            for rotation in range(4):
                seats = table[rotation:] + table[:rotation]
                best = int(np.argmax([strengths[e] + rng.gumbel() for e in seats]))
                rows += [{"study_id": "x", "game_index": game, "board_seed": board * rounds + r, "seat": s,
                          "team": s, "label": f"E{e}", "result": "win" if s == best else "loss"}
                         for s, e in enumerate(seats)]
                game += 1
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--field", type=int, default=36, help="field of the gauntlet (4 candidates)")
    args = parser.parse_args(argv)
    specs = {"round_robin_30": tournament(30, {"format": "round_robin"}),
             "gauntlet_4x": tournament(4 + args.field, {"format": "gauntlet",
                                                        "candidates": [f"E{i}" for i in range(4)]})}
    out = {}
    for name, spec in specs.items():
        times = []
        for _ in range(args.passes):
            t0 = time.process_time()
            plan = plan_study(spec)
            times.append(time.process_time() - t0)
        out[f"plan_{name}_s"] = statistics.median(times)
        out[f"games_{name}"] = sum(len(s.games) for s in plan)
    rows = simulated_rows()
    from cluster.analysis.leaderboard import leaderboard

    t0 = time.process_time()
    leaderboard(rows, seed=0, bootstrap=1000)
    out["leaderboard_s"] = time.process_time() - t0
    out["leaderboard_games"] = int(rows["game_index"].nunique())
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
