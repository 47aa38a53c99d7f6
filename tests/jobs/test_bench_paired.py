"""The paired speed check (jobs/bench/paired.py): structure only, no timing assertions.

The sides run a tiny probe script (it imports ``games`` and prints JSON), so the
test costs a few interpreter start-ups, not a benchmark.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from jobs.cli import main
from jobs.bench.paired import better_direction, paired_bench, summarise

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys, time
import games
t0 = time.process_time()
sum(range(20000))
print("noise on stdout before the figures")
print(json.dumps({"loops_per_s": 20000 / max(time.process_time() - t0, 1e-9), "games_file": games.__file__,
                  "constant": 3, "args": len(sys.argv) - 1}))
"""


def _git_ok() -> bool:
    try:
        subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


needs_git = pytest.mark.skipif(not _git_ok(), reason="needs a git checkout of the repository")


def _worktrees() -> str:
    return subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True,
                          text=True).stdout


def test_summarise_pairs_rounds_and_separates_settings():
    tree = [{"rate_per_s": 10.0, "games": 3, "ms_per_decision": 2.0, "name": "x"},
            {"rate_per_s": 12.0, "games": 3, "ms_per_decision": 2.0, "name": "x"},
            {"rate_per_s": 9.0, "games": 3, "ms_per_decision": 3.0, "name": "x"}]
    rev = [{"rate_per_s": 5.0, "games": 3, "ms_per_decision": 4.0},
           {"rate_per_s": 6.0, "games": 3, "ms_per_decision": 4.0},
           {"rate_per_s": 4.5, "games": 3, "ms_per_decision": 4.0}]
    figures, settings = summarise(tree, rev)
    assert settings == {"games": 3.0}
    rate = figures["rate_per_s"]
    assert rate["ratio"] == 2.0 and rate["ratio_min"] == 2.0 and rate["ratio_max"] == 2.0
    assert rate["tree"] == 10.0 and rate["rev"] == 5.0 and rate["better"] == "higher"
    ms = figures["ms_per_decision"]
    assert ms["ratio"] == 0.5 and ms["ratio_max"] == 0.75 and ms["better"] == "lower"
    assert ms["ratio_iqr"][0] <= ms["ratio"] <= ms["ratio_iqr"][1]
    assert rate["speedup"] == 2.0 and ms["speedup"] == 2.0  # above 1: the tree is better either way


def test_unit_suffixes_are_times_and_turn_the_speedup():
    for key in ("step_ns", "decision_us", "median_ms", "warm_start_s", "mcts_decide_CPU_US"):
        assert better_direction(key) == "lower", key
    for key in ("ticks_per_s", "iters_per_cpu_s", "games", "nodes", "mean_depth_runs"):
        assert better_direction(key) == "higher", key
    figures, _ = summarise([{"step_ns": 80.0, "decision_us": 300.0}, {"step_ns": 90.0, "decision_us": 330.0}],
                           [{"step_ns": 100.0, "decision_us": 200.0}, {"step_ns": 100.0, "decision_us": 220.0}])
    assert figures["step_ns"]["ratio"] == 0.85 and figures["step_ns"]["speedup"] == 1.1806
    assert figures["decision_us"]["ratio"] == 1.5 and figures["decision_us"]["speedup"] == 0.6667


def test_better_direction_of_the_benches_keys():
    assert better_direction("mcts_iters_per_40ms") == "higher"
    assert better_direction("seeker_iters_per_cpu_s") == "higher"
    assert better_direction("ticks_per_s") == "higher"
    assert better_direction("ms_per_decision_mcts_200") == "lower"
    assert better_direction("mcts_decision_ms_timed") == "lower"
    assert better_direction("mcts_us_per_iteration") == "lower"
    assert better_direction("warm_start_s") == "lower"


@needs_git
def test_paired_check_runs_both_trees_and_reports_ratios(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    result = paired_bench(["--flag"], against="HEAD", rounds=2, tree=REPO, script=str(probe), warmup=False)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert result["against"] == {"revision": "HEAD", "commit": head}
    assert result["rounds"] == 2 and len(result["seconds"]["tree"]) == 2 and len(result["seconds"]["rev"]) == 2
    # each side imported its own tree's games
    assert result["sides_imported"]["tree"] == str(REPO)
    assert result["sides_imported"]["rev"] != str(REPO)
    entry = result["figures"]["loops_per_s"]
    assert set(entry) >= {"tree", "rev", "ratio", "ratio_min", "ratio_max", "ratio_iqr", "better"}
    assert entry["ratio_min"] <= entry["ratio"] <= entry["ratio_max"]
    assert result["settings"]["constant"] == 3.0 and result["settings"]["args"] == 1.0
    assert len(result["load_before"]) == 3
    json.dumps(result)
    # the temporary worktree is gone (only this run's: another test may hold its own at the same time)
    other = result["sides_imported"]["rev"]
    assert not Path(other).exists()
    assert other not in [line.split()[0] for line in _worktrees().splitlines() if line.strip()]


@needs_git
def test_cli_against_prints_json(tmp_path, capsys):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    assert main(["bench", "birds", "--against", "HEAD", "--rounds", "1", "--script", str(probe),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "loops_per_s" in out["figures"] and out["rounds"] == 1


@needs_git
def test_cli_passes_options_after_double_dash_to_the_probe(tmp_path, capsys):
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    assert main(["bench", "birds", "--against", "HEAD", "--rounds", "1", "--script", str(probe),
                 "--json", "--", "--iterations", "50", "--rounds", "7"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["args"] == 4.0  # the probe got --iterations 50 --rounds 7, in both trees
    assert out["rounds"] == 1 and out["command"][-4:] == ["--iterations", "50", "--rounds", "7"]


def test_cli_refuses_double_dash_without_a_probe(capsys):
    assert main(["bench", "birds", "--json", "--", "--iterations", "50"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena bench: arguments after '--' (--iterations 50): only a probe script")
    assert main(["report", "somewhere", "--", "--x"]) == 2
    assert "arena report: unexpected arguments after '--': --x" in capsys.readouterr().err


@needs_git
def test_cli_against_rejects_a_bad_revision(capsys):
    assert main(["bench", "birds", "--against", "no-such-revision-xyz", "--rounds", "1"]) == 2
    assert "no-such-revision-xyz" in capsys.readouterr().err
