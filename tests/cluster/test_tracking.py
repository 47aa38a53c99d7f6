"""Studies in MLflow: one run per study directory, the model-training view, descriptions,
artifact locations, and what `arena ui` opens (checked in headless Chromium when installed)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from cluster.spec.build import build_spec
from cluster.run.driver import run_study
from cluster.run.tracker import RunContext
from cluster.tracking import EXPERIMENT_KIND_TAG, NOTE_TAG, RUN_FILE, TRAINING_KIND, find_run_record, normalize_uri

from conftest import PLUGINS, free_port, wait_until_healthy

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def make_spec(tmp_path, results_dir, *, experiment="arena-test", seeds=2, uri=None):
    return build_spec({
        "study": {"name": "same-name", "seed": 3, "results_dir": str(tmp_path / results_dir)},
        "game": {"name": "count", "max_steps": 6},
        "budget": {"iterations": 2},
        "design": {"seeds": seeds, "games_per_seed": 2},
        "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
        "tracking": {"uri": uri or f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": experiment},
    })


def client_for(spec):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=normalize_uri(spec.tracking.uri))


def test_one_run_per_study_directory_and_resume_reuses_it(ray_local, tmp_path):
    one = make_spec(tmp_path, "first", seeds=2)
    two = make_spec(tmp_path, "second", seeds=3)
    r1 = run_study(one, num_workers=2, progress=False, plugins=PLUGINS,
                   context=RunContext(command="arena run x.toml", scale=None))
    r2 = run_study(two, num_workers=2, progress=False, plugins=PLUGINS,
                   context=RunContext(command="arena run x.toml --set design.seeds=3",
                                      overrides=("design.seeds=3", "study.results_dir=second"), scale=0.5))
    assert r1.mlflow_run_id != r2.mlflow_run_id
    client = client_for(one)
    run1, run2 = client.get_run(r1.mlflow_run_id), client.get_run(r2.mlflow_run_id)
    # each run has its own params, metrics and a name that tells them apart
    assert run1.data.params["design.seeds"] == "2" and run2.data.params["design.seeds"] == "3"
    assert run1.data.metrics["games/done"] == 4 and run2.data.metrics["games/done"] == 6
    assert run1.info.run_name == "same-name"
    assert run2.info.run_name == "same-name scale=0.5 design.seeds=3"
    assert run1.data.tags["arena.results_dir"] == str((tmp_path / "first").resolve())
    assert run2.data.tags["arena.results_dir"] == str((tmp_path / "second").resolve())
    assert run2.data.tags["arena.scale"] == "0.5" and run1.data.tags["arena.scale"] == "1"
    for run in (run1, run2):
        assert run.data.tags["arena.version"] and run.data.tags["arena.git_commit"]
        assert run.data.params["A.agent"] == "fake"  # agent params under the seat's label
    # the run id is kept in the study directory, next to spec.json
    for result in (r1, r2):
        assert (result.study_dir / RUN_FILE).is_file() and (result.study_dir / "spec.json").is_file()
        assert find_run_record(result.study_dir, one.tracking.uri, "arena-test")["run_id"] == result.mlflow_run_id
    # a resume of each reuses exactly its own run and plays nothing; the run's results/
    # artifacts are replaced, not added to (part files get new names when they are merged)
    (part,) = (r1.study_dir / "results").glob("part-*.parquet")
    part.rename(part.with_name("part-renamed-as-if-merged-again.parquet"))
    again1 = run_study(one, num_workers=2, progress=False, plugins=PLUGINS)
    logged = [a.path for a in client.list_artifacts(r1.mlflow_run_id, "results")]
    assert logged == ["results/part-renamed-as-if-merged-again.parquet"]
    again2 = run_study(two, num_workers=2, progress=False, plugins=PLUGINS)
    assert (again1.mlflow_run_id, again2.mlflow_run_id) == (r1.mlflow_run_id, r2.mlflow_run_id)
    assert again1.games_played == 0 and again1.games_skipped == 4
    assert client.get_run(r1.mlflow_run_id).data.metrics["games/skipped"] == 4
    runs = client.search_runs([run1.info.experiment_id])
    assert len(runs) == 2
    # a third study directory with the same study name and overrides gets a new, distinct run
    three = make_spec(tmp_path, "third", seeds=2)
    r3 = run_study(three, num_workers=2, progress=False, plugins=PLUGINS)
    run3 = client.get_run(r3.mlflow_run_id)
    assert r3.mlflow_run_id not in (r1.mlflow_run_id, r2.mlflow_run_id)
    assert run3.info.run_name.startswith("same-name @") and run3.info.run_name != run1.info.run_name


def test_experiment_kind_description_and_artifacts_beside_the_database(ray_local, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    spec = make_spec(tmp_path, "studies", experiment="kinds", uri=f"sqlite:///{store / 'mlflow.db'}")
    cwd = os.getcwd()
    os.chdir(tmp_path)  # artifacts must not follow the working directory
    try:
        result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS,
                           context=RunContext(command="arena run kinds.toml"))
    finally:
        os.chdir(cwd)
    client = client_for(spec)
    exp = client.get_experiment_by_name("kinds")
    assert exp.tags[EXPERIMENT_KIND_TAG] == TRAINING_KIND
    assert exp.artifact_location == str((store / "mlartifacts" / "kinds").resolve())
    run = client.get_run(result.mlflow_run_id)
    assert run.info.artifact_uri.startswith(str(store / "mlartifacts"))
    assert (store / "mlartifacts" / "kinds" / result.mlflow_run_id / "artifacts" / "spec.json").is_file()
    assert not (tmp_path / "mlruns").exists()
    note = run.data.tags[NOTE_TAG]
    assert "| Player | Games | Win | Tie | Loss |" in note and "| A | 4 |" in note
    assert "arena run kinds.toml" in note
    assert "4 played, 0 skipped (already in the store), 0 retried on another host, 0 errored" in note


def test_tracking_server_keeps_its_own_artifact_root(monkeypatch):
    from cluster.tracking import artifact_location

    assert artifact_location("http://127.0.0.1:5000", "x") is None
    assert artifact_location("sqlite:////data/m.db", "a b") == "/data/mlartifacts/a_b"


# --- `arena ui` ---------------------------------------------------------------------------
def arena(*args, cwd=None, timeout=120, env=None):
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def test_ui_refuses_without_a_store_and_creates_nothing(tmp_path):
    out = arena("ui", "--url-only", cwd=tmp_path)
    assert out.returncode == 2 and "no MLflow store at" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "mlflow.db").exists()
    out = arena("ui", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2 and "no MLflow run recorded" in out.stderr
    assert list(tmp_path.iterdir()) == []


def _chromium_dom(url: str, budget_ms: int = 15000) -> str:
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    try:
        out = subprocess.run(
            [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--window-size=1600,1200",
             f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
            capture_output=True, text=True, timeout=180)
        return out.stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _js_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"{CHROMIUM} not found (Debian's `chromium` package; "
                                                   f".ci/run installs it when apt works)")
def test_arena_ui_url_shows_the_run_and_its_results_in_chromium(ray_local, tmp_path):
    spec = make_spec(tmp_path, "studies", experiment="ui-test")
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS,
                       context=RunContext(command="arena run ui.toml"))
    metrics = client_for(spec).get_run(result.mlflow_run_id).data.metrics
    port = free_port()
    log = open(tmp_path / "ui.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", "ui", str(result.study_dir), "--port", str(port)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        url = proc.stdout.readline().strip()
        assert url == (f"http://127.0.0.1:{port}/#/experiments/{result.mlflow_experiment_id}/runs/"
                       f"{result.mlflow_run_id}?workflowType=machine_learning")
        wait_until_healthy(f"http://127.0.0.1:{port}", proc, 180, "the MLflow UI", tmp_path / "ui.log")
        # the run page: its name, the W/T/L metrics with their values, the description's table
        dom = _chromium_dom(url)
        assert result.mlflow_run_name in dom
        assert "W/A" in dom and _js_number(metrics["W/A"]) in dom
        assert "Tie" in dom and "Loss" in dom
        # the experiment's runs page (what `arena ui` prints without a study): the run and W/T/L columns
        runs_url = arena("ui", "--tracking-uri", spec.tracking.uri, "--port", str(port), "--url-only").stdout.strip()
        assert "viewStateShareKey=" in runs_url
        dom = _chromium_dom(runs_url)
        assert result.mlflow_run_name in dom and "W/A" in dom and "T/B" in dom
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def test_only_trackings_own_failures_make_a_study_run_untracked(tmp_path):
    """open_tracker runs untracked when MLflow, its database or the network fail, and lets
    any other error through: an agent's code failing while the run's parameters are described
    was blamed on tracking ('MLflow tracking store ... cannot be opened (AttributeError: ...)')."""
    import sqlite3

    from cluster.run.driver import _tracking_fault

    bad = tmp_path / "mlflow.db"
    bad.write_bytes(b"not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        sqlite3.connect(bad).execute("select * from runs")
    assert _tracking_fault(caught.value)
    assert _tracking_fault(PermissionError(13, "Permission denied", str(bad)))
    namespace: dict = {}
    exec(compile("def describe(config):\n    return config.ruleset\n", "/repo/agents/pommerman/_agent.py", "exec"),
         namespace)
    with pytest.raises(AttributeError) as caught:
        namespace["describe"](object())
    assert not _tracking_fault(caught.value)
