"""Specs that used to pass ``--check`` and go wrong later (issue 54, point 6): names that are
paths, labels that are markup or share MLflow keys, sizes without bounds, floats for counts,
and plugins that fail to import without saying where. Each is refused before any game, in
one line naming the field; the sizes say their limit and how ``[limits]`` raises it.
"""
from __future__ import annotations

import json
import textwrap
import traceback

import pytest

from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.fields import SpecError
from jobs.cli import main

INVALID = 2
HUGE = 9223372036854775807


def _data(**sections) -> dict:
    """A small valid study (birds, two random players), its ``study`` table updated with
    ``sections["study"]`` and any other section replaced by ``sections``."""
    data = {"study": {"name": "safe", "seed": 1}, "game": {"name": "birds"}, "budget": {"iterations": 5},
            "design": {"seeds": 2, "games_per_seed": 2},
            "lineup": [{"agent": "random", "label": "A"}, {"agent": "random", "label": "B"}]}
    data["study"].update(sections.pop("study", {}))
    data.update(sections)
    return data


def _refused(data, match: str) -> str:
    with pytest.raises(SpecError) as info:
        build_spec(data)
    message = str(info.value)
    assert match in message, message
    assert "\n" not in message
    return message


# --- names that become paths ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["..", ".", ".hidden", "-rf", "a/b", "a\\b", "x" * 101, "", "a b", "é"])
@pytest.mark.parametrize("key", ["name", "id"])
def test_a_study_name_or_id_that_is_not_a_plain_directory_name_is_refused(key, name):
    _refused(_data(study={key: name}), f"study.{key}: use letters, digits, '.', '_' and '-', starting with")


def test_a_study_named_dot_dot_writes_nothing_outside_its_results_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        [study]
        name = ".."
        seed = 1
        results_dir = "studies"
        [game]
        name = "birds"
        [budget]
        iterations = 2
        [design]
        seeds = 1
        [[lineup]]
        agent = "random"
        [[lineup]]
        agent = "random"
        [tracking]
        enabled = false
    """))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(spec), "--workers", "1"])
    err = capsys.readouterr().err
    assert exit_info.value.code == INVALID and "study.name: use letters" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


# --- labels: markup, paths, MLflow keys ------------------------------------------------------
@pytest.mark.parametrize("label", ["</script><script>alert(1)</script>", "a/b", "..\\x", " A", "A ", "x" * 65,
                                   "tab\there", "a|b", "a&b", 'q"uote', "new\nline"])
def test_a_label_outside_the_label_characters_is_refused(label):
    data = _data()
    data["lineup"][0]["label"] = label
    _refused(data, "lineup[0].label: use letters, digits, spaces and . _ - + = : , ( ) @ #")


@pytest.mark.parametrize("labels", [("MCTS+R", "Conv-AE+FA"), ("A (1)", "B @ 2, x=3"), ("m:n#1", "x.y_z-w")])
def test_labels_of_the_shipped_studies_still_pass(labels):
    data = _data()
    for seat, label in zip(data["lineup"], labels):
        seat["label"] = label
    assert build_spec(data).labels == labels


def test_labels_that_would_share_mlflow_metrics_are_refused():
    data = _data()
    data["lineup"][0]["label"], data["lineup"][1]["label"] = "MCTS+R", "MCTS_R"
    _refused(data, "lineup[1].label: 'MCTS_R' and 'MCTS+R' (lineup[0]) would share the MLflow metrics of 'MCTS_R'")


def test_a_plugin_import_path_is_still_a_default_label():
    data = _data()
    data["lineup"][0] = {"agent": "agents.random_agent:RandomAgent"}
    spec = build_spec(data)
    assert spec.labels[0] == "agents.random_agent:RandomAgent"


def test_an_agent_name_that_is_no_label_needs_a_label(tmp_path, monkeypatch):
    module = "arena_plugin_with_a_module_name_long_enough_to_pass_the_label_limit"
    (tmp_path / f"{module}.py").write_text("from agents.random_agent import RandomAgent\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = _data()
    data["lineup"][0] = {"agent": f"{module}:RandomAgent"}
    _refused(data, f"lineup[0].label: required: the agent's name '{module}:RandomAgent' is no label (use letters")
    data["lineup"][0]["label"] = "Plugin"
    assert build_spec(data).labels == ("Plugin", "B")


# --- sizes: limits, and how a spec raises them ---------------------------------------------------
@pytest.mark.parametrize("sections, message", [
    ({"budget": {"iterations": HUGE}},
     f"budget.iterations: {HUGE}, over the limit of 1000000 iterations per decision (raise it with [limits] "
     f"iterations = {HUGE} or more)"),
    ({"design": {"seeds": 1_000_000_000, "games_per_seed": 4}},
     "design.seeds: 1000000000 board seeds x 4 games = 4000000000 games, over the limit of 1000000 games per "
     "study (raise it with [limits] games = 4000000000 or more)"),
    ({"design": {"seeds": 4, "games_per_seed": 300_000}},
     "design.games_per_seed: 4 board seeds x 300000 games = 1200000 games, over the limit of 1000000"),
    ({"design": {"seeds": 3, "runs": 2000, "rounds": 1000, "series_by": "run"}},
     "design.runs: 2000 runs x 1000 rounds = 2000000 games, over the limit of 1000000 games per study"),
    ({"design": {"seeds": 1000, "games_per_seed": 100, "vary": {"start_food": list(range(21))}}},
     "design.seeds: 1000 board seeds x 100 games x 21 conditions = 2100000 games, over the limit"),
    ({"design": {"seeds": 500_000, "games_per_seed": 2, "stop": {"sprt": {"elo0": 0, "elo1": 20},
                                                                 "between": ["A", "B"], "max_games": 2_000_000}}},
     "design.stop.max_games: 2000000, over the limit of 1000000 games per study"),
])
def test_a_size_over_its_limit_names_the_field_the_limit_and_the_way_to_raise_it(sections, message):
    _refused(_data(**sections), message)


def test_a_seat_budget_over_the_limit_names_the_seat():
    data = _data()
    data["lineup"][1]["budget"] = {"iterations": 2_000_000}
    _refused(data, "lineup[1].budget.iterations: 2000000, over the limit of 1000000 iterations per decision")


@pytest.mark.parametrize("value", [1e9, 4.0, float("inf")])
def test_a_float_where_a_count_is_meant_is_refused(value):
    _refused(_data(design={"seeds": value, "games_per_seed": 4}),
             f"design.seeds: must be a positive int, got {value!r}")


def test_a_spec_raises_its_limits_and_keeps_them_in_spec_json():
    data = _data(budget={"iterations": 2_000_000}, limits={"iterations": 5_000_000})
    spec = build_spec(data)
    assert spec.budget.iterations == 2_000_000
    stored = spec.to_dict()
    assert stored["limits"] == {"iterations": 5_000_000}
    assert spec_from_dict(json.loads(json.dumps(stored))).limits == spec.limits  # a worker, a resume
    assert spec.flat_params()["limits.iterations"] == "5000000"
    assert "limits" not in build_spec(_data()).to_dict()  # default limits: spec.json as before


@pytest.mark.parametrize("limits, message", [
    ({"games": 0}, "limits.games: must be a positive int, got 0"),
    ({"games": 1e12}, "limits.games: must be a positive int, got 1000000000000.0"),
    ({"steps": 5}, "limits.steps: unknown key; known: ['entrants', 'games', 'iterations']"),
])
def test_a_bad_limits_table_names_the_field(limits, message):
    _refused(_data(limits=limits), message)


def test_a_lineup_over_the_entrants_limit_is_refused_before_any_agent_is_built():
    data = _data(design={"format": "round_robin"})
    data["lineup"] = [{"agent": "random", "label": f"E{i}"} for i in range(300)]
    _refused(data, "lineup: 300 entries, over the limit of 256 entries in a lineup (raise it with [limits] "
                   "entrants = 300 or more)")


def test_a_tournament_over_the_limit_is_refused_before_its_tables_are_listed():
    data = _data(game={"name": "pommerman"}, budget={"iterations": 2}, design={"format": "round_robin"})
    data["lineup"] = [{"agent": "random", "label": f"E{i}"} for i in range(200)]  # C(200, 4) tables
    _refused(data, "lineup: a round_robin of 200 entrants at 4-entrant tables is 64684950 tables x 1 round x 4 "
                   "seat rotations = 258739800 games, over the limit of 1000000 games per study")
    data["lineup"] = data["lineup"][:10]
    data["design"]["rounds"] = 10_000
    _refused(data, "design.rounds: a round_robin of 10 entrants at 4-entrant tables is 210 tables x 10000 rounds")
    data["limits"] = {"games": 10_000_000}
    assert build_spec(data).design.total_games == 210 * 10_000 * 4


def test_the_command_line_refuses_a_huge_budget_in_one_line(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        [study]
        name = "huge"
        seed = 1
        [game]
        name = "birds"
        [budget]
        iterations = 9223372036854775807
        [design]
        seeds = 1
        [[lineup]]
        agent = "random"
        [[lineup]]
        agent = "random"
    """))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(spec), "--check"])
    err = capsys.readouterr().err
    assert exit_info.value.code == INVALID and "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        f"arena: invalid spec {spec}: budget.iterations: {HUGE}, over the limit of 1000000 iterations per decision "
        f"(raise it with [limits] iterations = {HUGE} or more)"]


# --- plugins that raise on import ----------------------------------------------------------------
@pytest.mark.parametrize("source, line, reason", [
    ("import math\n\nRATIO = 1 / 0\n", 3, "ZeroDivisionError: division by zero"),
    ("import math\nimport arena_no_such_dependency_xyz\n", 2,
     "ModuleNotFoundError: No module named 'arena_no_such_dependency_xyz'"),
    ("def broken(:\n    pass\n", 1, "SyntaxError: "),
])
def test_a_plugin_that_raises_on_import_names_its_file_and_line(tmp_path, monkeypatch, source, line, reason):
    module = f"arena_bad_plugin_{line}_{len(source)}"
    path = tmp_path / f"{module}.py"
    path.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = _data()
    data["lineup"][0]["agent"] = f"{module}:Agent"
    _refused(data, f"lineup[0].agent: module '{module}' does not import ({path}:{line}: {reason}")
    _refused(_data(game={"name": f"{module}:Game"}), f"game.name: module '{module}' does not import ({path}:{line}: ")


def test_with_debug_the_plugin_traceback_is_shown(tmp_path, monkeypatch):
    module = "arena_bad_plugin_debug"
    path = tmp_path / f"{module}.py"
    path.write_text("def helper():\n    return {}['missing']\n\n\nVALUE = helper()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent(f"""
        [study]
        name = "plugin"
        seed = 1
        [game]
        name = "birds"
        [design]
        seeds = 1
        [[lineup]]
        agent = "{module}:Agent"
        [[lineup]]
        agent = "random"
    """))
    with pytest.raises(SpecError) as info:
        main(["run", str(spec), "--check", "--debug"])
    assert f"({path}:2: KeyError: 'missing')" in str(info.value)
    shown = "".join(traceback.format_exception(info.value))
    assert f'File "{path}", line 5' in shown and f'File "{path}", line 2' in shown
    assert "return {}['missing']" in shown



def test_the_per_node_plugin_check_names_the_file_and_line(tmp_path, monkeypatch):
    from cluster.run.plugin_nodes import import_failures

    (tmp_path / "arena_bad_plugin_node.py").write_text("X = 1\nY = undefined_name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    missing = "arena_plugin_not_installed_here"
    assert import_failures({"lineup[0].agent": ("arena_bad_plugin_node", missing)}) == [
        ("lineup[0].agent", "arena_bad_plugin_node",
         f"{tmp_path / 'arena_bad_plugin_node.py'}:2: NameError: name 'undefined_name' is not defined"),
        ("lineup[0].agent", missing, f"ModuleNotFoundError: No module named '{missing}'")]
