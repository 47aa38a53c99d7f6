"""Probe: the CPU a tournament will take, from a sample of its tables played here.

Plays rotation 0 of ``--tables`` tables spread evenly over a tournament's table
order (so every entrant appears), one game after another in this process
(``cluster.run.play.play_game``, no Ray), and measures each game's process CPU
time. The estimate of the whole plan is the mean CPU per game times its games,
with a 95% t-interval over the sampled games (``scipy.stats``). The first game
compiles the agents' kernels into the numba cache: run once to warm the cache,
or read ``first_game_s`` apart (it is left out of the estimate).

    python -m jobs.bench.probes.tournament_cpu jobs/pommerman_ffa_tournament.toml --tables 8

Prints one JSON object: ``games_sampled``, ``cpu_s_per_game`` (mean), its 95%
interval, ``total_games``, ``estimate_cpu_hours`` (and interval) and every sampled
game's table, entrants, length and CPU seconds.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy import stats

from cluster.run.play import build_agents, play_game
from cluster.spec.tournament import plan_tournament
from jobs.spec import load_spec


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", help="a tournament spec (design.format round_robin or gauntlet)")
    parser.add_argument("--tables", type=int, default=8, help="tables to sample (rotation 0 of each)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="spec override")
    args = parser.parse_args(argv)
    spec = load_spec(args.spec, overrides=args.set)
    if not spec.design.tournament:
        parser.error(f"{args.spec}: not a tournament (design.format is 'lineup')")
    plan = plan_tournament(spec)
    tables = plan.rounds[0].series
    by_table = {}
    for series in tables:
        by_table.setdefault(series.games[0].board_seed, series.games[0])
    boards = sorted(by_table)
    picks = [boards[int(i)] for i in np.linspace(0, len(boards) - 1, min(args.tables, len(boards)))]
    labels = [seat.label for seat in spec.lineup]
    sampled = []
    first_game_s = None
    for board in dict.fromkeys(picks):
        task = by_table[board]
        agents = build_agents(spec)
        t0 = time.process_time()
        rows, _ = play_game(spec, task, agents)
        seconds = time.process_time() - t0
        if first_game_s is None:
            first_game_s = seconds  # includes compiling or loading the kernels
            continue
        sampled.append({"board": board, "entrants": [labels[i] for i in task.seat_lineup],
                        "length": rows[0]["length"], "results": [r["result"] for r in rows], "cpu_s": seconds})
    cpu = np.array([s["cpu_s"] for s in sampled])
    mean = float(cpu.mean()) if len(cpu) else float("nan")
    half = float(stats.t.ppf(0.975, len(cpu) - 1) * cpu.std(ddof=1) / np.sqrt(len(cpu))) if len(cpu) > 1 else float("nan")
    total = plan.total_games
    print(json.dumps({"spec": args.spec, "games_sampled": len(sampled), "first_game_s": first_game_s,
                      "cpu_s_per_game": mean, "cpu_s_per_game_ci95": [mean - half, mean + half],
                      "total_games": total, "estimate_cpu_hours": mean * total / 3600,
                      "estimate_cpu_hours_ci95": [(mean - half) * total / 3600, (mean + half) * total / 3600],
                      "games": sampled}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
