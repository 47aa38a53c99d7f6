"""Tournaments: formats and their plans, extension, the crosstable and leaderboard, and a
tournament end to end on Ray (the fake ``count`` game of conftest, entrants of known skill)."""
from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from cluster.analysis.leaderboard import crosstable, entrant_pairs, leaderboard, leaderboard_markdown
from cluster.analysis.ratings import RatingError
from cluster.results.store import ResultStore, SpecMismatchError
from cluster.run.play import build_agents, play_game
from cluster.run.standings import LiveStandings
from cluster.spec.plan import plan_study
from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from cluster.spec.tournament import (ExtensionError, balance_text, check_extension, gauntlet_tables, plan_tournament,
                                     round_robin_tables)

from conftest import PLUGINS


def spec_data(tmp_path, entrants=5, players=4, design=None, skills=None, name="t"):
    skills = skills or [k / 10 for k in range(entrants)]
    return {
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 6, "num_players": players},
        "budget": {"iterations": 3},
        "design": {"format": "round_robin", **(design or {})},
        "lineup": [{"agent": "fake", "label": f"S{k}", "params": {"skill": float(skills[k])}}
                   for k in range(entrants)],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    }


def games_of(spec):
    return [g for s in plan_study(spec) for g in s.games]


# --- formats and plans ---------------------------------------------------------------------
def test_round_robin_is_the_complete_balanced_design(tmp_path):
    spec = build_spec(spec_data(tmp_path, entrants=8, players=4, design={"rounds": 2}))
    plan = plan_tournament(spec)
    assert len(plan.tables) == 70 and spec.design.total_games == 70 * 2 * 4 == len(games_of(spec))
    pairs = Counter(p for t in plan.tables for p in itertools.combinations(sorted(t.entrants), 2))
    assert set(pairs.values()) == {15} and len(pairs) == 28  # C(6, 2) tables for every pair
    seats = Counter((e, seat) for g in games_of(spec) if g.board_seed % 2 == 0
                    for seat, e in enumerate(g.seat_lineup))
    assert set(seats.values()) == {35}  # every entrant in every seat, C(7, 3) per round
    games = games_of(spec)
    assert sorted(g.game_index for g in games) == list(range(len(games)))
    assert all(g.spawn_key == (1, g.game_index) for g in games)
    # one board per table and round, all its rotations on it; played round by round
    by_board = {}
    for g in games:
        by_board.setdefault(g.board_seed, []).append(g)
    assert all(len(v) == 4 and len({frozenset(x.seat_lineup) for x in v}) == 1 for v in by_board.values())
    rounds = [g.board_seed % 2 for g in games]
    assert rounds == sorted(rounds)
    assert "exactly balanced" in balance_text(spec, plan)


def test_the_plan_does_not_depend_on_anything_but_the_spec(tmp_path):
    a = build_spec(spec_data(tmp_path, entrants=6))
    b = build_spec(spec_data(tmp_path / "elsewhere", entrants=6))
    assert games_of(a) == games_of(b)
    other_seed = spec_data(tmp_path, entrants=6)
    other_seed["study"]["seed"] = 12
    assert [g.seat_lineup for g in games_of(build_spec(other_seed))] != [g.seat_lineup for g in games_of(a)]


def test_a_lineup_study_plans_the_same_games_as_before(tmp_path):
    """The pinned fingerprint was taken on main before tournaments existed."""
    data = spec_data(tmp_path, entrants=4)
    data["design"] = {"seeds": 3, "games_per_seed": 4}
    spec = build_spec(data)
    digest = hashlib.sha256(repr([(s.series_id, g) for s in plan_study(spec) for g in s.games]).encode())
    assert digest.hexdigest()[:16] == "b6deef5f7c049ed5"
    stored = spec.to_dict()
    assert "format" not in stored["design"] and "candidates" not in stored["design"]
    assert not any(k.startswith(("design.format", "design.candidates")) for k in spec.flat_params())


def test_fewer_entrants_than_seats_play_without_duplicated_entries(tmp_path):
    spec = build_spec(spec_data(tmp_path, entrants=2, players=4))
    games = games_of(spec)
    assert len(games) == 4 and all(sorted(Counter(g.seat_lineup).values()) == [2, 2] for g in games)
    rows, _ = play_game(spec, games[0], build_agents(spec))
    assert sorted(r["label"] for r in rows) == ["S0", "S0", "S1", "S1"]
    # a gauntlet of one candidate against one field entrant: the candidate in every seat once
    data = spec_data(tmp_path, entrants=2, players=4, design={"format": "gauntlet", "candidates": ["S1"]})
    games = games_of(build_spec(data))
    assert sorted(g.seat_lineup.index(1) for g in games) == [0, 1, 2, 3]
    assert all(Counter(g.seat_lineup) == Counter({0: 3, 1: 1}) for g in games)


def test_an_entrant_at_two_seats_plays_each_with_its_own_agent(tmp_path):
    spec = build_spec(spec_data(tmp_path, entrants=2, players=4))
    agents = build_agents(spec)
    seated = agents.seated((0, 1, 0, 1))
    assert len({id(a) for a in seated}) == 4 and seated[0] is agents[0]
    assert [i for i, _ in agents.first_instances()] == [0, 1]


def test_gauntlet_tables_meet_the_field_only():
    tables = gauntlet_tables(6, 3, candidates=(0, 4))
    assert all(sum(e in (0, 4) for e in t) == 1 for t in tables)
    field = [1, 2, 3, 5]
    assert sorted(tuple(sorted(t)) for t in tables) == sorted(
        tuple(sorted((c,) + s)) for c in (0, 4) for s in itertools.combinations(field, 2))
    assert gauntlet_tables(3, 4, candidates=(2,)) == [(2, 0, 1, 0), (2, 1, 0, 1)]


def test_team_games_seat_one_entrant_per_team(tmp_path):
    data = spec_data(tmp_path, entrants=3)
    data["game"] = {"name": "pommerman", "mode": "team", "max_steps": 20}
    data["lineup"] = [{"agent": "random", "label": f"R{k}"} for k in range(3)]
    spec = build_spec(data)
    games = games_of(spec)
    assert spec.seat_teams == (0, 1, 0, 1) and len(games) == 3 * 2  # 3 pairs x 2 sides
    for g in games:
        assert g.seat_lineup[0] == g.seat_lineup[2] and g.seat_lineup[1] == g.seat_lineup[3]
        assert g.seat_lineup[0] != g.seat_lineup[1]


@pytest.mark.parametrize("design, message", [
    ({"seeds": 4}, "design.seeds: a tournament plays every table on its own board"),
    ({"format": "knockout"}, "design.format: must be one of"),  # swiss: tests/cluster/test_swiss.py
    ({"format": "gauntlet"}, "design.candidates: a gauntlet needs its candidates"),
    ({"format": "gauntlet", "candidates": ["S9"]}, "design.candidates[0]: no lineup label 'S9'"),
    ({"format": "gauntlet", "candidates": ["S0", "S1"]}, "design.candidates: every entrant is a candidate"),
    ({"candidates": ["S0"]}, "design.candidates: only with format = \"gauntlet\""),
    ({"rotate_seats": False}, "design.rotate_seats: a tournament plays"),
    ({"series_by": "set", "seeds_per_set": 2}, "design.series_by: a tournament's series"),
    ({"stop": {"sprt": {"elo0": 0, "elo1": 20}, "between": ["S0", "S1"]}}, "design.stop: a two-entrant"),
])
def test_bad_tournament_designs_are_one_line_errors(tmp_path, design, message):
    with pytest.raises(SpecError) as info:
        build_spec(spec_data(tmp_path, entrants=2, players=2, design=design))
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_lineup_study_still_needs_one_entry_per_seat(tmp_path):
    data = spec_data(tmp_path, entrants=3, players=2)
    data["design"] = {"seeds": 2}
    with pytest.raises(SpecError, match=r"^lineup: the game 'count' has 2 players, but the lineup has 3 entries"):
        build_spec(data)


# --- extension ---------------------------------------------------------------------------------
def test_adding_an_entrant_appends_games_and_keeps_every_played_one(tmp_path):
    for design in ({"rounds": 2}, {"format": "gauntlet", "candidates": ["S4"]}):
        old = build_spec(spec_data(tmp_path, entrants=5, players=3, design=design))
        data = spec_data(tmp_path, entrants=6, players=3, design=design)
        new = build_spec(data)
        check_extension(old, new)
        before, after = games_of(old), {g.game_index: g for g in games_of(new)}
        assert all(after[g.game_index] == g for g in before)
        added = [g for i, g in after.items() if i >= len(before)]
        assert len(after) > len(before) and all(5 in g.seat_lineup for g in added)
    with pytest.raises(ExtensionError, match=r"^lineup: entrant \['S4'\] of the stored tournament is missing"):
        check_extension(build_spec(spec_data(tmp_path, entrants=5)), build_spec(spec_data(tmp_path, entrants=4)))
    # a table of fewer entrants than seats is re-seated by a new entrant: refused, naming the game
    with pytest.raises(ExtensionError, match=r"^lineup: adding \['S2'\] changes stored game 0"):
        check_extension(build_spec(spec_data(tmp_path, entrants=2)), build_spec(spec_data(tmp_path, entrants=3)))


def test_the_store_accepts_an_extension_and_refuses_a_removal(tmp_path):
    store = ResultStore(tmp_path / "study")
    store.write_spec(build_spec(spec_data(tmp_path, entrants=4, players=3)))
    store.write_spec(build_spec(spec_data(tmp_path, entrants=5, players=3)))  # a pure extension
    assert len(json.loads(store.spec_path.read_text())["lineup"]) == 5
    with pytest.raises(SpecMismatchError, match="never removed"):
        store.write_spec(build_spec(spec_data(tmp_path, entrants=4, players=3)))
    changed = spec_data(tmp_path, entrants=5, players=3)
    changed["budget"] = {"iterations": 4}
    with pytest.raises(SpecMismatchError, match=r"^budget.iterations: differs"):
        store.write_spec(build_spec(changed))


# --- crosstable and leaderboard -------------------------------------------------------------------
def simulated_rows(strengths, rounds=1, players=4, seed=0):
    """FFA games among entrants of known strength (Plackett-Luce winners via Gumbel noise)."""
    rng = np.random.default_rng(seed)
    rows, game = [], 0
    for r in range(rounds):
        for board, table in enumerate(itertools.combinations(range(len(strengths)), players)):
            for rotation in range(players):
                seats = table[rotation:] + table[:rotation]
                perf = [strengths[e] + rng.gumbel() for e in seats]
                best = int(np.argmax(perf))
                rows += [{"study_id": "x", "game_index": game, "board_seed": board * rounds + r, "seat": s,
                          "team": s, "label": f"E{e}", "result": "win" if s == best else "loss"}
                         for s, e in enumerate(seats)]
                game += 1
    return pd.DataFrame(rows)


def test_the_leaderboard_ranks_entrants_of_known_strength():
    strengths = [0.0, 0.4, 0.8, 1.6, 2.4, 3.2]
    board = leaderboard(simulated_rows(strengths, rounds=2), seed=1, bootstrap=300)
    assert list(board.table.index[:3]) == ["E5", "E4", "E3"]
    table = board.table
    assert (table["rank_lo"] <= table["rank"]).all() and (table["rank"] <= table["rank_hi"]).all()
    assert table.loc["E5", "rank_hi"] == 1 and table.loc["E0", "rank_lo"] >= 4
    assert (table["lo"] <= table["rating"]).all() and (table["rating"] <= table["hi"]).all()
    assert abs(table["rating"].mean()) < 1e-6 and not board.warnings
    # the same rows and seed give the same leaderboard
    again = leaderboard(simulated_rows(strengths, rounds=2), seed=1, bootstrap=300)
    pd.testing.assert_frame_equal(board.table, again.table)


def test_the_crosstable_counts_every_pair_once_and_symmetrically():
    rows = simulated_rows([0.0, 1.0, 2.0, 3.0, 4.0], players=4)
    cross = crosstable(rows).set_index(["entrant", "opponent"])
    # 5 tables x 4 games x 6 pairs = 120 pairwise results, each seen from both sides
    assert cross["results"].sum() == 2 * 120
    for (a, b), r in cross.iterrows():
        mirror = cross.loc[(b, a)]
        assert (r["wins"], r["ties"], r["losses"]) == (mirror["losses"], mirror["ties"], mirror["wins"])
        assert r["score"] == pytest.approx(1 - mirror["score"])


def test_two_seats_of_one_entrant_are_not_compared_and_few_boards_warn():
    rows = pd.DataFrame([{"study_id": "x", "game_index": 0, "board_seed": 0, "seat": s, "team": s,
                          "label": label, "result": result}
                         for s, (label, result) in enumerate([("A", "win"), ("B", "loss"), ("B", "loss"),
                                                               ("B", "loss")])])
    pairs = entrant_pairs(rows)
    assert len(pairs) == 3 and set(pairs["first"]) | set(pairs["second"]) == {"A", "B"}
    board = leaderboard(rows, bootstrap=20)
    assert board.warnings and board.warnings[0].startswith("only 1 board (fewer than 10)")
    assert "**Warning:** only 1 board" in leaderboard_markdown(board)
    with pytest.raises(RatingError):
        leaderboard(rows.assign(result="error"), bootstrap=20)


def test_live_standings_refresh_at_a_bounded_rate():
    rows = simulated_rows([0.0, 1.0, 2.0, 3.0], players=2).to_dict("records")
    now = [0.0]
    shown = []
    live = LiveStandings(build_spec_stub(), write=shown.append, refresh_seconds=30.0, bootstrap=20,
                         clock=lambda: now[0])
    for game in range(0, len(rows), 2):
        now[0] += 1.0
        live.add(rows[game:game + 2])
    # 12 games, one a second: one refresh at 30 s at most, none before
    assert live.refreshes == 0 and not shown
    now[0] += 30.0
    live.add([])
    assert live.refreshes == 1 and shown[0].startswith("leaderboard after")


def build_spec_stub():
    class Design:
        total_games = 12

    class Spec:
        seed = 0
        design = Design()

    return Spec()


# --- end to end on Ray -------------------------------------------------------------------------
def test_a_tournament_runs_resumes_and_extends_on_ray(tmp_path, ray_local):
    from cluster.run.driver import run_study

    from mlflow.tracking import MlflowClient

    skills = [0.0, 0.2, 0.5, 0.8, 1.0]
    tracked = spec_data(tmp_path, entrants=4, players=3, skills=skills, design={"rounds": 3})
    tracked["tracking"].update(enabled=True, experiment="tournaments")
    first = build_spec(tracked)
    result = run_study(first, progress=False, plugins=PLUGINS, warm_up=False)
    assert result.counts["played"] == first.design.total_games == 4 * 3 * 3
    board = result.leaderboard
    assert board is not None and board.table.index[0] == "S3" and board.boards == 12
    report = tmp_path / "studies" / "t" / "report"
    assert {"leaderboard.md", "leaderboard.csv", "crosstable.csv"} <= {p.name for p in report.iterdir()}
    # the MLflow run: one metric per entrant and figure, the tables, the runs view with ratings
    client = MlflowClient(tracking_uri=first.tracking.uri)
    run = client.get_run(result.mlflow_run_id)
    assert run.data.metrics["rating/S3"] == pytest.approx(board.table.loc["S3", "rating"])
    assert run.data.metrics["rank_hi/S0"] == board.table.loc["S0", "rank_hi"]
    assert {a.path for a in client.list_artifacts(run.info.run_id, "tournament")} == {
        "tournament/leaderboard.json", "tournament/crosstable.json"}
    view = client.get_experiment(run.info.experiment_id).tags
    assert any("rating/S3" in value for value in view.values())
    # a fifth entrant: only the games of its tables are played, nothing is renumbered or replayed
    second = build_spec(spec_data(tmp_path, entrants=5, players=3, skills=skills, design={"rounds": 3}))
    result = run_study(second, progress=False, plugins=PLUGINS, warm_up=False)
    new_games = second.design.total_games - first.design.total_games
    assert result.counts == {"played": new_games, "skipped": first.design.total_games, "retried": 0,
                             "errored": 0, "replayed": 0}
    rows = ResultStore(second.study_dir).read()
    assert sorted(rows["game_index"].unique()) == list(range(second.design.total_games))
    assert (rows[rows["game_index"] >= first.design.total_games].groupby("game_index")["label"]
            .apply(lambda labels: "S4" in set(labels))).all()
    assert result.leaderboard.table.index[0] == "S4"
    # run again: nothing left to play
    again = run_study(second, progress=False, plugins=PLUGINS, warm_up=False)
    assert again.counts["played"] == 0 and again.counts["skipped"] == second.design.total_games


def test_report_reads_the_first_complete_rounds_of_a_round_robin(tmp_path):
    """``arena report --rounds N``: a tournament stopped before its last round reports its
    complete rounds only, a balanced design of its own; an incomplete round is refused."""
    from datetime import datetime, timezone

    from agents.registry import config_hash
    from cluster.analysis.report import RoundsError, report_study
    from cluster.results.store import ResultStore

    spec = build_spec(spec_data(tmp_path, entrants=3, players=2, design={"rounds": 3}))
    store = ResultStore(spec.study_dir)
    store.write_spec(spec)
    games = sorted(games_of(spec), key=lambda g: g.game_index)
    assert len(games) == 3 * 3 * 2
    rows = []
    for g in games:
        if g.board_seed % 3 == 2 and g.game_index % 4 == 0:
            continue  # round 3 is missing some of its games
        for seat, entry in enumerate(g.seat_lineup):
            rows.append(dict(study_id=spec.study_id, series_id=g.series_id, game_index=g.game_index,
                             index_in_series=g.index_in_series, board_seed=g.board_seed, seed_entropy="x", seat=seat,
                             label=spec.lineup[entry].label, agent="fake",
                             config_hash=config_hash("fake", spec.lineup[entry].config, spec.budget_for(entry)),
                             team=seat, result="win" if entry == max(g.seat_lineup) else "loss", reward=0.0,
                             length=3, died_at=None, mean_iterations=3.0, mean_ms=0.1, invalid_actions=0,
                             budget="3 it", error=None, finished_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                             worker="w", condition=""))
    store.append(rows)
    text = report_study(spec.study_dir, plot=False, rounds=2)
    assert text.splitlines()[0] == "t: 12 games (the first 2 of 3 rounds (12 games, every one complete))"
    assert "| 1 | S2 |" in text  # the highest entry wins every game
    with pytest.raises(RoundsError, match=r"round 3 has \d of its 6 games; the complete rounds are the first 2"):
        report_study(spec.study_dir, plot=False, rounds=3)
    with pytest.raises(RoundsError, match=r"must be in 1 \.\. 3"):
        report_study(spec.study_dir, plot=False, rounds=4)
