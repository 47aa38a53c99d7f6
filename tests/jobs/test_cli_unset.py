"""``--unset KEY`` (``arena run``, ``arena sweep``): remove a spec key so that its default
applies, e.g. a FEMCTS study with its population reset every game (``series_by = "game"``,
refused while the spec sets ``seeds_per_set``)."""
from __future__ import annotations

import numpy as np
import pytest

from cluster.results.store import ResultStore
from cluster.run.play import build_agents, play_game
from cluster.spec.plan import plan_study
from cluster.spec.seed_populations import load_populations
from jobs.cli import main
from jobs.overrides import apply_unsets
from jobs.spec import SpecError, load_spec

FFA = "jobs/femcts/7_po_ffa.toml"
GAME = ['--set', 'design.series_by="game"']


def test_unset_lets_a_spec_drop_a_key(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", FFA, "--check", *GAME])
    assert exc.value.code == 2
    assert "design.seeds_per_set: only used with series_by = 'set'" in capsys.readouterr().err
    assert main(["run", FFA, "--check", *GAME, "--unset", "design.seeds_per_set"]) == 0
    assert "valid: 250 games, 5 conditions" in capsys.readouterr().out
    spec = load_spec(FFA, overrides=GAME[1::2], unsets=["design.seeds_per_set"])
    assert spec.design.series_by == "game" and spec.design.seeds_per_set is None
    assert len(plan_study(spec)) == 250, "one series per game"


@pytest.mark.parametrize("key, message", [
    ("design.seeds_per_sets", "--unset design.seeds_per_sets: design.seeds_per_sets: no such key "
                              "(design has: seeds, games_per_seed, seeds_per_set,"),
    ("desgn.seeds", "--unset desgn.seeds: desgn: no such key (the spec has: study, game, budget, design,"),
    ("lineup.4", "--unset lineup.4: lineup.4: no such entry (lineup has 4 entries, 0..3)"),
    ("study.seed.x", "--unset study.seed.x: study.seed is not a table (it is 2019)"),
    ("design.seeds=3", "expected a dotted key without a value"),
    ("design..seeds", "expected a dotted key like design.seeds_per_set"),
])
def test_unset_names_a_bad_key(capsys, key, message):
    with pytest.raises(SystemExit) as exc:
        main(["run", FFA, "--check", "--unset", key])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_unset_applies_after_set_and_removes_list_entries():
    data = {"design": {"seeds": 8}, "lineup": [{"agent": "a"}, {"agent": "b"}]}
    assert apply_unsets(data, ["lineup.0", "design.seeds"]) == {"design": {}, "lineup": [{"agent": "b"}]}
    with pytest.raises(SpecError, match="design.stop: no such key"):
        load_spec(FFA, overrides=["design.stop=1"], unsets=["design.stop", "design.stop"])


def test_sweep_unset_reaches_the_base_study(capsys):
    sweep = ["sweep", "jobs/sweeps/femcts_ffa.toml", "--check", "--unset"]
    assert main([*sweep, "base.design.seeds"]) == 2  # the base study's key, removed: required
    assert "base.design.seeds: required" in capsys.readouterr().err
    assert main([*sweep, "base.design.seedz"]) == 2
    assert ("--unset base.design.seedz: base.design.seedz: no such key (base.design has: seeds,"
            in capsys.readouterr().err)


def femcts_toml(tmp_path, seed_file) -> str:
    """A FEMCTS study whose population is carried through a set of 2 boards x 2 games."""
    path = tmp_path / "femcts.toml"
    path.write_text(f"""
[study]
name = "femcts-reset"
seed = 5
results_dir = "{tmp_path / 'studies'}"
[game]
name = "pommerman"
ruleset = "java"
max_steps = 40
[budget]
iterations = 30
[design]
seeds = 2
games_per_seed = 2
seeds_per_set = 2
series_by = "set"
[[lineup]]
agent = "femcts"
label = "FEMCTS"
params = {{ n_effective = 2, population_size = 4, elite_count = 1, rollouts_per_individual = 2 }}
seed_population = "{seed_file}"
[[lineup]]
agent = "random"
[[lineup]]
agent = "random"
[[lineup]]
agent = "random"
[tracking]
enabled = false
""")
    return str(path)


def test_population_reset_per_game_starts_every_game_from_the_seed(tmp_path, ray_local):
    seed_file = tmp_path / "seed.npz"
    np.savez(seed_file, population=np.full((4, 2, 5), 7.0))
    path = femcts_toml(tmp_path, seed_file)
    common = ["run", path, "--workers", "1", "--no-tracking", "--no-progress"]
    assert main([*common, "--unset", "design.seeds_per_set", *GAME,
                 "--set", "study.name=femcts-reset-per-game"]) == 0
    assert main([*common, "--set", "study.name=femcts-carried"]) == 0

    reset = load_spec(path, overrides=["design.series_by=\"game\"", "study.name=femcts-reset-per-game"],
                      unsets=["design.seeds_per_set"])
    store = ResultStore(reset.study_dir)
    carried = ResultStore(load_spec(path, overrides=["study.name=femcts-carried"]).study_dir)
    assert store.finished_games() == {0, 1, 2, 3}
    for series in plan_study(reset):
        (task,) = series.games  # one game a series
        stored = store.learned_state_at(series.series_id, 0)["FEMCTS"]
        assert int(stored["counters"][0]) == 1, "every game remembers only itself"
        # the same game played alone from the seed, in this process: a 1-game series
        _, alone = play_game(reset, task, build_agents(reset), learned=load_populations(reset))
        np.testing.assert_array_equal(stored["population"], alone["FEMCTS"]["population"])
        assert np.abs(stored["population"] - 7.0).max() < 1.0, "it started from the seed"
    # carried through the set, the fourth game starts from the third's population
    last = carried.learned_state_at(0, 3)["FEMCTS"]
    assert int(last["counters"][0]) == 4
    assert not np.array_equal(last["population"], store.learned_state_at(3, 0)["FEMCTS"]["population"])
