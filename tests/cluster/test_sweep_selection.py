"""Sweep selection that a re-run cannot change: fixed tie-breaking in the search and in the
re-evaluation, ASHA in whole boards, and trials stopped early tagged as such in MLflow."""
from __future__ import annotations

import copy
import json
import random

import pandas as pd
import pytest

from cluster.sweep.results import METRIC, TIME_ATTR, order_trials, rank_settings, select_top
from cluster.spec.sweep import build_sweep

from conftest import PLUGINS
from test_sweep import sweep_data

SPIN = "lineup.1.params.spin_ms"


# --- the rule, without Ray ------------------------------------------------------------------
def test_ties_are_ordered_the_same_whatever_order_tune_returns_them_in(tmp_path):
    data = sweep_data(tmp_path, search={"lineup.0.params.sleep_ms": {"grid": [2.0, 0.0, 1.0], "alias": "sleep"},
                                        SPIN: {"grid": [0.5, 0.0], "alias": "spin"}})
    sweep = build_sweep(data)
    rows = []
    for sleep in (2.0, 0.0, 1.0):
        for spin in (0.5, 0.0):
            rows.append({"lineup.0.params.sleep_ms": sleep, SPIN: spin, METRIC: 0.5, TIME_ATTR: 2,
                         "games": 4, "status": "COMPLETE", "study_id": f"s{sleep}-{spin}"})
    rows[0][METRIC] = 0.75                                   # a clear winner stays first
    rows[1].update({METRIC: 0.9, TIME_ATTR: 1, "status": "STOPPED"})  # stopped: after complete ones
    orders = set()
    for seed in range(6):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        ordered = order_trials(pd.DataFrame(shuffled), sweep)
        orders.add(tuple(ordered["study_id"]))
    assert len(orders) == 1
    order = next(iter(orders))
    # Winner, then the tied settings by value (sleep, then spin, ascending), then the stopped one.
    assert order == ("s2.0-0.5", "s0.0-0.0", "s0.0-0.5", "s1.0-0.0", "s1.0-0.5", "s2.0-0.0")
    top = select_top(pd.DataFrame(rows), 2, sweep)
    assert list(top["study_id"]) == ["s2.0-0.5", "s0.0-0.0"]

    # Re-evaluation ties: more games first, then the search ranking.
    stats = [{"sleep": s, METRIC: 0.5, "games": 4, "wins": 2, "search_rank": r} for r, s in ((3, "c"), (1, "a"), (2, "b"))]
    for seed in range(4):
        random.Random(seed).shuffle(stats)
        assert list(rank_settings(copy.deepcopy(stats), "win_rate")["sleep"]) == ["a", "b", "c"]


def test_stopped_trials_fill_the_top_only_when_too_few_completed(tmp_path):
    sweep = build_sweep(sweep_data(tmp_path))
    paths = [p.path for p in sweep.search]
    frame = pd.DataFrame([
        {paths[0]: 0.0, paths[1]: 0.0, METRIC: 0.2, TIME_ATTR: 2, "games": 4, "status": "COMPLETE", "study_id": "c"},
        {paths[0]: 1.0, paths[1]: 0.0, METRIC: 0.9, TIME_ATTR: 1, "games": 2, "status": "STOPPED", "study_id": "s"},
        {paths[0]: 0.0, paths[1]: 0.5, METRIC: 1.0, TIME_ATTR: 0, "games": 0, "status": "ERROR", "study_id": "e"},
    ])
    assert list(select_top(frame, 1, sweep)["study_id"]) == ["c"]
    assert list(select_top(frame, 3, sweep)["study_id"]) == ["c", "s"]


# --- end to end on Ray Tune -----------------------------------------------------------------
def _tie_sweep(tmp_path, name, grid):
    """Two settings that play identically (spin_ms only burns time): ties everywhere."""
    data = sweep_data(tmp_path, name=name, search={SPIN: {"grid": grid, "alias": "spin"}},
                      tracking={"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "ties"},
                      reevaluate={"top_k": 2, "games": 4})
    return build_sweep(data)


def _best_tag(uri, name):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("ties")
    runs = client.search_runs([exp.experiment_id], filter_string=f"tags.`arena.sweep` = '{name}'")
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parent) == 1
    return json.loads(parent[0].data.tags["arena.best_setting"])


def test_a_tie_ranks_the_same_on_every_run(ray_local, tmp_path):
    from cluster.sweep.driver import run_sweep

    first = _tie_sweep(tmp_path, "tie-a", [0.5, 0.0])
    result = run_sweep(first, plugins=PLUGINS, progress=False)
    ranked = result.ranked
    assert ranked.iloc[0][METRIC] == ranked.iloc[1][METRIC]  # a true tie in the re-evaluation
    assert list(ranked["spin"]) == [0.0, 0.5]                 # broken by the documented rule
    uri = first.tracking.uri
    assert _best_tag(uri, "tie-a") == {"spin": 0.0}

    # The grid lists 0.5 first, so Tune returns the trials in the other order: the documented rule,
    # not Tune's order, ranks them (every arrival order: the test without Ray above).


def test_a_trial_stopped_early_is_tagged_in_mlflow(ray_local, tmp_path):
    from mlflow.tracking import MlflowClient

    from cluster.sweep.driver import run_sweep

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    data = sweep_data(tmp_path, name="asha-tags", search={
        "lineup.0.params.fail_prob": {"grid": [0.0, 1.0, 0.9, 0.8], "alias": "fail"}},
        scheduler={"kind": "asha", "grace_period": 2, "reduction_factor": 2},
        reevaluate={"top_k": 1, "games": 2}, tracking={"uri": uri, "experiment": "asha"})
    data["sweep"]["games_per_trial"] = 8   # 4 boards of 2 games; grace period: 1 board
    data["sweep"]["max_concurrent_trials"] = 1
    sweep = build_sweep(data)
    assert (sweep.boards_per_trial, sweep.grace_period) == (4, 1)
    result = run_sweep(sweep, plugins=PLUGINS, progress=False)
    trials = result.trials
    stopped = trials[trials["status"] == "STOPPED"]
    assert len(stopped) >= 1
    assert set(stopped[TIME_ATTR]) <= {1, 2}                 # stopped at a rung: whole boards
    assert set(stopped["games_done"]) <= {2, 4}
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("asha")
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`arena.sweep` = 'asha-tags'")
    children = {r.data.tags["arena.trial_study_id"]: r for r in runs if "mlflow.parentRunId" in r.data.tags}
    assert len(children) == 4
    for row in trials.itertuples():
        tags = children[row.study_id].data.tags
        expected = {"COMPLETE": "complete", "STOPPED": "stopped_early"}[row.status]
        assert tags["arena.trial_status"] == expected, (row.study_id, tags)
        if row.status == "STOPPED":
            assert tags["arena.stopped_at_boards"] == str(getattr(row, TIME_ATTR))
    assert "Stopped early by ASHA" in result.markdown
    by_fail = trials.set_index("lineup.0.params.fail_prob")
    assert by_fail.loc[0.0, "status"] == "COMPLETE"          # the never-failing setting runs to the end
    assert result.ranked.iloc[0]["fail"] == 0.0
