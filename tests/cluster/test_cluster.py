"""Ray execution and MLflow tracking of studies (cluster.run.play / scheduler / study / tracking).

Most tests use the fake ``count`` game and ``fake`` agent from conftest (fast,
controllable); the end-to-end test plays real Pommerman. The multi-node fault
test runs last: it shuts the shared local Ray down and builds its own cluster.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from cluster.run.play import ROW_COLUMNS, build_agents, play_game
from cluster.spec.plan import plan_study
from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.spec.build import build_spec

from conftest import PLUGINS

#: Columns that may differ between two runs of the same spec (timing and placement).
NONDETERMINISTIC = ["mean_ms", "finished_at", "worker"]


def make_spec(tmp_path, name="t", *, game=None, lineup=None, design=None, budget=None, tracking=None,
              study=None):
    data = {
        "study": {"name": name, "seed": 7, "results_dir": str(tmp_path / "studies"), **(study or {})},
        "game": game or {"name": "count", "max_steps": 10},
        "budget": budget or {"iterations": 3},
        "design": design or {"seeds": 3, "games_per_seed": 2},
        "lineup": lineup or [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
        "tracking": tracking or {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False},
    }
    return build_spec(data)


def rows_of(result) -> pd.DataFrame:
    return ResultStore(result.study_dir).read()


def assert_complete_once(spec, df: pd.DataFrame):
    total = spec.design.total_games
    assert sorted(df["game_index"].unique()) == list(range(total))
    assert len(df) == total * len(spec.lineup)
    assert not df.duplicated(["game_index", "seat"]).any()


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=NONDETERMINISTIC).sort_values(["game_index", "seat"]).reset_index(drop=True)


# --- play_game (no Ray) ----------------------------------------------------------------
def test_play_game_rows_and_agent_error(tmp_path):
    spec = make_spec(tmp_path, lineup=[{"agent": "fake", "label": "A", "params": {"fail_prob": 1.0}},
                                       {"agent": "fake", "label": "B", "params": {"learn": True}}])
    task = plan_study(spec)[0].games[0]
    rows, learned = play_game(spec, task, build_agents(spec))
    assert [list(r) for r in rows] == [list(ROW_COLUMNS)] * 2
    assert {r["result"] for r in rows} == {"error"}
    assert rows[0]["error"].startswith("A: RuntimeError: fake failure")
    assert "B" in learned  # learned state is still returned after a failed game

    spec = make_spec(tmp_path, lineup=[{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}])
    rows, learned = play_game(spec, task, build_agents(spec))
    assert learned == {}
    assert {r["result"] for r in rows} <= {"win", "tie", "loss"} and rows[0]["length"] == 10
    assert rows[0]["error"] is None and rows[0]["budget"] == "3 it"


# --- end to end against a real MLflow tracking server ----------------------------------
# (the real MLflow server is the session fixture ``mlflow_server`` of conftest.py)


def test_end_to_end_pommerman_parquet_and_mlflow_agree(ray_local, mlflow_server, tmp_path):
    from mlflow.tracking import MlflowClient

    spec = make_spec(
        tmp_path, "e2e-pommerman",
        game={"name": "pommerman", "mode": "ffa", "ruleset": "canonical", "max_steps": 40},
        lineup=[{"agent": "random", "label": f"R{i}"} for i in range(4)],
        design={"seeds": 2, "games_per_seed": 2},
        tracking={"uri": mlflow_server, "experiment": "arena-test"})
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS)
    df = rows_of(result)
    assert_complete_once(spec, df)
    assert result.games_played == 4 and result.error_games == 0

    client = MlflowClient(tracking_uri=mlflow_server)
    run = client.get_run(result.mlflow_run_id)
    assert run.info.run_name == spec.study_id and run.info.status == "FINISHED"
    assert run.data.tags["arena.study_id"] == spec.study_id
    flat = spec.flat_params()
    assert {k: run.data.params[k] for k in flat} == flat
    metrics = run.data.metrics
    assert metrics["games/done"] == 4 and metrics["games/played"] == 4 and metrics["games/skipped"] == 0
    for label, rows in df.groupby("label"):
        for result_name, key in (("win", "W"), ("tie", "T"), ("loss", "L")):
            expected = (rows["result"] == result_name).mean()
            assert metrics[f"{key}/{label}"] == pytest.approx(expected)
        win = (rows["result"] == "win").mean()
        assert metrics[f"W_lo/{label}"] <= win <= metrics[f"W_hi/{label}"]
    # W/T/L come first in MLflow's (sorted) metric lists
    assert sorted(metrics)[:12] == sorted(f"{k}/R{i}" for k in "WTL" for i in range(4))
    artifacts = {a.path for a in client.list_artifacts(result.mlflow_run_id)}
    assert {"results", "report", "spec.json"} <= artifacts
    report = {a.path for a in client.list_artifacts(result.mlflow_run_id, "report")}
    assert "report/results_table.md" in report and "report/win_rate.png" in report
    parquet = client.list_artifacts(result.mlflow_run_id, "results")
    assert len(parquet) == len(list((Path(result.study_dir) / "results").glob("part-*.parquet")))

    # Re-running the finished study reuses the run and plays nothing.
    again = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS)
    assert again.mlflow_run_id == result.mlflow_run_id
    assert again.games_played == 0 and again.games_skipped == 4
    assert len(rows_of(again)) == len(df)


def test_tracking_batches_and_child_runs(tmp_path, monkeypatch):
    """Metrics go out with log_batch only (never one request per value); a runs x
    rounds design gets one child run per run."""
    from mlflow.tracking import MlflowClient

    from cluster.run.tracker import StudyTracker

    spec = make_spec(tmp_path, "tracked", design={"runs": 2, "rounds": 3},
                     tracking={"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "t"})
    calls = []
    for name in ("log_metric", "log_param"):
        monkeypatch.setattr(MlflowClient, name, lambda *a, **k: calls.append(name))
    tracker = StudyTracker(spec, flush_games=4)
    run_id = tracker.start()
    agents = build_agents(spec)
    for series in plan_study(spec):
        for task in series.games:
            rows, _ = play_game(spec, task, agents)
            tracker.add(rows)
    tracker.finish()
    assert calls == []
    client = MlflowClient(tracking_uri=spec.tracking.uri)
    assert client.get_run(run_id).data.metrics["games/done"] == 6
    children = client.search_runs([tracker.experiment_id], f"tags.mlflow.parentRunId = '{run_id}'")
    assert sorted(c.data.tags["arena.series_id"] for c in children) == ["0", "1"]
    assert all(c.data.metrics["games/done"] == 3 for c in children)
    # Resume finds the same run.
    assert StudyTracker(spec).start() == run_id


# --- faults ------------------------------------------------------------------------------
def test_agent_that_raises_is_recorded_and_study_finishes(ray_local, tmp_path):
    spec = make_spec(tmp_path, "raising", design={"seeds": 4, "games_per_seed": 2},
                     lineup=[{"agent": "fake", "label": "A", "params": {"fail_prob": 0.5}},
                             {"agent": "fake", "label": "B"}])
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS)
    df = rows_of(result)
    assert_complete_once(spec, df)
    errors = df[df["result"] == "error"]
    assert 0 < result.error_games < 8 and len(errors) == 2 * result.error_games
    assert errors["error"].str.startswith("A: RuntimeError: fake failure").all()


def test_host_death_retries_the_game_elsewhere(ray_local, tmp_path):
    die = tmp_path / "die-once"
    die.write_text("x")
    spec = make_spec(tmp_path, "host-death", design={"seeds": 2, "games_per_seed": 3},
                     lineup=[{"agent": "fake", "label": "A", "params": {"die_file": str(die), "learn": True}},
                             {"agent": "fake", "label": "B"}])
    # No warm-up: it would step on the deadly file itself (on a task, not a host).
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert not die.exists() and result.host_retries == 1
    assert_complete_once(spec, rows_of(result))


def test_reproducible_with_1_and_2_workers(ray_local, tmp_path):
    base = dict(design={"seeds": 3, "games_per_seed": 3},
                lineup=[{"agent": "fake", "label": "A", "params": {"learn": True}},
                        {"agent": "fake", "label": "B", "params": {"learn": True}}])
    one = run_study(make_spec(tmp_path / "one", "repro", **base), num_workers=1, progress=False, plugins=PLUGINS)
    two = run_study(make_spec(tmp_path / "two", "repro", **base), num_workers=2, progress=False, plugins=PLUGINS)
    pd.testing.assert_frame_equal(comparable(rows_of(one)), comparable(rows_of(two)))
    assert (one.workers, two.workers) == (1, 2)


def test_reproducible_pommerman_1_and_2_workers(ray_local, tmp_path):
    base = dict(game={"name": "pommerman", "max_steps": 30},
                lineup=[{"agent": "random", "label": f"R{i}"} for i in range(4)],
                design={"seeds": 2, "games_per_seed": 2})
    one = run_study(make_spec(tmp_path / "one", "repro-pm", **base), num_workers=1, progress=False)
    two = run_study(make_spec(tmp_path / "two", "repro-pm", **base), num_workers=2, progress=False)
    pd.testing.assert_frame_equal(comparable(rows_of(one)), comparable(rows_of(two)))


# --- multi-node (last: replaces the shared local Ray by its own cluster) -----------------
@pytest.mark.slow
def test_node_killed_mid_study_every_game_once(tmp_path, _tests_on_pythonpath):
    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False,
        "_system_config": {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                           "health_check_failure_threshold": 3}})
    try:
        victim = cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        spec = make_spec(tmp_path, "node-death", design={"seeds": 6, "games_per_seed": 4},
                         lineup=[{"agent": "fake", "label": "A", "params": {"learn": True, "sleep_ms": 15}},
                                 {"agent": "fake", "label": "B", "params": {"sleep_ms": 15}}])
        out = {}

        def study():
            try:
                out["result"] = run_study(spec, num_workers=3, progress=False, plugins=PLUGINS)
            except BaseException as exc:  # pragma: no cover - reported below
                out["error"] = exc

        thread = threading.Thread(target=study)
        thread.start()
        deadline = time.monotonic() + 120

        def hosts_that_played() -> int:
            store = ResultStore(spec.study_dir)
            return store.read()["worker"].nunique() if store.finished_games() else 0

        # Kill only once every host (one per node) has played a game: on a loaded machine the
        # victim's host may still be starting after other hosts' first games, and killing it
        # then loses no game (nothing to retry, which this test is about).
        while hosts_that_played() < 3:
            assert thread.is_alive() and time.monotonic() < deadline, out
            time.sleep(0.05)
        cluster.remove_node(victim, allow_graceful=False)
        thread.join(timeout=180)
        assert not thread.is_alive(), "study did not finish after the node died"
        assert "error" not in out, out.get("error")
        result = out["result"]
        df = rows_of(result)
        assert_complete_once(spec, df)
        assert result.host_retries >= 1
        assert df["worker"].nunique() >= 3
    finally:
        ray.shutdown()
        cluster.shutdown()
