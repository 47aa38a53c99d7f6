"""The adaptive tournament schedule on entrants of known strength: games and ranking accuracy
against the full round robin, and the error rate of the orders it claims.

    python -m jobs.bench.ranking                              # N = 8, 16 x 2, 4 players, 200 each
    python -m jobs.bench.ranking --entrants 8 --players 2 --tournaments 20 --json
    python -m jobs.bench.ranking --markdown out.jsonl        # the table of jobs/TOURNAMENTS.md

No real game is played: a *known-strength game* decides each game from the seated entrants'
strengths, Bradley-Terry for two players (the winner is ``i`` with chance ``pi_i / (pi_i +
pi_j)``) and Plackett-Luce for more (the winner is the first of a Plackett-Luce order: ``i``
with chance ``pi_i / sum pi``; the others lose, as Pommerman's free-for-all records it), with
``pi = 10^(elo / 400)`` times a seat advantage (``--seat-elo``: the first seat that much
stronger, cancelled by the seat rotations) and an optional board effect (``--board-sd``: every
entrant's strength on a board shifted by a normal draw shared by the board's rotations, so the
games of a board are correlated as real boards make them). The schedule is the driver's own
(:class:`cluster.analysis.adaptive.AdaptiveSchedule`: the same seed design, looks, stop and
table choice, fed game results as the driver feeds it rows); the round robin is the complete
design of :mod:`cluster.spec.tournament` (every set of ``players`` entrants a table, every seat
rotation on one board), played round after round and rated with the leaderboard's
Bradley-Terry-Davidson fit over pairwise results. At more than two players the schedule reads
the winner model (:mod:`cluster.analysis.winner_stop`), so the round robin is also rated by the
winner model (``round_robin_winner``: the same games), to compare the designs under one model.

Figures per setting, over ``--tournaments`` simulated tournaments (true strengths evenly spaced
``--gap`` Elo apart, a fresh draw of games each time):

* ``adaptive``: mean and percentiles of its games, how often it ended resolved or at the cap,
  ``wrong_pairs`` (the share of pairs of entrants at least delta apart that its final ratings
  put in the wrong order), ``exact`` (tournaments with no such pair wrong), and its claims:
  ``ordered_claims_wrong`` (adjacent pairs it reported ordered that are in the wrong order) and
  ``within_claims_wrong`` (pairs reported within delta that are delta or more apart), each over
  the claims made, against the nominal ``1 - confidence``.
* ``round_robin``: the same accuracy after 1, 2, ... full rounds, and ``rounds_to_match``: the
  fewest full rounds whose ``wrong_pairs`` is at or below the adaptive schedule's, with their
  games (``games_to_match``); ``games_ratio`` is the adaptive schedule's mean games over those.
* ``fitted_match``: the same from a curve fitted over every round count (:func:`fitted_match`),
  with a 95% interval over resampled tournaments and an upper bound that holds also when the
  schedule ordered nothing wrongly: the figures of jobs/TOURNAMENTS.md.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from cluster.analysis.adaptive import CAP, RESOLVED, AdaptiveSchedule
from cluster.analysis.ranking_stop import ORDERED, WITHIN, PairwiseTally
from cluster.analysis.ratings import ELO_PER_NATURAL, fit_davidson
from cluster.analysis.winner_stop import WinnerTally, fit_winner, winner_model_applies
from cluster.spec.tournament import rotation_seatings, round_robin_tables

__all__ = ["KnownStrengthGame", "simulate_adaptive", "simulate_round_robin", "ranking_bench", "bench", "main"]


@dataclass(frozen=True)
class RankingSettings:
    """What :func:`cluster.analysis.adaptive.AdaptiveSchedule` reads of a ranking stop."""

    confidence: float = 0.95
    delta_elo: float = 20.0
    tables_per_round: int | None = None
    round_growth: float = 0.25
    seed_rounds: int = 1


class KnownStrengthGame:
    """Games decided by a known model (see the module docstring); ``strengths`` in Elo."""

    def __init__(self, strengths, players: int, seat_elo: float = 0.0, board_sd: float = 0.0):
        self.strengths = np.asarray(strengths, dtype=np.float64)
        self.players = int(players)
        self.seat = np.zeros(self.players)
        self.seat[0] = seat_elo
        self.board_sd = float(board_sd)

    def play(self, seating: np.ndarray, boards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Ranks (2 win, 0 loss) of every seat of every game (``seating``: games x seats)."""
        seating = np.asarray(seating, dtype=np.int64)
        elo = self.strengths[seating] + self.seat[None, :]
        if self.board_sd > 0:
            unique, inverse = np.unique(boards, return_inverse=True)
            shift = rng.normal(0.0, self.board_sd, size=(len(unique), len(self.strengths)))
            elo = elo + shift[inverse[:, None], seating]
        log_pi = elo / ELO_PER_NATURAL
        winner = np.argmax(log_pi + rng.gumbel(size=log_pi.shape), axis=1)
        ranks = np.zeros(seating.shape, dtype=np.int64)
        ranks[np.arange(len(seating)), winner] = 2
        return ranks


def simulate_adaptive(game: KnownStrengthGame, ranking: RankingSettings, max_games: int, seed: int,
                      rng: np.random.Generator) -> AdaptiveSchedule:
    """One adaptive tournament of ``game``'s entrants, to its decision: the driver's schedule,
    fed every game of a round as the driver would feed it rows."""
    schedule = AdaptiveSchedule(len(game.strengths), tuple(range(game.players)), ranking, seed, by_game=False,
                                max_games=max_games)
    series = schedule.series()
    while series:
        tasks = [g for s in series for g in s.games]
        ranks = game.play(np.array([t.seat_lineup for t in tasks]), np.array([t.board_seed for t in tasks]), rng)
        for task, rank in zip(tasks, ranks):
            schedule.record(task.game_index, rank)
        series = schedule.advance()
    return schedule


def simulate_round_robin(game: KnownStrengthGame, rounds: Sequence[int], rng: np.random.Generator,
                         winner: bool = False) -> list[np.ndarray] | tuple[list[np.ndarray], list[np.ndarray]]:
    """The ratings (Elo) after each count of full rounds in ``rounds`` (increasing) of the round
    robin, by the leaderboard's fit (Bradley-Terry-Davidson over pairwise results); with
    ``winner``, also by the winner model's (:func:`cluster.analysis.winner_stop.fit_winner`) of
    the same games: (pairwise, winner)."""
    n, players = len(game.strengths), game.players
    tables = np.asarray(round_robin_tables(n, players), dtype=np.int64)
    seating = np.asarray(rotation_seatings(tables, tuple(range(players))), dtype=np.int64).reshape(-1, players)
    tally = PairwiseTally(n)
    winners = WinnerTally(n, players)
    out, out_winner, start, start_winner = [], [], None, None
    for r in range(max(rounds)):
        boards = np.repeat(np.arange(len(tables)) + r * len(tables), players)
        ranks = game.play(seating, boards, rng)
        tally.add_games(boards, seating, ranks, tuple(range(players)))
        if winner:
            winners.add_games(boards, seating, ranks)
        if r + 1 in rounds:
            wins, ties = tally.counts()
            ratings, _, start = fit_davidson(wins, ties, start=start)
            out.append(ratings - ratings.mean())
            if winner:
                fit = fit_winner(winners, start=start_winner)
                start_winner = fit.optimum
                out_winner.append(fit.ratings)
    return (out, out_winner) if winner else out


def round_grid(most: int, ratio: float = 1.15) -> list[int]:
    """Round counts 1, 2, ... up to ``most``, each about ``ratio`` times the one before."""
    grid = [1]
    while grid[-1] < most:
        grid.append(min(most, max(grid[-1] + 1, int(round(grid[-1] * ratio)))))
    return grid


def far_gaps(truth: np.ndarray, delta: float) -> np.ndarray:
    """The true differences (Elo) of the pairs at least ``delta`` apart."""
    dt = truth[:, None] - truth[None, :]
    return np.abs(dt[np.triu(np.abs(dt) >= delta, k=1)])


def wrong_pairs(truth: np.ndarray, ratings: np.ndarray, delta: float) -> tuple[int, int]:
    """(pairs at least ``delta`` apart in ``truth`` that ``ratings`` order wrongly, such pairs)."""
    dt = truth[:, None] - truth[None, :]
    dr = ratings[:, None] - ratings[None, :]
    far = np.triu(np.abs(dt) >= delta, k=1)
    return int((far & (np.sign(dt) != np.sign(dr))).sum()), int(far.sum())


def ranking_bench(entrants: int, players: int, tournaments: int, gap: float, confidence: float, delta: float,
                  max_games: int | None, rr_rounds: int, seat_elo: float, board_sd: float, seed: int,
                  tables_per_round: int | None = None, round_growth: float = 0.25) -> dict:
    """The figures of one setting (see the module docstring)."""
    truth = (np.arange(entrants)[::-1] * gap).astype(float)
    truth -= truth.mean()
    game = KnownStrengthGame(truth, players, seat_elo=seat_elo, board_sd=board_sd)
    rr_round_games = len(round_robin_tables(entrants, players)) * players
    cap = max_games or DEFAULT_MAX_GAMES
    grid = round_grid(rr_rounds or max(1, -(-cap // rr_round_games)))
    ranking = RankingSettings(confidence=confidence, delta_elo=delta, tables_per_round=tables_per_round,
                              round_growth=round_growth)
    # a free-for-all: the schedule reads the winner model; the round robin is rated both ways
    winner = winner_model_applies(tuple(range(players)))
    root = np.random.SeedSequence(seed)
    # per tournament: the schedule's games and wrong pairs, the round robin's wrong pairs per round count
    games, decisions, adaptive_wrongs, rr_wrongs, far_pairs = [], [], [], [], 0
    claims = {ORDERED: [0, 0], WITHIN: [0, 0]}
    rr_wrong_winner = np.zeros(len(grid))
    rr_exact_winner = np.zeros(len(grid))
    t0 = time.process_time()
    for t in range(tournaments):
        adaptive_rng, rr_rng = (np.random.default_rng(s) for s in root.spawn(2))
        schedule = simulate_adaptive(game, ranking, cap, seed=seed + t, rng=adaptive_rng)
        games.append(schedule.games_planned)
        decisions.append(schedule.decision)
        wrong, far = wrong_pairs(truth, schedule.fit.ratings, delta)
        adaptive_wrongs.append(wrong)
        far_pairs += far
        for pair in schedule.status.pairs:
            if pair.state == ORDERED:
                claims[ORDERED][0] += 1
                claims[ORDERED][1] += truth[pair.upper] < truth[pair.lower]
            elif pair.state == WITHIN:
                claims[WITHIN][0] += 1
                claims[WITHIN][1] += abs(truth[pair.upper] - truth[pair.lower]) >= delta
        rated = simulate_round_robin(game, grid, rr_rng, winner=winner)
        rr_wrongs.append([wrong_pairs(truth, ratings, delta)[0] for ratings in (rated[0] if winner else rated)])
        for r, ratings in enumerate(rated[1] if winner else []):
            wrong, _ = wrong_pairs(truth, ratings, delta)
            rr_wrong_winner[r] += wrong
            rr_exact_winner[r] += wrong == 0
    seconds = time.process_time() - t0
    games, adaptive_wrongs, rr_wrongs = np.asarray(games), np.asarray(adaptive_wrongs), np.asarray(rr_wrongs)
    adaptive_wrong, exact = int(adaptive_wrongs.sum()), int((adaptive_wrongs == 0).sum())
    rr_wrong, rr_exact = rr_wrongs.sum(axis=0), (rr_wrongs == 0).sum(axis=0)
    adaptive_rate = adaptive_wrong / max(far_pairs, 1)
    rr_rate = rr_wrong / max(far_pairs, 1)

    def to_match(rate):
        match = np.flatnonzero(rate <= adaptive_rate)
        rounds = grid[int(match[0])] if len(match) else None
        return rounds, (rounds * rr_round_games if rounds else None)

    rounds_to_match, games_to_match = to_match(rr_rate)
    rr_rate_winner = rr_wrong_winner / max(far_pairs, 1)
    winner_rounds, winner_games = to_match(rr_rate_winner)
    return {
        "entrants": entrants, "players": players, "tournaments": tournaments, "gap_elo": gap,
        "confidence": confidence, "delta_elo": delta, "max_games": cap, "seat_elo": seat_elo, "board_sd": board_sd,
        "tables_per_round": tables_per_round, "round_growth": ranking.round_growth,
        "adaptive_model": "winner" if winner else "pairwise",
        "adaptive": {
            "games_mean": float(games.mean()), "games_p10": float(np.percentile(games, 10)),
            "games_p50": float(np.percentile(games, 50)), "games_p90": float(np.percentile(games, 90)),
            "resolved": decisions.count(RESOLVED) / tournaments, "cap": decisions.count(CAP) / tournaments,
            "wrong_pairs": adaptive_rate, "exact": exact / tournaments,
            "ordered_claims": claims[ORDERED][0], "ordered_claims_wrong": claims[ORDERED][1] / max(claims[ORDERED][0], 1),
            "within_claims": claims[WITHIN][0], "within_claims_wrong": claims[WITHIN][1] / max(claims[WITHIN][0], 1),
            "nominal": 1.0 - confidence},
        "round_robin": {"round_games": rr_round_games, "rounds": grid, "wrong_pairs": [float(x) for x in rr_rate],
                        "exact": [float(x) / tournaments for x in rr_exact]},
        "rounds_to_match": rounds_to_match, "games_to_match": games_to_match,
        "games_ratio": float(games.mean() / games_to_match) if games_to_match else None,
        "round_robin_winner": ({"wrong_pairs": [float(x) for x in rr_rate_winner],
                                "exact": [float(x) / tournaments for x in rr_exact_winner],
                                "rounds_to_match": winner_rounds, "games_to_match": winner_games,
                                "games_ratio": float(games.mean() / winner_games) if winner_games else None}
                               if winner else None),
        "fitted_match": fitted_match(games, adaptive_wrongs, rr_wrongs, grid, far_gaps(truth, delta),
                                     rr_round_games, seed=seed),
        "cpu_seconds": seconds,
    }


def _pairs_curve(rounds: np.ndarray, gaps: np.ndarray):
    """The wrong-pair rate after ``R`` rounds of the round robin, ``mean_p Phi(-c |gap_p| R^beta)``
    over the pairs at least delta apart (``gaps``, Elo): each pair's estimated difference normal
    with a standard error ``1 / (c R^beta)`` (``beta`` 1/2 when it shrinks as the square root
    of the games), one ``c`` for all pairs."""
    from scipy.special import ndtr

    def rate(params, r=rounds):
        c, beta = math.exp(params[0]), params[1]
        z = -c * np.abs(gaps)[None, :] * np.power(np.asarray(r, dtype=float), beta)[:, None]
        return ndtr(z).mean(axis=1)
    return rate


def _fit_curve(rounds: np.ndarray, wrong: np.ndarray, trials: float, gaps: np.ndarray,
               start: np.ndarray | None = None) -> np.ndarray:
    """``(log c, beta)`` of :func:`_pairs_curve` fitted to the round robin's counts ``wrong`` (of
    ``trials`` pairs at each round count) by binomial maximum likelihood."""
    from scipy.optimize import minimize

    rate = _pairs_curve(rounds, gaps)

    def loss(params):
        p = np.clip(rate(params), 1e-300, 1.0 - 1e-16)
        return -(wrong * np.log(p) + (trials - wrong) * np.log1p(-p)).sum()

    if start is None:
        start = np.array([math.log(1.0 / (np.abs(gaps).mean() + 1.0)), 0.5])
    return minimize(loss, start, method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-10}).x


def fitted_match(games: np.ndarray, wrong: np.ndarray, rr_wrong: np.ndarray, grid: Sequence[int], gaps: np.ndarray,
                 round_games: int, resamples: int = 1000, seed: int = 0) -> dict:
    """The round robin's games at the adaptive schedule's accuracy, from a smooth curve and with
    an interval. The round robin's wrong-pair rate after ``R`` rounds is fitted over every round
    count played (:func:`_pairs_curve`: each pair at least delta apart wrong with chance
    ``Phi(-c |gap| R^beta)``), solved for the rate the adaptive schedule reached, and the ratio
    of games given with a 95% percentile interval over tournaments resampled with replacement
    (adaptive and round robin together). Where the step match (``rounds_to_match``) rests on one
    or two wrong pairs, this reads every round count's. ``games``, ``wrong``: per tournament;
    ``rr_wrong``: tournaments x round counts; ``gaps``: the true differences of the pairs at
    least delta apart (one tournament's). A resample whose schedule ordered nothing wrongly
    would need infinitely many rounds: its ratio counts as 0. ``ratio_at_rate_upper``: the ratio
    were the schedule's rate at its one-sided 97.5% Clopper-Pearson bound (the pairs counted as
    independent trials), a bound that holds also when it ordered nothing wrongly."""
    from scipy.optimize import brentq
    from scipy.stats import beta as beta_distribution

    rounds = np.asarray(grid)
    far = len(gaps)
    curve = _pairs_curve(rounds, gaps)

    def match(index, start=None, rate=None):
        params = _fit_curve(rounds, rr_wrong[index].sum(axis=0), float(len(index) * far), gaps, start)
        if rate is None:
            rate = wrong[index].sum() / float(len(index) * far)
        if rate <= 0.0:
            return 0.0, math.inf, params
        if curve(params, [1.0])[0] <= rate:  # one full round already as accurate: no fraction of one is a design
            return games[index].mean() / round_games, 1.0, params
        high = 2.0
        while curve(params, [high])[0] > rate and high < 1e9:
            high *= 2.0
        r = brentq(lambda x: curve(params, [x])[0] - rate, 1.0, high, xtol=1e-6)
        return games[index].mean() / (r * round_games), r, params

    everything = np.arange(len(games))
    point, match_rounds, params = match(everything)
    rng = np.random.default_rng(seed)
    draws = [match(rng.integers(0, len(games), len(games)), params)[0] for _ in range(resamples)]
    low, high = np.percentile(draws, [2.5, 97.5])
    # with few wrong pairs the resamples say little: the ratio were the adaptive schedule's rate at
    # its one-sided 97.5% Clopper-Pearson bound (pairs counted as independent trials)
    events, trials = int(wrong.sum()), len(games) * far
    rate_high = float(beta_distribution.ppf(0.975, events + 1, trials - events))
    ratio_high = match(everything, params, rate=rate_high)[0]
    return {"rounds": match_rounds, "games": match_rounds * round_games, "ratio": point,
            "ratio_95": [float(low), float(high)], "resamples": resamples,
            "wrong": events, "pairs": trials, "rate_upper": rate_high, "ratio_at_rate_upper": ratio_high,
            "curve": {"c": math.exp(params[0]), "beta": float(params[1]),
                      "fitted": [float(x) for x in curve(params)]}}


def table_markdown(settings: Sequence[dict]) -> str:
    """The settings' figures as the Markdown table of jobs/TOURNAMENTS.md."""
    lines = ["| Entrants | Players | Apart (Elo) | Adaptive games (10-90%) | Wrong pairs | Claims wrong | "
             "Round robin to match (fitted) | Ratio (95%) | Ratio at most | Step match: rounds, ratio |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for f in settings:
        a, m = f["adaptive"], f["fitted_match"]
        claims = a["ordered_claims"] + a["within_claims"]
        wrong = a["ordered_claims_wrong"] * a["ordered_claims"] + a["within_claims_wrong"] * a["within_claims"]
        if math.isinf(m["games"]):
            fitted, ratio = "any (none wrong)", "0"
        else:
            low, high = m["ratio_95"]
            fitted, ratio = f"{m['rounds']:.1f} rounds, {m['games']:,.0f} games", f"{m['ratio']:.2f} ({low:.2f}-{high:.2f})"
        step = (f"{f['rounds_to_match']}, {f['games_ratio']:.2f}" if f["rounds_to_match"]
                else f"more than {f['round_robin']['rounds'][-1]}")
        lines.append(f"| {f['entrants']} | {f['players']} | {f['gap_elo']:g} | {a['games_mean']:,.0f} "
                     f"({a['games_p10']:,.0f}-{a['games_p90']:,.0f}) | {m['wrong']} of {m['pairs']:,} | "
                     f"{int(round(wrong))} of {claims:,} ({100 * wrong / max(claims, 1):.2f}%) | {fitted} | {ratio} | "
                     f"{m['ratio_at_rate_upper']:.2f} | {step} |")
    return "\n".join(lines)


def bench(options) -> dict:
    """``arena bench ranking``: the four settings (N = 8, 16; 2 and 4 players), fewer
    tournaments with ``options.quick``."""
    tournaments = 20 if options.quick else 200
    return {"settings": [ranking_bench(n, k, tournaments, **DEFAULTS) for n, k in SETTINGS]}


SETTINGS = ((8, 2), (8, 4), (16, 2), (16, 4))
DEFAULTS = dict(gap=40.0, confidence=0.95, delta=20.0, max_games=None, rr_rounds=None, seat_elo=30.0, board_sd=0.0,
                seed=2024)
#: The adaptive schedule's cap, and how far the round robin is played (in whole rounds).
DEFAULT_MAX_GAMES = 20_000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.bench.ranking", description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, nargs="*", default=[8, 16])
    parser.add_argument("--players", type=int, nargs="*", default=[2, 4])
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--gap", type=float, default=DEFAULTS["gap"], help="Elo between neighbours (truth)")
    parser.add_argument("--confidence", type=float, default=DEFAULTS["confidence"])
    parser.add_argument("--delta", type=float, default=DEFAULTS["delta"], help="indifference margin, Elo")
    parser.add_argument("--max-games", type=int, default=None, help=f"cap (default {DEFAULT_MAX_GAMES})")
    parser.add_argument("--rr-rounds", type=int, default=None,
                        help="the round robin's most rounds (default: as many as the cap's games)")
    parser.add_argument("--tables-per-round", type=int, default=None)
    parser.add_argument("--round-growth", type=float, default=0.25, help="a round's tables over the boards so far")
    parser.add_argument("--seat-elo", type=float, default=DEFAULTS["seat_elo"])
    parser.add_argument("--board-sd", type=float, default=DEFAULTS["board_sd"])
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    parser.add_argument("--json", action="store_true", help="one JSON document (default: a line per setting)")
    parser.add_argument("--markdown", type=Path, default=None, metavar="JSONL",
                        help="print the Markdown table of the settings in JSONL (lines this command printed) and exit")
    args = parser.parse_args(argv)
    if args.markdown is not None:
        lines = [line for line in args.markdown.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
        print(table_markdown([json.loads(line) for line in lines]))
        return 0
    out = []
    for n in args.entrants:
        for k in args.players:
            figures = ranking_bench(n, k, args.tournaments, args.gap, args.confidence, args.delta, args.max_games,
                                    args.rr_rounds, args.seat_elo, args.board_sd, args.seed, args.tables_per_round,
                                    args.round_growth)
            out.append(figures)
            if not args.json:
                print(json.dumps(figures), flush=True)
    if args.json:
        print(json.dumps({"settings": out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
