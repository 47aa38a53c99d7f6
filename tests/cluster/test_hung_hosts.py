"""Hung hosts and agents' conduct (issue 54, point 4).

A host call that runs far past what its games should take is abandoned: the host is
killed, its games are played again elsewhere, every game once (real local Ray, a fake
agent that hangs its host on one game: cluster.run.scheduler.HangRule). An agent that
overruns its ms budget or plays invalid actions has them counted per seat in its rows,
shown in the result table and MLflow's metrics; ``budget.overrun_policy = "forfeit"``
makes it lose on time (cluster.run.conduct). Stores written before these columns existed
still read, report and resume.
"""
from __future__ import annotations

import logging
import os
import signal
import time

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cluster.analysis.report import report_study, result_table, to_markdown
from cluster.results.store import SCHEMA, ResultStore
from cluster.run.driver import Recorder, plan_and_resume, run_study
from cluster.run.play import build_agents, play_game, play_recorded_game
from cluster.run.scheduler import HangRule
from cluster.run.tracker import Tally
from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from cluster.spec.plan import plan_study

from misbehaving_agents import INVALID_ACTION, PLUGINS

#: Columns that may differ between two runs of the same spec (timing and placement).
NONDETERMINISTIC = ["mean_ms", "finished_at", "worker"]


def make_spec(tmp_path, name="t", *, lineup=None, design=None, budget=None, study=None, max_steps=6):
    return build_spec({
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies"), **(study or {})},
        "game": {"name": "count", "max_steps": max_steps},
        "budget": budget or {"iterations": 3},
        "design": design or {"seeds": 2, "games_per_seed": 2},
        "lineup": lineup or [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
        "tracking": {"enabled": False, "uri": f"sqlite:///{tmp_path / 'mlflow.db'}"},
    })


def play_all(spec) -> pd.DataFrame:
    """Every game of ``spec`` played in this process, as rows (no Ray)."""
    rows = []
    for series in plan_study(spec):
        agents = build_agents(spec)
        for task in series.games:
            rows += play_game(spec, task, agents)[0]
    return pd.DataFrame(rows)


def seat_rows(df: pd.DataFrame, label: str) -> pd.DataFrame:
    return df[df["label"] == label]


# --- settings -------------------------------------------------------------------------
def test_conduct_and_hang_settings_default_validate_and_round_trip(tmp_path):
    spec = make_spec(tmp_path)
    assert (spec.overrun_tolerance, spec.overrun_policy) == (0.5, "count")
    assert (spec.hang_factor, spec.hang_floor_seconds, spec.hang_abandons) == (4.0, 5.0, 2)
    stored = spec.to_dict()
    assert "overrun_policy" not in stored["budget"] and "hang_factor" not in stored["study"]  # spec.json as before
    flat = spec.flat_params()
    assert flat["budget.overrun_policy"] == "count" and flat["study.hang_abandons"] == "2"

    tuned = make_spec(tmp_path, budget={"ms": 20, "overrun_tolerance": 1, "overrun_policy": "forfeit"},
                      study={"hang_factor": 8, "hang_floor_seconds": 0.5, "hang_abandons": 3})
    assert (tuned.overrun_tolerance, tuned.overrun_policy) == (1.0, "forfeit")
    assert HangRule.of(tuned) == HangRule(8.0, 0.5, 3)
    from cluster.spec.build import spec_from_dict
    assert spec_from_dict(tuned.to_dict()) == tuned

    bad = [({"budget": {"iterations": 3, "overrun_policy": "warn"}},
            r"^budget\.overrun_policy: must be one of \['count', 'forfeit'\], got 'warn'"),
           ({"budget": {"iterations": 3, "overrun_tolerance": -0.1}}, r"^budget\.overrun_tolerance: must be a number"),
           ({"study": {"hang_factor": 0.5}}, r"^study\.hang_factor: must be a number in \[1, 1000\], got 0\.5"),
           ({"study": {"hang_floor_seconds": 0}}, r"^study\.hang_floor_seconds: must be a number of seconds"),
           ({"study": {"hang_abandons": 0}}, r"^study\.hang_abandons: must be a positive int, got 0"),
           ({"lineup": [{"agent": "fake", "budget": {"ms": 5, "overrun_policy": "forfeit"}}, {"agent": "fake"}]},
            r"^lineup\[0\]\.budget\.overrun_policy: unknown key")]
    for edit, message in bad:
        with pytest.raises(SpecError, match=message):
            make_spec(tmp_path, budget=edit.get("budget"), study=edit.get("study"), lineup=edit.get("lineup"))


def test_a_changed_hang_setting_resumes_but_a_changed_overrun_policy_is_refused(tmp_path):
    spec = make_spec(tmp_path, "resume-settings")
    plan_and_resume(spec)
    plan_and_resume(make_spec(tmp_path, "resume-settings", study={"hang_floor_seconds": 30}))  # how hosts are watched
    with pytest.raises(Exception, match=r"^budget\.overrun_policy: differs"):  # what a game's result is
        plan_and_resume(make_spec(tmp_path, "resume-settings", budget={"iterations": 3, "overrun_policy": "forfeit"}))


def test_hang_allowance_scales_with_the_games_and_doubles_per_abandon():
    rule = HangRule(factor=4, floor_seconds=5, abandons=2)
    assert rule.allowance(10, None, 0.0) is None  # nothing measured: no call is abandoned
    assert rule.allowance(10, 0.01, 0.02) == 5  # 4 x 0.1 s of games is under the floor
    assert rule.allowance(100, 0.1, 0.5) == pytest.approx(40)  # 4 x 100 games x 0.1 s
    assert rule.allowance(1, 0.1, 3.0) == pytest.approx(12)  # one game: at least the longest seen
    assert rule.allowance(1, 0.1, 3.0, abandoned_before=1) == pytest.approx(24)
    with pytest.raises(ValueError):
        HangRule(factor=0.5)


# --- conduct, counted per seat (no Ray) ---------------------------------------------------
def test_overruns_and_invalid_actions_are_counted_per_seat(tmp_path):
    # A plays an invalid action at every 2nd decision; B sleeps 400 ms at every 3rd, under a
    # 100 ms budget whose tolerance (1.0) puts the limit at 200 ms (the others take microseconds,
    # far from it even on a loaded machine): 6 decisions a game.
    spec = make_spec(tmp_path, budget={"ms": 100, "overrun_tolerance": 1.0}, design={"seeds": 1, "games_per_seed": 2},
                     lineup=[{"agent": "fake_misbehaving", "label": "A", "params": {"invalid_every": 2}},
                             {"agent": "fake_misbehaving", "label": "B",
                              "params": {"slow_every": 3, "slow_ms": 400}}])
    df = play_all(spec)
    assert (df["result"] != "error").all() and (df["length"] == 6).all()
    a, b = seat_rows(df, "A"), seat_rows(df, "B")
    assert a["invalid_actions"].tolist() == [3, 3] and a["overruns"].tolist() == [0, 0]
    assert b["overruns"].tolist() == [2, 2] and b["invalid_actions"].tolist() == [0, 0]
    assert df["forfeit"].isna().all()  # policy "count": counted, played on

    table = result_table(df)
    assert table.loc["A", "invalid_actions"] == 6 and table.loc["B", "overruns"] == 4
    text = to_markdown(table)
    header = text.splitlines()[0]
    assert "| Overruns | Invalid actions |" in header and "Forfeits" not in header
    assert text.splitlines()[2].endswith("| 0 | 6 |") and text.splitlines()[3].endswith("| 4 | 0 |")

    tally = Tally()
    tally.add(df.to_dict("records"))
    metrics = tally.metrics()
    assert metrics["invalid_actions/A"] == 6 and metrics["overruns/B"] == 4
    assert "overruns/A" not in metrics and "invalid_actions/B" not in metrics  # logged once nonzero


def test_conduct_reaches_mlflow_as_per_entrant_metrics(tmp_path):
    from mlflow.tracking import MlflowClient

    from cluster.run.tracker import StudyTracker

    spec = build_spec({
        "study": {"name": "conduct-mlflow", "seed": 3, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 4}, "budget": {"iterations": 2},
        "design": {"seeds": 1, "games_per_seed": 2},
        "lineup": [{"agent": "fake_misbehaving", "label": "A", "params": {"invalid_every": 1}},
                   {"agent": "fake", "label": "B"}],
        "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "conduct"}})
    tracker = StudyTracker(spec)
    run_id = tracker.start()
    tracker.add(play_all(spec).to_dict("records"))
    tracker.finish()
    metrics = MlflowClient(tracking_uri=spec.tracking.uri).get_run(run_id).data.metrics
    assert metrics["invalid_actions/A"] == 8  # every decision of its two games
    assert "invalid_actions/B" not in metrics and "overruns/A" not in metrics


def test_a_clean_study_shows_no_conduct_columns_and_iteration_budgets_never_overrun(tmp_path):
    # B is as slow as above, but under an iteration budget: no time limit, nothing counted,
    # and the forfeit policy changes no move (a game stays a pure function of its seeds).
    lineup = [{"agent": "fake", "label": "A"},
              {"agent": "fake_misbehaving", "label": "B", "params": {"slow_every": 3, "slow_ms": 120}}]
    design = {"seeds": 1, "games_per_seed": 2}
    counted = play_all(make_spec(tmp_path, lineup=lineup, design=design))
    forfeit = play_all(make_spec(tmp_path, lineup=lineup, design=design,
                                 budget={"iterations": 3, "overrun_policy": "forfeit"}))
    assert (counted["overruns"] == 0).all() and counted["forfeit"].isna().all()
    pd.testing.assert_frame_equal(counted.drop(columns=NONDETERMINISTIC), forfeit.drop(columns=NONDETERMINISTIC))
    header = to_markdown(result_table(counted)).splitlines()[0]
    assert "Overruns" not in header and "Invalid" not in header and "Forfeits" not in header


def test_the_forfeit_policy_loses_the_game_on_time(tmp_path):
    # B's 3rd decision takes 600 ms under a 200 ms budget (limit 300 ms): B loses at step 3.
    spec = make_spec(tmp_path, budget={"ms": 200, "overrun_policy": "forfeit"}, design={"seeds": 1, "games_per_seed": 2},
                     lineup=[{"agent": "fake", "label": "A"},
                             {"agent": "fake_misbehaving", "label": "B", "params": {"slow_every": 3, "slow_ms": 600}}])
    df = play_all(spec)
    a, b = seat_rows(df, "A"), seat_rows(df, "B")
    assert a["result"].tolist() == ["win", "win"] and b["result"].tolist() == ["loss", "loss"]
    task = plan_study(spec)[0].games[0]  # no record: it would end before its game does (replays check that)
    assert play_recorded_game(spec, task, build_agents(spec))[2] is None
    assert a["reward"].tolist() == [1.0, 1.0] and b["reward"].tolist() == [-1.0, -1.0]
    assert (df["length"] == 2).all()  # the step of the overrun is not played
    assert b["overruns"].tolist() == [1, 1] and a["forfeit"].isna().all()
    assert b["forfeit"].str.match(r"lost on time: decision 3 took \d+\.\d ms, over its 200 ms budget \+ 50% "
                                  r"tolerance \(300 ms\)").all()
    assert (df["error"].isna()).all()
    text = to_markdown(result_table(df))
    assert "| Overruns | Forfeits |" in text.splitlines()[0] and text.splitlines()[3].endswith("| 2 | 2 |")


# --- stores written before these columns existed ------------------------------------------
def test_a_store_without_the_conduct_columns_reads_reports_and_resumes(tmp_path):
    spec = make_spec(tmp_path, "old-store", lineup=[
        {"agent": "fake_misbehaving", "label": "A", "params": {"invalid_every": 2}}, {"agent": "fake", "label": "B"}])
    prepared = plan_and_resume(spec)
    # the first series as an earlier release stored it: a part without overruns and forfeit
    first = prepared.runs[0]
    agents = build_agents(spec)
    rows = [row for task in first.games for row in play_game(spec, task, agents)[0]]
    old_schema = pa.schema([f for f in SCHEMA if f.name not in ("overruns", "forfeit")])
    old_rows = [{k: v for k, v in row.items() if k in old_schema.names} for row in rows]
    pq.write_table(pa.Table.from_pylist(old_rows, schema=old_schema),
                   spec.study_dir / "results" / "part-20250101T000000-old.parquet")

    resumed = plan_and_resume(spec)
    assert resumed.skipped == len(first.games) and len(resumed.runs) == len(prepared.runs) - 1
    recorder = Recorder(spec, resumed.store, resumed.finished)
    for run in resumed.runs:
        agents = build_agents(spec)
        for task in run.games:
            rows, learned = play_game(spec, task, agents)
            recorder(run, task, rows, learned, 0.01)

    df = ResultStore(spec.study_dir).read()
    assert sorted(df["game_index"].unique()) == list(range(spec.design.total_games))
    old = df["game_index"].isin([t.game_index for t in first.games])
    assert df.loc[old, "overruns"].isna().all() and (df.loc[~old, "overruns"] == 0).all()
    table = result_table(df)
    assert table.loc["A", "invalid_actions"] == 3 * spec.design.total_games and table.loc["A", "overruns"] == 0
    ResultStore(spec.study_dir).compact()  # the old part and the new ones merge
    text = report_study(spec.study_dir, plot=False)
    assert "Invalid actions" in text and "Overruns" not in text


# --- hung hosts (a real local Ray) ------------------------------------------------------------
def hang_spec(tmp_path, name, hang: dict, *, abandons=2, floor=1.0):
    return make_spec(tmp_path, name, design={"seeds": 4, "games_per_seed": 2}, max_steps=4,
                     study={"hang_floor_seconds": floor, "hang_abandons": abandons},
                     lineup=[{"agent": "fake_misbehaving", "label": "A", "params": {"hang_game": 5, **hang}},
                             {"agent": "fake", "label": "B"}])


def assert_every_game_once(spec) -> pd.DataFrame:
    df = ResultStore(spec.study_dir).read()
    assert sorted(df["game_index"].unique()) == list(range(spec.design.total_games))
    assert len(df) == spec.design.total_games * 2 and not df.duplicated(["game_index", "seat"]).any()
    return df


def test_a_host_hung_on_one_game_is_abandoned_and_its_games_played_elsewhere(ray_local, tmp_path, caplog):
    marker = tmp_path / "hang-once"
    marker.write_text("x")
    spec = hang_spec(tmp_path, "hung-once", {"hang_file": str(marker), "hang_seconds": 120})
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="cluster.run.scheduler"):
        result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    seconds = time.monotonic() - t0
    assert not marker.exists() and result.host_abandons >= 1 and result.counts["abandoned"] >= 1
    assert seconds < 60, f"the study took {seconds:.0f} s: the hung host was not abandoned in time"
    df = assert_every_game_once(spec)
    assert (df["result"] != "error").all()  # the hung game was played again, and finished
    assert any("over its" in r.getMessage() and "killing the host" in r.getMessage() for r in caplog.records)


def test_a_game_that_always_hangs_becomes_an_error_and_the_study_goes_on(ray_local, tmp_path):
    spec = hang_spec(tmp_path, "hung-always", {"hang_seconds": 120})
    t0 = time.monotonic()
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    seconds = time.monotonic() - t0
    assert seconds < 60, f"the study took {seconds:.0f} s"
    df = assert_every_game_once(spec)
    hung = df[df["game_index"] == 5]
    assert (hung["result"] == "error").all() and hung["error"].str.startswith("hung: game 5 ").all()
    assert (df[df["game_index"] != 5]["result"] != "error").all()
    assert result.error_games == 1 and result.host_abandons >= 2
    assert "errors" in result.table.columns and result.table.loc["A", "errors"] == 1


def test_a_stopped_host_is_killed_and_replaced(ray_local, tmp_path):
    # SIGSTOP: the host neither answers nor dies (issue 54's frozen host); ray.kill ends it.
    marker = tmp_path / "stop-once"
    marker.write_text("x")
    spec = hang_spec(tmp_path, "stopped", {"stop_file": str(marker)})
    pid_file = tmp_path / "stop-once.pid"
    try:
        t0 = time.monotonic()
        result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
        assert time.monotonic() - t0 < 60 and result.host_abandons >= 1
        assert_every_game_once(spec)
        pid = int(pid_file.read_text())
        for _ in range(100):  # the killed host's process is gone (not left stopped)
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid), f"the stopped host {pid} was not killed"
    finally:
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie is dead
    except FileNotFoundError:
        return False
