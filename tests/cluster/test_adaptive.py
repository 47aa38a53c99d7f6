"""The adaptive tournament schedule: its seed design, the statistics of its stop, its
decisions (the same whatever the order results arrive in, and after a resume), a few
simulated tournaments of known strength, the spec's errors, and a tournament on Ray whose
driver is killed and resumed."""
from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cluster.analysis.adaptive import RESOLVED, AdaptiveSchedule, adaptive_markdown
from cluster.analysis.ranking_stop import ORDERED, OPEN, WITHIN, PairwiseTally, fit_ranking, pair_state
from cluster.analysis.winner_stop import WinnerTally, fit_winner
from cluster.results.store import ResultStore
from cluster.spec.adaptive import covering_tables
from cluster.spec.plan import plan_study
from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.fields import SpecError

from conftest import PLUGINS


# --- a game of known model ------------------------------------------------------------------
class RankingSettings:
    """What the schedule reads of a ranking stop (:class:`cluster.spec.study.RankingSpec`)."""

    def __init__(self, confidence=0.95, delta_elo=20.0, tables_per_round=None, round_growth=0.25, seed_rounds=1):
        self.confidence, self.delta_elo, self.tables_per_round = confidence, delta_elo, tables_per_round
        self.round_growth, self.seed_rounds = round_growth, seed_rounds


class KnownStrengthGame:
    """Bradley-Terry duels of entrants of known Elo, the first seat ``seat_elo`` stronger, every
    entrant's strength on a board shifted by a normal draw of SD ``board_sd`` shared by its rotations."""

    def __init__(self, strengths, players=2, seat_elo=0.0, board_sd=0.0):
        self.strengths, self.players = np.asarray(strengths, dtype=float), players
        self.seat = np.array([seat_elo, 0.0])
        self.board_sd = board_sd

    def play(self, seating, boards, rng):
        elo = self.strengths[seating] + self.seat[None, :]
        if self.board_sd:
            unique, inverse = np.unique(boards, return_inverse=True)
            elo = elo + rng.normal(0.0, self.board_sd, (len(unique), len(self.strengths)))[inverse[:, None], seating]
        first_wins = rng.random(len(seating)) < 1.0 / (1.0 + 10.0 ** ((elo[:, 1] - elo[:, 0]) / 400.0))
        return np.where(first_wins[:, None], [[2, 0]], [[0, 2]])


# --- the seed design ---------------------------------------------------------------------------
@pytest.mark.parametrize("entrants, slots", [(8, 2), (8, 4), (16, 4), (9, 3), (5, 4)])
def test_the_seed_design_seats_every_pair_and_every_entrant_about_equally(entrants, slots):
    tables = covering_tables(entrants, slots)
    met = {pair for t in tables for pair in itertools.combinations(sorted(set(t)), 2)}
    assert met == set(itertools.combinations(range(entrants), 2))
    seated = Counter(e for t in tables for e in set(t))
    assert max(seated.values()) - min(seated.values()) <= 1
    assert all(len(t) == slots for t in tables)
    if (entrants, slots) == (16, 4):
        assert len(tables) == 20  # the affine plane's 20 blocks: no pair twice


# --- the statistics ----------------------------------------------------------------------------
def _round_robin_tally(strengths, rounds, rng, board_sd=0.0, players=2):
    from cluster.spec.tournament import rotation_seatings, round_robin_tables

    game = KnownStrengthGame(strengths, players, seat_elo=30.0, board_sd=board_sd)
    tables = np.asarray(round_robin_tables(len(strengths), players))
    seating = np.asarray(rotation_seatings(tables, tuple(range(players)))).reshape(-1, players)
    boards = np.repeat(np.arange(len(tables) * rounds), players)
    seating = np.tile(seating, (rounds, 1))
    tally = PairwiseTally(len(strengths))
    tally.add_games(boards, seating, game.play(seating, boards, rng), tuple(range(players)))
    return tally


def test_the_board_clustered_variance_matches_the_spread_of_the_estimates():
    """Boards whose rotations share a strong board effect: the sandwich variance of a rating
    difference follows its spread over repeated tournaments, where the model's (results
    independent) understates it."""
    rng = np.random.default_rng(3)
    strengths = np.array([60.0, 20.0, -20.0, -60.0])
    estimates, sandwich, model = [], [], []
    for _ in range(100):
        fit = fit_ranking(_round_robin_tally(strengths, 8, rng, board_sd=150.0))
        estimates.append(fit.ratings[0] - fit.ratings[1])
        c, m = fit.covariance, fit.model_covariance
        sandwich.append(c[0, 0] + c[1, 1] - 2 * c[0, 1])
        model.append(m[0, 0] + m[1, 1] - 2 * m[0, 1])
    empirical = np.var(estimates, ddof=1)
    assert 0.7 < np.mean(sandwich) / empirical < 1.4
    assert np.mean(model) < 0.9 * np.mean(sandwich)


def test_a_pair_is_ordered_within_delta_or_open_by_its_likelihood_ratios():
    alpha, delta = 0.05, 20.0
    assert pair_state(60.0, 15.0 ** 2, alpha, delta)[2] == ORDERED
    assert pair_state(2.0, 5.0 ** 2, alpha, delta)[2] == WITHIN  # passes both: the closer statement
    assert pair_state(1.0, 12.0 ** 2, alpha, delta)[2] == OPEN
    assert pair_state(15.0, 15.0 ** 2, alpha, delta)[2] == OPEN
    llr_ordered, llr_within, _ = pair_state(10.0, 100.0, alpha, delta)
    assert llr_ordered == pytest.approx(2 * delta * 10.0 / 100.0)
    assert llr_within == pytest.approx(delta * (delta / 2 - 10.0) / 100.0)


# --- the winner model (a free-for-all) --------------------------------------------------------------
def _ffa_tally(strengths, rounds, rng, board_sd=0.0):
    """The round robin of a four-seat free-for-all whose winner follows Plackett-Luce (the
    simulator's game), ``rounds`` times, as a winner tally."""
    from cluster.spec.tournament import rotation_seatings, round_robin_tables
    from jobs.bench.ranking import KnownStrengthGame as FreeForAll

    game = FreeForAll(strengths, 4, seat_elo=30.0, board_sd=board_sd)
    tables = np.asarray(round_robin_tables(len(strengths), 4))
    seating = np.tile(np.asarray(rotation_seatings(tables, (0, 1, 2, 3))).reshape(-1, 4), (rounds, 1))
    boards = np.repeat(np.arange(len(seating) // 4), 4)
    tally = WinnerTally(len(strengths), 4)
    tally.add_games(boards, seating, game.play(seating, boards, rng))
    return tally


def test_the_winner_tally_counts_single_winners_only():
    tally = WinnerTally(5, 4)
    tally.add_games(np.array([0, 0, 1, 1]), np.array([[0, 1, 2, 3], [1, 2, 3, 0], [4, 0, 1, 2], [0, 1, 2, 4]]),
                    np.array([[0, 0, 2, 0], [1, 1, 1, 1], [2, 2, 0, 0], [-1, -1, -1, -1]]))
    assert tally.games == 1 and tally.draws == 2  # the errored game is neither
    assert tally.seating.tolist() == [[0, 1, 2, 3]] and tally.winner.tolist() == [2]


def test_the_winner_fit_recovers_known_strengths_within_its_interval():
    """Twelve rounds of a six-entrant free-for-all: every rating within three standard errors
    of the truth (Elo, centred), the differences on the truth's scale, not the pairwise fit's."""
    truth = np.array([100.0, 60.0, 20.0, -20.0, -60.0, -100.0])
    fit = fit_winner(_ffa_tally(truth, 12, np.random.default_rng(5)))
    assert fit.model == "winner" and fit.results == 12 * 15 * 4
    se = np.sqrt(np.diag(fit.covariance))
    assert np.all(np.abs(fit.ratings - truth) < 3.0 * se), (fit.ratings, se)
    assert np.all(se < 30.0)
    assert tuple(np.argsort(-fit.ratings)) == tuple(range(6))


def test_the_winner_sandwich_grows_with_correlated_boards_and_follows_the_spread():
    """A strong board effect shared by a board's rotations: the sandwich variance of a
    difference follows its spread over repeated tournaments and exceeds the model's; without
    one the two agree."""
    rng = np.random.default_rng(3)
    strengths = np.array([90.0, 45.0, 0.0, -45.0, -90.0, -135.0])
    ratios = {}
    for board_sd in (0.0, 150.0):
        estimates, sandwich, model = [], [], []
        for _ in range(40):
            fit = fit_winner(_ffa_tally(strengths, 5, rng, board_sd=board_sd))
            c, m = fit.covariance, fit.model_covariance
            estimates.append(fit.ratings[0] - fit.ratings[1])
            sandwich.append(c[0, 0] + c[1, 1] - 2 * c[0, 1])
            model.append(m[0, 0] + m[1, 1] - 2 * m[0, 1])
        ratios[board_sd] = np.mean(sandwich) / np.mean(model), np.mean(sandwich) / np.var(estimates, ddof=1)
    assert 0.85 < ratios[0.0][0] < 1.15 and ratios[150.0][0] > 1.25, ratios
    assert 0.6 < ratios[150.0][1] < 1.5, ratios


def test_a_free_for_all_decides_by_the_winner_model_whatever_the_arrival_order():
    """Six entrants at four seats: the schedule fits the winner model, and its rounds, looks and
    decision are the same when each round's results arrive shuffled, and after a restart."""
    from jobs.bench.ranking import KnownStrengthGame as FreeForAll

    game = FreeForAll(np.array([150.0, 75.0, 0.0, -75.0, -150.0, -225.0]), 4, seat_elo=30.0)
    ranking = RankingSettings(confidence=0.9, delta_elo=40.0)
    first = _play_out(AdaptiveSchedule(6, (0, 1, 2, 3), ranking, 7, False, 6000), game, np.random.default_rng(2))
    second = _play_out(AdaptiveSchedule(6, (0, 1, 2, 3), ranking, 7, False, 6000), game, np.random.default_rng(2),
                       order="shuffled")
    assert first.winner_model and first.fit.model == "winner"
    assert first.decision == second.decision == RESOLVED and len(first.rounds) >= 3
    assert [r.tables for r in first.rounds] == [r.tables for r in second.rounds] and first.looks == second.looks
    assert np.array_equal(first.fit.ratings, second.fit.ratings)
    rows = pd.DataFrame([{"game_index": g, "seat": s, "result": {2: "win", 1: "tie", 0: "loss"}[int(r)]}
                         for g, ranks in first.ranks.items() for s, r in enumerate(ranks)])
    resumed = AdaptiveSchedule(6, (0, 1, 2, 3), ranking, 7, False, 6000)
    resumed.add_frame(rows.sample(frac=1.0, random_state=0))
    assert [r.tables for r in resumed.rounds] == [r.tables for r in first.rounds] and resumed.looks == first.looks
    assert "winner model" in adaptive_markdown(resumed.result())


# --- decisions ----------------------------------------------------------------------------------
def _play_out(schedule, game, rng, order="plan"):
    """Play every round to the end, recording each round's games in ``order``."""
    series = schedule.series()
    while series:
        tasks = [g for s in series for g in s.games]
        ranks = game.play(np.array([t.seat_lineup for t in tasks]), np.array([t.board_seed for t in tasks]), rng)
        indices = list(range(len(tasks)))
        if order == "shuffled":
            indices = list(np.random.default_rng(len(tasks)).permutation(len(tasks)))
        series = []
        for k, i in enumerate(indices):
            schedule.record(tasks[i].game_index, ranks[i])
            if order == "shuffled":  # asked after every game, as the host pool asks: nothing until the last
                series = schedule.advance()
                assert series == [] or k == len(indices) - 1
        if order != "shuffled":
            series = schedule.advance()
    return schedule


def test_decisions_depend_on_the_results_only_not_their_order_or_a_restart():
    truth = np.array([120.0, 60.0, 0.0, -60.0, -120.0, -180.0])
    game = KnownStrengthGame(truth, 2, seat_elo=30.0)
    ranking = RankingSettings(confidence=0.9, delta_elo=40.0)
    first = _play_out(AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000), game, np.random.default_rng(1))
    second = _play_out(AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000), game, np.random.default_rng(1),
                       order="shuffled")
    assert first.decision == second.decision == RESOLVED
    assert [r.tables for r in first.rounds] == [r.tables for r in second.rounds]
    assert len(first.rounds) >= 3 and first.looks == second.looks
    # a restart: the stored rows of every game, fed to a new schedule, give the same rounds
    rows = pd.DataFrame([{"game_index": g, "seat": s, "result": {2: "win", 1: "tie", 0: "loss"}[int(r)]}
                         for g, ranks in first.ranks.items() for s, r in enumerate(ranks)])
    resumed = AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000)
    resumed.add_frame(rows.sample(frac=1.0, random_state=0))
    assert resumed.decision == RESOLVED and [r.tables for r in resumed.rounds] == [r.tables for r in first.rounds]
    assert resumed.looks == first.looks
    # half the rows: the rounds decided so far, and only the missing games left
    half = rows[rows["game_index"] < first.rounds[2].games[0] + 3]
    partial = AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000)
    partial.add_frame(half)
    assert [r.tables for r in partial.rounds] == [r.tables for r in first.rounds[:3]]
    assert not partial.finished and partial.advance() == []


# --- the spec -----------------------------------------------------------------------------------
def spec_data(tmp_path, entrants=5, players=2, stop=None, skills=None, name="adaptive", design=None,
              sleep_ms=0.0):
    skills = skills or [k / (entrants - 1) for k in range(entrants)]
    return {
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 6, "num_players": players},
        "budget": {"iterations": 3},
        "design": {"format": "round_robin", "stop": stop if stop is not None else {"ranking": {}},
                   **(design or {})},
        "lineup": [{"agent": "fake", "label": f"S{k}", "params": {"skill": float(skills[k]), "sleep_ms": sleep_ms}}
                   for k in range(entrants)],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    }


@pytest.mark.parametrize("change, message", [
    ({"stop": {"ranking": {"confidence": 1.0}}}, "design.stop.ranking.confidence: must be in (0.5, 1), got 1"),
    ({"stop": {"ranking": {"delta_elo": 0}}}, "design.stop.ranking.delta_elo: must be in (0, 1000) Elo"),
    ({"stop": {"ranking": {"speed": 2}}}, "design.stop.ranking.speed: unknown key"),
    ({"stop": {"ranking": {}, "max_games": 100}}, "design.stop.max_games: a ranking stop's cap is"),
    ({"stop": {"sprt": {"elo0": 0, "elo1": 10}, "between": ["S0", "S1"]}},
     "design.stop: a two-entrant sequential test, not with a tournament"),
    ({"design": {"format": "gauntlet", "candidates": ["S0"]}}, "design.stop.ranking: an adaptive schedule ranks"),
    ({"entrants": 3, "players": 4}, "design.stop.ranking: an adaptive schedule needs at least 4 entrants"),
])
def test_bad_ranking_stops_are_one_line_errors(tmp_path, change, message):
    data = spec_data(tmp_path, entrants=change.get("entrants", 5), players=change.get("players", 2),
                     stop=change.get("stop"))
    data["design"].update(change.get("design", {}))
    with pytest.raises(SpecError) as err:
        build_spec(data)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_an_adaptive_spec_plans_its_seed_round_and_round_trips(tmp_path):
    spec = build_spec(spec_data(tmp_path, stop={"ranking": {"max_games": 300, "delta_elo": 50}}))
    games = [g for s in plan_study(spec) for g in s.games]
    assert len(games) == 10 * 2 and spec.design.total_games == 300
    assert [g.game_index for g in games] == list(range(20))  # board b: games 2b, 2b + 1
    again = spec_from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again.design.stop == spec.design.stop and "sprt" not in spec.to_dict()["design"]["stop"]


# --- end to end on Ray ----------------------------------------------------------------------------
_DRIVER = """
import json, sys
import conftest  # registers the count game and the fake agent
from cluster.run.driver import run_study
from cluster.spec.build import build_spec
run_study(build_spec(json.load(open(sys.argv[1]))), address=sys.argv[2], num_workers=2, progress=False,
          plugins=["conftest"], warm_up=False)
"""


def test_an_adaptive_tournament_stops_early_survives_a_driver_kill_and_logs_its_leaderboard(ray_local, tmp_path):
    from mlflow.tracking import MlflowClient

    from cluster.run.driver import run_study

    stop = {"ranking": {"confidence": 0.9, "delta_elo": 150, "max_games": 2000}}
    skills = [0.0, 0.45, 0.9, 1.0]
    # the reference: uninterrupted, in this process
    reference = run_study(build_spec(spec_data(tmp_path / "ref", 4, stop=stop, skills=skills)), num_workers=2,
                          progress=False, plugins=PLUGINS, warm_up=False)
    assert reference.adaptive.decision == RESOLVED and reference.games_done < 2000
    assert len(reference.adaptive.looks) >= 2
    # the same tournament, its driver killed (SIGKILL) once the first look has chosen a round
    data = spec_data(tmp_path / "killed", 4, stop=stop, skills=skills, sleep_ms=15.0)
    data["tracking"].update(enabled=True, experiment="adaptive")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(data))
    spec = build_spec(data)
    seed_games = len(plan_study(spec)[0].games) * len(plan_study(spec))
    address = ray_local.get_runtime_context().gcs_address
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, str(spec_file), address],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 240
    while len(ResultStore(spec.study_dir).finished_games()) < seed_games + 2:
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the killed driver recorded too few games"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    at_kill = len(ResultStore(spec.study_dir).finished_games())
    resumed = run_study(spec, num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)
    assert resumed.games_skipped == at_kill and resumed.games_replayed == 0
    assert resumed.games_played + at_kill == resumed.games_done == reference.games_done
    assert resumed.adaptive.decision == RESOLVED and resumed.adaptive.looks == reference.adaptive.looks
    rows = ResultStore(spec.study_dir).read()
    assert not rows.duplicated(["game_index", "seat"]).any()
    expected = ResultStore(reference.study_dir).read()
    columns = ["game_index", "seat", "label", "result", "board_seed"]
    pd.testing.assert_frame_equal(rows[columns].sort_values(["game_index", "seat"]).reset_index(drop=True),
                                  expected[columns].sort_values(["game_index", "seat"]).reset_index(drop=True))
    # the leaderboard and the schedule's outcome: printed, written and logged
    assert resumed.leaderboard is not None and resumed.leaderboard.table.index[0] in ("S2", "S3")
    report = Path(spec.study_dir) / "report"
    assert {"leaderboard.md", "adaptive.md", "adaptive_pairs.csv"} <= {p.name for p in report.iterdir()}
    client = MlflowClient(tracking_uri=data["tracking"]["uri"])
    run = client.get_run(resumed.mlflow_run_id)
    assert run.data.metrics["adaptive/games_used"] == resumed.games_done
    assert run.data.tags["arena.adaptive_decision"] == RESOLVED
    assert "rating/S3" in run.data.metrics
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "tournament")}
    assert "tournament/leaderboard.json" in artifacts
    # arena report, from the store alone, replays the same schedule
    from cluster.analysis.report import report_study

    text = report_study(spec.study_dir, plot=False)
    assert "**Adaptive schedule**" in text and "**resolved" in text
    # run again: decided, nothing to play
    again = run_study(spec, num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)
    assert again.games_played == 0 and again.adaptive.decision == RESOLVED


def test_stored_games_played_to_another_plan_are_refused_not_read():
    """A resume whose stored games were played to another plan (a study begun by a version whose
    schedule decided otherwise): a game at other seats, on another board, or one the schedule
    never plans is refused with one error naming the game; the plan's own rows are read."""
    from cluster.analysis.rounds import PlanMismatch

    truth = np.array([120.0, 60.0, 0.0, -60.0, -120.0, -180.0])
    ranking = RankingSettings(confidence=0.9, delta_elo=40.0)
    labels = [f"E{i}" for i in range(6)]
    first = _play_out(AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000, labels=labels),
                      KnownStrengthGame(truth, 2, seat_elo=30.0), np.random.default_rng(1))
    rows = pd.DataFrame([{"game_index": g, "seat": s, "result": {2: "win", 1: "tie", 0: "loss"}[int(r)],
                          "label": labels[first.seating[g][s]], "board_seed": first.board_of[g]}
                         for g, ranks in first.ranks.items() for s, r in enumerate(ranks)])
    again = AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000, labels=labels)
    again.add_frame(rows)
    assert again.decision == first.decision and again.looks == first.looks

    late = first.rounds[2].games[0]
    swapped = rows.copy()
    at = swapped["game_index"] == late
    swapped.loc[at, "label"] = swapped.loc[at, "label"].values[::-1]
    moved = rows.copy()
    moved.loc[moved["game_index"] == late, "board_seed"] += 1000
    extra = pd.concat([rows, rows[rows["game_index"] == 0].assign(game_index=first.games_planned + 50)])
    for changed, message in [(swapped, rf"^game {late} was played with \['E\d', 'E\d'\] at its seats, but this "
                                       r"schedule plans"),
                             (moved, rf"^game {late} was played on board \d+, but this schedule plans board"),
                             (extra, rf"^1 stored games \(game_index {first.games_planned + 50}\) are not in the plan")]:
        with pytest.raises(PlanMismatch, match=message):
            AdaptiveSchedule(6, (0, 1), ranking, 7, False, 4000, labels=labels).add_frame(changed)
