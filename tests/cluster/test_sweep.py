"""Sweeps (cluster.spec.sweep, jobs.spec.load_sweep, cluster.sweep.driver): validation, Tune execution, MLflow parent/children,
held-out re-evaluation and resume, on the fake ``count`` game and ``fake`` agent."""
from __future__ import annotations

import copy
import json

import pytest

from cluster.spec.plan import board_seed_sequence, plan_study
from cluster.spec.study import StudySpec
from cluster.spec.sweep import REEVAL_STREAM, SEARCH_STREAM, SweepError, SweepSpec, build_sweep
from cluster.sweep.driver import _check_same_sweep

from conftest import PLUGINS


def sweep_data(tmp_path, name="tiny", **over):
    data = {
        "sweep": {"name": name, "seed": 11, "games_per_trial": 4, "max_concurrent_trials": 2},
        "base": {
            "study": {"name": "base", "seed": 1, "results_dir": str(tmp_path / "studies")},
            "game": {"name": "count", "max_steps": 6},
            "budget": {"iterations": 1},
            "design": {"seeds": 2, "games_per_seed": 2, "series_by": "seed"},
            "lineup": [{"agent": "fake", "label": "A", "params": {"learn": True}},
                       {"agent": "fake", "label": "B"}],
            "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "sweeps"},
        },
        "objective": {"label": "A", "metric": "win_rate"},
        "search": {"lineup.0.params.sleep_ms": {"grid": [0.0, 1.0], "alias": "sleep"},
                   "lineup.1.params.spin_ms": {"grid": [0.0, 0.5], "alias": "spin"}},
        "scheduler": {"kind": "fifo"},
        "reevaluate": {"top_k": 2, "games": 4},
    }
    for key, value in over.items():
        data[key] = value
    return data


# --- validation (no Ray) -------------------------------------------------------------------
@pytest.mark.parametrize("search, field", [
    ({"lineup.0.params.bogus": {"grid": [1]}}, "search.lineup.0.params.bogus"),
    ({"lineup.0.params.sleep_ms": {"grid": []}}, "search.lineup.0.params.sleep_ms.grid"),
    ({"lineup.0.params.sleep_ms": {"uniform": [2.0, 1.0]}}, "search.lineup.0.params.sleep_ms.uniform"),
    ({"lineup.0.params.sleep_ms": {"uniform": [1.0, 1.0]}}, "search.lineup.0.params.sleep_ms.uniform"),
    ({"lineup.0.params.fail_prob": {"grid": [0.5, 1.5]}}, "search.lineup.0.params.fail_prob"),
    ({"lineup.0.params.fail_prob": {"loguniform": [0.1, 3.0]}}, "search.lineup.0.params.fail_prob"),
    ({"lineup.5.params.sleep_ms": {"grid": [1.0]}}, "search.lineup.5.params.sleep_ms"),
    ({"game.bogus": {"choice": [1, 2]}}, "search.game.bogus"),
    ({"design.seeds": {"grid": [1, 2]}}, "search.design.seeds"),
    ({}, "search"),
])
def test_invalid_search_space_is_rejected_naming_the_field(tmp_path, search, field):
    with pytest.raises(SweepError) as err:
        build_sweep(sweep_data(tmp_path, search=search))
    assert str(err.value).startswith(field + ":"), str(err.value)


def test_invalid_objective_and_games(tmp_path):
    with pytest.raises(SweepError, match=r"^objective.label: 'C' is not a lineup label"):
        build_sweep(sweep_data(tmp_path, objective={"label": "C"}))
    data = sweep_data(tmp_path)
    data["sweep"]["games_per_trial"] = 3
    with pytest.raises(SweepError, match=r"^sweep.games_per_trial: must be a multiple of 2"):
        build_sweep(data)
    data = sweep_data(tmp_path, searcher={"kind": "optuna"})
    with pytest.raises(SweepError, match=r"^search.lineup.0.params.sleep_ms: a grid needs"):
        build_sweep(data)


def test_a_sweep_over_the_games_limit_or_with_a_long_name_is_refused(tmp_path):
    data = sweep_data(tmp_path)
    data["sweep"]["num_samples"] = 300_000  # x 4 grid points
    with pytest.raises(SweepError, match=r"^sweep\.num_samples: 1200000 trials x 4 games \+ 2 x 4 re-evaluated = "
                                         r"4800008 games, over the limit of 1000000 games per sweep \(raise it with "
                                         r"\[limits\] games = 4800008 or more\)$"):
        build_sweep(data)
    data["base"]["limits"] = {"games": 5_000_000}  # the base study's [limits] holds for its sweep
    assert build_sweep(data).total_trials == 1_200_000
    with pytest.raises(SweepError, match=r"^sweep\.name: at most 80 characters \(its trials' study ids, "
                                         r"<name>-reeval-<10 hex digits>, are study ids of at most 100\), got 81$"):
        build_sweep(sweep_data(tmp_path, name="s" * 81))
    longest = build_sweep(sweep_data(tmp_path, name="s" * 80))
    assert len(longest.trial_study_id({"x": 1}, REEVAL_STREAM)) <= 100
    with pytest.raises(SweepError, match=r"^sweep\.name: use letters, digits"):
        build_sweep(sweep_data(tmp_path, name=".."))


def test_trial_specs_seeds_and_scale(tmp_path):
    sweep = build_sweep(sweep_data(tmp_path))
    assert sweep.total_trials == 4 and sweep.games_per_trial == 4
    a = sweep.trial_spec({"lineup.0.params.sleep_ms": 0.0, "lineup.1.params.spin_ms": 0.5})
    b = sweep.trial_spec({"lineup.0.params.sleep_ms": 1.0, "lineup.1.params.spin_ms": 0.5})
    assert a.seed == b.seed == sweep.study_seed(SEARCH_STREAM)  # paired: same boards
    assert a.study_id != b.study_id and a.study_id == sweep.trial_spec(
        {"lineup.1.params.spin_ms": 0.5, "lineup.0.params.sleep_ms": 0.0}).study_id
    assert a.design.total_games == 4 and a.lineup[1].config.spin_ms == 0.5
    assert not a.tracking.enabled
    r = sweep.trial_spec({"lineup.0.params.sleep_ms": 0.0, "lineup.1.params.spin_ms": 0.5}, REEVAL_STREAM)
    assert r.seed != a.seed and r.study_id != a.study_id

    data = sweep_data(tmp_path)
    data["search"]["lineup.0.params.fail_prob"] = {"grid": [0.0, 0.1, 0.2]}
    data["sweep"]["games_per_trial"] = 8
    scaled = build_sweep(copy.deepcopy(data), scale=0.5)
    assert scaled.grid_size == 1 * 1 * 2 and scaled.games_per_trial == 4 and scaled.reeval_games == 2


def test_the_base_is_a_study_spec_and_an_older_sweep_json_still_matches(tmp_path):
    data = sweep_data(tmp_path)
    sweep = build_sweep(copy.deepcopy(data))
    assert isinstance(sweep.base, StudySpec) and sweep.base.labels == ("A", "B")
    assert sweep.results_dir == (tmp_path / "studies").resolve()
    assert (sweep.games_per_board, sweep.group_name, sweep.boards_per_trial) == (2, "board", 2)

    def plain(spec) -> dict:
        return json.loads(json.dumps(spec.to_dict(), default=str))

    again = SweepSpec.from_dict(plain(sweep))  # sweep.json and the MLflow callback's state
    assert plain(again) == plain(sweep)
    point = {"lineup.0.params.sleep_ms": 1.0, "lineup.1.params.spin_ms": 0.5}
    assert again.trial_spec(point) == sweep.trial_spec(point)

    # sweep.json as a release before the typed base wrote it (the base as raw TOML tables):
    # a resumed sweep reads it back as the same sweep.
    old = plain(sweep)
    old["base"] = copy.deepcopy(data["base"])
    old["base"]["study"]["results_dir"] = str(sweep.results_dir)
    sweep_dir = tmp_path / "sweep"
    (sweep_dir / "tune").mkdir(parents=True)
    (sweep_dir / "sweep.json").write_text(json.dumps(old), encoding="utf-8")
    _check_same_sweep(sweep, sweep_dir, sweep_dir / "tune")
    changed = build_sweep(sweep_data(tmp_path, objective={"label": "B"}))
    with pytest.raises(SweepError, match=r"differs in \['objective_label'\]"):
        _check_same_sweep(changed, sweep_dir, sweep_dir / "tune")


def board_entropies(spec) -> set:
    return {tuple(board_seed_sequence(spec.seed, g).generate_state(4))
            for s in plan_study(spec) for g in s.games}


# --- end to end: Tune + a real MLflow server ---------------------------------------------------
def test_tiny_sweep_end_to_end_with_mlflow(ray_local, mlflow_server, tmp_path):
    from mlflow.tracking import MlflowClient

    from cluster.sweep.driver import run_sweep

    data = sweep_data(tmp_path, tracking={"uri": mlflow_server, "experiment": "sweep-test"})
    sweep = build_sweep(data)
    result = run_sweep(sweep, plugins=PLUGINS, progress=False)

    trials = result.trials
    assert len(trials) == 4 and set(trials["status"]) == {"COMPLETE"}
    assert set(trials["games"]) == {4}
    assert len(result.ranked) == 2
    assert result.ranked.iloc[0]["objective"] >= result.ranked.iloc[1]["objective"]
    assert "| rank |" in result.markdown and "worse than best" in result.markdown

    client = MlflowClient(tracking_uri=mlflow_server)
    exp = client.get_experiment_by_name("sweep-test")
    runs = client.search_runs([exp.experiment_id], max_results=100)
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1 and parents[0].info.run_id == result.parent_run_id
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.metrics["trials"] == 4 and "best_objective" in parent.data.metrics
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == 4
    got = sorted((float(c.data.params["sleep"]), float(c.data.params["spin"])) for c in children)
    assert got == [(0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (1.0, 0.5)]
    by_id = {row.study_id: row for row in trials.itertuples()}
    for c in children:
        m = c.data.metrics
        row = by_id[c.data.tags["arena.trial_study_id"]]
        assert m["games"] == 4 and m["wins"] + m["ties"] + m["losses"] == 4
        assert m["objective"] == pytest.approx(row.objective)
        assert m["objective_lo"] <= m["objective"] <= m["objective_hi"]
        assert c.info.status == "FINISHED"
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"ranked.csv", "ranked.md", "trials.csv"} <= artifacts

    # Held-out re-evaluation: its boards are disjoint from the search's.
    params = {p.path: result.ranked.iloc[0][p.alias] for p in sweep.search}
    search_spec, reeval_spec = sweep.trial_spec(params), sweep.trial_spec(params, REEVAL_STREAM, games=4)
    assert reeval_spec.study_id == result.ranked.iloc[0]["reeval_study_id"]
    assert reeval_spec.seed == result.ranked.iloc[0]["study_seed"] != search_spec.seed
    assert not board_entropies(search_spec) & board_entropies(reeval_spec)
    assert reeval_spec.study_dir.is_dir() and search_spec.study_dir.is_dir()

    # Resume after a (simulated) driver restart: the finished experiment is restored,
    # no trial runs again (every trial's study is complete, nothing new recorded).
    import os

    mtimes = {p: p.stat().st_mtime for p in (tmp_path / "studies").rglob("*.parquet")
              if "-reeval-" not in str(p)}
    again = run_sweep(sweep, plugins=PLUGINS, progress=False, resume=True)
    assert len(again.trials) == 4 and set(again.trials["status"]) == {"COMPLETE"}
    assert {p: p.stat().st_mtime for p in mtimes if os.path.exists(p)} == mtimes
    runs = client.search_runs([exp.experiment_id], max_results=100)
    assert len([r for r in runs if "mlflow.parentRunId" not in r.data.tags]) == 1
    assert len(runs) == 5


# ASHA (whole-board rungs, stopped trials tagged in MLflow): tests/cluster/test_sweep_selection.py
