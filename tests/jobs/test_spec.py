"""Study specs: parsing, overrides, scaling, and one test per kind of error."""
from __future__ import annotations

import json
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from agents.api import Agent
from agents.registry import agent_names, register
from cluster.spec.build import spec_from_dict
from cluster.spec.fields import SpecError
from jobs.overrides import apply_overrides
from jobs.spec import load_spec

JOBS = Path(__file__).resolve().parents[2] / "jobs"


@dataclass(frozen=True)
class _ProbConfig:
    """Config of the fake agent used by these tests."""

    probability: float = 0.5
    """A probability in [0, 1]."""
    depth: int = 3
    """Some positive int."""

    def __post_init__(self):
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"probability: must be in [0, 1], got {self.probability!r}")
        if self.depth < 1:
            raise ValueError(f"depth: must be >= 1, got {self.depth!r}")


@register
class _ProbAgent(Agent):
    """A fake agent with a probability parameter (always stops)."""

    name = "test_prob"
    Config = _ProbConfig

    @classmethod
    def check_learned_state(cls, config, arrays):
        if "weights" not in arrays:
            raise ValueError("no array named 'weights'")

    def decide(self, observation):
        return 0, 0


BASE = """
[study]
name = "unit"
seed = 11

[game]
name = "pommerman"
mode = "ffa"

[budget]
iterations = 10

[design]
seeds = 10
games_per_seed = 3

[[lineup]]
agent = "test_prob"
params = { probability = 0.25 }

[[lineup]]
agent = "random"

[[lineup]]
agent = "random"

[[lineup]]
agent = "random"
"""


def write(tmp_path: Path, text: str = BASE, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def expect_error(match: str, path, overrides=(), scale=None) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path, overrides=overrides, scale=scale)
    message = str(info.value)
    assert re.search(match, message), message
    return message


# --- valid specs --------------------------------------------------------------
def test_base_spec_loads(tmp_path):
    spec = load_spec(write(tmp_path))
    assert spec.name == "unit" and spec.seed == 11 and spec.study_id == "unit"
    assert spec.study_dir == Path("arena-studies") / "unit"
    assert spec.game == "pommerman" and spec.game_config.mode == "ffa"
    assert spec.budget.iterations == 10 and spec.budget.ms is None
    assert spec.design.total_games == 30 and spec.design.series_by == "seed"
    assert spec.design.rotate_seats and spec.design.carry_learned_state
    assert spec.lineup[0].config == _ProbConfig(probability=0.25)
    assert spec.lineup[0].params == {"probability": 0.25}
    # defaults made unique
    assert spec.labels == ("test_prob", "random-1", "random-2", "random-3")
    assert spec.tracking.uri == "sqlite:///mlflow.db" and spec.tracking.experiment == "arena"
    assert spec.source == str(tmp_path / "spec.toml")


def test_labels_avoid_explicit_ones(tmp_path):
    text = BASE.replace('agent = "test_prob"\nparams = { probability = 0.25 }',
                        'agent = "random"\nlabel = "random-1"')
    assert load_spec(write(tmp_path, text)).labels == ("random-1", "random-2", "random-3", "random-4")


@pytest.mark.parametrize("name", ["pommerman_ffa_demo.toml", "pommerman_team_demo.toml"])
def test_demo_specs_load(name):
    needed = {"mcts", "rhea", "osla", "rule_based"}
    if not needed <= set(agent_names()):
        pytest.skip(f"agents not registered yet: {sorted(needed - set(agent_names()))}")
    spec = load_spec(JOBS / name)
    assert len(spec.lineup) == 4 and spec.budget.deterministic
    small = load_spec(JOBS / name, scale=0.01).design  # one board, all its games
    assert small.seeds == 1 and small.games_per_seed == spec.design.games_per_seed


def test_runs_design(tmp_path):
    text = BASE.replace("seeds = 10\ngames_per_seed = 3", "runs = 3\nrounds = 5")
    spec = load_spec(write(tmp_path, text))
    assert spec.design.runs_design and spec.design.total_games == 15
    assert spec.design.seeds == 5 and spec.design.series_by == "run"


def test_round_trip_to_dict_json_pickle(tmp_path):
    spec = load_spec(write(tmp_path), overrides=["game.view_range=2", "study.max_in_flight=3"])
    data = json.loads(json.dumps(spec.to_dict()))
    assert spec_from_dict(data) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_flat_params_cover_agent_defaults(tmp_path):
    flat = load_spec(write(tmp_path)).flat_params()
    assert flat["lineup.0.params.probability"] == "0.25"
    assert flat["lineup.0.params.depth"] == "3"  # default filled in
    assert flat["design.seeds"] == "10" and flat["design.total_games"] == "30"
    assert flat["game.view_range"] == "" and flat["budget.iterations"] == "10"
    assert all(isinstance(v, str) for v in flat.values())


# --- overrides and scale --------------------------------------------------------
def test_overrides(tmp_path):
    spec = load_spec(write(tmp_path), overrides=[
        "design.seeds=4", "lineup.0.params.probability=1", "game.view_range=2",
        "design.series_by=game", 'study.name="renamed"', "lineup.1.label=Baseline",
        "tracking.enabled=false", "budget.ms=25",
    ])
    assert spec.design.seeds == 4 and spec.design.series_by == "game"
    assert spec.lineup[0].config.probability == 1.0
    assert spec.game_config.view_range == 2
    assert spec.name == "renamed" and spec.lineup[1].label == "Baseline"
    assert spec.tracking.enabled is False
    assert spec.budget.iterations == 10  # iterations override ms (agents.api.Budget)


def test_override_creates_missing_tables(tmp_path):
    spec = load_spec(write(tmp_path), overrides=["lineup.1.params={}", "lineup.0.params.depth=7"])
    assert spec.lineup[0].config.depth == 7


def test_apply_overrides_on_raw_dict():
    data = {"lineup": [{"agent": "x"}]}
    apply_overrides(data, ["lineup.0.params.a=1.5", "design.seeds=2", "a.b=hello world"])
    assert data == {"lineup": [{"agent": "x", "params": {"a": 1.5}}], "design": {"seeds": 2},
                    "a": {"b": "hello world"}}


@pytest.mark.parametrize("scale, seeds, per_seed", [(0.25, 3, 3), (0.3, 3, 3), (1, 10, 3), (2, 20, 3),
                                                    (0.001, 1, 3)])
def test_scale(tmp_path, scale, seeds, per_seed):
    spec = load_spec(write(tmp_path), scale=scale)
    assert (spec.design.seeds, spec.design.games_per_seed) == (seeds, per_seed)


def test_scale_applies_after_overrides_and_to_runs(tmp_path):
    text = BASE.replace("seeds = 10\ngames_per_seed = 3", "runs = 4\nrounds = 10")
    spec = load_spec(write(tmp_path, text), overrides=["design.rounds=20"], scale=0.5)
    assert (spec.design.runs, spec.design.rounds, spec.design.total_games) == (2, 20, 40)
    assert spec.design.seeds == 20  # the boards the rounds cycle over are kept whole


# --- errors: each names its field -------------------------------------------------
@pytest.mark.parametrize("overrides, match", [
    (["lineup.2.agent=mctz"], r"^lineup\[2\]\.agent: unknown agent 'mctz'; known: \[.*'random'.*\]"),
    (["lineup.1.params.bogus=1"], r"^lineup\[1\]\.params\.bogus: unknown parameter for agent 'random'"),
    (["lineup.0.params.probability=1.5"], r"^lineup\[0\]\.params\.probability: must be in \[0, 1\], got 1\.5$"),
    (["lineup.0.params.depth=0"], r"^lineup\[0\]\.params\.depth: must be >= 1, got 0$"),
    (["lineup.0.bogus=1"], r"^lineup\[0\]\.bogus: unknown key"),
    (["lineup.3.label=test_prob", "lineup.0.label=test_prob"], r"^lineup\[\d\]\.label: duplicate label 'test_prob'"),
    (["game.view_range=7"], r"^game\.view_range: must be one of \(0, 1, 2, 3, 4\)"),
    (["game.bogus=1"], r"^game\.bogus: unknown option for 'pommerman'"),
    (["game.mode=duel"], r"^game\.mode: must be one of \['ffa', 'team'\], got 'duel'"),
    (["game.name=chess"], r"^game\.name: unknown game 'chess'; known: \[.*'pommerman'"),
    (["design.seeds=0"], r"^design\.seeds: must be a positive int, got 0$"),
    (["design.seeds=2.5"], r"^design\.seeds: must be a positive int, got 2\.5$"),
    (["design.games_per_seed=-1"], r"^design\.games_per_seed: must be a positive int, got -1$"),
    (["design.rotate_seats=3"], r"^design\.rotate_seats: must be true or false, got 3$"),
    (["design.series_by=everything"], r"^design\.series_by: must be one of \['seed', 'set', 'run', 'game'\]"),
    (["design.series_by=run"], r"^design\.series_by: 'run' needs a runs x rounds design"),
    (["design.runs=3"], r"^design\.rounds: runs and rounds go together"),
    (["design.bogus=1"], r"^design\.bogus: unknown key; known: \["),
    (["study.bogus=1"], r"^study\.bogus: unknown key; known: \["),
    (["study.seed=-1"], r"^study\.seed: must be a non-negative int, got -1$"),
    (['study.name="a b"'], r"^study\.name: use letters, digits"),
    (["study.max_in_flight=0"], r"^study\.max_in_flight: must be a positive int, got 0$"),
    (["budget.iterations=0"], r"^budget\.iterations: must be a positive int, got 0$"),
    (["budget.bogus=0"], r"^budget\.bogus: unknown key"),
    (["tracking.enabled=maybe"], r"^tracking\.enabled: must be true or false, got 'maybe'$"),
    (["bogus.key=1"], r"^bogus: unknown section; known: \["),
    (["lineup.0.params=3"], r"^lineup\[0\]\.params: must be a table"),
])
def test_field_errors(tmp_path, overrides, match):
    expect_error(match, write(tmp_path), overrides=overrides)


def test_budget_ms_range(tmp_path):
    text = BASE.replace("iterations = 10", "ms = -5")
    expect_error(r"^budget\.ms: must be in \(0, 600000\], got -5", write(tmp_path, text))


def test_lineup_size_must_match_players(tmp_path):
    text = BASE.rsplit("[[lineup]]", 1)[0]
    expect_error(r"^lineup: the game 'pommerman' has 4 players, but the lineup has 3 entries \(or hold a tournament",
                 write(tmp_path, text))


def test_missing_sections_and_keys(tmp_path):
    expect_error(r"^study\.seed: required", write(tmp_path, BASE.replace("seed = 11\n", "")))
    expect_error(r"^design\.seeds: required",
                 write(tmp_path, BASE.replace("seeds = 10\n", ""), "b.toml"))
    expect_error(r"^lineup\[1\]\.agent: required",
                 write(tmp_path, BASE.replace('agent = "random"\n', 'label = "x"\n', 1), "c.toml"))


def test_seed_population_missing_file(tmp_path):
    message = expect_error(r"^lineup\[0\]\.seed_population: file not found: x\.npz",
                           write(tmp_path), overrides=["lineup.0.seed_population=x.npz"])
    assert str(tmp_path / "x.npz") in message  # resolved against the spec's directory


def test_seed_population_corrupt_and_pickled(tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    expect_error(r"^lineup\[0\]\.seed_population: not a readable \.npz", write(tmp_path),
                 overrides=["lineup.0.seed_population=bad.npz"])
    np.savez(tmp_path / "obj.npz", x=np.array([{"a": 1}], dtype=object))
    expect_error(r"^lineup\[0\]\.seed_population: not a readable \.npz", write(tmp_path),
                 overrides=["lineup.0.seed_population=obj.npz"])


def test_seed_population_ok(tmp_path):
    np.savez(tmp_path / "pop.npz", weights=np.arange(6.0).reshape(2, 3))
    spec = load_spec(write(tmp_path), overrides=["lineup.0.seed_population=pop.npz"])
    assert spec.lineup[0].seed_population == str((tmp_path / "pop.npz").resolve())
    # a Ray worker rebuilds the spec without opening the file
    (tmp_path / "pop.npz").unlink()
    assert spec_from_dict(spec.to_dict()) == spec


def test_malformed_toml(tmp_path):
    expect_error(r"spec\.toml: malformed TOML: ", write(tmp_path, "[study\nname = 1"))


def test_missing_spec_file(tmp_path):
    expect_error(r"nope\.toml: spec file not found", tmp_path / "nope.toml")


@pytest.mark.parametrize("override, match", [
    ("designseeds4", r"^--set 'designseeds4': expected key=value"),
    ("=4", r"^--set '=4': expected a dotted key"),
    ("design..seeds=4", r"^--set 'design\.\.seeds=4': expected a dotted key"),
    ("lineup.9.agent=random", r"^--set lineup\.9\.agent: lineup\.9: index out of range \(lineup has 4 entries\)"),
    ("lineup.first.agent=random", r"^--set lineup\.first\.agent: lineup\.first: expected a list index"),
    ("study.seed.x=1", r"^--set study\.seed\.x: study\.seed is not a table \(it is 11\)"),
])
def test_bad_override_syntax(tmp_path, override, match):
    expect_error(match, write(tmp_path), overrides=[override])


@pytest.mark.parametrize("scale", [0, -1, float("nan"), "2"])
def test_bad_scale(tmp_path, scale):
    expect_error(r"^--scale: must be a positive number", write(tmp_path), scale=scale)


def test_vary_expands_conditions_on_paired_boards(tmp_path):
    from cluster.spec.plan import plan_study

    spec = load_spec(write(tmp_path), overrides=["design.vary={view_range = [0, 2, 4]}"])
    assert spec.design.conditions == [{"view_range": 0}, {"view_range": 2}, {"view_range": 4}]
    assert spec.design.total_games == 3 * spec.design.games_per_condition
    assert [spec.game_config_for(c).view_range for c in range(3)] == [0, 2, 4]
    assert spec.condition_label(1) == "view_range=2"
    tasks = sorted((g for s in plan_study(spec) for g in s.games), key=lambda t: t.game_index)
    per = spec.design.games_per_condition
    for t in tasks:
        assert t.condition == t.game_index // per
        twin = tasks[t.game_index % per]
        assert (t.board_seed, t.seat_lineup) == (twin.board_seed, twin.seat_lineup)
    # series never span conditions
    for s in plan_study(spec):
        assert len({g.condition for g in s.games}) == 1
    again = spec_from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again.design.conditions == spec.design.conditions


@pytest.mark.parametrize("vary, match", [
    ("{view_range = [0, 9]}", "design.vary.view_range"),
    ("{bogus = [1]}", "design.vary.bogus: unknown option"),
    ("{view_range = []}", "design.vary.view_range: expected a non-empty list"),
])
def test_vary_errors_name_the_field(tmp_path, vary, match):
    expect_error(match, write(tmp_path), overrides=[f"design.vary={vary}"])


def test_seed_population_must_fit_the_agent(tmp_path):
    np.savez(tmp_path / "pop.npz", other=np.zeros(3))
    expect_error(r"lineup\[0\]\.seed_population: .*no array named 'weights'", write(tmp_path),
                 overrides=["lineup.0.seed_population=pop.npz"])


def test_femcts_seed_population_shape_is_checked_before_any_game(tmp_path):
    np.savez(tmp_path / "pop.npz", population=np.zeros((10, 3, 8)))
    text = BASE.replace('agent = "test_prob"\nparams = { probability = 0.25 }',
                        'agent = "femcts"\nparams = { n_effective = 2 }')
    expect_error(r"lineup\[0\]\.seed_population: .*shape \(10, 3, 8\).*\(10, 2, 5\)",
                 write(tmp_path, text), overrides=["lineup.0.seed_population=pop.npz"])
    np.savez(tmp_path / "pop.npz", population=np.zeros((10, 2, 5)))
    spec = load_spec(write(tmp_path, text), overrides=["lineup.0.seed_population=pop.npz"])
    assert spec.lineup[0].seed_population.endswith("pop.npz")


def test_seed_population_from_an_unreachable_mlflow_uri(tmp_path):
    text = BASE.replace('agent = "test_prob"\nparams = { probability = 0.25 }',
                        'agent = "femcts"')
    expect_error(r"lineup\[0\]\.seed_population: cannot download MLflow artifact 'runs:/",
                 write(tmp_path, text),
                 overrides=["lineup.0.seed_population=runs:/0123456789abcdef/pop.npz",
                            f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
                            f"study.results_dir={tmp_path}/studies"])
