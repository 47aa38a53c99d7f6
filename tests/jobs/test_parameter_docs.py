"""Agent and game parameters documented from their code: ``arena agents`` and ``arena games``
print every registered agent's and game's parameters (plugins included) with the type, the
default and the field's docstring read from its ``Config`` class, and the parameter pages
``agents/PARAMETERS.md`` and ``games/PARAMETERS.md`` are those commands' output, so a
default cannot drift from its documentation."""
from __future__ import annotations

import json
import tomllib
from dataclasses import MISSING, fields
from importlib import metadata
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

import agents  # noqa: F401  (registers the built-in agents)
from agents.registry import agent_class, agent_names
from games.registry import game_names, make_config
from games.validation import Real, config_class, one_of
from jobs.cli import main
from jobs.commands import agents as agents_command
from jobs.commands import games as games_command
from jobs.commands._parameters import parameters

ROOT = Path(__file__).resolve().parents[2]


def _outside_tests(names: list[str]) -> list[str]:
    """``names`` less the agents registered by the test suite's own modules (conftest,
    test_spec, ...) and by the bench wing's synthetic games (``jobs.bench.cluster``'s
    ``bench-spin``, which plays any game), which are in the registry when the whole suite
    or the bench tests run in one process."""
    return [n for n in names if not agent_class(n).__module__.split(".")[0] in ("conftest", "tests")
            and not agent_class(n).__module__.startswith(("test_", "jobs.bench."))]


def _out(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command, page", [(agents_command, "agents/PARAMETERS.md"),
                                           (games_command, "games/PARAMETERS.md")])
def test_the_parameter_pages_are_the_commands_output(capsys, command, page):
    argv = command.GENERATE.split(" > ")[0].split()[3:]  # after "python -m jobs.cli"
    generated = _out(capsys, *argv)
    written = (ROOT / page).read_text(encoding="utf-8")
    assert written == generated, f"{page} is out of date with the code: run `{command.GENERATE}`"


def test_arena_agents_names_a_parameter_with_its_default_and_docstring_from_the_code(capsys):
    out = _out(capsys, "agents", "mcts")
    default = next(f.default for f in fields(agent_class("mcts").Config) if f.name == "rollout_depth")
    assert f"    rollout_depth: int in [1, 1000] = {default}\n" in out
    assert "Ticks simulated per iteration, counted from the root" in out  # the field's docstring
    assert "- plays: pommerman" in out
    # an alias the agent declares (FEMCTS's mP), beside the parameter's name
    assert "mutation_probability (mP): number in [0, 1] = 0.2" in _out(capsys, "agents", "femcts")


def test_arena_games_names_an_option_with_its_default_and_the_agents_that_play_it(capsys):
    out = _out(capsys, "games", "pommerman")
    assert f"    max_steps: int in [1, 100000] = {make_config('pommerman').max_steps}\n" in out
    assert '    ruleset: one of "canonical", "java" = "canonical"\n' in out
    assert "- players: 4" in out
    plays = next(line for line in out.splitlines() if line.startswith("  - agents that play it: "))
    assert {"mcts", "femcts", "random"} <= set(plays.split(": ")[1].split(", "))
    assert "sy_mcts_mrx" not in plays


def test_a_plugin_agent_and_game_appear_with_their_parameters(capsys):
    listing = _out(capsys, "agents")
    assert any(line.startswith("bandit ") for line in listing.splitlines())
    assert "noise: number > 0 = 1.0" in _out(capsys, "agents", "bandit")
    assert any(line.startswith("tictactoe ") for line in _out(capsys, "games").splitlines())
    out = _out(capsys, "games", "tictactoe")
    assert "random_opening: bool = true" in out
    # the agents that play a game: those that declare it and those that play any game with kernels
    # (less the fake agents other test modules register in this process when the suite runs)
    plays = next(line for line in out.splitlines() if line.strip().startswith("- agents that play it: "))
    assert _outside_tests(plays.split(": ")[1].split(", ")) == ["bandit", "mcts_generic", "random"]
    names = [line.split()[0] for line in _out(capsys, "agents", "--game", "tictactoe").splitlines()
             if line and not line.startswith((" ", "`"))]
    assert _outside_tests(names) == ["bandit", "mcts_generic", "random"]
    # --builtin leaves the plugins out (what the generated pages list)
    assert "bandit" not in [a["name"] for a in json.loads(_out(capsys, "agents", "--builtin", "--json"))]


def test_a_plugin_that_does_not_load_is_listed_with_its_reason_and_naming_it_is_refused(capsys, monkeypatch):
    import agents.plugins

    broken = metadata.EntryPoint(name="broken_agent", value="arena_no_such_module:Agent", group="arena.agents")
    real = agents.plugins.entry_points
    monkeypatch.setattr(agents.plugins, "entry_points",
                        lambda group: {**real(group), **({"broken_agent": broken} if group == "arena.agents" else {})})
    out = _out(capsys, "agents")
    line = next(line for line in out.splitlines() if line.startswith("broken_agent"))
    assert "does not load" in line and "arena_no_such_module" in line
    assert any(line.startswith("mcts ") for line in out.splitlines())  # the others are still listed
    assert main(["agents", "broken_agent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena agents: ") and "arena_no_such_module" in err[0]
    assert main(["games", "no_such_game"]) == 2
    assert "unknown game 'no_such_game'" in capsys.readouterr().err


def test_every_documented_default_reads_back_as_the_codes_default_and_every_field_has_a_docstring():
    """The defaults as the pages write them are TOML a spec can use, and equal the code's."""
    from games.registry import make_game

    configs = {f"agent {name}": (agent_class(name).Config, {}) for name in agent_names()
               if agent_class(name).__module__.startswith("agents.")}
    configs |= {f"game {name}": (type(make_config(name)), {}) for name in game_names()
                if type(make_game(name)).__module__.startswith("games.")}
    undocumented = []
    for where, (config_cls, _) in configs.items():
        code = {f.name: f.default for f in fields(config_cls) if f.default is not MISSING}
        for row in parameters(config_cls):
            if not row.description:
                undocumented.append(f"{where}.{row.name}")
            if row.default in ("absent", "required"):
                assert row.default != "absent" or code[row.name] is None, (where, row)
                continue
            value = tomllib.loads(f"x = {row.default}")["x"]
            expected = list(code[row.name]) if isinstance(code[row.name], tuple) else code[row.name]
            assert value == expected and type(value) is type(expected), (where, row.name, row.default, code[row.name])
    assert not undocumented, f"fields without a docstring under them: {undocumented}"


@config_class
class _RulesConfig:
    """A config of every kind of rule the pages describe."""

    ratio: Annotated[Real, Field(gt=0, le=1)] = 0.5
    """A number in (0, 1]."""
    count: Annotated[int, Field(ge=1)] = 3
    kind: Annotated[str, one_of(("a", "b"))] = "a"
    """One of two names."""
    limit: Annotated[int, Field(ge=1, le=9)] | None = None
    """An optional bounded int."""
    cells: Annotated[tuple[int, ...], Field(strict=False)] = (1, 2)
    """An array."""


def test_types_rules_and_defaults_are_written_from_the_field_declarations():
    rows = {row.name: row for row in parameters(_RulesConfig)}
    assert (rows["ratio"].type, rows["ratio"].default, rows["ratio"].description) == \
        ("number in (0, 1]", "0.5", "A number in (0, 1].")
    assert (rows["count"].type, rows["count"].default, rows["count"].description) == ("int >= 1", "3", "")
    assert (rows["kind"].type, rows["kind"].default) == ('one of "a", "b"', '"a"')
    assert (rows["limit"].type, rows["limit"].default) == ("int in [1, 9] or absent", "absent")
    assert (rows["cells"].type, rows["cells"].default) == ("array of int", "[1, 2]")
