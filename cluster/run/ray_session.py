"""The Ray a driver plays on: started (embedded) or joined, watched, and gone on every way out.

    >>> with RaySession(address=None, num_workers=2) as session:   # doctest: +SKIP
    ...     pool.run(runs, on_idle=session.watched(recorder.flush), ...)

* **Start.** :func:`cluster.run.scheduler.start_ray` starts a local embedded Ray (or joins
  ``address``); Arena's SIGTERM / SIGHUP handlers are put back after ``ray.init`` (Ray installs
  its own, :mod:`cluster.run.faults`).
* **Watch.** A daemon thread asks the GCS (the Ray head's control store) whether it is alive
  every second (``check_alive``, 2 s timeout). When it has not answered for
  :func:`gcs_timeout` seconds (``ARENA_GCS_TIMEOUT``, default 20) the cluster is lost:
  :meth:`RaySession.check` raises :class:`~cluster.run.faults.ClusterLost` in the main thread at
  its next safe point (the driver calls it before it waits for hosts and after each batch), or,
  if the main thread does not get there within 2 s (e.g. it waits in the warm-up), the thread
  raises it there itself (only under ``arena``, whose signal handlers deliver it). Without the
  watch Ray ends a driver whose GCS has been gone 60 s (its own reconnect timeout) with its own
  message, before the driver can record anything; keep the setting well below that.
* **Gone on every way out.** When the session started the embedded Ray, leaving it shuts Ray
  down and then terminates (SIGTERM, then SIGKILL after 3 s) every process Ray started for it
  that is still there: the GCS, the raylet and what they started (workers, the dashboard and
  runtime-env agents), found with psutil from the processes that appeared as the driver's
  children during ``ray.init``. A lost cluster is not asked to kill its actors (that would wait
  on the lost GCS): its processes are ended first (SIGKILL after 1 s), then ``ray.shutdown``
  gets 10 s.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time

import ray

from cluster.run.faults import (ClusterLost, handlers_installed, interrupted_by, raise_in_main_thread,
                                 reinstall_signal_handlers)
from cluster.run.scheduler import start_ray

log = logging.getLogger(__name__)

__all__ = ["RaySession", "GcsWatch", "gcs_timeout", "GCS_TIMEOUT_ENV", "DEFAULT_GCS_TIMEOUT"]

#: The environment variable that sets how long the GCS may not answer before the cluster is lost.
GCS_TIMEOUT_ENV = "ARENA_GCS_TIMEOUT"
#: Seconds without an answer from the GCS before a driver gives the cluster up.
DEFAULT_GCS_TIMEOUT = 20.0
#: Seconds between two pings, and the timeout of each.
PING_SECONDS, PING_TIMEOUT = 1.0, 2.0
#: Seconds the watch leaves the main thread to notice a loss at a safe point before interrupting it.
NOTICE_SECONDS = 2.0
#: Seconds processes get between SIGTERM and SIGKILL, and ``ray.shutdown`` on a lost cluster.
TERMINATE_GRACE, SHUTDOWN_SECONDS = 3.0, 10.0
#: Seconds the processes of a lost cluster get between SIGTERM and SIGKILL.
LOST_GRACE = 1.0
#: Seconds between two looks for the processes Ray started (workers come and go).
REFRESH_SECONDS = 5.0


def gcs_timeout() -> float:
    """``ARENA_GCS_TIMEOUT`` in seconds (default :data:`DEFAULT_GCS_TIMEOUT`); ValueError naming
    the variable when it is not a positive number."""
    text = os.environ.get(GCS_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_GCS_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{GCS_TIMEOUT_ENV}: must be a number of seconds > 0, got {text!r}")
    return value


def _gcs_client(address: str):
    """A GCS client of its own for the watch thread (the driver's when one cannot be made)."""
    from ray._raylet import GcsClient

    worker = ray._private.worker.global_worker
    try:
        return GcsClient(address=address, cluster_id=worker.gcs_client.cluster_id.hex())
    except Exception:  # noqa: BLE001 - an older or newer binding: share the driver's
        return worker.gcs_client


class GcsWatch:
    """Pings the GCS at ``address`` from a daemon thread; see the module docstring."""

    def __init__(self, address: str, timeout: float, interval: float = PING_SECONDS):
        self.address, self.timeout, self.interval = address, float(timeout), float(interval)
        self.silent_seconds = 0.0
        """How long the GCS had not answered when the watch gave it up."""
        self.last_error = ""
        self._lost = threading.Event()
        self._stop = threading.Event()
        self._consumed = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def start(self) -> "GcsWatch":
        client = _gcs_client(self.address)
        self._thread = threading.Thread(target=self._loop, args=(client,), name="arena-gcs-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def error(self) -> ClusterLost:
        return ClusterLost(f"the Ray cluster is lost: its head (GCS at {self.address}) has not answered for "
                           f"{self.silent_seconds:.0f} s ({GCS_TIMEOUT_ENV}={self.timeout:g}); the games received "
                           f"are stored: run the same command again to resume")

    def check(self) -> None:
        """Raise :class:`ClusterLost` (once) if the cluster is lost."""
        if self._lost.is_set() and not self._consumed.is_set():
            self._consumed.set()
            raise self.error()

    def _loop(self, client) -> None:
        last_answer = time.monotonic()
        while not self._stop.wait(self.interval):
            try:
                client.check_alive([], timeout=PING_TIMEOUT)
                last_answer = time.monotonic()
                continue
            except Exception as exc:  # noqa: BLE001 - RpcError, or the binding's own
                self.last_error = (str(exc).strip() or type(exc).__name__).splitlines()[0][:200]
            silent = time.monotonic() - last_answer
            if silent < self.timeout:
                continue
            self.silent_seconds = silent
            log.debug("GCS at %s silent for %.1f s (%s)", self.address, silent, self.last_error)
            self._lost.set()
            if not self._stop.wait(NOTICE_SECONDS) and not self._consumed.is_set():
                self._consumed.set()
                raise_in_main_thread(self.error())
            return


class RaySession:
    """Ray for one driver (see the module docstring): a context manager."""

    def __init__(self, address: str | None, num_workers: int | None, timeout: float | None = None):
        self.address, self.num_workers = address, num_workers
        self.timeout = gcs_timeout() if timeout is None else timeout
        self.started = False
        """True when this session started the embedded Ray (and so ends it)."""
        self.watch: GcsWatch | None = None
        self._roots: list = []  # the driver's children that appeared during ray.init
        self._known: dict = {}  # (pid, start time) -> psutil.Process: every process seen under the roots
        self._seen_at = 0.0

    @property
    def lost(self) -> bool:
        return self.watch is not None and self.watch.lost

    def check(self) -> None:
        """Raise :class:`ClusterLost` if the cluster is lost (a safe point of the main thread)."""
        if self.watch is not None:
            self.watch.check()

    def watched(self, callback):
        """``callback`` with :meth:`check` first (a pool's ``on_idle`` and ``on_batch``)."""
        def call(*args, **kwargs):
            self.check()
            if self._roots and time.monotonic() - self._seen_at > REFRESH_SECONDS:
                self._refresh()
            return callback(*args, **kwargs)
        return call

    def __enter__(self) -> "RaySession":
        import psutil

        me = psutil.Process()
        before = {p.pid for p in me.children()}
        try:
            self.started = start_ray(self.address, self.num_workers)
        except SystemExit as exc:
            # ray.init's first step replaces the SIGTERM handler with one that calls sys.exit(15):
            # a SIGTERM while Ray starts lands here. Under arena it takes the way out of any other
            # SIGTERM (Interrupted, exit 143), after what Ray had started is ended.
            reinstall_signal_handlers()
            if not (handlers_installed() and exc.code == signal.SIGTERM):
                raise
            self._roots = [p for p in me.children() if p.pid not in before]
            self.started = True
            self.close()
            raise interrupted_by(signal.SIGTERM) from None
        finally:
            reinstall_signal_handlers()
            if ray.is_initialized():
                self._roots = [p for p in me.children() if p.pid not in before]
        if not self.started:
            self._roots = []
        self._refresh()
        try:
            self.watch = GcsWatch(ray.get_runtime_context().gcs_address, self.timeout).start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching; when this session started Ray, shut it down and end its processes."""
        if self.watch is not None:
            self.watch.stop()
        if not self.started:
            return
        self.started = False
        self._refresh()
        processes = [p for p in self._known.values() if _running(p)]
        if self.lost:  # a lost cluster has nothing to wind down: end its processes, then disconnect (bounded)
            _terminate(processes, grace=LOST_GRACE)
            done = threading.Thread(target=_quiet_shutdown, name="arena-ray-shutdown", daemon=True)
            done.start()
            done.join(SHUTDOWN_SECONDS)
        else:
            _quiet_shutdown()
            _terminate(processes)

    def _refresh(self) -> None:
        """Remember every process under the roots now (a process whose parent died is
        re-parented away from them: it is found because it was seen before)."""
        import psutil

        self._seen_at = time.monotonic()
        for root in self._roots:
            try:
                if not root.is_running():
                    continue
                for proc in [root, *root.children(recursive=True)]:
                    self._known.setdefault((proc.pid, proc.create_time()), proc)
            except psutil.Error:
                continue


def _running(proc) -> bool:
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _quiet_shutdown() -> None:
    try:
        ray.shutdown()
    except Exception as exc:  # noqa: BLE001 - the processes are ended below all the same
        log.debug("ray.shutdown failed: %s", exc)


def _terminate(processes, grace: float = TERMINATE_GRACE) -> None:
    """SIGTERM to those of ``processes`` still running, SIGKILL to the survivors after a grace
    (a zombie has ended: its parent reaps it)."""
    import psutil

    alive = []
    for proc in processes:
        try:
            if _running(proc):
                proc.terminate()
                alive.append(proc)
        except psutil.Error:
            continue
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        psutil.wait_procs(alive, timeout=0.1)
        alive = [p for p in alive if _running(p)]
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            continue
    if alive:
        psutil.wait_procs(alive, timeout=TERMINATE_GRACE)
        log.debug("killed %d Ray processes that outlived ray.shutdown", len(alive))
