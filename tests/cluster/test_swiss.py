"""Swiss tournaments: the pairing rule on hand-made standings (score groups, no rematch, the
bye), the schedule's rounds (the same whatever order results arrive in, and after a resume),
the spec's errors, and a tournament on Ray interrupted and resumed."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cluster.analysis.swiss import COMPLETE, SwissSchedule
from cluster.results.store import ResultStore, SpecMismatchError
from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.fields import SpecError
from cluster.spec.plan import plan_study
from cluster.spec.swiss import standing_order, swiss_pairing
from cluster.spec.tournament import ExtensionError, check_extension

from conftest import PLUGINS


def _key(a, b):
    return (min(a, b), max(a, b))


# --- the pairing rule --------------------------------------------------------------------------
def test_round_one_folds_the_lineup_and_gives_the_last_entrant_the_bye():
    assert swiss_pairing([0.0] * 8, [0.0] * 8, {}, set()).tables == ((0, 4), (1, 5), (2, 6), (3, 7))
    odd = swiss_pairing([0.0] * 7, [0.0] * 7, {}, set())
    assert odd.bye == 6 and odd.tables == ((0, 3), (1, 4), (2, 5))


def test_score_groups_are_paired_among_themselves_folded():
    points = [4.0, 4.0, 4.0, 4.0, 2.0, 2.0, 0.0, 0.0]
    pairing = swiss_pairing(points, [0.0] * 8, {}, set())
    # the 4-point group folded (0-2, 1-3), the 2-point pair, the 0-point pair
    assert pairing.tables == ((0, 2), (1, 3), (4, 5), (6, 7)) and pairing.rematches == 0


def test_ties_in_points_are_ordered_by_buchholz_then_lineup_index():
    assert standing_order([1.0, 2.0, 2.0, 2.0], [0.0, 3.0, 5.0, 3.0]) == [2, 1, 3, 0]
    # four entrants on equal points: Buchholz decides who is top of the group (the fold: 1st-3rd, 2nd-4th)
    pairing = swiss_pairing([2.0] * 4, [1.0, 4.0, 3.0, 2.0], {}, set())
    assert pairing.tables == ((1, 3), (2, 0))


def test_no_pair_meets_twice_while_another_pairing_exists():
    points = [2.0, 2.0, 1.0, 1.0]
    # 0-1 met: the top floats down, and the rest follows
    pairing = swiss_pairing(points, [0.0] * 4, {(0, 1): 1}, set())
    assert pairing.tables == ((0, 2), (1, 3)) and pairing.rematches == 0
    # 0-2 and 0-1 met: 0 must meet 3; backtracking finds 1-2
    pairing = swiss_pairing(points, [0.0] * 4, {(0, 1): 1, (0, 2): 1}, set())
    assert set(map(lambda p: _key(*p), pairing.tables)) == {(0, 3), (1, 2)} and pairing.rematches == 0
    # every pairing repeats something: the rematch is counted, not hidden
    met = {(0, 1): 1, (2, 3): 1, (0, 2): 1, (1, 3): 1, (0, 3): 1}
    forced = swiss_pairing(points, [0.0] * 4, met, set())
    assert forced.rematches == 1 and sorted(map(lambda p: _key(*p), forced.tables)) == [(0, 3), (1, 2)]


def test_the_bye_goes_to_the_lowest_entrant_without_one_and_never_twice():
    points = [3.0, 2.0, 2.0, 1.0, 0.0]
    assert swiss_pairing(points, [0.0] * 5, {}, set()).bye == 4
    assert swiss_pairing(points, [0.0] * 5, {}, {4}).bye == 3
    assert swiss_pairing(points, [0.0] * 5, {}, {4, 3}).bye in (1, 2)
    # the lowest without a bye, unless the others then cannot avoid a rematch: 4's opponents are
    # all met, so 4 cannot play; it must sit out (it has had no bye)
    met = {_key(4, e): 1 for e in range(4)}
    assert swiss_pairing(points, [0.0] * 5, met, set()).bye == 4
    met.update({(0, 1): 1, (0, 2): 1})  # with 3 sitting out, 0's only partner would be 4 (met)
    pairing = swiss_pairing(points, [0.0] * 5, {(0, 1): 1, (0, 2): 1, (0, 4): 1, (1, 2): 1}, {4})
    assert pairing.bye != 4 and pairing.rematches == 0


@pytest.mark.parametrize("entrants", [4, 5, 6, 7, 8, 10])
def test_random_tournaments_pair_everyone_once_a_round_and_never_rematch(entrants):
    rng = np.random.default_rng(entrants)
    for _ in range(10):
        points, met, byes = np.zeros(entrants), Counter(), set()
        opponents = [[] for _ in range(entrants)]
        for _round in range(entrants - 1):
            buchholz = [sum(points[o] for o in opponents[e]) for e in range(entrants)]
            pairing = swiss_pairing(points.tolist(), buchholz, met, byes)
            seated = [e for pair in pairing.tables for e in pair] + ([pairing.bye] if pairing.bye is not None else [])
            assert sorted(seated) == list(range(entrants))
            assert pairing.bye not in byes
            if _round < entrants // 2:  # a rematch-free pairing exists (Dirac), and the search finds it
                assert pairing.rematches == 0
            assert pairing.rematches == sum(1 for a, b in pairing.tables if met[_key(a, b)])
            for a, b in pairing.tables:
                met[_key(a, b)] += 1
                opponents[a].append(b)
                opponents[b].append(a)
                points[a] += rng.integers(0, 5) / 2.0
                points[b] += rng.integers(0, 5) / 2.0
            if pairing.bye is not None:
                byes.add(pairing.bye)
                points[pairing.bye] += 2.0


# --- the schedule -------------------------------------------------------------------------------
def _outcome(game_index, seating, skill):
    """A fixed result per game (the stronger entrant wins 3 times in 4): the same whoever feeds it."""
    rng = np.random.default_rng(game_index)
    a, b = seating
    return [2, 0] if rng.random() < (0.75 if skill[a] > skill[b] else 0.25) else [0, 2]


def _play_out(schedule, skill, rng=None):
    """Play every planned game, results fed one at a time (in plan order, or shuffled with
    ``rng``) with ``advance()`` after each, as the driver does."""
    pending = [g for s in schedule.series() for g in s.games]
    while pending:
        if rng is not None:
            pending = [pending[i] for i in rng.permutation(len(pending))]
        g = pending.pop(0)
        schedule.record(g.game_index, _outcome(g.game_index, g.seat_lineup, skill))
        pending += [t for s in schedule.advance() for t in s.games]
    return schedule


def _rows(schedule):
    return pd.DataFrame([{"game_index": g, "seat": s, "result": {2: "win", 1: "tie", 0: "loss"}[int(r)]}
                         for g, ranks in schedule.ranks.items() for s, r in enumerate(ranks)])


def test_the_rounds_depend_on_the_results_only_not_their_order_or_a_restart():
    skill = [0.1, 0.9, 0.4, 0.6, 0.2, 0.8, 0.3]
    first = _play_out(SwissSchedule(7, (0, 1), 5, 3, False), skill)
    second = _play_out(SwissSchedule(7, (0, 1), 5, 3, False), skill, np.random.default_rng(1))
    assert first.decision == second.decision == COMPLETE and len(first.rounds) == 5
    assert [r.tables for r in first.rounds] == [r.tables for r in second.rounds]
    assert first.pairings == second.pairings and first.result().standings == second.result().standings
    assert len({p.tables for p in first.pairings}) == 5  # the rounds do differ
    # a restart: the stored rows, fed to a new schedule in any order, give the same rounds
    resumed = SwissSchedule(7, (0, 1), 5, 3, False)
    resumed.add_frame(_rows(first).sample(frac=1.0, random_state=0))
    assert resumed.decision == COMPLETE
    assert [r.tables for r in resumed.rounds] == [r.tables for r in first.rounds]
    assert resumed.pairings == first.pairings and resumed.result().standings == first.result().standings
    # part of the rows: the rounds paired so far, and only the missing games left
    rows = _rows(first)
    part = rows[rows["game_index"] < first.rounds[2].games[0] + 2]
    partial = SwissSchedule(7, (0, 1), 5, 3, False)
    partial.add_frame(part)
    assert [r.tables for r in partial.rounds] == [r.tables for r in first.rounds[:3]]
    assert not partial.finished and partial.advance() == []
    # every round: each entrant at one table or on its bye, no pair twice, at most one bye each
    pairs = [_key(*p) for pairing in first.pairings for p in pairing.tables]
    assert len(pairs) == len(set(pairs))
    byes = [p.bye for p in first.pairings]
    assert len(set(byes)) == len(byes) and None not in byes
    for pairing in first.pairings:
        assert sorted([e for p in pairing.tables for e in p] + [pairing.bye]) == list(range(7))
    # boards and games: table j of round r is board 3r + j, its games 2 x board + rotation
    for r, scheduled in enumerate(first.rounds):
        assert scheduled.first_board == 3 * r and scheduled.games == tuple(range(6 * r, 6 * r + 6))


def test_points_and_buchholz_count_wins_draws_errors_and_the_bye():
    schedule = SwissSchedule(3, (0, 1), 2, 5, False, labels=["A", "B", "C"])
    (a, b), bye = schedule.pairings[0].tables[0], schedule.pairings[0].bye
    assert (a, b, bye) == (0, 1, 2)
    games = schedule.rounds[0].games
    first_seat = schedule.seating[games[0]][0]
    schedule.record(games[0], [1, 1])  # a draw
    schedule.record(games[1], None)  # an errored game: nothing for either
    assert schedule.advance()  # round 2 paired
    assert schedule.points.tolist() == [0.5, 0.5, 2.0] and first_seat in (0, 1)
    assert schedule.buchholz().tolist() == [0.5, 0.5, 0.0]
    # round 2: C (2 points, bye had) meets the top of the others; the lowest without a bye sits out
    pairing = schedule.pairings[1]
    assert pairing.bye == 1 and _key(*pairing.tables[0]) == (0, 2)
    for g in schedule.rounds[1].games:
        seating = schedule.seating[g]
        schedule.record(g, [2, 0] if seating[0] == 2 else [0, 2])  # C wins both
    assert schedule.advance() == [] and schedule.decision == COMPLETE
    rows = {r["entrant"]: r for r in schedule.result().standings}
    assert [r["entrant"] for r in schedule.result().standings] == ["C", "B", "A"]
    assert rows["C"]["points"] == 4.0 and rows["C"]["buchholz"] == 0.5 and rows["C"]["bye"] == 1
    assert rows["B"]["points"] == 2.5 and rows["A"]["points"] == 0.5 and rows["A"]["draws"] == 1


# --- the spec -----------------------------------------------------------------------------------
def spec_data(tmp_path, entrants=6, players=2, rounds=3, design=None, skills=None, name="swiss"):
    skills = skills or [k / (entrants - 1) for k in range(entrants)]
    return {
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 6, "num_players": players},
        "budget": {"iterations": 3},
        "design": {"format": "swiss", "rounds": rounds, **(design or {})},
        "lineup": [{"agent": "fake", "label": f"S{k}", "params": {"skill": float(skills[k])}}
                   for k in range(entrants)],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    }


@pytest.mark.parametrize("change, message", [
    ({"players": 3}, 'design.format: "swiss" pairs two entrants a table, and this game\'s tables seat 3'),
    ({"rounds": 6}, "design.rounds: a swiss of 6 entrants has at most 5 rounds"),
    ({"design": {"stop": {"ranking": {}}}}, 'design.stop.ranking: not with format = "swiss"'),
    ({"design": {"candidates": ["S0"]}}, 'design.candidates: only with format = "gauntlet"'),
])
def test_bad_swiss_designs_are_one_line_errors(tmp_path, change, message):
    data = spec_data(tmp_path, players=change.get("players", 2), rounds=change.get("rounds", 3),
                     design=change.get("design"))
    with pytest.raises(SpecError) as err:
        build_spec(data)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_swiss_spec_plans_round_one_and_refuses_a_new_entrant(tmp_path):
    spec = build_spec(spec_data(tmp_path, entrants=7, rounds=4))
    assert spec.design.total_games == 4 * 3 * 2
    games = [g for s in plan_study(spec) for g in s.games]
    assert [g.game_index for g in games] == list(range(6))  # board b: games 2b, 2b + 1
    assert {frozenset(g.seat_lineup) for g in games} == {frozenset(p) for p in [(0, 3), (1, 4), (2, 5)]}
    schedule = SwissSchedule.from_spec(spec)
    assert [g for s in schedule.series() for g in s.games] == games  # the schedule's round 1 is the plan's
    again = spec_from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again.design.format == "swiss" and again.design.total_games == spec.design.total_games
    bigger = build_spec(spec_data(tmp_path, entrants=8, rounds=4, skills=[k / 6 for k in range(7)] + [0.5]))
    with pytest.raises(ExtensionError, match="^lineup: a swiss tournament is not extended"):
        check_extension(spec, bigger)
    # through the store, as `arena run` meets it: one line
    ResultStore(spec.study_dir).write_spec(spec)
    with pytest.raises(SpecMismatchError) as err:
        ResultStore(bigger.study_dir).write_spec(bigger)
    assert str(err.value).startswith("lineup: a swiss tournament is not extended") and "\n" not in str(err.value)


def test_check_describes_the_swiss_design(tmp_path, capsys):
    from jobs.cli import main

    lineup = "".join(f'[[lineup]]\nagent = "fake"\nlabel = "S{k}"\nparams = {{ skill = {k / 4} }}\n\n' for k in range(5))
    toml = tmp_path / "swiss.toml"
    toml.write_text(f'''[study]
name = "swiss"
seed = 11
results_dir = "{tmp_path / 'studies'}"

[game]
name = "count"
max_steps = 6
num_players = 2

[budget]
iterations = 3

[design]
format = "swiss"
rounds = 3

[tracking]
enabled = false

{lineup}''')
    assert main(["run", str(toml), "--check"]) == 0
    out = capsys.readouterr().out
    assert "swiss tournament, 3 rounds = 12 games" in out
    assert "swiss of 5 entrants: 3 rounds x 2 tables" in out and "S0 vs S2, S1 vs S3" in out and "bye" in out
    toml.write_text(toml.read_text().replace("rounds = 3", "rounds = 5"))
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(toml), "--check"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("design.rounds: a swiss of 5 entrants has at most 4 rounds (each entrant meets each "
                        "other at most once), got 5; use a round robin to meet everyone") and "\n" not in err


# --- end to end on Ray ----------------------------------------------------------------------------
def test_a_swiss_tournament_runs_and_resumes_on_ray_playing_nothing_twice(tmp_path, ray_local):
    from cluster.run.driver import run_study

    skills = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    tracked = spec_data(tmp_path / "ref", skills=skills)
    tracked["tracking"].update(enabled=True, experiment="swiss")
    reference = run_study(build_spec(tracked), progress=False, plugins=PLUGINS, warm_up=False)
    from mlflow.tracking import MlflowClient

    run = MlflowClient(tracking_uri=tracked["tracking"]["uri"]).get_run(reference.mlflow_run_id)
    top = reference.swiss.standings[0]
    assert run.data.metrics[f"swiss_points/{top['entrant']}"] == top["points"]
    assert run.data.metrics["swiss/rounds"] == 3 and "rating/S5" in run.data.metrics
    spec = build_spec(spec_data(tmp_path / "cut", skills=skills))
    assert reference.games_done == reference.games_total == spec.design.total_games == 3 * 3 * 2
    # the same tournament interrupted after 8 games (round 2 partly played)
    stop_after = 8
    seen = []

    def on_progress(rows):
        seen.append(rows[0]["game_index"])
        if len(seen) >= stop_after:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study(spec, progress=False, plugins=PLUGINS, warm_up=False, on_progress=on_progress, flush_games=1)
    at_cut = len(ResultStore(spec.study_dir).finished_games())
    assert 0 < at_cut < spec.design.total_games
    resumed = run_study(spec, num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)  # another count
    assert resumed.games_skipped == at_cut and resumed.games_replayed == 0
    assert resumed.games_played + at_cut == resumed.games_done == spec.design.total_games
    rows = ResultStore(spec.study_dir).read()
    assert not rows.duplicated(["game_index", "seat"]).any()
    # every entrant once a round, no pair twice, and the same games as the uninterrupted run
    by_round = rows.assign(round=rows["game_index"] // (3 * 2)).groupby("round")
    for _, games in by_round:
        assert sorted(games["label"].value_counts().to_dict().items()) == [(f"S{k}", 2) for k in range(6)]
    pairs = rows.groupby("board_seed")["label"].apply(lambda labels: tuple(sorted(set(labels))))
    assert len(pairs) == 9 and pairs.nunique() == 9
    expected = ResultStore(reference.study_dir).read()
    columns = ["game_index", "seat", "label", "result", "board_seed"]
    pd.testing.assert_frame_equal(rows[columns].sort_values(["game_index", "seat"]).reset_index(drop=True),
                                  expected[columns].sort_values(["game_index", "seat"]).reset_index(drop=True))
    # the standings: printed, written, and the leaderboard beside them
    assert resumed.swiss is not None and resumed.swiss.rounds_read == 3
    assert resumed.swiss.standings == reference.swiss.standings
    assert resumed.swiss.standings[0]["entrant"] in ("S4", "S5") and resumed.swiss.rematches == 0
    report = Path(spec.study_dir) / "report"
    assert {"leaderboard.md", "swiss.md", "swiss_standings.csv"} <= {p.name for p in report.iterdir()}
    assert resumed.leaderboard is not None
    from cluster.analysis.report import report_study

    assert "**Swiss standings** after 3 of 3 rounds" in report_study(spec.study_dir, plot=False)
