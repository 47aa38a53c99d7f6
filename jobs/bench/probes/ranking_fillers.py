"""Probe: does seating two close entrants with weak others help the adaptive schedule's stop
at four seats (issue 55 point 5)? Eight entrants 40 Elo apart, games that record the winner
(the Plackett-Luce first place, as ``python -m jobs.bench.ranking`` plays them).

    python jobs/bench/probes/ranking_fillers.py

Part 1, the top pair's statistic by its table: the seed design three times plus 60 boards of
one table seating entrants 0 and 1, over ``--reps`` tournaments: the mean of the pairwise fit's
difference ``d`` (truth 40), its spread (``var``) and the mean sandwich variance the stop reads
(``sandwich``, Elo^2), ``z2 = d^2 / sandwich`` (what the stop's likelihood ratios grow with),
and the winner model's variance of the same difference at the truth (``winner_var``: what an
estimator of that model would have).

Part 2, fixed designs under the stop: the seed design, then rounds of 25% more boards cycling
through one fixed list of tables, the stop (confidence 0.95, delta 20) looked at after every
round: mean games to resolve over ``--reps`` tournaments.
"""
import argparse
import json

import numpy as np

from cluster.analysis.ranking_stop import PairwiseTally, fit_ranking, ranking_status
from cluster.analysis.ratings import ELO_PER_NATURAL
from cluster.spec.adaptive import covering_tables
from cluster.spec.tournament import rotation_seatings, round_robin_tables
from jobs.bench.ranking import KnownStrengthGame

N, SEATS = 8, (0, 1, 2, 3)


def play(game, tables, first_board, rng, tally):
    tables = np.asarray(tables)
    seating = np.asarray(rotation_seatings(tables, SEATS)).reshape(-1, 4)
    boards = np.repeat(np.arange(len(tables)) + first_board, 4)
    tally.add_games(boards, seating, game.play(seating, boards, rng), SEATS)
    return len(seating)


def winner_variance(truth, tables):
    theta = truth / ELO_PER_NATURAL
    information = np.eye(N) * 1e-6
    for table in tables:
        table = list(table)
        p = np.exp(theta[table]) / np.exp(theta[table]).sum()
        information[np.ix_(table, table)] += 4 * (np.diag(p) - np.outer(p, p)) / ELO_PER_NATURAL ** 2
    c = np.zeros(N)
    c[0], c[1] = 1.0, -1.0
    return float(c @ np.linalg.solve(information, c))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=150)
    parser.add_argument("--design-reps", type=int, default=25)
    args = parser.parse_args()
    truth = np.arange(N)[::-1] * 40.0
    truth -= truth.mean()
    game = KnownStrengthGame(truth, 4, seat_elo=30.0)
    seed = covering_tables(N, 4)
    rng = np.random.default_rng(0)
    for table in [(0, 1, 2, 3), (0, 1, 6, 7), (0, 1, 2, 7), (0, 1, 5, 6)]:
        d, sandwich = [], []
        for _ in range(args.reps):
            tally = PairwiseTally(N)
            play(game, seed * 3 + [table] * 60, 0, rng, tally)
            fit = fit_ranking(tally)
            d.append(fit.ratings[0] - fit.ratings[1])
            c = fit.covariance
            sandwich.append(c[0, 0] + c[1, 1] - 2 * c[0, 1])
        print(json.dumps({"table": table, "d": round(float(np.mean(d)), 1), "var": round(float(np.var(d)), 0),
                          "sandwich": round(float(np.mean(sandwich)), 0),
                          "z2": round(float(np.mean(d) ** 2 / np.mean(sandwich)), 2),
                          "winner_var": round(winner_variance(truth, seed * 3 + [table] * 60), 0)}), flush=True)
    designs = {
        "neighbours": [(i, i + 1, i + 2, i + 3) for i in range(5)],
        "pair+weakest": [(0, 1, 6, 7), (1, 2, 6, 7), (2, 3, 6, 7), (3, 4, 6, 7), (4, 5, 6, 7), (0, 1, 5, 6),
                         (1, 2, 5, 7)],
        "pairs+weak, two pairs a table": [(0, 1, 6, 7), (2, 3, 6, 7), (1, 2, 5, 7), (3, 4, 5, 7), (4, 5, 6, 7),
                                          (0, 1, 4, 5), (2, 3, 4, 5)],
        "round robin": [tuple(t) for t in round_robin_tables(N, 4)],
    }
    for name, tables in designs.items():
        games_to_resolve = []
        for t in range(args.design_reps):
            rng, tally, start, boards, games = np.random.default_rng(t), PairwiseTally(N), None, 0, 0
            plan = list(seed)
            while True:
                games += play(game, plan, boards, rng, tally)
                boards += len(plan)
                fit = fit_ranking(tally, start)
                start = fit.optimum
                if ranking_status(fit, 0.05, 20.0).resolved or games > 20_000:
                    break
                plan = [tables[(boards + j) % len(tables)] for j in range(max(4, int(0.25 * boards)))]
            games_to_resolve.append(games)
        print(json.dumps({"design": name, "games_mean": float(np.mean(games_to_resolve)),
                          "p10_50_90": [float(x) for x in np.percentile(games_to_resolve, [10, 50, 90])]}),
              flush=True)


if __name__ == "__main__":
    main()
