"""Ray side of a study: game-hosting actors and a small pool that feeds them series.

This is the mechanism; what it is told (the order of the runs, how many in flight,
the sequential test's admission and stop) is the scheduling policy,
:mod:`cluster.run.policy`.

Shape (after ``ray.util.ActorPool``, with the bookkeeping a study needs):

* :class:`GameHost` is an actor hosting game simulations and the agents seated
  in them. It plays *a batch of games per call* (:meth:`GameHost.play_batch`:
  :class:`Slice` s of series, each its next games in order) and returns each
  game's small rows and the learned state after it, with one record pack for the
  batch; the agents of a series stay alive inside the actor from call to call,
  so learned state flows without a round trip.
* :class:`BatchSizer` sizes a call from the measured game time (about 0.2 s of
  games; longer with many hosts, :meth:`BatchSizer.for_hosts`).
* :class:`HostPool` keeps explicit books: ``starting`` (actors not yet ready),
  ``idle`` (ready, no work), ``busy`` (future -> actor and the runs of its batch),
  ``owned`` (the series each host carries on), ``pending``. A series run is owned
  by one host until it ends, so games of a series are played in order;
  independent series fan out over all actors and share their batches. At most
  ``max_in_flight`` batches are in flight; every ready batch is taken with one
  ``ray.get``. A dead actor (its node died, it crashed) is killed, never put back
  into the idle set and replaced by a fresh actor; every series it held restarts
  from its last finished game with the learned state saved after that game, the
  game it was playing alone in a call. A batch that runs far longer than its games
  should (:class:`HangRule`: a host stopped, an agent stuck) is *abandoned*: its host
  is killed and replaced, and its series restart from their last finished games as for
  a dead host, the games of the abandoned call one per call; a game abandoned
  ``HangRule.abandons`` times while alone in a call is handed over as an error
  (``error_rows``) and its series goes on. With ``stop_when`` (a sequential test,
  :mod:`cluster.analysis.sequential`) the pool submits nothing once it returns
  true: batches in flight finish and are handed over; the rest of the pending work
  is dropped. With ``admit`` (the test's look-ahead window) a game enters a batch
  only when ``admit(game)`` is true (the next game of a series on a host goes on).
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
from typing import Any, Callable, NamedTuple, Sequence

import ray
from ray.exceptions import GetTimeoutError, ObjectLostError, RayActorError

try:  # ray >= 2.10
    from ray.exceptions import ActorUnavailableError
except ImportError:  # pragma: no cover
    ActorUnavailableError = RayActorError

from cluster.run.local_ray import init_local_ray

log = logging.getLogger(__name__)

#: Exceptions meaning "this actor is gone (or unreachable, or its result was lost
#: with its node): retry the game elsewhere".
ACTOR_LOST = (RayActorError, ActorUnavailableError, ObjectLostError)
#: Hosts failing to start pool size + this many times in a row (e.g. a plugin does not import)
#: abort the study.
MAX_START_FAILURES = 3
#: A game that kills its host this many times aborts the study (it would kill every host).
MAX_ATTEMPTS_PER_GAME = 3


@dataclass(frozen=True)
class HangRule:
    """When a host call counts as hung, and when its game becomes an error.

    A call of ``g`` games is allowed ``max(floor_seconds, factor x max(g x mean, longest))``
    seconds, where ``mean`` and ``longest`` are the in-host seconds of the study's games
    measured so far (on any host), doubled for each time the game it plays alone was
    abandoned before (a long game gets room before it is called hung). Until a first game
    has been measured no call is abandoned (nothing says what a game takes). A call past
    its allowance is abandoned: its host is killed, the games of the call are played
    again, one per call; a game abandoned ``abandons`` times while alone in a call is
    recorded as an error. The spec's ``[study] hang_factor``, ``hang_floor_seconds`` and
    ``hang_abandons``."""

    factor: float = 4.0
    """Allowed multiple of what the call's games should take (at least 1)."""
    floor_seconds: float = 5.0
    """No call is abandoned before it has run this long."""
    abandons: int = 2
    """Abandons of one game, alone in its call, after which it is an error."""

    def __post_init__(self):
        if not (self.factor >= 1 and self.floor_seconds > 0 and self.abandons >= 1):
            raise ValueError("HangRule: factor >= 1, floor_seconds > 0, abandons >= 1")

    @classmethod
    def of(cls, spec) -> "HangRule":
        """The rule of a :class:`~cluster.spec.study.StudySpec`."""
        return cls(spec.hang_factor, spec.hang_floor_seconds, spec.hang_abandons)

    def allowance(self, games: int, mean_seconds: float | None, longest_seconds: float,
                  abandoned_before: int = 0) -> float | None:
        """Seconds a call of ``games`` games may run (None: nothing measured yet, no limit)."""
        if mean_seconds is None:
            return None
        expected = max(games * mean_seconds, longest_seconds)
        return max(self.floor_seconds, self.factor * expected) * 2.0 ** abandoned_before


def import_plugins(plugins: Sequence[str]) -> None:
    """Import modules that register extra games or agents (tests, user code)."""
    for name in plugins or ():
        importlib.import_module(name)


class Slice(NamedTuple):
    """What a host is sent for one series run in a batch: its next games, in order."""

    series_id: int
    tasks: tuple
    """GameTasks, consecutive in the series."""
    fresh: bool
    """Rebuild the agents (and load ``start_state``) before the first game (series start or restart)."""
    start_state: dict | None
    """Learned state at the start of ``tasks[0]`` when ``fresh`` (None: the seed populations)."""
    carry: bool
    """Games share learned state (else every game starts from fresh agents)."""
    last: bool
    """The series ends with this slice: the host forgets its agents."""


class PlayedGame(NamedTuple):
    """One game of a batch as the host returns it."""

    task: Any
    rows: list
    """One dict per seat (:func:`cluster.run.play.play_recorded_game`)."""
    learned_after: dict
    """The learned state after the game (``{label: arrays}``; empty unless the series carries it)."""
    seconds: float
    """In-host seconds of the game."""


class BatchResult(NamedTuple):
    """What :meth:`GameHost.play_batch` returns: the games in play order and their records."""

    games: list
    """:class:`PlayedGame` per game, in the order played (series order within a series)."""
    record_packs: list
    """``(game indices, .npz bytes)`` of the recorded games (:func:`cluster.replay.records.pack_records`)."""
    seconds: float
    """In-host seconds of the whole call (agent building included)."""


@ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
class GameHost:
    """Hosts the games of the series it is given and the agents seated in them."""

    def __init__(self, spec, populations: dict | None, plugins: Sequence[str] = ()):
        import_plugins(plugins)
        # play is imported in the worker only after the plugins: their games and agents
        # must be registered before anything builds them (here and in the two below)
        from cluster.run.play import lineup_columns, worker_name

        self.spec = spec  # the driver's validated StudySpec, from the object store (no re-validation)
        # Resolved from the object store once (zero-copy for numpy arrays).
        self.populations = populations or {}
        self.worker = worker_name()
        self.columns = lineup_columns(spec)
        self.agents: dict[int, list] = {}
        """Agents of the series that go on in a later batch (they hold the learned state)."""

    def ready(self) -> str:
        return self.worker

    def _fresh_agents(self, condition: int) -> list:
        """A series' agents, built for its ``design.vary`` condition (a series lies within one)."""
        from cluster.run.play import build_agents, load_learned

        agents = build_agents(self.spec, condition)
        load_learned(self.spec, agents, self.populations)
        return agents

    def play_batch(self, slices: Sequence[Slice]) -> BatchResult:
        """Play every slice's games in order. A carried series keeps its agents from game
        to game (and from batch to batch while it stays on this host); a series that does
        not carry learned state starts every game from fresh agents, as one game per call did."""
        from cluster.replay.records import pack_records
        from cluster.run.play import play_recorded_game

        t_call = time.perf_counter()
        played, records = [], []
        for piece in slices:
            agents = None
            if not piece.fresh and piece.carry:
                if piece.series_id not in self.agents:  # the driver's books and ours disagree: a bug
                    raise RuntimeError(f"series {piece.series_id} goes on, but this host holds no agents for it")
                agents = self.agents.pop(piece.series_id)
            for i, task in enumerate(piece.tasks):
                learned = None
                if agents is None or not piece.carry:
                    agents = self._fresh_agents(task.condition)
                    learned = piece.start_state if i == 0 else None
                t0 = time.perf_counter()
                rows, learned_after, record = play_recorded_game(self.spec, task, agents, learned,
                                                                 worker=self.worker, columns=self.columns)
                seconds = time.perf_counter() - t0
                played.append(PlayedGame(task, rows, learned_after if piece.carry else {}, seconds))
                if record is not None:
                    records.append((task.game_index, record))
            if piece.carry and not piece.last:
                self.agents[piece.series_id] = agents
        packs = pack_records(records) if records else []
        return BatchResult(played, packs, time.perf_counter() - t_call)


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
    """game_index -> hosts lost while playing it (it is retried alone)."""
    abandons: dict = field(default_factory=dict)
    """game_index -> calls abandoned as hung while it was alone in them (:class:`HangRule`)."""
    alone_until: int = 0
    """Games before this index of ``games`` are played one per call (they were in an abandoned call)."""

    @property
    def done(self) -> bool:
        return self.next >= len(self.games)

    @property
    def task(self):
        return self.games[self.next]


#: on_game(run, task, rows, learned_after, seconds, record) -> None (called on the driver,
#: in order per series; ``record`` is always None: records come in packs, see OnBatch)
OnGame = Callable[[SeriesRun, Any, list, dict, float, Any], None]


class BatchDone(NamedTuple):
    """A batch as the pool hands it to ``on_batch``: every game with its run."""

    games: list
    """``(run, PlayedGame)`` in play order (series order within a series)."""
    record_packs: list
    """``(game indices, .npz bytes)`` of the batch's records."""
    seconds: float
    """In-host seconds of the call."""


#: on_batch(done) -> None (called on the driver as each batch returns)
OnBatch = Callable[[BatchDone], None]


class BatchSizer:
    """Games per host call, from the measured in-host time of a game.

    A call should last about ``target_seconds``: long enough that the call's fixed
    costs (a Ray round trip, well under 1 ms; the driver's books and a store append,
    a few ms per batch, shared by every game of the batch) are a small part of it, and
    short enough that a lost host costs little (its batch is played again elsewhere).
    The first call of a study is one game (nothing is measured yet); after each call
    the size is ``target_seconds / seconds per game`` (an exponentially weighted mean
    over calls, the median game of each call), at most ``growth`` times the previous
    size and within ``[1, max_games]``. The size changes only how many games go per
    call: every game's seeds and results are the same whatever it is.
    """

    #: The call length with few hosts.
    BASE_TARGET_SECONDS = 0.2
    #: Call length per host with many (see :meth:`for_hosts`).
    SECONDS_PER_HOST = 0.004

    def __init__(self, target_seconds: float = 0.2, max_games: int = 4096, growth: float = 16.0,
                 smoothing: float = 0.5):
        if target_seconds <= 0 or max_games < 1 or growth <= 1 or not 0 < smoothing <= 1:
            raise ValueError("BatchSizer: target_seconds > 0, max_games >= 1, growth > 1, 0 < smoothing <= 1")
        self.target_seconds = target_seconds
        self.max_games = max_games
        self.growth = growth
        self.smoothing = smoothing
        self.game_seconds: float | None = None
        """Smoothed in-host seconds of a game (None: nothing measured yet)."""
        self.games = 1
        """Games per call now."""

    @classmethod
    def for_hosts(cls, hosts: int, **options) -> "BatchSizer":
        """A sizer whose calls last ``max(0.2 s, hosts x 4 ms)``: the driver then gets at
        most ~250 host calls a second however many hosts there are (a thousand hosts
        playing one-second games send four games per call, and a lost host costs four
        seconds of its games), so its per-call cost (~1 ms of CPU measured on a loaded
        2-core machine, ``jobs/bench/cluster_scale.py``) stays a small part of its time."""
        return cls(target_seconds=max(cls.BASE_TARGET_SECONDS, hosts * cls.SECONDS_PER_HOST), **options)

    def observe(self, game_seconds: Sequence[float]) -> None:
        """Take the in-host seconds of the games of one call."""
        if not game_seconds:
            return
        median = float(sorted(game_seconds)[len(game_seconds) // 2])
        if self.game_seconds is None:
            self.game_seconds = median
        else:
            self.game_seconds += self.smoothing * (median - self.game_seconds)
        wanted = self.target_seconds / max(self.game_seconds, 1e-7)
        self.games = int(max(1, min(self.max_games, round(wanted), self.games * self.growth)))


class HostPool:
    """A bounded pool of :class:`GameHost` actors fed with batches of series runs.

    Bookkeeping: ``starting`` (ready-future -> actor), ``idle`` (actors), ``busy``
    (batch future -> (actor, [(run, games in the batch)])), ``owned`` (actor -> the
    runs it carries on: a series stays on the host that started it, whose agents hold
    its learned state), ``pending`` (runs not started or to restart). ``retired``
    counts actors taken out of service.

    A batch for a host is built from its own runs first (each goes on with its next
    games), then from ``pending`` in order, up to ``sizer.games`` games
    (:class:`BatchSizer`); a run being retried on another host goes alone, one game
    per call, until that game is in (so a game that kills its host is named, and costs
    no other game a retry), and so do the games of an abandoned call (``sent`` keeps when
    each call left, its games and how often its lone game was abandoned; :class:`HangRule`
    says when a call is hung, checked whenever the driver wakes and at the first deadline). At most ``max_in_flight`` batches are in flight (one per
    host at most). Results are taken unordered: every batch that is ready at once is
    fetched with one ``ray.get`` (a driver serving a thousand hosts must not wait for
    them one by one), and before the driver blocks for the next one it calls
    ``on_idle`` (the recorder's group commit: it writes what it holds while it would
    wait anyway).
    """

    def __init__(self, make_actor: Callable[[], Any], size: int, max_in_flight: int | None = None,
                 start_timeout: float = 300.0, sizer: BatchSizer | None = None, hang: HangRule | None = None,
                 error_rows: Callable[[Any, str], list] | None = None):
        if size < 1:
            raise ValueError(f"num_workers: must be >= 1, got {size}")
        self._make_actor = make_actor
        self.size = size
        self.max_in_flight = min(size, max_in_flight) if max_in_flight else size
        self.start_timeout = start_timeout
        self.sizer = sizer or BatchSizer()
        self.hang = hang or HangRule()
        """When a call is hung (:class:`HangRule`)."""
        self._error_rows = error_rows
        """``error_rows(task, reason)``: the rows of a game abandoned ``hang.abandons`` times
        (None: such a game aborts the study with a RuntimeError)."""
        self.starting: dict = {}
        self.idle: list = []
        self.busy: dict = {}
        self.sent: dict = {}
        """Batch future -> ``(time.monotonic()`` when it was sent, games in it, abandons of its lone game)."""
        self.abandoned = 0
        """Host calls abandoned as hung."""
        self.hung_errors = 0
        """Games recorded as errors after ``hang.abandons`` abandons."""
        self._timed_games = 0
        self._timed_seconds = 0.0
        self._longest_game = 0.0
        self.owned: dict = collections.defaultdict(list)
        self.pending: collections.deque[SeriesRun] = collections.deque()
        self.retired = 0
        self.retries = 0
        self.batches = 0
        """Host calls that returned."""
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

    def _lost(self, actor, runs: Sequence[SeriesRun], exc: BaseException) -> None:
        """``actor`` is gone: every run it held (in its batch or carrying on) restarts from
        its last finished game, in plan order, on another host."""
        log.warning("game host lost (%s); replacing it%s", type(exc).__name__,
                    f" and restarting {len(runs)} series from their last finished games" if runs else "")
        self._retire(actor)
        in_batch = {id(r) for r in runs}
        held = list(runs) + [r for r in self.owned.pop(actor, []) if id(r) not in in_batch]
        for run in reversed(held):
            if run.done:
                continue
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
    def _retrying(self, run: SeriesRun) -> bool:
        """The run's next game goes alone in a call: its host was lost or its call abandoned."""
        return not run.done and (run.next < run.alone_until or run.task.game_index in run.attempts
                                 or run.task.game_index in run.abandons)

    def _take(self, run: SeriesRun, room: int, first_free: bool) -> int:
        """How many of ``run``'s next games go into a batch with ``room`` games left: the
        ones ``admit`` lets start (the first one regardless when ``first_free``: a run on a
        host goes on), one alone while the run is retried."""
        if self._retrying(run):
            return 1
        count = 0
        for task in run.games[run.next:run.next + room]:
            if self._admit is not None and not (first_free and count == 0) and not self._admit(task):
                break
            count += 1
        return count

    def _slice(self, run: SeriesRun, count: int) -> Slice:
        fresh = run.fresh or not run.carry
        piece = Slice(run.series_id, tuple(run.games[run.next:run.next + count]), fresh,
                      run.start_state if fresh else None, run.carry, run.next + count >= len(run.games))
        run.fresh = False
        return piece

    def _submit(self, actor) -> bool:
        """Build ``actor``'s next batch (its own runs, then pending ones) and send it; False
        when there is nothing it may play now."""
        if self.stopped:
            return False
        room = self.sizer.games
        parts: list[tuple[SeriesRun, int]] = []
        mine = self.owned.get(actor, [])
        retried = next((run for run in mine if self._retrying(run)), None)
        if retried is not None:  # a run replaying the games of an abandoned call goes on alone
            parts.append((retried, 1))
            room = 0
        for run in mine:  # a run on this host goes on
            if room <= 0:
                break
            count = self._take(run, room, first_free=True)
            parts.append((run, count))
            room -= count
        while room > 0 and self.pending:
            run = self.pending[0]
            if self._retrying(run):  # a retried run goes alone, one game per call
                if parts:
                    break
                room = 1
            count = self._take(run, room, first_free=False)
            if count == 0:
                break  # wait until the games before it are in
            self.pending.popleft()
            mine.append(run)
            parts.append((run, count))
            room -= count
            if self._retrying(run):
                break
        if not parts:
            self.owned.pop(actor, None)
            return False
        self.owned[actor] = mine
        slices = [self._slice(run, count) for run, count in parts]
        ref = actor.play_batch.remote(slices)
        self.busy[ref] = (actor, parts)
        games = sum(count for _, count in parts)
        lone = parts[0][0].abandons.get(parts[0][0].task.game_index, 0) if games == 1 else 0
        self.sent[ref] = (time.monotonic(), games, lone)
        return True

    def _fill(self) -> None:
        while not self.stopped and self.idle and self.pending and len(self.busy) < self.max_in_flight:
            actor = self.idle.pop()
            if not self._submit(actor):
                self.idle.append(actor)
                break

    def _settle(self, actor, parts, result: BatchResult) -> BatchDone:
        """The runs of a returned batch move on by the games it played."""
        self._since_progress = time.monotonic()
        self.batches += 1
        by_series: dict[int, SeriesRun] = {run.series_id: run for run, _ in parts}
        games = []
        for played in result.games:
            run = by_series[played.task.series_id]
            run.start_state = played.learned_after if run.carry else None
            run.next += 1
            run.attempts.pop(played.task.game_index, None)
            run.abandons.pop(played.task.game_index, None)
            games.append((run, played))
            self._timed_games += 1
            self._timed_seconds += played.seconds
            self._longest_game = max(self._longest_game, played.seconds)
        self.owned[actor] = [run for run in self.owned.get(actor, []) if not run.done]
        self.sizer.observe([played.seconds for played in result.games])
        return BatchDone(games, result.record_packs, result.seconds)

    # --- hung calls ------------------------------------------------------------------
    def _allowance(self, ref) -> float | None:
        """Seconds the call ``ref`` may run (:meth:`HangRule.allowance`; None: no limit yet)."""
        _, games, lone = self.sent[ref]
        mean = self._timed_seconds / self._timed_games if self._timed_games else None
        return self.hang.allowance(games, mean, self._longest_game, lone)

    def _next_deadline(self) -> float | None:
        """``time.monotonic()`` at which the first call in flight runs out of time (None: none can)."""
        deadlines = [self.sent[ref][0] + allowed for ref in self.busy
                     if (allowed := self._allowance(ref)) is not None]
        return min(deadlines) if deadlines else None

    def _abandon_hung(self) -> list[BatchDone]:
        """Abandon every call in flight past its allowance (one still running: a finished one
        is taken as usual); returns the games that became errors, as batches to hand over."""
        now = time.monotonic()
        late = [ref for ref in self.busy
                if (allowed := self._allowance(ref)) is not None and now - self.sent[ref][0] > allowed]
        if not late:
            return []
        finished, _ = ray.wait(late, num_returns=len(late), timeout=0)
        done: list[BatchDone] = []
        for ref in late:
            if ref not in finished:
                done += self._abandon(ref, now)
        return done

    def _abandon(self, ref, now: float) -> list[BatchDone]:
        """The call ``ref`` is hung: kill its host (and start a fresh one); every run it held
        restarts from its last finished game, the games of the call one per call; a game
        abandoned ``hang.abandons`` times alone becomes an error (its rows handed over)."""
        allowed = self._allowance(ref)
        actor, parts = self.busy.pop(ref)
        sent, games, _ = self.sent.pop(ref)
        ran = now - sent
        self.abandoned += 1
        log.warning("a game host's call of %d game%s ran %.1f s, over its %.1f s allowance (study.hang_factor "
                    "x what its games should take, at least study.hang_floor_seconds); killing the host, its "
                    "games are played again elsewhere", games, "s" * (games != 1), ran, allowed)
        self._retire(actor)
        counts = {id(run): count for run, count in parts}
        held = [run for run, _ in parts] + [r for r in self.owned.pop(actor, []) if id(r) not in counts]
        errors: list[BatchDone] = []
        for run in reversed(held):
            if run.done:
                continue
            run.fresh = True
            if games == 1 and id(run) in counts:
                key = run.task.game_index
                run.abandons[key] = run.abandons.get(key, 0) + 1
                if run.abandons[key] >= self.hang.abandons:
                    errors.append(self._hung_error(run, run.abandons.pop(key), ran))
                    if run.done:
                        continue
            elif id(run) in counts:
                run.alone_until = max(run.alone_until, run.next + counts[id(run)])
            self.pending.appendleft(run)
            self.retries += 1
        self._start_actor()
        return errors[::-1]

    def _hung_error(self, run: SeriesRun, abandons: int, seconds: float) -> BatchDone:
        """Game ``run.task`` hung its host ``abandons`` times: its error rows, and the run moves
        past it with the learned state it had before it."""
        task = run.task
        reason = (f"hung: game {task.game_index} (series {task.series_id}) ran past its host's time "
                  f"allowance {abandons} times, alone in its call each time (study.hang_factor = "
                  f"{self.hang.factor:g}, hang_floor_seconds = {self.hang.floor_seconds:g}, hang_abandons = "
                  f"{self.hang.abandons}); its host was killed each time")
        if self._error_rows is None:
            raise RuntimeError(reason)
        log.warning("game %d recorded as an error: %s", task.game_index, reason)
        self.hung_errors += 1
        learned = (run.start_state or {}) if run.carry else {}
        played = PlayedGame(task, self._error_rows(task, reason), learned, seconds)
        run.next += 1
        return BatchDone([(run, played)], [], seconds)

    def run(self, runs: Sequence[SeriesRun], on_game: OnGame | None = None,
            stop_when: Callable[[], bool] | None = None,
            admit: Callable[[Any], bool] | None = None,
            more: Callable[[], Sequence[SeriesRun]] | None = None,
            on_batch: OnBatch | None = None, on_idle: Callable[[], None] | None = None,
            wait_seconds: float = 5.0) -> None:
        """Play every run to its end in batches, handing each returned batch to ``on_batch``
        (or each of its games to ``on_game``, in order per series). With ``stop_when``:
        once it returns true (asked before every submission and after every batch),
        submit nothing more and return when the batches in flight are handed over. With
        ``admit``: a game enters a batch only when ``admit(task)`` is true, except the next
        game of a run already on a host (it goes on); checked again after every batch.
        With ``more`` (a plan that grows, e.g. an adaptive tournament's rounds): asked
        whenever nothing is pending (at the start, after every batch, and before
        returning; with ``on_game``, after every game of a batch), it gives the next
        runs to play, or nothing yet (the games it waits for are in flight); the pool returns once nothing is pending or in flight and
        ``more`` gives nothing. ``on_idle`` is called before the driver blocks waiting
        for hosts (at most every ``wait_seconds`` while it waits)."""
        if on_batch is None and on_game is None:
            raise ValueError("HostPool.run: give on_batch or on_game")
        self.pending.extend(r for r in runs if not r.done)
        self._admit = admit

        def top_up() -> None:
            if more is not None and not self.pending and not self.stopped:
                self.pending.extend(r for r in more() if not r.done)

        def check_stop() -> bool:
            if not self.stopped and stop_when is not None and stop_when():
                self.stopped = True
                log.info("stop condition met: no new games; %d batches in flight finish", len(self.busy))
            return self.stopped

        def hand_over(done: BatchDone) -> None:
            if on_batch is not None:
                on_batch(done)
                top_up()
                return
            for run, played in done.games:
                on_game(run, played.task, played.rows, played.learned_after, played.seconds, None)
                top_up()  # as with one game per call: asked after every game while nothing is pending

        check_stop()
        top_up()
        while (self.pending and not self.stopped) or self.busy:
            hung = self._abandon_hung()
            for done in hung:  # games abandoned too often: their error rows
                hand_over(done)
            if hung:
                check_stop()
                top_up()
            self._fill()
            waiting = list(self.busy) + list(self.starting)
            if not waiting:
                if not self.pending or self.stopped:
                    break  # the last calls in flight were abandoned and nothing is left
                raise RuntimeError("no game hosts left and work pending")
            ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0)
            if not ready:
                if on_idle is not None:
                    on_idle()
                timeout = wait_seconds
                deadline = self._next_deadline()
                if deadline is not None:  # wake up for the first call that runs out of time
                    timeout = min(wait_seconds, max(0.01, deadline - time.monotonic() + 0.01))
                ready, _ = ray.wait(waiting, num_returns=1, timeout=timeout)
            if not ready:
                if not self.busy and not self.idle and time.monotonic() - self._since_progress > self.start_timeout:
                    raise RuntimeError(f"no game hosts became ready within {self.start_timeout:.0f} s "
                                       "(not enough CPUs left in the cluster?)")
                continue
            for ref in [r for r in ready if r in self.starting]:
                self._host_started(ref)
            returned = [r for r in ready if r in self.busy]
            if not returned:
                continue
            try:
                results = ray.get(returned)
            except ACTOR_LOST:  # one of them is lost: take them one by one
                results = None
            handed = []
            for i, ref in enumerate(returned):
                actor, parts = self.busy.pop(ref)
                self.sent.pop(ref, None)
                if results is None:
                    try:
                        result = ray.get(ref)
                    except ACTOR_LOST as exc:
                        self._lost(actor, [run for run, _ in parts], exc)
                        continue
                else:
                    result = results[i]
                done = self._settle(actor, parts, result)
                # The host's next batch goes out before this one is recorded: it plays while the driver writes.
                if check_stop() or not self._submit(actor):
                    self.idle.append(actor)
                handed.append(done)
            for done in handed:
                hand_over(done)
            check_stop()
            top_up()  # the batch may have completed what the next runs wait for
            self._fill()  # the batch may have opened the admission window

    def _host_started(self, ref) -> None:
        actor = self.starting.pop(ref)
        try:
            ray.get(ref)
        except ACTOR_LOST as exc:
            self._start_failures += 1
            if self._start_failures >= self.size + MAX_START_FAILURES:
                raise RuntimeError(f"game hosts failed to start {self._start_failures} times "
                                   f"in a row; last error: {exc}") from exc
            self._lost(actor, [], exc)
        else:
            self._start_failures = 0
            self.idle.append(actor)
            self._since_progress = time.monotonic()

    def shutdown(self) -> None:
        """Kill every actor of the pool (idle, busy and still starting)."""
        actors = list(self.idle) + [a for a, _ in self.busy.values()] + list(self.starting.values())
        self.idle.clear()
        self.busy.clear()
        self.sent.clear()
        self.starting.clear()
        self.owned.clear()
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass


__all__ = ["start_ray", "GameHost", "HostPool", "HangRule", "SeriesRun", "Slice", "PlayedGame", "BatchResult",
           "BatchDone", "BatchSizer", "warm_up_nodes", "import_plugins", "ACTOR_LOST", "GetTimeoutError"]


def start_ray(address: str | None, num_workers: int | None) -> bool:
    """Start or join Ray; True if this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None  # set by `ray job submit`
    if address:
        ray.init(address=address, log_to_driver=False)
    else:  # a fresh embedded Ray, every listener on 127.0.0.1
        init_local_ray(num_workers)
    return True
