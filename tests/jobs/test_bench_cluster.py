"""The pieces of ``arena bench cluster`` that measure growth with the number of games
(jobs/bench/cluster.py): what they time must be what they say."""
from __future__ import annotations

import numpy as np
import pytest

from cluster.results.store import ResultStore
from jobs.bench import cluster as scaling_bench


def test_gaps_and_decile_medians():
    recorded = [0.0, 0.001, 0.002, 0.003, 0.005, 0.007, 0.009, 0.011, 0.013, 0.015, 0.017,
                0.027, 0.037, 0.047, 0.057, 0.067, 0.077, 0.087, 0.097, 0.107, 0.117]
    gaps = scaling_bench._gaps_ms(recorded)
    assert gaps.shape == (20,)
    np.testing.assert_allclose(gaps[:3], [1.0, 1.0, 1.0])
    first, last = scaling_bench._decile_medians(gaps)
    assert first == pytest.approx(1.0) and last == pytest.approx(10.0)
    # fewer than ten values: one value per end
    assert scaling_bench._decile_medians(np.array([2.0, 3.0, 4.0])) == (2.0, 4.0)


def test_store_append_bench_writes_every_game_once(tmp_path):
    first, last = scaling_bench._store_append_ms(tmp_path, 30)
    assert first > 0 and last > 0
    store = ResultStore(tmp_path / "store-bench")
    rows = store.read()
    assert sorted(store.finished_games()) == list(range(30))
    assert len(rows) == 60 and set(rows["result"]) == {"win", "loss"}


def test_plan_bench_plans_the_games_it_times(tmp_path):
    seconds = scaling_bench._plan_seconds_per_1000(tmp_path, 200)
    assert 0 < seconds < 60
    from cluster.spec.plan import plan_study

    spec = scaling_bench._spec(tmp_path, "plan-200", max_steps=1, seeds=20, games_per_seed=10, params={})
    assert sum(len(s.games) for s in plan_study(spec)) == 200


def test_the_bench_game_plays_through_the_cluster_game_loop():
    """The synthetic game is a real Game: the cluster's loop plays it to the end without error."""
    from games.registry import make_game

    game = make_game("bench-tick", max_steps=4)
    game.reset(0)
    assert list(game.acting_players()) == [0, 1]
    while not game.done:
        game.step([2, 1])
    assert game.step_count == 4 and game.outcomes() == ["win", "loss"]
    assert list(game.acting_players()) == []     # nobody acts once the game is over
