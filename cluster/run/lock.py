"""One driver per study directory: an exclusive lock held for the driver's whole life.

    >>> with StudyLock(spec.study_dir):      # StudyBusyError if another driver holds it  # doctest: +SKIP
    ...     play_the_study()

The lock is ``fcntl.flock`` on ``<study_dir>/driver.lock`` (:data:`LOCK_FILE`). The kernel
releases it when the holder exits, however it exits (SIGKILL and a crash included), so
on one host a lock is never stale. While held, the file says who holds it (one JSON
line: host, pid, since when, the process's start time and its command), for the
refusal's message. A second driver refuses before it touches anything else of the
study (its spec, its store, MLflow): :class:`StudyBusyError`, exit code 4 of ``arena``.

Across hosts that share the study directory, the lock is as good as the file system's
``flock``: on a local disk and on NFS (Linux emulates ``flock`` with NFS byte-range
locks, NFSv4 or NFSv3 with the lock manager) two hosts exclude each other, and an NFS
server releases a dead client's lock once the client's lease expires (NFSv4: about 90 s).
File systems whose locks are local to a host (CIFS mounted ``nobrl``, Lustre with
``localflock``) do not exclude a driver on another host. Where ``flock`` is not supported
at all (it fails with ENOLCK, EOPNOTSUPP or ENOSYS) the lock falls back to the record alone:
a record naming a process that is alive on this host, or any driver of another host, is
refused (the message says to remove the file once that driver is gone), and a warning says
that exclusion is not enforced there.

A lock held while its recorded holder is gone (the holder on this host, its pid not
running, or running a different process since): a process the dead driver forked
inherited the lock. It is stale: the file is replaced and the new one locked.
"""
from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = ["LOCK_FILE", "StudyLock", "StudyBusyError", "Holder"]

#: The lock file of a study (or sweep) directory.
LOCK_FILE = "driver.lock"
#: errno values of a file system without ``flock`` support.
NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


def _psutil():
    """psutil: installed, or the copy Ray ships (``import ray`` puts it on the path)."""
    try:
        import psutil
    except ImportError:
        import ray  # noqa: F401 - adds ray/thirdparty_files (its psutil) to sys.path
        import psutil
    return psutil


@dataclass(frozen=True)
class Holder:
    """Who holds a study's lock, as its lock file says."""

    host: str
    pid: int
    since: str
    """When it took the lock (UTC, ``2026-12-07 13:04:55 UTC``)."""
    process_started: float = 0.0
    """The holder process's start time (seconds since the epoch; tells a reused pid apart)."""
    command: str = ""

    @classmethod
    def me(cls) -> "Holder":
        psutil = _psutil()

        return cls(host=socket.gethostname(), pid=os.getpid(),
                   since=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   process_started=psutil.Process().create_time(),
                   command=" ".join(["arena", *sys.argv[1:]])[:300])

    @classmethod
    def parse(cls, text: str) -> "Holder | None":
        """The holder a lock file's text names (None: empty or not a record of ours)."""
        try:
            data = json.loads(text)
            return cls(host=str(data["host"]), pid=int(data["pid"]), since=str(data["since"]),
                       process_started=float(data.get("process_started", 0.0)),
                       command=str(data.get("command", "")))
        except (ValueError, KeyError, TypeError):
            return None

    def to_json(self) -> str:
        return json.dumps({"host": self.host, "pid": self.pid, "since": self.since,
                           "process_started": self.process_started, "command": self.command}) + "\n"

    @property
    def here(self) -> bool:
        return self.host == socket.gethostname()

    def alive(self) -> bool:
        """Whether the holder process still runs (on this host: its pid, started when recorded)."""
        psutil = _psutil()

        try:
            started = psutil.Process(self.pid).create_time()
        except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
            return psutil.pid_exists(self.pid) if self.pid > 0 else False
        return not self.process_started or abs(started - self.process_started) < 1.0

    def describe(self) -> str:
        return f"host {self.host}, pid {self.pid}, since {self.since}"


class StudyBusyError(Exception):
    """Another driver holds the study's lock (exit code 4 of ``arena``)."""

    def __init__(self, directory: Path, holder: Holder | None, lock_path: Path, hint: str = ""):
        self.directory, self.holder, self.lock_path = Path(directory), holder, Path(lock_path)
        who = holder.describe() if holder is not None else "its record not written yet"
        super().__init__(f"{directory}: another driver is running this study ({who}); one driver per "
                         f"study: wait for it to end or stop it{hint}")


class StudyLock:
    """The exclusive lock of one study (or sweep) directory; see the module docstring.
    Re-entrant in one process only as far as :meth:`acquire` after :meth:`release`."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILE
        self._fd: int | None = None
        self.enforced = True
        """False when the file system has no ``flock`` (the record alone guards the study)."""

    # --- taking and leaving ----------------------------------------------------------------
    def acquire(self) -> "StudyLock":
        """Take the lock or raise :class:`StudyBusyError` naming the holder (never waits)."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: already held by this StudyLock")
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):  # a stale lock replaced, a holder leaving, a race with another taker: again
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._holder(fd)
                if holder is None:  # no record: a holder just starting or just leaving
                    os.close(fd)
                    continue
                if holder.here and not holder.alive():
                    log.warning("%s: the driver that took it (%s) is gone; a process it started still "
                                "holds the lock: replacing the stale lock", self.path, holder.describe())
                    self._unlink_if_same(fd)
                    os.close(fd)
                    continue
                os.close(fd)
                raise StudyBusyError(self.directory, holder, self.path) from None
            except OSError as exc:
                if exc.errno not in NO_FLOCK:
                    os.close(fd)
                    raise
                self._fd = fd
                self._acquire_unenforced(fd, exc)
                return self
            if not self._same_file(fd):  # replaced (a stale lock) between open and flock
                os.close(fd)
                continue
            self._fd = fd
            self._write(Holder.me())
            return self
        raise StudyBusyError(self.directory, None, self.path, hint=" (its lock file keeps changing)")

    def release(self) -> None:
        """Clear the record and release the lock (closing the file releases the flock)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        except OSError:  # e.g. the disk is gone: the kernel releases the lock all the same
            pass
        finally:
            os.close(fd)

    def __enter__(self) -> "StudyLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    # --- helpers -----------------------------------------------------------------------------
    def _holder(self, fd: int) -> Holder | None:
        for _ in range(10):  # the holder writes its record right after it locks
            try:
                text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            except OSError:
                return None
            holder = Holder.parse(text)
            if holder is not None:
                return holder
            time.sleep(0.05)
        return None

    def _write(self, holder: Holder) -> None:
        data = holder.to_json().encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def _same_file(self, fd: int) -> bool:
        try:
            on_disk = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)

    def _unlink_if_same(self, fd: int) -> None:
        if self._same_file(fd):
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def _acquire_unenforced(self, fd: int, exc: OSError) -> None:
        """No ``flock`` on this file system: refuse on a live record, else write ours."""
        self.enforced = False
        holder = self._holder_now(fd)
        if holder is not None and (holder.pid, holder.host) != (os.getpid(), socket.gethostname()):
            if not holder.here or holder.alive():
                self._fd = None
                os.close(fd)
                raise StudyBusyError(self.directory, holder, self.path,
                                     hint=f" (or, if it is gone, remove {self.path})")
        log.warning("%s: the file system does not support locks (%s); one driver per study is not "
                    "enforced here", self.path, os.strerror(exc.errno))
        self._write(Holder.me())

    @staticmethod
    def _holder_now(fd: int) -> Holder | None:
        try:
            return Holder.parse(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
        except OSError:
            return None
