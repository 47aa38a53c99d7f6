"""The CLI a newcomer meets: help on every option, one example per subcommand, the
seat's-eye view in `arena play`, and one-line errors from `arena report`."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _subparsers(parser: argparse.ArgumentParser, prefix: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub
                yield from _subparsers(sub, f"{prefix}{name} ")


def test_every_option_of_every_subcommand_has_help():
    missing = []
    for name, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help text: {missing}"


def test_main_help_has_one_example_per_subcommand(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    examples = [line.split()[1] for line in out.splitlines() if line.strip().startswith("arena ")]
    assert sorted(set(examples)) == sorted(name for name, _ in _subparsers(build_parser()) if " " not in name)


def test_view_range_help_says_absent_means_full(capsys):
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "leave it out for full observability" in out and "--show-view SEAT" in out


def test_play_show_view_at_view_range_0_prints_fog(capsys):
    assert main(["play", "--agents", "random,random,random,random", "--iterations", "1",
                 "--max-steps", "2", "--seed", "1", "--ruleset", "java", "--view-range", "0",
                 "--show-view", "0"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("pommerman ffa / java  view range 0  collapse on")  # the java default
    start = lines.index("seat 0 sees (random):")
    board = lines[start + 1:start + 12]
    cells = " ".join(board).split()
    # View range 0: the agent sees its own cell only; the other 120 cells are fog.
    assert cells.count("?") == 120 and "0" in cells
    assert "1: unseen" in lines[start + 12]


def test_play_show_prints_the_true_board(capsys):
    assert main(["play", "--agents", "random,random,random,random", "--iterations", "1",
                 "--max-steps", "1", "--seed", "1", "--view-range", "0", "--show"]) == 0
    out = capsys.readouterr().out
    assert "view range 0" in out.splitlines()[0]
    assert "?" not in "".join(out.splitlines()[1:12])


def test_play_rejects_a_bad_seat(capsys):
    assert main(["play", "--agents", "random,random,random,random", "--iterations", "1",
                 "--max-steps", "1", "--show-view", "4"]) == 2
    assert "--show-view" in capsys.readouterr().err


def _arena(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_report_on_folders_that_are_not_studies_fails_in_one_line(tmp_path):
    results = tmp_path / "arena-studies"
    (results / "a-study" / "results").mkdir(parents=True)
    sweep = results / "sweeps" / "tiny"
    (sweep / "tune").mkdir(parents=True)
    (sweep / "sweep.json").write_text("{}")
    (results / "tiny-t0123456789" / "results").mkdir(parents=True)
    cases = {
        results: "a results folder holding 2 studies, not a study; pass one, e.g. arena report",
        sweep: "a sweep directory, not a study",
        tmp_path / "missing": "no such directory",
        tmp_path: "not a study directory",
    }
    for path, message in cases.items():
        proc = _arena("report", str(path), cwd=tmp_path)
        assert proc.returncode != 0, proc
        assert "Traceback" not in proc.stderr, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena report: ") and message in lines[0], lines
    proc = _arena("report", str(sweep), cwd=tmp_path)
    assert "arena report " + str(results / "tiny-t0123456789") in proc.stderr
