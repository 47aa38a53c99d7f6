"""`--scale F`: one meaning for `arena run` and `arena sweep` (scale the boards, keep each whole)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from cluster.spec.plan import plan_study
from cluster.spec.sweep import SweepError, build_sweep
from jobs.cli import main
from jobs.spec import load_spec

import conftest  # noqa: F401 - registers the fake `count` game and `fake` agent

JOBS = Path(__file__).resolve().parents[2] / "jobs"

RUNS_SPEC = """
[study]
name = "runs"
seed = 3

[game]
name = "pommerman"
mode = "ffa"

[budget]
iterations = 10

[design]
runs = 10
rounds = 8
series_by = "run"

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


def seats_by_group(spec, group_of) -> dict:
    """{group: {(seat, lineup index), ...}} over every game of the plan."""
    out: dict = {}
    for series in plan_study(spec):
        for game in series.games:
            out.setdefault(group_of(game), set()).update(enumerate(game.seat_lineup))
    return out


def assert_full_rotation(spec, group_of, groups: int) -> None:
    n = spec.num_players
    every = {(seat, agent) for seat in range(n) for agent in range(n)}
    by_group = seats_by_group(spec, group_of)
    assert len(by_group) == groups
    for group, pairs in by_group.items():
        assert pairs == every, f"group {group}: not every agent in every seat"


# --- arena run ------------------------------------------------------------------------------
def test_run_scale_keeps_boards_whole_in_the_seeds_design():
    full = load_spec(JOBS / "pommerman_ffa_demo.toml")
    spec = load_spec(JOBS / "pommerman_ffa_demo.toml", scale=0.25)
    # 8 board seeds x 4 games -> 2 board seeds x 4 games: 8 games, not 2.
    assert (spec.design.seeds, spec.design.games_per_seed, spec.design.total_games) == (2, 4, 8)
    assert_full_rotation(spec, lambda g: g.board_seed, groups=2)
    # A prefix of the full study: the same boards, seats and seeds for the games it plays.
    full_games = {g.game_index: g for s in plan_study(full) for g in s.games}
    for series in plan_study(spec):
        for game in series.games:
            assert game == full_games[game.game_index]
    # Never below one board with its full rotation.
    tiny = load_spec(JOBS / "pommerman_ffa_demo.toml", scale=0.001)
    assert tiny.design.total_games == 4
    assert_full_rotation(tiny, lambda g: g.board_seed, groups=1)


def test_run_scale_keeps_runs_whole_in_the_runs_design(tmp_path):
    path = tmp_path / "runs.toml"
    path.write_text(RUNS_SPEC)
    spec = load_spec(path, scale=0.25)
    # 10 runs x 8 rounds -> 3 runs x 8 rounds (ceil(2.5)); rounds and their boards untouched.
    assert (spec.design.runs, spec.design.rounds, spec.design.seeds) == (3, 8, 8)
    assert spec.design.total_games == 24
    assert_full_rotation(spec, lambda g: g.series_id, groups=3)
    assert load_spec(path, scale=0.01).design.total_games == 8  # one whole run


def test_run_check_prints_games_per_condition(capsys):
    assert main(["run", str(JOBS / "pommerman_ffa_demo.toml"), "--check", "--scale", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "2 board seeds x 4 games = 8 games" in out and "valid: 8 games" in out
    assert main(["run", str(JOBS / "femcts" / "7_po_ffa.toml"), "--check", "--scale", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "2 board seeds x 5 games = 10 games" in out
    for view_range in range(5):
        assert f"view_range={view_range}: 10 games" in out
    assert "valid: 50 games" in out


# --- arena sweep ----------------------------------------------------------------------------
def sweep_data(tmp_path, design, games_per_trial, players=2, **over):
    data = {
        "sweep": {"name": "scaled", "seed": 5, "games_per_trial": games_per_trial},
        "base": {
            "study": {"name": "base", "seed": 1, "results_dir": str(tmp_path / "studies")},
            "game": {"name": "count", "max_steps": 4, "num_players": players},
            "budget": {"iterations": 1},
            "design": design,
            "lineup": [{"agent": "fake", "label": chr(ord("A") + i)} for i in range(players)],
            "tracking": {"enabled": False},
        },
        "objective": {"label": "A"},
        "search": {"lineup.0.params.sleep_ms": {"grid": [0.0, 1.0, 2.0, 3.0]}},
        "scheduler": {"kind": "asha", "grace_period": 2 * design.get("games_per_seed", design.get("rounds", 1))},
    }
    data.update(over)
    return data


def test_sweep_scale_keeps_boards_whole_in_the_seeds_design(tmp_path):
    design = {"seeds": 1, "games_per_seed": 3, "series_by": "seed"}
    data = sweep_data(tmp_path, design, games_per_trial=30, players=3)  # 10 boards of 3 games
    full = build_sweep(copy.deepcopy(data))
    assert (full.boards_per_trial, full.games_per_board, full.grace_period) == (10, 3, 2)
    sweep = build_sweep(copy.deepcopy(data), scale=0.25)
    # The same rule as `arena run --scale`: ceil(10 * 0.25) = 3 boards of 3 games.
    assert (sweep.boards_per_trial, sweep.games_per_trial, sweep.reeval_games) == (3, 9, 9)
    assert sweep.grace_period == 1  # ceil(2 * 0.25) whole boards
    spec = sweep.trial_spec({"lineup.0.params.sleep_ms": 0.0})
    assert (spec.design.seeds, spec.design.games_per_seed, spec.design.total_games) == (3, 3, 9)
    assert_full_rotation(spec, lambda g: g.board_seed, groups=3)
    assert build_sweep(copy.deepcopy(data), scale=0.01).games_per_trial == 3  # one whole board


def test_sweep_scale_keeps_runs_whole_in_the_runs_design(tmp_path):
    design = {"runs": 1, "rounds": 4, "series_by": "run"}
    data = sweep_data(tmp_path, design, games_per_trial=40, players=4)  # 10 runs of 4 rounds
    sweep = build_sweep(copy.deepcopy(data), scale=0.25)
    assert (sweep.boards_per_trial, sweep.games_per_trial, sweep.games_per_board) == (3, 12, 4)
    spec = sweep.trial_spec({"lineup.0.params.sleep_ms": 0.0})
    assert (spec.design.runs, spec.design.rounds, spec.design.total_games) == (3, 4, 12)
    assert_full_rotation(spec, lambda g: g.series_id, groups=3)


def test_sweep_grace_period_is_whole_boards(tmp_path):
    design = {"seeds": 1, "games_per_seed": 3, "series_by": "seed"}
    data = sweep_data(tmp_path, design, games_per_trial=30, players=3,
                      scheduler={"kind": "asha", "grace_period": 5})
    with pytest.raises(SweepError, match=r"^scheduler.grace_period: must be whole boards, a multiple of 3"):
        build_sweep(data)


def test_sweep_cli_check_uses_the_same_rule(capsys):
    assert main(["sweep", str(JOBS / "sweeps" / "femcts_ffa.toml"), "--check", "--scale", "0.4"]) == 0
    out = capsys.readouterr().out
    # 10 boards of 4 games -> ceil(4.0) = 4 boards; grace 3 boards -> ceil(1.2) = 2 boards.
    assert "x 16 games (4 boards of 4)" in out and "ASHA grace period 2 boards" in out
