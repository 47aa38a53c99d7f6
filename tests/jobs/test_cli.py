"""Smoke tests of every `arena` subcommand with tiny budgets."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from golden_data import POMMERMAN as GOLDEN, requires
from jobs.cli import main


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("run", "report", "ui", "play", "conformance", "bench", "sweep", "population"):
        assert command in out


def test_play_prints_a_result_table(capsys):
    assert main(["play", "--agents", "mcts,rhea,osla,rule_based", "--iterations", "20",
                 "--max-steps", "15", "--seed", "4", "--ruleset", "java", "--view-range", "2"]) == 0
    out = capsys.readouterr().out
    assert "length 15" in out
    assert out.count(" tie ") == 4  # a 15-tick FFA game ends in a time-out tie


def test_play_rejects_unknown_agents_and_params(capsys):
    assert main(["play", "--agents", "mcts,nobody,osla,random", "--iterations", "5"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert main(["play", "--agents", "mcts:exploration=-3,rhea,osla,random", "--iterations", "5"]) == 2
    assert "exploration" in capsys.readouterr().err


def test_run_check_validates_without_playing(capsys):
    assert main(["run", "jobs/pommerman_ffa_demo.toml", "--check", "--scale", "0.25"]) == 0
    assert "valid: 8 games" in capsys.readouterr().out  # 2 boards x 4 seat rotations
    with pytest.raises(SystemExit) as exc:
        main(["run", "jobs/pommerman_ffa_demo.toml", "--check", "--set", "design.seeds=0"])
    assert exc.value.code == 2
    assert "design.seeds: must be a positive int" in capsys.readouterr().err


@requires(GOLDEN)
def test_conformance_reports_mismatches_and_exit_status(tmp_path, capsys):
    source = GOLDEN / "ffa_lowbomb.jsonl.gz"
    assert main(["conformance", "pommerman", str(source)]) == 0
    assert capsys.readouterr().out.startswith("40 trajectories,")
    with gzip.open(source, "rt") as fh:
        traj = json.loads(fh.readline())
    traj["states"][3]["agents"][1]["ammo"] += 1  # a tampered expectation
    bad = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad, "wt") as fh:
        fh.write(json.dumps(traj) + "\n")
    assert main(["conformance", "pommerman", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "1 trajectories" in out and "1 mismatches" in out
    assert "step 3: agents[1].ammo" in out


def test_report_and_population_export_on_a_store(tmp_path, capsys):
    from cluster.results.store import ResultStore

    study = tmp_path / "s"
    store = ResultStore(study)
    rows = []
    for game, winner in enumerate(["A", "B", "A"]):
        for seat, label in enumerate(["A", "B"]):
            rows.append({"study_id": "s", "series_id": 0, "game_index": game, "index_in_series": game,
                         "board_seed": 0, "seat": seat, "label": label, "agent": "fake",
                         "result": "win" if label == winner else "loss"})
    store.append(rows)
    assert main(["report", str(study)]) == 0
    out = capsys.readouterr().out
    assert "| A | 3 | 66.7%" in out
    assert (study / "report" / "results_table.md").is_file()
    assert main(["population", "export", str(study), "--label", "A", "--out", str(tmp_path / "p.npz")]) == 2
    assert "no learned population of seat 'A'" in capsys.readouterr().err
