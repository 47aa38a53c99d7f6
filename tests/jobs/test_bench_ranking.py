"""The adaptive schedule's simulation (``arena bench ranking``, jobs/bench/ranking.py): a few
simulated tournaments with fixed seeds through the driver's own schedule, and one small run of
the benchmark's comparison with the round robin. The 200-per-setting runs are the command's."""
from __future__ import annotations

import numpy as np

from cluster.analysis.adaptive import CAP, RESOLVED
from cluster.analysis.ranking_stop import ORDERED, WITHIN
from jobs.bench.ranking import KnownStrengthGame, RankingSettings, ranking_bench, simulate_adaptive, wrong_pairs


def test_simulated_tournaments_of_known_strength_end_resolved_and_in_order():
    """Three tournaments of 8 entrants 60 Elo apart (4 players, the Plackett-Luce winner): each
    resolves before the cap, every adjacent pair ordered or within delta, in the true order, with
    fewer games than the shipped Pommerman round robin of 8 entrants plays (8 rounds, 2,240)."""
    truth = np.arange(8)[::-1] * 60.0
    game = KnownStrengthGame(truth - truth.mean(), 4, seat_elo=30.0)
    for seed in range(3):
        schedule = simulate_adaptive(game, RankingSettings(), 20_000, seed=seed, rng=np.random.default_rng(seed))
        assert schedule.decision == RESOLVED
        assert schedule.games_planned < 2240, schedule.games_planned
        assert schedule.status.order == tuple(range(8))
        assert wrong_pairs(truth, schedule.fit.ratings, 20.0)[0] == 0
        assert {p.state for p in schedule.status.pairs} <= {ORDERED, WITHIN}


def test_the_cap_stops_an_unresolvable_field_with_whole_tables():
    game = KnownStrengthGame(np.zeros(6) + np.arange(6) * 1.0, 2)
    schedule = simulate_adaptive(game, RankingSettings(delta_elo=5.0), 301, seed=1, rng=np.random.default_rng(1))
    assert schedule.decision == CAP and schedule.games_planned <= 301 and schedule.games_planned % 2 == 0
    assert schedule.games_planned > 301 - 2 * 3  # the last round took as many tables as the cap left


def test_the_bench_compares_with_the_round_robin_on_the_same_entrants():
    """Five tournaments of 6 entrants 60 Elo apart: the figures the table is made of, consistent
    with each other (the round robin's accuracy improves with its rounds; the match is the first
    round count at or below the adaptive schedule's wrong pairs; claims counted per pair)."""
    figures = ranking_bench(6, 2, 5, gap=60.0, confidence=0.95, delta=20.0, max_games=5000, rr_rounds=20,
                            seat_elo=30.0, board_sd=0.0, seed=3)
    adaptive, rr = figures["adaptive"], figures["round_robin"]
    assert adaptive["resolved"] + adaptive["cap"] == 1.0
    assert adaptive["ordered_claims"] + adaptive["within_claims"] <= 5 * 5
    assert rr["wrong_pairs"][0] > rr["wrong_pairs"][-1]
    if figures["rounds_to_match"] is not None:
        k = rr["rounds"].index(figures["rounds_to_match"])
        assert rr["wrong_pairs"][k] <= adaptive["wrong_pairs"] and all(w > adaptive["wrong_pairs"]
                                                                       for w in rr["wrong_pairs"][:k])
        assert figures["games_to_match"] == figures["rounds_to_match"] * rr["round_games"]


def test_the_fitted_match_recovers_the_round_robin_games_of_a_known_curve():
    """Round robin counts drawn from a known curve (pairs 20, 40 and 60 Elo apart, standard
    error 300 / sqrt(R) Elo) and an adaptive schedule whose wrong-pair rate is the curve's at 30
    rounds: the fitted match finds about 30 rounds, its interval covers the true ratio, and a
    schedule that ordered nothing wrongly counts as ratio 0 (infinitely many rounds), with a
    finite bound from its rate's upper confidence bound."""
    from scipy.stats import norm

    from jobs.bench.ranking import fitted_match

    rng = np.random.default_rng(5)
    gaps = np.array([20.0] * 7 + [40.0] * 6 + [60.0] * 5)
    grid = [1, 2, 4, 8, 16, 32, 64]
    tournaments = 400
    rate = lambda r: norm.cdf(-gaps * np.sqrt(r) / 300.0).mean()  # noqa: E731
    rr_wrong = np.array([[rng.binomial(len(gaps), rate(r)) for r in grid] for _ in range(tournaments)])
    wrong = rng.binomial(len(gaps), rate(30.0), size=tournaments)
    games = np.full(tournaments, 1500)
    figures = fitted_match(games, wrong, rr_wrong, grid, gaps, round_games=100, resamples=100, seed=1)
    assert 24.0 < figures["rounds"] < 37.0, figures["rounds"]
    assert abs(figures["curve"]["beta"] - 0.5) < 0.1
    low, high = figures["ratio_95"]
    assert low < 1500 / 3000 < high and high - low < 0.4
    assert figures["ratio_at_rate_upper"] > figures["ratio"]  # a higher rate: fewer rounds to match
    none = fitted_match(games, np.zeros(tournaments, dtype=int), rr_wrong, grid, gaps, 100, resamples=20)
    assert none["ratio"] == 0.0 and none["rounds"] == float("inf")
    assert 0.0 < none["ratio_at_rate_upper"] < figures["ratio_at_rate_upper"]  # bounded by the rule of three
