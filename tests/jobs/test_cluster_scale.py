"""jobs/bench/cluster_scale.py: the model of a large run is the arithmetic its docstring
states, and virtual hosts drive the real pool, recorder and store (every game once)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cluster.results.store import ResultStore
from cluster.run.scheduler import BatchSizer
from jobs.bench.cluster_scale import DriverCosts, capacity, virtual_study

COSTS = DriverCosts(per_game=1e-4, per_batch=5e-4, per_commit=0.01, commit_cpu=5e-4, wait_per_host=4e-7,
                    host_per_game=0.0, round_trip=0.002)


def test_the_model_names_its_bound_and_does_its_arithmetic():
    few = capacity(COSTS, 10, 1.0)
    assert few["bound"] == "hosts" and few["games_per_call"] == 1  # 0.2 s calls: one 1 s game each
    assert few["games_per_second"] == pytest.approx(10 / (1.0 + 0.002 + 0.005))
    many = capacity(COSTS, 1000, 1.0)
    assert many["games_per_call"] == 4  # 4 s calls at 1,000 hosts
    demand = 1000 * 4 / (4.0 + 0.002 + 0.005)
    assert many["demand_games_per_second"] == pytest.approx(demand)
    per_game = 1e-4 + (5e-4 + 1000 * 4e-7) / 4  # the loop's cost per game; commits: 10 ms a second
    assert many["driver_games_per_second"] == pytest.approx((1 - 0.01 / 1.0) / per_game)
    assert many["driver_busy"] == pytest.approx(many["games_per_second"] / many["driver_games_per_second"])
    assert capacity(COSTS, 100_000, 1.0)["bound"] == "driver"  # where one driver saturates
    ticks = capacity(replace(COSTS, host_per_game=3e-4), 2, 0.0, cores=2)  # one-tick games on 2 cores
    assert ticks["bound"] == "cpu" and ticks["games_per_second"] == pytest.approx(2 / (3e-4 + 1e-4), rel=0.01)
    # a driver whose commits take the whole flush interval serves nothing
    assert capacity(replace(COSTS, per_commit=1.0), 1000, 1.0)["driver_games_per_second"] == 0.0


def test_virtual_hosts_play_every_game_once_through_the_real_driver(ray_local, tmp_path):
    run = virtual_study(tmp_path, "virtual", hosts=20, games=300, game_seconds=0.001,
                        sizer=BatchSizer(max_games=8))
    assert run["games"] == 300 and 300 / 8 <= run["batches"] < 300
    stored = ResultStore(tmp_path / "studies" / "virtual").read()
    assert sorted(stored["game_index"].unique()) == list(range(300)) and len(stored) == 600

