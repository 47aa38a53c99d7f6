"""Ray side of a study: game-hosting actors and a small pool that feeds them series.

This is the mechanism; what it is told (the order of the runs, how many in flight,
the sequential test's admission and stop) is the scheduling policy,
:mod:`cluster.run.policy`.

Shape (after ``ray.util.ActorPool``, with the bookkeeping a study needs):

* :class:`GameHost` is an actor hosting game simulations and the agents seated
  in them. It plays *one game per call* and returns the small rows of that
  game plus the learned state after it; the agents stay alive inside the actor
  for the rest of their series, so learned state flows without a round trip.
* :class:`HostPool` keeps explicit books: ``starting`` (actors not yet ready),
  ``idle`` (ready, no work), ``busy`` (future -> actor, run, game). A series
  run is owned by one actor until it ends, so games of a series are played in
  order, one at a time; independent series fan out over all actors. At most
  ``max_in_flight`` series are in flight; results are taken unordered with
  ``ray.wait``. A dead actor (its node died, it crashed) is killed, never put
  back into the idle set and replaced by a fresh actor; its series restarts
  from its last finished game with the learned state saved after that game.
  With ``stop_when`` (a sequential test, :mod:`cluster.analysis.sequential`) the pool
  submits no further game once it returns true: games in flight finish and
  are handed to ``on_game``; the rest of the pending work is dropped. With
  ``admit`` (the test's look-ahead window) a pending series starts only when
  ``admit(its next game)`` is true; idle hosts wait for the games before it.
* :func:`warm_up_nodes` runs one task per node (pinned with
  ``NodeAffinitySchedulingStrategy``) that plays a few ticks with every agent,
  so numba caches are compiled once per node before many actors load them.
"""
from __future__ import annotations

import collections
import importlib
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError

try:  # ray >= 2.10
    from ray.exceptions import ActorUnavailableError
except ImportError:  # pragma: no cover
    ActorUnavailableError = RayActorError

log = logging.getLogger(__name__)

#: Exceptions meaning "this actor is gone (or unreachable, or its result was lost
#: with its node): retry the game elsewhere".
ACTOR_LOST = (RayActorError, ActorUnavailableError, ObjectLostError)
#: Hosts failing to start pool size + this many times in a row (e.g. a plugin does not import)
#: abort the study.
MAX_START_FAILURES = 3
#: A game that kills its host this many times aborts the study (it would kill every host).
MAX_ATTEMPTS_PER_GAME = 3


def import_plugins(plugins: Sequence[str]) -> None:
    """Import modules that register extra games or agents (tests, user code)."""
    for name in plugins or ():
        importlib.import_module(name)


@ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
class GameHost:
    """Hosts the games of one series at a time and the agents seated in them."""

    def __init__(self, spec, populations: dict | None, plugins: Sequence[str] = ()):
        import_plugins(plugins)
        # play is imported in the worker only after the plugins: their games and agents
        # must be registered before anything builds them (here and in the two below)
        from cluster.run.play import worker_name

        self.spec = spec  # the driver's validated StudySpec, from the object store (no re-validation)
        # Resolved from the object store once (zero-copy for numpy arrays).
        self.populations = populations or {}
        self.worker = worker_name()
        self.agents = None

    def ready(self) -> str:
        return self.worker

    def play(self, task, fresh: bool, start_state: dict | None) -> tuple[list[dict], dict, float, bytes | None]:
        """Play one game. ``fresh``: rebuild the agents (series start or restart),
        load the seed populations and then ``start_state``. Returns the rows, the
        learned state after the game, the seconds it took and its record
        (compressed ``.npz`` bytes, see :mod:`cluster.replay.records`; None if it failed)."""
        from cluster.run.play import build_agents, load_learned, play_recorded_game

        learned = None
        if fresh or self.agents is None:  # a series lies within one design.vary condition
            self.agents = build_agents(self.spec, task.condition)
            load_learned(self.spec, self.agents, self.populations)
            learned = start_state
        t0 = time.perf_counter()
        rows, learned_after, record = play_recorded_game(self.spec, task, self.agents, learned,
                                                         worker=self.worker)
        seconds = time.perf_counter() - t0
        return rows, learned_after, seconds, (record.to_bytes() if record is not None else None)


@ray.remote(num_cpus=1, max_retries=0)
def _warm_up_task(spec, plugins: Sequence[str]) -> dict:
    import_plugins(plugins)
    from cluster.run.warm import warm_up

    return warm_up(spec, plugins=plugins)


def warm_up_nodes(spec, plugins: Sequence[str] = (), timeout: float = 600.0) -> list[dict]:
    """One warm-up task per alive node with CPUs; failures are reported, not raised.
    ``spec`` is the validated StudySpec or an object-store reference to it."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    refs = {}
    for node in ray.nodes():
        if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) >= 1:
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            refs[_warm_up_task.options(scheduling_strategy=strategy).remote(spec, plugins)] = node["NodeID"]
    out = []
    for ref, node_id in refs.items():
        try:
            out.append({"node": node_id, **ray.get(ref, timeout=timeout)})
        except Exception as exc:  # node died or warm-up crashed: actors will compile lazily
            out.append({"node": node_id, "errors": [repr(exc)]})
    return out


@dataclass
class SeriesRun:
    """The games of one series still to play, in order, from a restart point."""

    series_id: int
    games: list
    """GameTasks to play in order (some may be replays that only rebuild learned state)."""
    start_state: dict | None = None
    """Learned state at the start of ``games[next]`` (``{label: arrays}``), None = fresh."""
    carry: bool = True
    """Games share learned state (else every game starts fresh from the seed populations)."""
    next: int = 0
    fresh: bool = True
    """The next call must rebuild the agents (series start, restart on a new host)."""
    attempts: dict = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.next >= len(self.games)

    @property
    def task(self):
        return self.games[self.next]


#: on_game(run, task, rows, learned_after, seconds, record) -> None (called on the driver,
#: in order per series; ``record`` is the game's record as ``.npz`` bytes or None)
OnGame = Callable[[SeriesRun, Any, list, dict, float, Any], None]


class HostPool:
    """A bounded pool of :class:`GameHost` actors fed with series runs.

    Bookkeeping: ``starting`` (ready-future -> actor), ``idle`` (actors),
    ``busy`` (game future -> (actor, run)), ``pending`` (runs not started or
    to restart). ``retired`` counts actors taken out of service.
    """

    def __init__(self, make_actor: Callable[[], Any], size: int, max_in_flight: int | None = None,
                 start_timeout: float = 300.0):
        if size < 1:
            raise ValueError(f"num_workers: must be >= 1, got {size}")
        self._make_actor = make_actor
        self.size = size
        self.max_in_flight = min(size, max_in_flight) if max_in_flight else size
        self.start_timeout = start_timeout
        self.starting: dict = {}
        self.idle: list = []
        self.busy: dict = {}
        self.pending: collections.deque[SeriesRun] = collections.deque()
        self.retired = 0
        self.retries = 0
        self.stopped = False
        """True once ``stop_when`` said so: nothing more is submitted."""
        self._admit: Callable[[Any], bool] | None = None
        self._start_failures = 0
        self._since_progress = time.monotonic()
        for _ in range(size):
            self._start_actor()

    # --- actors ------------------------------------------------------------
    def _start_actor(self) -> None:
        actor = self._make_actor()
        self.starting[actor.ready.remote()] = actor

    def _retire(self, actor) -> None:
        """Take ``actor`` out of service for good (kill it if it is still there)."""
        self.retired += 1
        try:
            ray.kill(actor, no_restart=True)
        except Exception:
            pass

    def _lost(self, actor, run: SeriesRun | None, exc: BaseException) -> None:
        log.warning("game host lost (%s); replacing it%s", type(exc).__name__,
                    f" and restarting series {run.series_id} from game {run.task.game_index}" if run else "")
        self._retire(actor)
        if run is not None:
            key = run.task.game_index
            run.attempts[key] = run.attempts.get(key, 0) + 1
            if run.attempts[key] >= MAX_ATTEMPTS_PER_GAME:
                raise RuntimeError(f"game {key} (series {run.series_id}) lost its host "
                                   f"{run.attempts[key]} times; last error: {exc}") from exc
            run.fresh = True  # restart from the last finished game on another host
            self.pending.appendleft(run)
            self.retries += 1
        self._start_actor()

    # --- work ----------------------------------------------------------------
    def _submit(self, actor, run: SeriesRun) -> None:
        fresh = run.fresh or not run.carry
        ref = actor.play.remote(run.task, fresh, run.start_state if fresh else None)
        run.fresh = False
        self.busy[ref] = (actor, run)

    def _fill(self) -> None:
        while not self.stopped and self.idle and self.pending and len(self.busy) < self.max_in_flight:
            if self._admit is not None and not self._admit(self.pending[0].task):
                break  # wait until the games before it are in
            self._submit(self.idle.pop(), self.pending.popleft())

    def run(self, runs: Sequence[SeriesRun], on_game: OnGame,
            stop_when: Callable[[], bool] | None = None,
            admit: Callable[[Any], bool] | None = None,
            more: Callable[[], Sequence[SeriesRun]] | None = None) -> None:
        """Play every run to its end, calling ``on_game`` as each game returns. With
        ``stop_when``: once it returns true (asked before every submission and after
        every ``on_game``), submit nothing more and return when the games in flight
        are recorded. With ``admit``: start a pending run only when ``admit(task)`` of
        its next game is true (checked again after every game; a run already on a
        host goes on). With ``more`` (a plan that grows, e.g. an adaptive tournament's
        rounds): asked whenever nothing is pending (at the start, after every
        ``on_game``, and before returning), it gives the next runs to play, or nothing
        yet (the games it waits for are in flight); the pool returns once nothing is
        pending or in flight and ``more`` gives nothing."""
        self.pending.extend(r for r in runs if not r.done)
        self._admit = admit

        def top_up() -> None:
            if more is not None and not self.pending and not self.stopped:
                self.pending.extend(r for r in more() if not r.done)

        def check_stop() -> bool:
            if not self.stopped and stop_when is not None and stop_when():
                self.stopped = True
                log.info("stop condition met: no new games; %d in flight finish", len(self.busy))
            return self.stopped

        check_stop()
        top_up()
        while (self.pending and not self.stopped) or self.busy:
            self._fill()
            waiting = list(self.busy) + list(self.starting)
            if not waiting:
                raise RuntimeError("no game hosts left and work pending")
            ready, _ = ray.wait(waiting, num_returns=1, timeout=5.0)
            if not ready:
                if not self.busy and not self.idle and time.monotonic() - self._since_progress > self.start_timeout:
                    raise RuntimeError(f"no game host became ready within {self.start_timeout:.0f} s "
                                       "(not enough CPUs left in the cluster?)")
                continue
            ref = ready[0]
            if ref in self.starting:
                actor = self.starting.pop(ref)
                try:
                    ray.get(ref)
                except ACTOR_LOST as exc:
                    self._start_failures += 1
                    if self._start_failures >= self.size + MAX_START_FAILURES:
                        raise RuntimeError(f"game hosts failed to start {self._start_failures} times "
                                           f"in a row; last error: {exc}") from exc
                    self._lost(actor, None, exc)
                else:
                    self._start_failures = 0
                    self.idle.append(actor)
                    self._since_progress = time.monotonic()
                continue
            actor, run = self.busy.pop(ref)
            task = run.task
            try:
                rows, learned_after, seconds, record = ray.get(ref)
            except ACTOR_LOST as exc:
                self._lost(actor, run, exc)
                continue
            self._since_progress = time.monotonic()
            run.start_state = learned_after if run.carry else None
            run.next += 1
            if run.done or check_stop():
                self.idle.append(actor)
                self._fill()
            else:  # the same host keeps the series (its agents hold the learned state)
                self._submit(actor, run)
            # Record after resubmitting, so the host plays while the driver writes.
            on_game(run, task, rows, learned_after, seconds, record)
            check_stop()
            top_up()  # the game may have completed what the next runs wait for
            self._fill()  # the game may have opened the admission window

    def shutdown(self) -> None:
        """Kill every actor of the pool (idle, busy and still starting)."""
        actors = list(self.idle) + [a for a, _ in self.busy.values()] + list(self.starting.values())
        self.idle.clear()
        self.busy.clear()
        self.starting.clear()
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass


__all__ = ["start_ray", "GameHost", "HostPool", "SeriesRun", "warm_up_nodes", "import_plugins", "ACTOR_LOST",
           "GetTimeoutError"]


def start_ray(address: str | None, num_workers: int | None) -> bool:
    """Start or join Ray; True if this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None  # set by `ray job submit`
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        # "local": a fresh embedded Ray even if a `ray start` cluster runs on this machine
        ray.init(address="local", num_cpus=num_workers or os.cpu_count(), include_dashboard=False,
                 log_to_driver=False, dashboard_host="127.0.0.1")
    return True
