"""The side-by-side with OpenSpiel's own loop (jobs/bench/openspiel.py) without Ray: the
agreement test, the break-even arithmetic, OpenSpiel's loop, the CPU of a process tree,
and the target in the bench wing's registry."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from jobs.bench import TARGETS
from jobs.bench.process_cpu import ProcessTreeCPU


def test_openspiel_is_a_bench_target():
    assert TARGETS["openspiel"].module == "jobs.bench.openspiel" and not TARGETS["openspiel"].pairable


def test_the_cpu_of_a_child_process_is_counted():
    with ProcessTreeCPU(interval=0.05) as cpu:
        subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                        "while time.process_time() - t < 0.6: pass\ntime.sleep(0.2)"], check=True)
    assert 0.55 <= cpu.seconds < 5.0
    with ProcessTreeCPU(interval=0.05) as idle:
        time.sleep(0.3)
    assert idle.seconds < 0.2


def test_break_even_is_when_the_start_up_is_paid_back():
    from jobs.bench.openspiel import break_even

    def row(openspiel_cpu, arena_cpu, games=10):
        return {"openspiel": {"games": games, "cpu_s": openspiel_cpu}, "arena": {"games": games, "cpu_s": arena_cpu}}

    startup = {"wall_s": 10.0, "cpu_s": 4.0}
    # 1 CPU-s a game in both loops, 2 workers: S + n / 2 = n at n = 2 S; 1.8x at n = 1.8 S / 0.1
    b = break_even(startup, row(10.0, 14.0), workers=2)
    assert b["openspiel_cpu_s_per_game"] == b["arena_cpu_s_per_game"] == 1.0
    assert b["serial_s_to_pull_ahead"] == {"startup_wall": pytest.approx(20.0), "startup_cpu": pytest.approx(8.0)}
    assert b["serial_s_for_1.8x"]["startup_wall"] == pytest.approx(180.0)
    # Arena's games cost 2.2x the loop's: 2 workers never reach 1x
    assert break_even(startup, row(10.0, 26.0), workers=2)["serial_s_to_pull_ahead"]["startup_wall"] is None
    # the idle Ray's CPU over the run is not the games': 0.1 CPU-s a second over 60 s of 70
    idle = break_even(startup, {**row(10.0, 20.0), "arena": {"games": 10, "cpu_s": 20.0, "wall_s": 70.0}},
                      workers=2, ray_idle=0.1)
    assert idle["arena_cpu_s_per_game"] == pytest.approx(1.0) and idle["best_ratio"] == pytest.approx(1.9)


def test_agreement_of_two_loops():
    from jobs.bench.openspiel import _tally, agreement

    same = _tally([1] * 60 + [0] * 30 + [-1] * 10)
    assert agreement(same, _tally([1] * 58 + [0] * 31 + [-1] * 11))["agree"]
    assert not agreement(same, _tally([1] * 10 + [0] * 30 + [-1] * 60))["agree"]


def test_openspiels_loop_alternates_seats_and_counts_every_game():
    pytest.importorskip("pyspiel")
    from jobs.bench.openspiel import Matchup, play_openspiel_loop

    result = play_openspiel_loop(Matchup("tic_tac_toe", ("mcts", 50), ("random", 0)), 6, seed=3)
    assert result["games"] == 6 and result["loss"] == 0 and result["cpu_s"] >= 0
