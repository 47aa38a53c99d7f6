"""Faults on the newer paths, with real processes: an MLflow tracking server that is down
at the start or killed (SIGKILL) mid-study, a study re-run into its directory after a
lineup or game change, an interrupted study resumed with another worker count. Each
asserts the stored rows (every game once), the MLflow run (one per study directory,
completed by the next run) and what Arena said. (The driver killed mid-study:
test_cluster.py; across a sequential stop: test_sequential.py.)"""
from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from cluster.spec.build import build_spec
from cluster.results.store import ResultStore, SpecMismatchError
from cluster.run.driver import run_study
from cluster.tracking import RUN_FILE, STUDY_TAG

from conftest import PLUGINS, free_port, wait_until_healthy

#: Columns that may differ between two runs of the same spec (timing and placement).
NONDETERMINISTIC = ["mean_ms", "finished_at", "worker"]


def make_spec(tmp_path, name, *, tracking=None, lineup=None, design=None, game=None):
    return build_spec({
        "study": {"name": name, "seed": 5, "results_dir": str(tmp_path / "studies")},
        "game": game or {"name": "count", "max_steps": 6},
        "budget": {"iterations": 2},
        "design": design or {"seeds": 4, "games_per_seed": 2},
        "lineup": lineup or [{"agent": "fake", "label": "A", "params": {"sleep_ms": 20}},
                             {"agent": "fake", "label": "B", "params": {"sleep_ms": 20}}],
        "tracking": tracking or {"enabled": False, "uri": f"sqlite:///{tmp_path / 'mlflow.db'}"},
    })


def assert_complete_once(spec):
    df = ResultStore(spec.study_dir).read()
    total = spec.design.total_games
    assert sorted(df["game_index"].unique()) == list(range(total))
    assert len(df) == total * len(spec.lineup)
    assert not df.duplicated(["game_index", "seat"]).any()
    return df


def waited_seconds(caplog, pattern: str) -> float:
    """The seconds a warning matching ``pattern`` (with a ``(?P<s>...)`` group) reports."""
    for record in caplog.records:
        found = re.search(pattern, record.getMessage())
        if found:
            print(record.getMessage())  # what Arena said (pytest -rP shows it)
            return float(found.group("s"))
    raise AssertionError(f"no warning matching {pattern!r}: {[r.getMessage() for r in caplog.records]}")


def study_runs(client, experiment: str):
    """The top-level MLflow runs of ``experiment`` (not the per-series child runs)."""
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else [r for r in client.search_runs([exp.experiment_id])
                                   if "mlflow.parentRunId" not in r.data.tags]


class TrackingServer:
    """A real MLflow tracking server on 127.0.0.1 with a SQLite store in ``root``, which a
    test can kill (SIGKILL to its process group) and start again on the same port and store."""

    def __init__(self, root: Path):
        self.root, self.port, self.proc = root, free_port(), None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self):
        cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
               "--backend-store-uri", f"sqlite:///{self.root / 'mlflow.db'}",
               "--artifacts-destination", str(self.root / "artifacts"), "--workers", "1"]
        self.log = open(self.root / "server.log", "a")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.root,
                                     start_new_session=True)
        wait_until_healthy(self.url, self.proc, 120, "mlflow server", self.root / "server.log")

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


@pytest.fixture
def own_server(tmp_path):
    server = TrackingServer(tmp_path)
    server.start()
    yield server
    server.kill()


# --- the tracking server ----------------------------------------------------------------------
def test_server_down_at_the_start_runs_untracked_and_a_later_run_logs_it(ray_local, mlflow_server, tmp_path,
                                                                         caplog):
    """Documented behaviour: one warning line, the study runs untracked with every game
    stored; run again once the server is up: nothing replayed, the study logged."""
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    spec = make_spec(tmp_path, "down-at-start", tracking={"uri": down, "experiment": "faults-down"})
    with caplog.at_level(logging.WARNING, logger="cluster"):
        result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert result.mlflow_run_id is None and result.games_played == spec.design.total_games
    assert_complete_once(spec)
    assert not (spec.study_dir / RUN_FILE).exists()
    waited = waited_seconds(caplog, rf"MLflow unavailable at {re.escape(down)} \(no answer to GET /health: "
                                    r".*; gave up after (?P<s>[0-9.]+) s\); running without tracking")
    assert waited < 10, "MLflow's client retries (minutes) before giving up"

    up = make_spec(tmp_path, "down-at-start", tracking={"uri": mlflow_server, "experiment": "faults-down"})
    again = run_study(up, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert again.games_played == 0 and again.games_skipped == spec.design.total_games
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_server)
    [run] = study_runs(client, "faults-down")
    assert run.info.run_id == again.mlflow_run_id and run.info.status == "FINISHED"
    assert run.data.metrics["games/done"] == spec.design.total_games
    assert run.data.metrics["games/skipped"] == spec.design.total_games


def test_server_killed_mid_study_then_the_next_run_completes_the_same_run(ray_local, own_server, tmp_path,
                                                                          caplog):
    from mlflow.tracking import MlflowClient

    spec = make_spec(tmp_path, "server-killed", design={"seeds": 8, "games_per_seed": 2},
                     tracking={"uri": own_server.url, "experiment": "faults-killed"})
    out = {}

    def study():
        try:
            out["result"] = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False,
                                      flush_games=1)
        except BaseException as exc:  # pragma: no cover - reported below
            out["error"] = exc

    with caplog.at_level(logging.WARNING, logger="cluster"):
        thread = threading.Thread(target=study)
        thread.start()
        deadline = time.monotonic() + 120
        while len(ResultStore(spec.study_dir).finished_games()) < 3:
            assert thread.is_alive() and time.monotonic() < deadline, out
            time.sleep(0.02)
        own_server.kill()
        killed_at = len(ResultStore(spec.study_dir).finished_games())
        thread.join(timeout=180)
    assert not thread.is_alive() and "error" not in out, out
    result = out["result"]
    assert killed_at < spec.design.total_games, "kill the server mid-study"
    assert result.games_played == spec.design.total_games and result.mlflow_run_id is not None
    assert_complete_once(spec)
    waited = waited_seconds(caplog, r"MLflow logging failed after (?P<s>[0-9.]+) s \(.*\); continuing "
                                    r"without tracking")
    assert waited < 30, "MLflow's client retries (minutes) before giving up"

    own_server.start()  # the same port and store
    client = MlflowClient(tracking_uri=own_server.url)
    assert client.get_run(result.mlflow_run_id).info.status == "RUNNING"
    again = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert again.games_played == 0 and again.mlflow_run_id == result.mlflow_run_id
    [run] = study_runs(client, "faults-killed")
    assert run.info.status == "FINISHED" and run.data.tags[STUDY_TAG] == spec.study_id
    assert run.data.metrics["games/done"] == spec.design.total_games
    history = client.get_metric_history(run.info.run_id, "games/done")
    assert max(m.step for m in history) == spec.design.total_games


def test_a_tracking_store_that_cannot_be_opened_runs_the_study_untracked(ray_local, tmp_path, caplog):
    """A corrupt mlflow.db: one warning naming the file, every game played and stored, the file untouched."""
    db = tmp_path / "mlflow.db"
    garbage = b"this is not a database\n" * 100
    db.write_bytes(garbage)
    spec = make_spec(tmp_path, "garbage-db", tracking={"uri": f"sqlite:///{db}", "experiment": "garbage"})
    with caplog.at_level(logging.WARNING, logger="cluster"):
        result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert result.mlflow_run_id is None and result.games_played == spec.design.total_games
    assert_complete_once(spec)
    [message] = [r.getMessage() for r in caplog.records if "cannot be opened" in r.getMessage()]
    print(message)
    assert message.startswith(f"MLflow tracking store {db} cannot be opened (")
    assert "running without tracking" in message
    assert db.read_bytes() == garbage


# --- re-running into a study directory -------------------------------------------------------
CHANGES = [
    ({"lineup": [{"agent": "fake", "label": "A", "params": {"sleep_ms": 20, "skill": 0.5}},
                 {"agent": "fake", "label": "B", "params": {"sleep_ms": 20}}]}, "lineup.0.params.skill"),
    ({"game": {"name": "count", "max_steps": 8}}, "game.max_steps"),
]


def test_a_changed_lineup_or_game_is_refused_before_any_game(ray_local, tmp_path):
    spec = make_spec(tmp_path, "changed")
    run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    before = ResultStore(spec.study_dir).read()
    for change, field in CHANGES:
        with pytest.raises(SpecMismatchError) as info:
            run_study(make_spec(tmp_path, "changed", **change), num_workers=2, progress=False, plugins=PLUGINS,
                      warm_up=False)
        message = str(info.value)
        print(message)
        assert message.startswith(f"{field}: differs from the study in {spec.study_dir}"), message
        assert "stored" in message and "now" in message
        pd.testing.assert_frame_equal(ResultStore(spec.study_dir).read(), before)


def test_interrupted_study_resumes_with_another_worker_count_and_replays_nothing(ray_local, tmp_path):
    """An interrupted study (Ctrl-C on the driver after 5 games) of a learning agent,
    resumed with 1 worker instead of 2: the learned state is read back, no game is played
    twice, and the rows equal an uninterrupted run's."""
    lineup = [{"agent": "fake", "label": "A", "params": {"learn": True, "sleep_ms": 5}},
              {"agent": "fake", "label": "B", "params": {"sleep_ms": 5}}]
    design = {"seeds": 2, "games_per_seed": 4}  # two series of four games, learned state carried
    spec = make_spec(tmp_path / "interrupted", "workers", lineup=lineup, design=design)
    recorded = []

    def interrupt(rows):
        recorded.append(rows)
        if len(recorded) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False, on_progress=interrupt)
    done = len(ResultStore(spec.study_dir).finished_games())
    assert 5 <= done < spec.design.total_games
    resumed = run_study(spec, num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)
    assert resumed.workers == 1 and resumed.games_skipped == done
    assert resumed.games_played == spec.design.total_games - done and resumed.games_replayed == 0
    rows = assert_complete_once(spec)
    reference = run_study(make_spec(tmp_path / "reference", "workers", lineup=lineup, design=design),
                          num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    expected = ResultStore(reference.study_dir).read()

    def comparable(df):
        return df.drop(columns=NONDETERMINISTIC).sort_values(["game_index", "seat"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(comparable(rows), comparable(expected))


# --- a sweep driver killed mid-trial ------------------------------------------------------------
_SWEEP_DRIVER = """
import json, sys
import conftest  # registers the count game and the fake agent
from cluster.sweep.driver import run_sweep
from cluster.spec.sweep import build_sweep
run_sweep(build_sweep(json.load(open(sys.argv[1]))), address=sys.argv[2], plugins=["conftest"], progress=False)
"""


@pytest.mark.slow
def test_sweep_driver_killed_mid_trial_is_restored_with_every_game_once(ray_local, tmp_path):
    from mlflow.tracking import MlflowClient

    from cluster.sweep.driver import run_sweep
    from cluster.spec.sweep import build_sweep

    data = {
        "sweep": {"name": "killed", "seed": 3, "games_per_trial": 4, "max_concurrent_trials": 2},
        "base": {"study": {"name": "base", "seed": 1, "results_dir": str(tmp_path / "studies")},
                 "game": {"name": "count", "max_steps": 6}, "budget": {"iterations": 1},
                 "design": {"seeds": 2, "games_per_seed": 2, "series_by": "seed"},
                 "lineup": [{"agent": "fake", "label": "A", "params": {"learn": True}},
                            {"agent": "fake", "label": "B", "params": {"sleep_ms": 60}}],
                 "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "sweeps"}},
        "objective": {"label": "A", "metric": "win_rate"},
        "search": {"lineup.0.params.sleep_ms": {"grid": [0.0, 1.0], "alias": "sleep"}},
        "scheduler": {"kind": "fifo"},
        "reevaluate": {"top_k": 1, "games": 2},
    }
    sweep_file = tmp_path / "sweep.json"
    sweep_file.write_text(json.dumps(data))
    address = ray_local.get_runtime_context().gcs_address
    proc = subprocess.Popen([sys.executable, "-c", _SWEEP_DRIVER, str(sweep_file), address],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)

    def trial_games() -> dict[str, int]:
        return {d.name: len(ResultStore(d).finished_games())
                for d in (tmp_path / "studies").glob("*") if (d / "results").is_dir() and "-reeval-" not in d.name}

    deadline = time.monotonic() + 180
    while sum(trial_games().values()) < 1:
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the sweep recorded no games"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    at_kill = trial_games()
    assert sum(at_kill.values()) < 2 * 4, "kill the driver mid-sweep"

    result = run_sweep(build_sweep(data), plugins=PLUGINS, progress=False, resume=True)
    assert len(result.trials) == 2 and set(result.trials["status"]) == {"COMPLETE"}
    assert set(result.trials["games"]) == {4}
    after = trial_games()
    assert len(after) == 2 and set(after.values()) == {4}
    for name in after:
        rows = ResultStore(tmp_path / "studies" / name).read()
        assert not rows.duplicated(["game_index", "seat"]).any()
        assert sorted(rows["game_index"].unique()) == [0, 1, 2, 3]
    client = MlflowClient(tracking_uri=data["base"]["tracking"]["uri"])
    exp = client.get_experiment_by_name("sweeps")
    runs = client.search_runs([exp.experiment_id], max_results=100)
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parents[0].info.run_id]
    assert len(children) == 2
    print(f"killed with {at_kill} games stored; restored: {after}")


# --- the driver as users run it: one per study, every way out clean ---------------------------
#: ``arena`` with the test's fake game and agent registered (Ray workers import conftest from PYTHONPATH).
_ARENA = "import sys, conftest; from jobs.cli import main; sys.exit(main(sys.argv[1:]))"


def write_toml_spec(tmp_path, name: str, *, seeds: int = 8, sleep_ms: int = 20) -> Path:
    """A tiny study spec file (the fake agents sleep, so a study lasts a few seconds), tracked in
    ``tmp_path/mlflow.db``."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f"""
[study]
name = "{name}"
seed = 5
results_dir = "{tmp_path / 'studies'}"

[game]
name = "count"
max_steps = 6

[budget]
iterations = 2

[design]
seeds = {seeds}
games_per_seed = 2

[[lineup]]
agent = "fake"
label = "A"
params = {{ sleep_ms = {sleep_ms} }}

[[lineup]]
agent = "fake"
label = "B"
params = {{ sleep_ms = {sleep_ms} }}

[tracking]
uri = "sqlite:///{tmp_path / 'mlflow.db'}"
experiment = "{name}"
""")
    return path


def start_arena(spec_file: Path, *extra: str, env=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _ARENA, "run", str(spec_file), "--workers", "1", "--no-progress",
                             *extra], cwd=spec_file.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})})


def wait_for_games(proc, study_dir: Path, games: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done = len(ResultStore(study_dir).finished_games()) if (study_dir / "results").is_dir() else 0
        if done >= games:
            return done
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, f"the driver stored {done} games in {timeout} s"
        time.sleep(0.05)


def study_run_status(tmp_path, experiment: str) -> str:
    from mlflow.tracking import MlflowClient

    [run] = study_runs(MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}"), experiment)
    return run.info.status


def assert_compacted(study_dir: Path) -> None:
    """At rest a study's results are one Parquet file, and no temporary file is left."""
    results = sorted(p.name for p in (study_dir / "results").iterdir())
    assert len(results) == 1 and results[0].startswith("part-"), results
    assert not list(study_dir.rglob(".tmp-*"))


def arena_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("arena run:")]


def test_a_second_driver_refuses_then_sigterm_stores_what_arrived_and_a_resume_completes(ray_local, tmp_path):
    """One driver runs a study: a second on the same study refuses, naming the first (exit 4,
    opening no MLflow run); then SIGTERM stops the first (exit 143, one line, its run KILLED,
    its results compacted); a resume plays only the missing games into the same run."""
    from cluster.run.lock import LOCK_FILE, Holder

    spec_file = write_toml_spec(tmp_path, "term", seeds=12, sleep_ms=40)  # games outlast the second's refusal
    study_dir = tmp_path / "studies" / "term"
    proc = start_arena(spec_file)
    try:
        deadline = time.monotonic() + 60
        while not (study_dir / LOCK_FILE).is_file() or Holder.parse((study_dir / LOCK_FILE).read_text()) is None:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
            time.sleep(0.02)
        second = start_arena(spec_file)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 4, err[-3000:]
        [line] = arena_lines(err)
        print(line)
        assert "another driver is running this study" in line and f"pid {proc.pid}" in line
        assert "since " in line and "host " in line and "Traceback" not in err

        wait_for_games(proc, study_dir, 3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err[-3000:]
    assert arena_lines(err) == ["arena run: stopped by SIGTERM"], err[-3000:]
    assert "Traceback" not in err
    assert study_run_status(tmp_path, "term") == "KILLED"  # one run: the second driver never opened one
    assert_compacted(study_dir)
    stored = len(ResultStore(study_dir).finished_games())
    assert 3 <= stored < 24

    from jobs.spec import load_spec

    again = run_study(load_spec(spec_file), num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)
    assert (again.games_played, again.games_skipped) == (24 - stored, stored)
    rows = ResultStore(study_dir).read()
    assert len(rows) == 24 * 2 and not rows.duplicated(["game_index", "seat"]).any()
    assert study_run_status(tmp_path, "term") == "FINISHED"


def test_a_lost_gcs_ends_the_driver_with_exit_5_and_leaves_no_process(tmp_path):
    import psutil

    spec_file = write_toml_spec(tmp_path, "gcs", seeds=40)
    study_dir = tmp_path / "studies" / "gcs"
    timeout = 5
    proc = start_arena(spec_file, env={"ARENA_GCS_TIMEOUT": str(timeout)})
    try:
        wait_for_games(proc, study_dir, 2)
        driver = psutil.Process(proc.pid)
        started = driver.children(recursive=True)
        [gcs] = [p for p in started if p.name().startswith("gcs_server")]
        gcs.kill()
        killed_at = time.monotonic()
        _, err = proc.communicate(timeout=90)
        seconds = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.kill()
    print(f"exit {proc.returncode} {seconds:.1f} s after the GCS was killed: {arena_lines(err)}")
    assert proc.returncode == 5, err[-3000:]
    [line] = arena_lines(err)
    assert "the Ray cluster is lost" in line and "ARENA_GCS_TIMEOUT=5" in line and "Traceback" not in err
    # Noticed after ARENA_GCS_TIMEOUT, then the way out (processes ended, store compacted, run
    # closed): well before Ray's own 60 s, after which Ray would end the driver with none of it.
    assert seconds < 45
    assert study_run_status(tmp_path, "gcs") == "FAILED"
    assert_compacted(study_dir)
    left = [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, [(p.pid, p.name()) for p in left]


#: arena, with a SIGTERM sent to itself the moment ``ray.init`` has put in Ray's own handler
#: (which calls ``sys.exit(15)``): a real signal in the start-up's window, every time.
_ARENA_TERM_IN_RAY_INIT = """
import os, signal, sys, conftest
import ray._private.utils as ray_utils
set_handler = ray_utils.set_sigterm_handler
def set_and_signal(handler):
    set_handler(handler)
    os.kill(os.getpid(), signal.SIGTERM)
ray_utils.set_sigterm_handler = set_and_signal
from jobs.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_while_ray_starts_takes_the_same_way_out(ray_local, tmp_path):
    import psutil

    spec_file = write_toml_spec(tmp_path, "early", seeds=4)
    study_dir = tmp_path / "studies" / "early"
    proc = subprocess.Popen([sys.executable, "-c", _ARENA_TERM_IN_RAY_INIT, "run", str(spec_file), "--workers", "1",
                             "--no-progress"], cwd=spec_file.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    driver = psutil.Process(proc.pid)
    seen = set()
    try:
        while proc.poll() is None:  # every process Ray starts for the driver, to check none is left
            try:
                seen.update(driver.children(recursive=True))
            except psutil.Error:
                pass
            time.sleep(0.05)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Before the fix Ray's handler ended the driver with exit 15, no line, and the run FAILED.
    assert proc.returncode == 143, err[-3000:]
    assert arena_lines(err) == ["arena run: stopped by SIGTERM"], err[-3000:]
    assert "Traceback" not in err
    assert study_run_status(tmp_path, "early") == "KILLED"
    left = [p for p in seen if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, [(p.pid, p.name()) for p in left]

    from jobs.spec import load_spec

    again = run_study(load_spec(spec_file), num_workers=1, progress=False, plugins=PLUGINS, warm_up=False)
    assert (again.games_played, again.games_skipped) == (8, 0)
    assert study_run_status(tmp_path, "early") == "FINISHED"
