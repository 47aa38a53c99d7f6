"""Probe: how many rounds a round-robin FFA tournament needs, by simulation.

Simulates the shipped design (every 4 of the entrants at a table, each table with its four
seat rotations on a board of its own, ``--rounds`` rounds) with games whose outcome follows a
known model: the winner drawn by Plackett-Luce from assumed Elo strengths (Gumbel noise), the
other seats tie as losers (as a Pommerman FFA game in which the others died). For each of
``--reps`` simulated tournaments it computes the leaderboard
(:func:`cluster.analysis.leaderboard.leaderboard`) and counts, for every pair of entrants
adjacent in the true order, how often their 95% rank intervals separate them.

    python -m jobs.bench.probes.tournament_sizing --rounds 8 --reps 12
    python -m jobs.bench.probes.tournament_sizing --elo A=100,B=60,C=0,D=0,E=-50 --rounds 4

Prints one JSON object: ``games``, ``mean_half_width_elo`` and per adjacent pair the share of
tournaments whose rank intervals separated it.
"""
from __future__ import annotations

import argparse
import itertools
import json

import numpy as np
import pandas as pd

from cluster.analysis.leaderboard import leaderboard

#: Assumed strengths of the shipped tournament's entrants (Elo): its smoke run's six (60 games)
#: and guesses for MCTS-d8 and RHEA-m0.1.
SHIPPED_ELO = "MCTS-d12=180,FEMCTS=174,MCTS-d8=140,Rule-based=95,RHEA-m0.5=7,RHEA-m0.1=-30,SimplePlayer=-219,OSLA=-237"


def simulate(names, strength, rounds, seats, rng) -> pd.DataFrame:
    rows, game, tables = [], 0, list(itertools.combinations(range(len(names)), seats))
    for r in range(rounds):
        for t, table in enumerate(tables):
            for rotation in range(seats):
                at = table[rotation:] + table[:rotation]
                best = int(np.argmax(strength[list(at)] + rng.gumbel(size=seats)))
                rows += [{"study_id": "sim", "game_index": game, "board_seed": t * rounds + r, "seat": s,
                          "team": s, "label": names[e], "result": "win" if s == best else "loss"}
                         for s, e in enumerate(at)]
                game += 1
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elo", default=SHIPPED_ELO, help="entrants and their assumed Elo, NAME=ELO,...")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--reps", type=int, default=12, help="simulated tournaments")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--bootstrap", type=int, default=300)
    args = parser.parse_args(argv)
    elo = {name: float(value) for name, value in (item.split("=") for item in args.elo.split(","))}
    names = list(elo)
    strength = np.array([elo[n] for n in names]) * np.log(10) / 400
    order = sorted(names, key=lambda n: -elo[n])
    separated = {pair: 0 for pair in zip(order, order[1:])}
    halves, games = [], 0
    for rep in range(args.reps):
        rows = simulate(names, strength, args.rounds, args.seats, np.random.default_rng(rep))
        games = int(rows["game_index"].nunique())
        table = leaderboard(rows, seed=rep, bootstrap=args.bootstrap).table
        halves.append(float(((table["hi"] - table["lo"]) / 2).mean()))
        for a, b in separated:
            separated[a, b] += int(table.loc[a, "rank_hi"] < table.loc[b, "rank_lo"])
    print(json.dumps({"rounds": args.rounds, "games": games, "reps": args.reps,
                      "mean_half_width_elo": float(np.mean(halves)),
                      "separated": {f"{a} > {b} ({elo[a] - elo[b]:g} Elo)": n / args.reps
                                    for (a, b), n in separated.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
