"""Every user-facing error of `arena` is one or two lines on stderr and a non-zero exit code,
without a traceback (run through a subprocess, as users run it); --debug shows the traceback."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from golden_data import POMMERMAN as GOLDEN, golden, skip_reason

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "jobs" / "pommerman_ffa_demo.toml"
INVALID, MISMATCHES = 2, 1


def arena(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "jobs.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def assert_one_line_error(out, code, *needles):
    assert out.returncode == code, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr + out.stdout
    lines = [line for line in out.stderr.splitlines() if line.strip() and " WARNING " not in line
             and " INFO " not in line]
    assert 1 <= len(lines) <= 2, out.stderr
    for needle in needles:
        assert needle in out.stderr, out.stderr


def run_args(results_dir, *extra):
    return ("run", DEMO, "--set", f"study.results_dir={results_dir}", "--set", "tracking.enabled=false",
            "--no-progress", *extra)


def test_corrupt_results_part_on_resume(tmp_path):
    results = tmp_path / "studies" / "pommerman-ffa-demo" / "results"
    results.mkdir(parents=True)
    (results / "part-20260101T000000-bad.parquet").write_bytes(b"not parquet")
    out = arena(*run_args(tmp_path / "studies"), cwd=tmp_path)
    assert_one_line_error(out, INVALID, "unreadable results file", "part-20260101T000000-bad.parquet")
    debug = arena("--debug", *run_args(tmp_path / "studies"), cwd=tmp_path)
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "StoreError" in debug.stderr
    debug = arena(*run_args(tmp_path / "studies"), cwd=tmp_path, env={"ARENA_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_resume_with_a_changed_spec(tmp_path):
    from cluster.results.store import ResultStore
    from jobs.spec import load_spec

    spec = load_spec(DEMO, overrides=[f"study.results_dir={tmp_path / 'studies'}", "design.seeds=2"])
    ResultStore(spec.study_dir).write_spec(spec)
    out = arena(*run_args(tmp_path / "studies"), cwd=tmp_path)
    assert_one_line_error(out, INVALID, "design.seeds: differs from the study")


def test_unwritable_results_directory(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = arena(*run_args(blocker / "studies"), cwd=tmp_path)
    assert_one_line_error(out, INVALID, str(blocker))


def test_invalid_spec_and_sweep(tmp_path):
    assert_one_line_error(arena("run", DEMO, "--set", "design.seeds=0"), INVALID, "design.seeds")
    assert_one_line_error(arena("run", tmp_path / "none.toml"), INVALID, "not found")
    assert_one_line_error(arena("sweep", tmp_path / "none.toml"), INVALID, "not found")


def test_report_population_and_play_errors(tmp_path):
    out = arena("report", tmp_path / "nothing-here")
    assert out.returncode != 0 and "Traceback" not in out.stderr and out.stderr.strip()
    assert_one_line_error(arena("population", "export", tmp_path, "--label", "X", "--out", tmp_path / "o.npz"),
                          INVALID, "no learned population")
    assert_one_line_error(arena("play", "--agents", "mcts:depth,rhea,osla,random"), INVALID, "key=value")


@golden  # its mismatch half replays a golden trajectory
def test_conformance_invalid_input_is_2_and_mismatches_are_1(tmp_path):
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_text('{"states": []}\n')
    assert_one_line_error(arena("conformance", "pommerman", not_gzip), INVALID, str(not_gzip), "gzip")
    assert_one_line_error(arena("conformance", "pommerman", tmp_path / "missing.gz"), INVALID, "file not found")
    bad_json = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad_json, "wt") as fh:
        fh.write("{not json\n")
    assert_one_line_error(arena("conformance", "pommerman", bad_json), INVALID, str(bad_json))
    if not GOLDEN.is_dir():
        pytest.skip(skip_reason(GOLDEN))
    with gzip.open(GOLDEN / "ffa_lowbomb.jsonl.gz", "rt") as fh:
        traj = json.loads(fh.readline())
    traj["states"][3]["agents"][1]["ammo"] += 1
    tampered = tmp_path / "tampered.jsonl.gz"
    with gzip.open(tampered, "wt") as fh:
        fh.write(json.dumps(traj) + "\n")
    out = arena("conformance", "pommerman", tampered)
    assert out.returncode == MISMATCHES and "1 mismatches" in out.stdout and "Traceback" not in out.stderr


def test_ui_without_a_store(tmp_path):
    assert_one_line_error(arena("ui", "--url-only", cwd=tmp_path), INVALID, "no MLflow store")
    assert not (tmp_path / "mlflow.db").exists()


# --- exit codes of the ways a run ends other than by bad input ------------------------------
@pytest.mark.parametrize("error, code, needle", [
    ("busy", 4, "another driver is running this study (host h1, pid 7, since 2026-01-01 00:00:00 UTC)"),
    ("enospc", 5, "/s/results/part-x.parquet: No space left on device"),
    ("write", 5, "/s/results/part-x.parquet: cannot write the study's files: No space left on device (ENOSPC)"),
    ("lost", 5, "the Ray cluster is lost"),
    ("sigterm", 143, "arena run: stopped by SIGTERM"),
    ("sighup", 129, "arena run: stopped by SIGHUP"),
    ("sigint", 130, "arena run: interrupted"),
])
def test_exit_codes_of_a_busy_study_a_failing_machine_and_signals(monkeypatch, capsys, error, code, needle):
    import errno
    import signal

    from cluster.run.faults import ClusterLost, Interrupted, StudyWriteError
    from cluster.run.lock import Holder, StudyBusyError
    from jobs import cli
    from jobs.commands import run as run_command

    enospc = OSError(errno.ENOSPC, "No space left on device", "/s/results/part-x.parquet")
    raised = {"busy": StudyBusyError(Path("/s"), Holder("h1", 7, "2026-01-01 00:00:00 UTC"), Path("/s/driver.lock")),
              "enospc": enospc, "write": StudyWriteError(enospc.filename, enospc),
              "lost": ClusterLost("the Ray cluster is lost: its head (GCS at x) has not answered for 20 s"),
              "sigterm": Interrupted(signal.SIGTERM), "sighup": Interrupted(signal.SIGHUP),
              "sigint": KeyboardInterrupt()}[error]

    def fails(args):
        raise raised

    monkeypatch.setattr(run_command, "run", fails)
    assert cli.main(["run", "spec.toml"]) == code
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_the_agreed_exit_code_constants():
    from jobs import cli

    assert (cli.EXIT_MISMATCHES, cli.EXIT_INVALID, cli.EXIT_FAILED, cli.EXIT_BUSY, cli.EXIT_INFRA,
            cli.EXIT_INTERRUPTED) == (1, 2, 3, 4, 5, 130)


def test_a_failed_write_of_a_group_commit_names_the_file(tmp_path, monkeypatch):
    """A full disk while the driver writes a commit: StudyWriteError naming the file (exit 5)."""
    import errno

    from cluster.results.store import ResultStore
    from cluster.run.driver import Recorder, plan_and_resume
    from cluster.run.faults import StudyWriteError
    from cluster.run.play import build_agents, play_game
    from cluster.spec.build import build_spec

    import conftest  # noqa: F401  (the count game and the fake agent)

    spec = build_spec({"study": {"name": "full", "seed": 1, "results_dir": str(tmp_path / "studies")},
                       "game": {"name": "count", "max_steps": 4}, "budget": {"iterations": 1},
                       "design": {"seeds": 1, "games_per_seed": 2},
                       "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
                       "tracking": {"enabled": False}})
    prepared = plan_and_resume(spec)
    target = prepared.store.results_dir / "part-full.parquet"

    def full_disk(self, rows):
        raise OSError(errno.ENOSPC, "No space left on device", str(target))

    monkeypatch.setattr(ResultStore, "append", full_disk)
    recorder = Recorder(spec, prepared.store, prepared.finished)
    run = prepared.runs[0]
    rows, learned = play_game(spec, run.games[0], build_agents(spec))
    with pytest.raises(StudyWriteError) as info:
        recorder(run, run.games[0], rows, learned, 0.01)
    assert str(info.value) == f"{target}: cannot write the study's files: No space left on device (ENOSPC)"
    assert recorder.played == 0 and not prepared.finished  # not counted: a resume plays it again
