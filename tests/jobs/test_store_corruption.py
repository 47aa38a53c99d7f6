"""A corrupt results part makes every command that reads the store (`arena report`, `rate`,
`pairs`, `compare`, `run`) exit 2 with one line naming the file (issue 54, point 2); `arena
run` reads its store before asking MLflow anything, so a bad store is never blamed on tracking."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from cluster.results.store import SCHEMA, ResultStore, _parquet_bytes, file_digest
from jobs.cli import main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "jobs" / "pommerman_ffa_demo.toml"
INVALID = 2


def _rows(games: range, **changes) -> list[dict]:
    return [{"study_id": "s", "series_id": g, "game_index": g, "index_in_series": 0, "board_seed": g // 2,
             "seat": seat, "label": label, "agent": "random", "config_hash": f"h{label}", "team": seat,
             "result": result, "condition": "", **changes}
            for g in games for seat, (label, result) in enumerate((("A", "win"), ("B", "loss")))]


def _study(root: Path, name: str, bad: list[dict]) -> tuple[Path, Path]:
    """A study of 8 good games and one part of ``bad`` rows (named with its true digest)."""
    study = root / name
    ResultStore(study).append(_rows(range(8)))
    (study / "spec.json").write_text(json.dumps({"study": {"name": name}, "game": {"name": "birds"}}))
    data = _parquet_bytes(pa.Table.from_pylist(bad, schema=SCHEMA))
    part = study / "results" / f"part-20990101T000000-bad-sha256-{file_digest(data)}.parquet"
    part.write_bytes(data)
    return study, part


def _flipped(root: Path) -> tuple[Path, Path]:
    """A study whose only part has one bit flipped in a value (``loss`` read as ``moss``)."""
    study = root / "flipped"
    ResultStore(study).append(_rows(range(8)))
    (study / "spec.json").write_text(json.dumps({"study": {"name": "flipped"}, "game": {"name": "birds"}}))
    (part,) = (study / "results").glob("part-*.parquet")
    data = part.read_bytes()
    assert data.count(b"loss") >= 1
    part.write_bytes(data.replace(b"loss", b"moss", 1))
    return study, part


def arena(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "rate", "pairs", "compare"])
@pytest.mark.parametrize("case", ["moss", "duplicate", "flipped"])
def test_every_reader_refuses_a_corrupt_part_in_one_line_naming_it(tmp_path, capsys, command, case):
    if case == "flipped":
        study, part = _flipped(tmp_path)
        needle = "unreadable results file (its bytes do not match the sha256 in its name"
    else:
        bad = _rows(range(8, 9), result="moss") if case == "moss" else _rows(range(8, 9)) + _rows(range(8, 9))
        study, part = _study(tmp_path, case, bad)
        needle = "corrupt results file (" + ("row 0: result 'moss'" if case == "moss" else "game 8: two rows")
    extra = {"rate": ("--no-tracking", "--out", tmp_path / "out"), "compare": ("--out", tmp_path / "out")}
    code, err = arena(capsys, command, study, *extra.get(command, ()))
    assert code == INVALID, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(part) in err and needle in err, err


def test_run_names_the_corrupt_part_not_mlflow(tmp_path):
    """Two parts whose copies of a game disagree pass the resume's first look (the finished
    games) and fail when the rows are read for the tracker's tallies: the store's error, exit
    2, before MLflow is asked anything (it used to be logged as "MLflow unavailable")."""
    from jobs.spec import load_spec

    spec = load_spec(DEMO, overrides=[f"study.results_dir={tmp_path / 'studies'}"])
    store = ResultStore(spec.study_dir)
    store.write_spec(spec)
    rows = [dict(study_id=spec.study_id, series_id=0, game_index=0, index_in_series=0, board_seed=0, seat=seat,
                 label=spec.lineup[seat].label, agent=spec.lineup[seat].agent, result=("win", "loss", "loss",
                                                                                        "loss")[seat])
            for seat in range(4)]
    store.append(rows)
    data = _parquet_bytes(pa.Table.from_pylist([dict(r, result="tie") for r in rows], schema=SCHEMA))
    part = store.results_dir / f"part-20990101T000000-other-sha256-{file_digest(data)}.parquet"
    part.write_bytes(data)
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "run", DEMO, "--set",
                          f"study.results_dir={tmp_path / 'studies'}", "--set",
                          f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "--no-progress"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == INVALID, out.stderr[-2000:]
    assert "MLflow" not in out.stderr and "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"arena run: {part}: corrupt results file (game 0 seat 0: its result differs"), lines[0]
