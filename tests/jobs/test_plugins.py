"""Bring your own agent and game: the example plugin (tests/plugin_example, installed by
tests/plugin_install.py) used by ``arena run``, ``arena sweep``, ``arena rate``, an SPRT
``design.stop`` and ``arena replay`` with no change to Arena; plugins by import path;
clear errors for plugins that do not load (on the driver and on a Ray node) and for an
agent without an iteration budget in a deterministic study; ``arena check-agent``."""
from __future__ import annotations

import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from agents.api import Agent
from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from cluster.results.store import ResultStore
from jobs.cli import main


class ClockOnlyAgent(Agent):
    """Stops on the clock only: declares that it has no iteration budget."""

    name = "clock_only"
    supports_iteration_budget = False

    def decide(self, observation):
        from games.registry import game_kernels

        return int(game_kernels(self.game_config).legal_actions(observation, self.seat).argmax()), 0


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def _tictactoe_spec(tmp_path: Path, name: str, design: str, budget: str = "iterations = 16") -> Path:
    return _write(tmp_path / f"{name}.toml", f"""
        [study]
        name = "{name}"
        seed = 3
        results_dir = "{tmp_path / 'studies'}"

        [game]
        name = "tictactoe"

        [budget]
        {budget}

        [design]
        {design}

        [[lineup]]
        agent = "bandit"
        label = "Bandit"

        [[lineup]]
        agent = "random"
        label = "Random"

        [tracking]
        enabled = false
    """)


# --- validation: no Ray ---------------------------------------------------------------------
def _spec_data(agent: str, game: str = "tictactoe", **budget) -> dict:
    return {"study": {"name": "x", "seed": 1}, "game": {"name": game},
            "budget": budget or {"iterations": 4}, "design": {"seeds": 1, "games_per_seed": 2},
            "lineup": [{"agent": agent}, {"agent": "random"}], "tracking": {"enabled": False}}


def test_a_spec_takes_agents_and_games_by_entry_point_and_by_import_path():
    spec = build_spec(_spec_data("bandit"))
    assert type(spec.lineup[0].config).__module__ == "arena_example.agent"
    spec = build_spec(_spec_data("arena_example.agent:BanditAgent", game="arena_example.tictactoe:TicTacToe"))
    assert spec.lineup[0].agent == "arena_example.agent:BanditAgent" and spec.num_players == 2


@pytest.mark.parametrize("agent, message", [
    ("arena_no_such_module.agent:Mine", r"^lineup\[0\]\.agent: module 'arena_no_such_module\.agent' does not "
                                        r"import \(ModuleNotFoundError: No module named 'arena_no_such_module'\)$"),
    ("arena_example.agent:NoSuchClass", r"^lineup\[0\]\.agent: module 'arena_example\.agent' has no 'NoSuchClass'$"),
    ("arena_example.agent:BanditConfig", r"^lineup\[0\]\.agent: 'arena_example\.agent:BanditConfig' is not an "
                                         r"agents\.api\.Agent subclass"),
    ("arena_example.agent:", r"^lineup\[0\]\.agent: 'arena_example\.agent:' is not an import path"),
])
def test_a_plugin_agent_that_does_not_load_is_one_error_naming_the_field_and_the_module(agent, message):
    with pytest.raises(SpecError, match=message):
        build_spec(_spec_data(agent))


def test_a_broken_entry_point_is_one_error_naming_the_field_and_the_module(monkeypatch):
    import agents.plugins

    broken = metadata.EntryPoint(name="broken", value="arena_missing_plugin.agent:Agent", group="arena.agents")
    monkeypatch.setattr(agents.plugins, "entry_points", lambda group: {"broken": broken})
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.agent: entry point 'broken' \(arena\.agents = "
                                        r"'arena_missing_plugin\.agent:Agent'\): module 'arena_missing_plugin\.agent' "
                                        r"does not import \(ModuleNotFoundError"):
        build_spec(_spec_data("broken"))


def test_a_plugin_game_that_does_not_load_names_game_name():
    with pytest.raises(SpecError, match=r"^game\.name: module 'arena_no_game' does not import"):
        build_spec(_spec_data("random", game="arena_no_game:Game"))
    with pytest.raises(SpecError, match=r"^game\.name: .*BanditAgent is not a games\.api\.Game subclass"):
        build_spec(_spec_data("random", game="arena_example.agent:BanditAgent"))


def test_an_agent_without_iteration_budget_is_refused_a_deterministic_study(tmp_path, capsys):
    agent = "test_plugins:ClockOnlyAgent"
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.agent: 'test_plugins:ClockOnlyAgent' has no iteration "
                                        r"budget \(supports_iteration_budget = False\) but budget gives it 4 it"):
        build_spec(_spec_data(agent, iterations=4))
    data = _spec_data(agent, iterations=4)
    data["lineup"][0]["budget"] = {"ms": 5}
    assert build_spec(data).budget_for(0).ms == 5  # its own ms budget: fine
    assert build_spec(_spec_data(agent, ms=5)).budget.ms == 5
    spec = _write(tmp_path / "clock.toml", f"""
        [study]
        name = "clock"
        seed = 1
        [game]
        name = "tictactoe"
        [budget]
        iterations = 4
        [design]
        seeds = 1
        [[lineup]]
        agent = "random"
        [[lineup]]
        agent = "{agent}"
        budget = {{ iterations = 9 }}
    """)
    with pytest.raises(SystemExit) as exited:  # the spec loader's exit: one line, code 2
        main(["run", str(spec), "--check"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("lineup[1].agent: 'test_plugins:ClockOnlyAgent' has no iteration budget "
                        "(supports_iteration_budget = False) but lineup[1].budget gives it 9 it per decision; "
                        "give this seat budget = { ms = 40 }") and len(err.splitlines()) == 1


# --- arena check-agent ----------------------------------------------------------------------
def test_check_agent_passes_the_example_and_fails_a_broken_agent(capsys):
    assert main(["check-agent", "arena_example.agent:BanditAgent", "--game", "tictactoe", "--ms", "2"]) == 0
    out = capsys.readouterr().out
    for clause in ("config defaults", "begin_game", "legal actions", "iteration budget", "same seed, same moves",
                   "another process", "learned state .npz"):
        assert f"PASS  {clause}" in out
    assert "info  ms budget 2" in out and out.rstrip().endswith("passed: 0 failed checks on 1 game")
    assert main(["check-agent", "tests.agents.test_agent_contract:IllegalAgent"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  legal actions" in out and "FAILED: 1 failed check on 1 game" in out
    assert main(["check-agent", "test_plugins:ClockOnlyAgent", "--game", "tictactoe"]) == 0
    assert "n/a   another process: no iteration budget" in capsys.readouterr().out


def test_check_agent_errors_are_one_line(capsys):
    assert main(["check-agent", "arena_nowhere.agent:Mine"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("arena check-agent: agent 'arena_nowhere.agent:Mine': module 'arena_nowhere.agent' does not "
                   "import (ModuleNotFoundError: No module named 'arena_nowhere')")
    assert main(["check-agent", "mcts", "--game", "tictactoe"]) == 2
    assert "--game: 'mcts' declares the games ['pommerman']" in capsys.readouterr().err
    assert main(["check-agent", "bandit", "--game", "chess"]) == 2
    assert "--game: unknown game 'chess'" in capsys.readouterr().err


# --- studies with the plugin: Ray ------------------------------------------------------------
def test_the_plugin_agent_plays_a_study_against_mcts_with_learned_state_and_seat_rotation(
        ray_local, tmp_path, capsys):
    start = tmp_path / "bandit_start.npz"
    np.savez(start, value_sum=np.array([0.0, 0, 0, 0, 0, -3.0]), count=np.array([0, 0, 0, 0, 0, 3]))
    spec = _write(tmp_path / "vs_mcts.toml", f"""
        [study]
        name = "bandit-vs-mcts"
        seed = 5
        results_dir = "{tmp_path / 'studies'}"
        [game]
        name = "pommerman"
        max_steps = 30
        [budget]
        iterations = 4
        [design]
        seeds = 1
        games_per_seed = 4
        [[lineup]]
        agent = "bandit"
        label = "Bandit"
        seed_population = "{start}"
        [[lineup]]
        agent = "mcts"
        label = "MCTS"
        [[lineup]]
        agent = "arena_example.agent:BanditAgent"
        label = "BanditByPath"
        [[lineup]]
        agent = "random"
        label = "Random"
    """)
    assert main(["run", str(spec), "--workers", "2", "--no-progress", "--no-tracking"]) == 0
    store = ResultStore(tmp_path / "studies" / "bandit-vs-mcts")
    rows = store.read()
    assert len(rows) == 16 and rows["error"].isna().all()
    assert set(rows["result"]) <= {"win", "tie", "loss"}
    assert sorted(rows.groupby("label")["seat"].nunique().items()) == [
        ("Bandit", 4), ("BanditByPath", 4), ("MCTS", 4), ("Random", 4)]  # every seat, rotated
    bandit = rows[rows["label"] == "Bandit"]
    assert set(bandit["agent"]) == {"bandit"} and (bandit["mean_iterations"] == 4).all()
    assert set(rows[rows["label"] == "BanditByPath"]["agent"]) == {"arena_example.agent:BanditAgent"}
    assert store.learned_series() == [0]
    index, states = store.latest_learned_state(0)  # saved after every game of the series
    last = states["Bandit"]
    assert index == 3 and set(states) == {"Bandit", "BanditByPath"}
    # the seed state (3 counts of action 5) plus one count per decision in the 4 games
    assert last["count"][5] >= 3 and 3 < last["count"].sum() <= 3 + int(bandit["length"].sum())
    assert main(["replay", str(store.study_dir), "2"]) == 0


def test_the_plugin_game_with_an_sprt_stop_then_rate_and_replay(ray_local, tmp_path, capsys):
    spec = _tictactoe_spec(tmp_path, "ttt-sprt", """
        seeds = 40
        games_per_seed = 2
        stop = { sprt = { elo0 = 0, elo1 = 300 }, between = ["Bandit", "Random"], max_games = 40 }
    """)
    assert main(["run", str(spec), "--workers", "2", "--no-progress", "--no-tracking"]) == 0
    out = capsys.readouterr().out
    assert "SPRT" in out
    study = tmp_path / "studies" / "ttt-sprt"
    rows = ResultStore(study).read()
    games = rows["game_index"].nunique()
    assert 2 <= games <= 40 and rows["error"].isna().all()  # a few past the decision may be in flight
    assert (study / "report" / "sprt.md").is_file()
    assert main(["rate", str(study), "--bootstrap", "20", "--no-tracking", "--out", str(tmp_path / "ratings")]) == 0
    out = capsys.readouterr().out
    assert "Bandit" in out and "Random" in out and f"{games} games of tictactoe" in out
    assert main(["replay", str(study), str(int(rows["game_index"].iloc[0]))]) == 0


def test_a_sweep_over_the_plugin_agents_parameter(ray_local, tmp_path, capsys):
    base = _tictactoe_spec(tmp_path, "ttt-base", "seeds = 2\n        games_per_seed = 2")
    sweep = _write(tmp_path / "sweep.toml", f"""
        [sweep]
        name = "bandit-noise"
        seed = 7
        base = "{base}"
        games_per_trial = 4

        [objective]
        label = "Bandit"
        metric = "win_rate"

        [search]
        "lineup.0.params.noise" = {{ grid = [0.25, 4.0], alias = "noise" }}

        [scheduler]
        kind = "fifo"

        [reevaluate]
        top_k = 1
        games = 4
    """)
    assert main(["sweep", str(sweep), "--no-progress", "--no-tracking"]) == 0
    out = capsys.readouterr().out
    assert "noise" in out
    ranked = list((tmp_path / "studies").rglob("ranked.md"))
    assert ranked and "noise" in ranked[0].read_text()


def test_a_plugin_module_missing_on_a_ray_node_is_one_error_before_any_game(ray_local, tmp_path, monkeypatch):
    """The driver imports a plugin from its own sys.path; the Ray workers cannot."""
    from cluster.run.driver import run_study

    package = tmp_path / "driver_only"
    package.mkdir()
    (package / "arena_driver_only_plugin.py").write_text(textwrap.dedent("""
        from agents.api import Agent

        class FirstLegal(Agent):
            def decide(self, observation):
                from games.registry import game_kernels
                return int(game_kernels(self.game_config).legal_actions(observation, self.seat).argmax()), 0
    """))
    monkeypatch.syspath_prepend(str(package))
    data = _spec_data("arena_driver_only_plugin:FirstLegal")
    data["study"]["results_dir"] = str(tmp_path / "studies")
    spec = build_spec(data)
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.agent: plugin module 'arena_driver_only_plugin' does not "
                                        r"import on Ray node [0-9.]+ \(ModuleNotFoundError"):
        run_study(spec, num_workers=2, progress=False, tracking=False, warm_up=False)
    assert len(ResultStore(spec.study_dir).finished_games()) == 0


def test_the_readme_agent_passes_the_contract(tmp_path, monkeypatch):
    """The ~30 lines of "Your own agent" in agents/README.md, as a newcomer copies them."""
    from agents.contract import check_agent

    readme = (Path(__file__).resolve().parents[2] / "agents" / "README.md").read_text()
    section = readme.split("## Your own agent", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert code.startswith("# my_agents/agent.py") and 25 <= len(code.splitlines()) <= 50
    package = tmp_path / "my_agents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    for game in ("tictactoe", "pommerman"):
        checks = check_agent("my_agents.agent:VoterAgent", game)
        assert all(c.passed is not False for c in checks), [c.line() for c in checks]
        assert sum(c.passed is True for c in checks) == 6  # all but the learned state (it learns nothing)
