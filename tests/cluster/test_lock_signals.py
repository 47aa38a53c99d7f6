"""The study lock (cluster.run.lock) and the termination signals (cluster.run.faults), in one
process: who holds a lock and since when, a stale lock replaced, a file system without flock;
SIGTERM and SIGHUP raised as interrupts, held during a study's last writes. (Two real drivers
on one study, SIGTERM and a lost GCS on a real driver: tests/cluster/test_faults.py.)"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from cluster.run.faults import (Interrupted, deferred_signals, install_signal_handlers, raise_in_main_thread,
                                restore_signal_handlers)
from cluster.run.lock import LOCK_FILE, Holder, StudyBusyError, StudyLock


def test_a_held_lock_refuses_a_second_taker_naming_the_holder(tmp_path):
    with StudyLock(tmp_path / "study") as held:
        record = Holder.parse((tmp_path / "study" / LOCK_FILE).read_text())
        assert (record.host, record.pid) == (socket.gethostname(), os.getpid())
        with pytest.raises(StudyBusyError) as info:
            StudyLock(tmp_path / "study").acquire()
        message = str(info.value)
        print(message)
        assert f"host {record.host}, pid {os.getpid()}, since {record.since}" in message
        assert message.startswith(f"{tmp_path / 'study'}: another driver is running this study")
        assert held.enforced
    with StudyLock(tmp_path / "study"):  # released: the next driver takes it
        pass
    assert (tmp_path / "study" / LOCK_FILE).read_text() == ""  # the record goes with the holder


def test_the_kernel_releases_the_lock_of_a_killed_holder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from cluster.run.lock import StudyLock; "
                               "StudyLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StudyBusyError, match=f"pid {holder.pid},"):
            StudyLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    with StudyLock(tmp_path):  # SIGKILL left no stale lock
        pass


def test_a_lock_whose_recorded_holder_is_gone_is_replaced(tmp_path, caplog):
    """A process forked by a dead driver keeps the lock; the record names the dead driver."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    path = tmp_path / LOCK_FILE
    orphan = os.open(path, os.O_RDWR | os.O_CREAT)  # stands for the inherited descriptor
    try:
        fcntl.flock(orphan, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(orphan, json.dumps({"host": socket.gethostname(), "pid": dead_pid,
                                     "since": "2026-01-01 00:00:00 UTC", "process_started": 1.0}).encode())
        with StudyLock(tmp_path):
            assert Holder.parse(path.read_text()).pid == os.getpid()
            with pytest.raises(StudyBusyError):
                StudyLock(tmp_path).acquire()
        assert any("is gone" in r.getMessage() for r in caplog.records)
    finally:
        os.close(orphan)


def test_without_flock_the_record_guards_the_study(tmp_path, monkeypatch, caplog):
    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, "flock", no_flock)
    (tmp_path / LOCK_FILE).write_text(json.dumps({"host": "elsewhere", "pid": 12, "since": "2026-01-01 00:00:00 UTC"}))
    with pytest.raises(StudyBusyError, match=f"host elsewhere, pid 12, .*remove {re.escape(str(tmp_path / LOCK_FILE))}"):
        StudyLock(tmp_path).acquire()
    (tmp_path / LOCK_FILE).write_text("")
    lock = StudyLock(tmp_path).acquire()
    try:
        assert not lock.enforced and any("does not support locks" in r.getMessage() for r in caplog.records)
        assert Holder.parse((tmp_path / LOCK_FILE).read_text()).pid == os.getpid()
    finally:
        lock.release()


@pytest.fixture
def arena_signals():
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    install_signal_handlers()
    yield
    restore_signal_handlers()


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_are_interrupts_with_the_shell_exit_code(arena_signals, signum, code):
    with pytest.raises(KeyboardInterrupt) as info:
        os.kill(os.getpid(), signum)
        for _ in range(100):  # the handler runs in the main thread at its next instruction
            time.sleep(0.01)
    assert isinstance(info.value, Interrupted)
    assert info.value.exit_code == code and info.value.signum == signum


def test_a_signal_during_the_last_writes_waits_for_them(arena_signals):
    done = []
    with pytest.raises(Interrupted) as info:
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("compacted")
    assert done == ["compacted"] and info.value.exit_code == 143
    os.kill(os.getpid(), signal.SIGTERM)  # stopping already: ignored, the way out goes on


def test_another_thread_raises_in_the_main_thread_through_the_handlers(arena_signals):
    import threading

    thread = threading.Thread(target=raise_in_main_thread, args=(RuntimeError("cluster gone"),))
    with pytest.raises(RuntimeError, match="cluster gone"):
        thread.start()
        thread.join()
        for _ in range(100):
            time.sleep(0.01)


def test_restored_handlers_are_the_ones_before():
    before = signal.getsignal(signal.SIGTERM)
    install_signal_handlers()
    restore_signal_handlers()
    assert signal.getsignal(signal.SIGTERM) is before
    assert not raise_in_main_thread(RuntimeError("nobody listens"))


def test_a_sweep_holds_its_directory_and_a_second_sweep_driver_refuses_before_ray(tmp_path):
    import conftest  # noqa: F401  (the count game and the fake agent)
    import ray

    from cluster.spec.sweep import build_sweep
    from cluster.sweep.driver import run_sweep

    sweep = build_sweep({
        "sweep": {"name": "held", "seed": 3, "games_per_trial": 2},
        "base": {"study": {"name": "base", "seed": 1, "results_dir": str(tmp_path / "studies")},
                 "game": {"name": "count", "max_steps": 4}, "budget": {"iterations": 1},
                 "design": {"seeds": 1, "games_per_seed": 2},
                 "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}],
                 "tracking": {"enabled": False}},
        "objective": {"label": "A", "metric": "win_rate"},
        "search": {"lineup.0.params.sleep_ms": {"grid": [0.0, 1.0], "alias": "sleep"}},
    })
    started = ray.is_initialized()
    with StudyLock(sweep.sweep_dir):
        with pytest.raises(StudyBusyError, match=f"pid {os.getpid()},"):
            run_sweep(sweep, progress=False, tracking=False)
    assert ray.is_initialized() == started  # refused before Ray
