"""CPU seconds of this process and all its descendants (a local Ray's raylet, its workers,
the game hosts, their subprocesses), for benchmarks that compare a study on Ray with a
loop in one process on a machine whose load they do not control.

Ray's workers are not children this process waits for, so ``RUSAGE_CHILDREN`` never sees
their time; :class:`ProcessTreeCPU` samples ``/proc`` instead (Linux), every ``interval``
seconds on a thread, and keeps each descendant's last reading. A process that ends loses
at most its last ``interval`` of CPU time; one that starts and ends between two samples is
missed (a bench's hosts live for the whole study).

    with ProcessTreeCPU() as cpu:
        run_study(...)
    cpu.seconds          # CPU seconds of the driver and of every process under it
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

__all__ = ["ProcessTreeCPU", "process_tree"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU seconds) of ``pid`` from /proc, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def process_tree(root: int) -> dict[int, float]:
    """``{pid: CPU seconds}`` of ``root`` and every process below it now."""
    parents, cpu = {}, {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                parents[int(entry.name)], cpu[int(entry.name)] = stat
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in cpu:
            tree[pid] = cpu[pid]
            todo.extend(children.get(pid, ()))
    return tree


class ProcessTreeCPU:
    """CPU seconds spent by this process and its descendants inside the ``with`` block."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.seconds = 0.0
        self._start: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        for pid, seconds in process_tree(os.getpid()).items():
            self._last[pid] = seconds

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "ProcessTreeCPU":
        self._start = process_tree(os.getpid())
        self._last = dict(self._start)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.seconds = sum(last - self._start.get(pid, 0.0) for pid, last in self._last.items())


if __name__ == "__main__":  # a self-check: a busy child's CPU is counted
    import subprocess
    import sys

    with ProcessTreeCPU() as probe:
        subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                        "while time.process_time() - t < 1.0: pass"], check=True)
        time.sleep(0.3)
    print(f"{probe.seconds:.2f} CPU seconds (a child that spun for 1.0)")
