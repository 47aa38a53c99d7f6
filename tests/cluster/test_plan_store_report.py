"""The plan (determinism, seeds), the results store (resume semantics) and the report tables."""
from __future__ import annotations

import math
import os
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from cluster.spec.plan import board_seed_sequence, plan_study, seat_seed_sequence
from cluster.analysis.report import by_condition_markdown, result_table, to_markdown, win_rate_plot, write_tables
from cluster.stats import wilson_interval
from cluster.results.store import ResultStore, SpecMismatchError, StoreError
from jobs.spec import load_spec

SPEC = """
[study]
name = "plan"
seed = 2026

[game]
name = "pommerman"
mode = "{mode}"

[budget]
iterations = 5

[design]
{design}

[[lineup]]
agent = "random"
label = "A"

[[lineup]]
agent = "random"
label = "B"

[[lineup]]
agent = "random"
label = "C"

[[lineup]]
agent = "random"
label = "D"
"""


def make_spec(tmp_path, design="seeds = 3\ngames_per_seed = 4", mode="ffa", overrides=()):
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(design=design, mode=mode))
    return load_spec(path, overrides=overrides)


def entropy(seq: np.random.SeedSequence) -> tuple:
    return tuple(seq.generate_state(4))


# --- plan ---------------------------------------------------------------------------
def test_plan_seeds_design(tmp_path):
    spec = make_spec(tmp_path)
    plan = plan_study(spec)
    assert [s.series_id for s in plan] == [0, 1, 2]  # one series per board seed
    games = [g for s in plan for g in s.games]
    assert [g.game_index for g in games] == list(range(12))
    for g in games:
        assert g.board_seed == g.game_index // 4 == g.series_id
        assert g.index_in_series == g.game_index % 4
        rotation = g.index_in_series % 4
        assert g.seat_lineup == tuple((seat + rotation) % 4 for seat in range(4))
        assert g.spawn_key == (1, g.game_index)
    # over the games of a board every lineup entry sits at every seat once
    for s in plan:
        assert {tuple(sorted(col)) for col in zip(*(g.seat_lineup for g in s.games))} == {(0, 1, 2, 3)}


def test_plan_is_deterministic(tmp_path):
    a, b = make_spec(tmp_path), make_spec(tmp_path)
    assert plan_study(a) == plan_study(b)
    assert plan_study(a) == plan_study(a)


def test_plan_without_rotation_and_per_game_series(tmp_path):
    spec = make_spec(tmp_path, overrides=["design.rotate_seats=false", "design.series_by=game"])
    plan = plan_study(spec)
    assert len(plan) == 12 and all(len(s.games) == 1 for s in plan)
    assert all(s.series_id == s.games[0].game_index and s.games[0].index_in_series == 0 for s in plan)
    assert all(s.games[0].seat_lineup == (0, 1, 2, 3) for s in plan)


def test_plan_runs_design(tmp_path):
    spec = make_spec(tmp_path, design="runs = 2\nrounds = 5\nseeds = 3")
    plan = plan_study(spec)
    assert [len(s.games) for s in plan] == [5, 5]
    for s in plan:
        assert [g.index_in_series for g in s.games] == list(range(5))
        assert [g.board_seed for g in s.games] == [0, 1, 2, 0, 1]  # round % seeds, same in every run
        assert [g.game_index for g in s.games] == [s.series_id * 5 + k for k in range(5)]


def test_team_rotation_keeps_teams_together(tmp_path):
    spec = make_spec(tmp_path, mode="team")
    for g in (g for s in plan_study(spec) for g in s.games):
        # seats 0+2 and 1+3 are teams: lineup 0 and 2 always share a team
        assert g.seat_lineup[0] % 2 == g.seat_lineup[2] % 2
        assert g.seat_lineup[1] % 2 == g.seat_lineup[3] % 2


def test_seeds_depend_only_on_study_seed_and_index(tmp_path):
    small = plan_study(make_spec(tmp_path))
    other = plan_study(make_spec(tmp_path, design="seeds = 8\ngames_per_seed = 4",
                                 overrides=["design.series_by=game", "lineup.0.label=Z",
                                            "study.max_in_flight=2"]))
    by_index = {g.game_index: g for s in other for g in s.games}
    for g in (g for s in small for g in s.games):
        h = by_index[g.game_index]
        assert entropy(board_seed_sequence(2026, g)) == entropy(board_seed_sequence(2026, h))
        for seat in range(4):
            assert entropy(seat_seed_sequence(2026, g, seat)) == entropy(seat_seed_sequence(2026, h, seat))
        # the documented derivation
        assert entropy(board_seed_sequence(2026, g)) == entropy(
            np.random.SeedSequence(2026, spawn_key=(0, g.board_seed)))
        assert entropy(seat_seed_sequence(2026, g, 3)) == entropy(
            np.random.SeedSequence(2026, spawn_key=(1, g.game_index, 3)))
    games = [g for s in small for g in s.games]
    seat_seeds = {entropy(seat_seed_sequence(2026, g, seat)) for g in games for seat in range(4)}
    assert len(seat_seeds) == 4 * len(games)  # all distinct
    assert len({entropy(board_seed_sequence(2026, g)) for g in games}) == 3  # one per board seed
    assert entropy(board_seed_sequence(2027, games[0])) != entropy(board_seed_sequence(2026, games[0]))


# --- store --------------------------------------------------------------------------
def rows_of(game_index, results=("win", "loss", "loss", "loss"), labels=("A", "B", "C", "D"),
            series_id=None, **extra):
    return [dict(study_id="s", series_id=game_index if series_id is None else series_id,
                 game_index=game_index, index_in_series=0, board_seed=game_index,
                 seed_entropy="2026", seat=seat, label=labels[seat], agent="random",
                 config_hash="abc", team=seat, result=results[seat], reward=1.0 if results[seat] == "win" else -1.0,
                 length=123, mean_iterations=0.0, mean_ms=0.1, invalid_actions=0, budget="5 it",
                 error=None, finished_at=datetime(2026, 1, 1, tzinfo=timezone.utc), worker="w1", **extra)
            for seat in range(4)]


def test_store_append_twice_no_duplicates(tmp_path):
    store = ResultStore(tmp_path / "study")
    assert store.read().empty and store.finished_games() == set()
    assert store.append(rows_of(0) + rows_of(1)) == 2
    assert store.append(rows_of(1) + rows_of(2)) == 1  # game 1 skipped
    assert store.append(rows_of(0)) == 0  # nothing new: no file written
    assert len(list((tmp_path / "study" / "results").glob("part-*.parquet"))) == 2
    df = store.read()
    assert len(df) == 12 and not df.duplicated(["game_index", "seat"]).any()
    assert store.finished_games() == {0, 1, 2}
    # a new store on the same directory (a resumed driver) sees the same
    again = ResultStore(tmp_path / "study")
    assert again.finished_games() == {0, 1, 2}
    assert again.append(rows_of(2)) == 0
    pd.testing.assert_frame_equal(again.read(), df)


def test_store_duplicates_within_a_batch_and_types(tmp_path):
    store = ResultStore(tmp_path)
    assert store.append(rows_of(5) + rows_of(5)) == 1
    df = store.read()
    assert len(df) == 4 and list(df["seat"]) == [0, 1, 2, 3]
    assert df["game_index"].dtype == np.int64 and df["reward"].dtype == np.float64
    assert df["finished_at"].iloc[0] == pd.Timestamp("2026-01-01", tz="UTC")
    assert df["error"].isna().all()


def test_store_read_deduplicates_defensively(tmp_path):
    store = ResultStore(tmp_path)
    store.append(rows_of(0))
    part = next((tmp_path / "results").glob("part-*.parquet"))
    os.link(part, part.with_name("part-zz-copy.parquet"))  # as if written twice
    assert len(store.read()) == 4


def test_store_ignores_temp_files_and_keeps_extras(tmp_path):
    store = ResultStore(tmp_path)
    (tmp_path / "results" / ".tmp-123-part-x.parquet").write_bytes(b"half a file")
    store.append(rows_of(0, view_range=2))
    df = store.read()
    assert list(df["view_range"]) == [2] * 4
    assert not any(p.name.startswith(".tmp") and p.name != ".tmp-123-part-x.parquet"
                   for p in (tmp_path / "results").iterdir())


def test_store_row_errors(tmp_path):
    store = ResultStore(tmp_path)
    bad = rows_of(0)
    bad[1]["result"] = "draw"
    with pytest.raises(StoreError, match=r"rows\[1\]\.result: must be one of"):
        store.append(bad)
    bad = rows_of(0)
    del bad[2]["label"]
    with pytest.raises(StoreError, match=r"rows\[2\]\.label: required column missing"):
        store.append(bad)
    assert store.finished_games() == set() and store.read().empty


def test_store_corrupt_results_file_named(tmp_path):
    store = ResultStore(tmp_path)
    (tmp_path / "results" / "part-broken.parquet").write_bytes(b"garbage")
    with pytest.raises(StoreError, match=r"part-broken\.parquet: unreadable results file"):
        store.read()


def test_learned_state_round_trip(tmp_path):
    store = ResultStore(tmp_path)
    assert store.latest_learned_state(0) is None
    pop = {"population": np.arange(12, dtype=np.float32).reshape(3, 4), "counts": np.array([1, 2, 3])}
    store.save_learned_state(3, 0, "FEMCTS / a", {"population": np.zeros((3, 4), np.float32)})
    store.save_learned_state(3, 1, "FEMCTS / a", pop)
    store.save_learned_state(3, 1, "TD", {"weights": np.ones(5)})
    index, states = store.latest_learned_state(3)
    assert index == 1 and set(states) == {"FEMCTS / a", "TD"}
    assert set(states["FEMCTS / a"]) == {"population", "counts"}
    for name, array in pop.items():
        np.testing.assert_array_equal(states["FEMCTS / a"][name], array)
        assert states["FEMCTS / a"][name].dtype == array.dtype
    np.testing.assert_array_equal(states["TD"]["weights"], np.ones(5))
    assert store.latest_learned_state(4) is None
    # files load with allow_pickle=False
    for path in (tmp_path / "learned").rglob("*.npz"):
        with np.load(path, allow_pickle=False) as npz:
            [npz[k] for k in npz.files]


def test_learned_state_of_a_sparse_table_is_stored_small(tmp_path):
    """A learned table that is mostly zeros (MCTS-TD's 4^8 entries, saved after
    every game) is stored compressed and loads back exactly."""
    table = np.zeros(4 ** 8)
    rng = np.random.default_rng(0)
    table[rng.choice(table.size, 2000, replace=False)] = rng.normal(size=2000)
    path = ResultStore(tmp_path).save_learned_state(0, 0, "MCTS-TD", {"weights": table})
    assert path.stat().st_size < table.nbytes // 10
    np.testing.assert_array_equal(ResultStore(tmp_path).learned_state_at(0, 0)["MCTS-TD"]["weights"], table)


def test_learned_state_rejects_objects_and_reports_corruption(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(StoreError, match=r"object arrays cannot be stored"):
        store.save_learned_state(0, 0, "A", {"x": np.array([{"a": 1}], dtype=object)})
    path = store.save_learned_state(0, 2, "A", {"x": np.ones(3)})
    path.write_bytes(path.read_bytes()[:40])  # truncated
    with pytest.raises(StoreError, match=r"000002--A\.npz: corrupt learned-state file"):
        store.latest_learned_state(0)


def test_write_spec_refuses_result_changes(tmp_path):
    spec = make_spec(tmp_path)
    store = ResultStore(tmp_path / "study")
    store.write_spec(spec)
    assert store.read_spec().design.seeds == 3
    store.write_spec(spec)  # resume with the same spec
    store.write_spec(make_spec(tmp_path, overrides=["tracking.experiment=other", "study.max_in_flight=2"]))
    with pytest.raises(SpecMismatchError, match=r"^design\.seeds: differs from the study .*stored '3', now '4'"):
        store.write_spec(make_spec(tmp_path, overrides=["design.seeds=4"]))
    with pytest.raises(SpecMismatchError, match=r"^game\.view_range: differs"):
        store.write_spec(make_spec(tmp_path, overrides=["game.view_range=1"]))
    with pytest.raises(SpecMismatchError, match=r"^study\.seed: differs"):
        store.write_spec(make_spec(tmp_path, overrides=["study.seed=1"]))


# --- report -------------------------------------------------------------------------
def hand_made_results() -> pd.DataFrame:
    """A: 5 wins, 3 ties, 2 losses (+1 error); B: 0 wins, 3 ties, 7 losses."""
    rows = []
    outcomes = {"A": ["win"] * 5 + ["tie"] * 3 + ["loss"] * 2 + ["error"],
                "B": ["loss"] * 5 + ["tie"] * 3 + ["loss"] * 2 + ["error"]}
    for g in range(11):
        for seat, label in enumerate(("A", "B")):
            rows.append({"game_index": g, "seat": seat, "label": label, "agent": "random",
                         "result": outcomes[label][g], "vr": g % 2})
    return pd.DataFrame(rows)


def test_wilson_known_values():
    lo, hi = wilson_interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = wilson_interval(10, 10)
    assert round(lo, 4) == 0.7225 and hi == 1.0
    lo, hi = wilson_interval(45, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.3561, 0.5476)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_result_table_numbers():
    table = result_table(hand_made_results())
    assert list(table.index) == ["A", "B"] and table.index.name == "Player"
    a, b = table.loc["A"], table.loc["B"]
    assert (a["games"], a["wins"], a["ties"], a["losses"], a["errors"]) == (10, 5, 3, 2, 1)
    assert (a["win_rate"], a["tie_rate"], a["loss_rate"]) == (0.5, 0.3, 0.2)
    assert (round(a["win_lo"], 4), round(a["win_hi"], 4)) == (0.2366, 0.7634)
    assert a["Win"] == "50.0% (23.7-76.3)"
    assert (b["wins"], b["ties"], b["losses"]) == (0, 3, 7)
    assert b["Win"] == "0.0% (0.0-27.8)" and b["Loss"].startswith("70.0% (")


def test_markdown_and_csv(tmp_path):
    table = result_table(hand_made_results())
    md = to_markdown(table)
    lines = md.splitlines()
    assert lines[0] == "| Player | Games | Win | Tie | Loss | Errors |"
    assert lines[1] == "|---|---:|---:|---:|---:|---:|"
    assert lines[2] == "| A | 10 | 50.0% (23.7-76.3) | 30.0% (10.8-60.3) | 20.0% (5.7-51.0) | 1 |"
    csv_path, md_path = write_tables(table, tmp_path)
    back = pd.read_csv(csv_path, index_col="Player")
    assert list(back.index) == ["A", "B"] and back.loc["A", "wins"] == 5
    assert md_path.read_text() == md


def test_result_table_by_column_and_plots(tmp_path):
    table = result_table(hand_made_results(), by="vr")
    assert table.index.names == ["vr", "Player"]
    assert table.loc[(0, "A"), "games"] + table.loc[(1, "A"), "games"] == 10
    assert "| vr | Player |" in to_markdown(table)
    assert win_rate_plot(hand_made_results(), tmp_path / "bars.png").stat().st_size > 0
    assert win_rate_plot(hand_made_results(), tmp_path / "lines.png", by="vr").stat().st_size > 0


def test_by_condition_tables_for_a_study_with_conditions():
    df = hand_made_results().rename(columns={"vr": "vary.view_range"})
    text = "\n".join(by_condition_markdown(df))
    assert "By view_range:" in text and "| view_range | Player |" in text
    assert text.count("| 0 | A |") == 1 and text.count("| 1 | B |") == 1
    assert by_condition_markdown(hand_made_results().drop(columns="vr")) == []


def test_empty_table():
    table = result_table(pd.DataFrame(columns=["label", "result"]))
    assert table.empty and "Win" in table.columns
    assert to_markdown(table).startswith("| Player | Games | Win | Tie | Loss |")


def test_report_from_store_round_trip(tmp_path):
    store = ResultStore(tmp_path)
    store.append(rows_of(0) + rows_of(1, results=("tie", "tie", "loss", "loss")))
    table = result_table(store.read())
    assert list(table.index) == ["A", "B", "C", "D"]
    assert table.loc["A", "wins"] == 1 and table.loc["A", "ties"] == 1 and table.loc["C", "losses"] == 2


def test_compact_merges_parts_without_losing_or_duplicating(tmp_path):
    store = ResultStore(tmp_path / "study")
    for game in range(5):
        rows = [{"study_id": "s", "series_id": 0, "game_index": game, "index_in_series": game,
                 "board_seed": 0, "seat": seat, "label": f"L{seat}", "agent": "a", "result": "tie"}
                for seat in range(2)]
        if game == 4:  # a condition column only in later rows
            for row in rows:
                row["vary.view_range"] = 2
        store.append(rows)
    before = store.read()
    assert len(list((tmp_path / "study" / "results").iterdir())) == 5
    assert store.compact() == 5
    files = list((tmp_path / "study" / "results").iterdir())
    assert len(files) == 1
    after = ResultStore(tmp_path / "study").read()
    assert len(after) == 10 and not after.duplicated(["game_index", "seat"]).any()
    assert after[["game_index", "seat", "label"]].equals(before[["game_index", "seat", "label"]])
    assert after["vary.view_range"].notna().sum() == 2
    assert ResultStore(tmp_path / "study").finished_games() == set(range(5))
    assert store.compact() == 0
