"""How a driver ends when something outside the study stops it: termination signals, a lost
cluster, a disk that cannot take the study's files.

* :class:`Interrupted`: SIGTERM (``ray job stop``, Kubernetes, batch schedulers) and SIGHUP
  (the terminal closed) raise it in the main thread, as Ctrl-C raises ``KeyboardInterrupt``
  (it is one), so they take the same way out: the games received are written, the store is
  compacted, the MLflow run is marked KILLED; ``arena`` exits 128 + the signal's number (143,
  129). :func:`install_signal_handlers` installs the handlers (``arena`` does, for every
  command); Ray replaces the SIGTERM handler when it starts, so whoever calls ``ray.init``
  calls :func:`reinstall_signal_handlers` next (a no-op when none were installed, e.g. in a
  library or a Ray worker). A second SIGTERM or SIGHUP while the driver is already stopping is
  ignored, and one during a study's last writes (:func:`deferred_signals`) waits for them, so
  the way out is not cut short.
* :class:`InfrastructureError` (exit code 5 of ``arena``): :class:`ClusterLost` (the Ray head /
  GCS stopped answering, :mod:`cluster.run.ray_session`) and :class:`StudyWriteError` (a file of
  the study could not be written: a full disk, an I/O error; names the file).
"""
from __future__ import annotations

import _thread
import errno
import logging
import signal
import threading
from contextlib import contextmanager

log = logging.getLogger(__name__)

__all__ = ["Interrupted", "InfrastructureError", "ClusterLost", "StudyWriteError", "INFRA_ERRNOS",
           "install_signal_handlers", "reinstall_signal_handlers", "received_signal", "interrupted_by",
           "handlers_installed", "restore_signal_handlers", "raise_in_main_thread",
           "deferred_signals"]

#: The signals handled like Ctrl-C.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)
#: errno values of a failed write that the machine, not the input, is to blame for.
INFRA_ERRNOS = frozenset(e for e in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.ESTALE,
                                     errno.ENOMEM) if e is not None)


class Interrupted(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP) turned into an interrupt."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(signal.Signals(self.signum).name)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number."""
        return 128 + self.signum


class InfrastructureError(Exception):
    """The machinery under the study failed (exit code 5 of ``arena``), not the input."""


class ClusterLost(InfrastructureError):
    """The Ray head (its GCS) stopped answering."""


class StudyWriteError(InfrastructureError):
    """A file of the study could not be written; the message names it."""

    def __init__(self, path, cause: OSError):
        self.path, self.cause = str(path), cause
        reason = cause.strerror or str(cause) or type(cause).__name__
        code = errno.errorcode.get(cause.errno, "") if cause.errno else ""
        super().__init__(f"{self.path}: cannot write the study's files: {reason}" + (f" ({code})" if code else ""))


# --- signals ------------------------------------------------------------------------------------
_installed: dict[int, object] = {}  # signal -> the handler it had before install_signal_handlers
_state = {"stopping": False, "pending": None, "defer": False, "deferred": None, "received": None}


def _handler(signum, frame) -> None:
    pending, _state["pending"] = _state["pending"], None
    if pending is not None:  # raise_in_main_thread's exception, delivered through this handler
        _state["stopping"] = True
        raise pending
    if _state["stopping"]:
        log.warning("%s received while stopping; finishing the way out first", signal.Signals(signum).name)
        return
    if _state["defer"]:
        _state["deferred"] = signum
        return
    _state["stopping"] = True
    _state["received"] = signum
    raise Interrupted(signum)


@contextmanager
def deferred_signals():
    """Within the block SIGTERM and SIGHUP are held (a study's last writes: compaction, the
    report, the MLflow run's end); one that arrived is raised as :class:`Interrupted` after it."""
    outer = _state["defer"]
    _state["defer"] = True
    try:
        yield
    finally:
        _state["defer"] = outer
        signum, _state["deferred"] = (_state["deferred"], None) if not outer else (None, _state["deferred"])
        if signum is not None and not _state["stopping"]:
            _state["stopping"] = True
            _state["received"] = signum
            raise Interrupted(signum)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread from now on (until
    :func:`restore_signal_handlers`). Only from the main thread (a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING:
        previous = signal.signal(signum, _handler)
        _installed.setdefault(signum, previous)
    _state["stopping"] = False
    _state["pending"] = None
    _state["received"] = None


def reinstall_signal_handlers() -> None:
    """Put the handlers back after ``ray.init`` replaced SIGTERM's (only if they were installed)."""
    if _installed and threading.current_thread() is threading.main_thread():
        for signum in TERMINATING:
            signal.signal(signum, _handler)


def restore_signal_handlers() -> None:
    """The handlers from before :func:`install_signal_handlers`."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum, previous in list(_installed.items()):
        signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        del _installed[signum]
    _state["stopping"] = False
    _state["pending"] = None


def received_signal() -> Interrupted | None:
    """The termination signal that started the way out, as :class:`Interrupted`, or None. Ray
    turns an exception raised by a signal handler inside its blocking calls (``ray.get``,
    ``ray.wait``) into a plain ``KeyboardInterrupt``, so callers ask this, not the exception's type."""
    return Interrupted(_state["received"]) if _state["received"] is not None else None


def interrupted_by(signum: int) -> Interrupted:
    """The :class:`Interrupted` for ``signum`` received outside Arena's handler (``ray.init``
    replaces SIGTERM's with one that calls ``sys.exit(15)`` while it starts Ray), recorded as if
    the handler had received it, so the way out and the exit code are the same."""
    _state["stopping"] = True
    _state["received"] = int(signum)
    return Interrupted(signum)


def handlers_installed() -> bool:
    """True while :func:`install_signal_handlers` is in force (under ``arena``)."""
    return bool(_installed)


def raise_in_main_thread(exc: BaseException) -> bool:
    """From another thread: raise ``exc`` in the main thread at its next Python instruction
    (also inside a blocking Ray call, which checks for signals), through the SIGTERM handler.
    False (nothing done) when the handlers are not installed."""
    if not _installed:
        return False
    _state["pending"] = exc
    _thread.interrupt_main(signal.SIGTERM)
    return True
