"""The arithmetic of ``arena bench cluster`` (jobs/bench/cluster.py) on fake timings: each
figure is what its docstring says it is, whatever the machine. The studies themselves
(a local Ray, minutes) are not run here."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cluster.results.store import ResultStore
from jobs.bench import cluster as scaling_bench


class ScriptedClock:
    """A clock read in pairs (start, end of a timed span): each span takes the next of
    ``durations`` seconds."""

    def __init__(self, durations):
        self.durations = list(durations)
        self.now = 0.0
        self.reads = 0

    def __call__(self):
        if self.reads % 2 == 1:  # the end of a timed span
            self.now += self.durations.pop(0)
        self.reads += 1
        return self.now


def test_ms_per_game_by_tenth_survives_group_commits():
    # 20 games: the first tenth (2 games) 1 ms apart, the last tenth 10 ms apart
    recorded = [0.0, 0.001, 0.002, 0.003, 0.005, 0.007, 0.009, 0.011, 0.013, 0.015, 0.017,
                0.027, 0.037, 0.047, 0.057, 0.067, 0.077, 0.087, 0.097, 0.107]
    first, last = scaling_bench._decile_ms_per_game(recorded)
    assert first == pytest.approx(1.0) and last == pytest.approx(10.0)
    # group commits: 100 games recorded 10 at a time, 5 ms apart; consecutive gaps are mostly 0
    batched = [0.005 * (i // 10) for i in range(100)]
    first, last = scaling_bench._decile_ms_per_game(batched)
    assert first == pytest.approx(0.0) and last == pytest.approx(0.0)  # a tenth inside one commit
    batched = [0.005 * (i // 10) for i in range(1000)]  # a tenth spans ten commits
    first, last = scaling_bench._decile_ms_per_game(batched)
    assert first == pytest.approx(last) and first == pytest.approx(0.045 / 99 * 1000)


def test_throughput_and_overhead_count_from_the_first_recorded_game():
    # four games recorded at 10, 11, 12 and 14 s; games 2-4 played 0.9 + 0.9 + 1.8 s of their 4 s
    result = SimpleNamespace(recorded_at=[10.0, 11.0, 12.0, 14.0], game_times=[5.0, 0.9, 0.9, 1.8])
    per_hour, wall, in_game = scaling_bench._throughput(result)
    assert (wall, in_game) == (4.0, pytest.approx(3.6))
    assert per_hour == pytest.approx(3 * 3600 / 4.0)  # the first game is the clock's start, not a game
    assert scaling_bench._overhead_fraction(result) == pytest.approx((4.0 - 3.6) / 3.6)


def test_tick_figures_are_games_per_second_and_their_inverse_in_ms():
    per_second, ms_per_game = scaling_bench._tick_figures([2.0, 2.01, 2.02, 2.05, 2.1])
    assert per_second == pytest.approx(4 / 0.1) and ms_per_game == pytest.approx(25.0)
    assert per_second * ms_per_game == pytest.approx(1000.0)


def test_real_games_start_the_clock_once_every_host_delivered():
    recorded = [30.0, 31.0, 32.0, 33.0, 34.0]  # one host: 30 s of imports before the first
    assert scaling_bench._real_games_per_hour(recorded, 1) == pytest.approx(4 * 3600 / 4.0)
    recorded = [30.0, 30.5, 31.5, 32.5]        # two hosts: the clock starts at the second game
    assert scaling_bench._real_games_per_hour(recorded, 2) == pytest.approx(2 * 3600 / 2.0)
    # batches: three games at each commit; the clock starts at the second commit (both hosts in)
    recorded = [30.0] * 3 + [30.5] * 3 + [31.5] * 3 + [32.5] * 3
    assert scaling_bench._real_games_per_hour(recorded, 2) == pytest.approx(6 * 3600 / 2.0)
    assert np.isnan(scaling_bench._real_games_per_hour([5.0, 5.0], 1))  # one commit: no rate


def test_store_append_bench_times_each_append_and_writes_every_game_once(tmp_path):
    # append g takes g ms: of 30 appends the first 15 have the median 7 ms, the last 15 22 ms
    clock = ScriptedClock([g / 1000.0 for g in range(30)])
    first, last = scaling_bench._store_append_ms(tmp_path, 30, clock=clock)
    assert (first, last) == (pytest.approx(7.0), pytest.approx(22.0))
    assert clock.durations == []  # one timed span per append, nothing else timed
    store = ResultStore(tmp_path / "store-bench")
    rows = store.read()
    assert sorted(store.finished_games()) == list(range(30))
    assert len(rows) == 60 and set(rows["result"]) == {"win", "loss"}


def test_plan_bench_takes_the_best_of_three_per_1000_games(tmp_path):
    clock = ScriptedClock([3.0, 0.5, 2.0])
    assert scaling_bench._plan_seconds_per_1000(tmp_path, 200, clock=clock) == pytest.approx(0.5 * 1000 / 200)
    assert clock.durations == []
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
