"""Run a study: plan, schedule on Ray, record durably, mirror to MLflow, report.

    >>> result = run_study(spec)      # a StudySpec, as jobs.spec.load_spec makes it  # doctest: +SKIP
    >>> print(result.table)

:func:`run_study` is four named stages, each callable (and tested) alone:

1. :func:`plan_and_resume`: the plan, what the store already holds, the sequential
   test brought up to date, the series runs still to play (:class:`Prepared`);
2. :func:`open_tracker`: the study's MLflow run, new or resumed (optional);
3. :func:`dispatch`: Ray, the warm-up, the host pool playing the runs in batches
   by the scheduling policy (:mod:`cluster.run.policy`), the games recorded by a
   :class:`Recorder` in group commits;
4. :func:`finish`: compaction, the report, the population export, the MLflow
   run's end; then :func:`study_result` reads what the study holds now.

Durability and resume: the games of arriving batches are written to the
study's Parquet store together, in a group commit (:class:`Recorder`: records,
then rows, then the learned state after each game), whenever the driver would
wait for a host and at least once a second; a driver that dies loses the games
it held (and the batches in flight), which a resume plays again, once. Re-running the same spec
(same study id) skips finished games. A series whose learned state is behind
its rows (the driver died between the two writes) restarts from its last
saved state and replays the games in between without recording them again,
so nothing is duplicated and learned state is never stale.

Sequential stop (``design.stop``, :mod:`cluster.analysis.sequential`): the series are
dispatched in plan order and the test is updated as each game is recorded;
once it is decided no new game is dispatched (games in flight finish and are
recorded). A resumed study recomputes the test from the stored games first and
plays nothing more when it is already decided. Games after ``max_games`` are
never planned.

Adaptive tournaments (``design.stop.ranking``, :mod:`cluster.analysis.adaptive`): the plan
grows round by round; the host pool asks the schedule for the next round whenever nothing is
pending (``more``), and the schedule decides it once every game of the round before is
recorded. A resumed tournament feeds the stored games to a new schedule, which takes the
same decisions again and leaves only the missing games to play.

Swiss tournaments (``design.format = "swiss"``, :mod:`cluster.analysis.swiss`): the same
mechanism (:class:`cluster.analysis.rounds.RoundSchedule`), each round paired from the points
of the complete rounds before it; ``report/swiss.md`` and ``swiss_standings.csv`` hold the
standings (points, Buchholz) beside the leaderboard.

Tournaments (``design.format``, :mod:`cluster.spec.tournament`): the leaderboard is
refreshed while they run (:class:`cluster.run.standings.LiveStandings`, at a bounded
rate, terminal and MLflow) and computed in full at the end
(:func:`cluster.analysis.leaderboard.leaderboard`: ``report/leaderboard.*``,
``report/crosstable.csv``, MLflow metrics and tables; :attr:`StudyResult.leaderboard`).
"""
from __future__ import annotations

import logging
import sys
import time
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import ray
from tqdm.auto import tqdm

from agents.registry import agent_class
from cluster.analysis import report
from cluster.analysis.adaptive import AdaptiveSchedule, adaptive_markdown, write_adaptive_report
from cluster.analysis.report import by_condition_markdown, result_table, to_markdown
from cluster.analysis.learning_curves import SEGMENT
from cluster.analysis.swiss import SwissSchedule, swiss_markdown, write_swiss_report
from cluster.analysis.rounds import PlanMismatch
from cluster.analysis.sequential import SequentialMonitor, sequential_markdown, truncate_plan, write_sequential_report
from cluster.replay.records import record_path, save_record, save_record_packs
from cluster.results.populations import PopulationExportError, export_population
from cluster.results.store import GameSet, ResultStore
from cluster.run.plugin_nodes import check_plugins_on_nodes
from cluster.run.policy import dispatch_policy
from cluster.run.conduct import ConductWatch
from cluster.run.faults import StudyWriteError, deferred_signals
from cluster.run.lock import StudyLock
from cluster.run.ray_session import RaySession, gcs_timeout
from cluster.run.scheduler import BatchSizer, GameHost, HangRule, HostPool, SeriesRun, import_plugins, warm_up_nodes
from cluster.run.standings import LiveStandings
from cluster.run.tracker import RunContext, StudyTracker, Tally
from cluster.spec.plan import plan_study
from cluster.tracking import sqlite_path
from cluster.spec.seed_populations import load_populations

log = logging.getLogger(__name__)


@dataclass
class StudyResult:
    """What :func:`run_study` returns."""

    study_id: str
    study_dir: Path
    table: object
    """Per-label result table (``cluster.analysis.report.result_table``) over every finished game."""
    mlflow_run_id: str | None
    games_total: int
    games_done: int
    """Games in the store at the end (== games_total when the study is complete)."""
    games_played: int
    """Games recorded by this invocation."""
    games_skipped: int
    """Games already in the store when this invocation started (resume)."""
    games_replayed: int = 0
    """Finished games re-played only to rebuild learned state (not recorded again)."""
    error_games: int = 0
    host_retries: int = 0
    """Games re-submitted because their host died or their call was abandoned as hung."""
    host_abandons: int = 0
    """Host calls abandoned as hung (:class:`cluster.run.scheduler.HangRule`)."""
    workers: int = 0
    seconds: float = 0.0
    """Wall time of the scheduling phase (Ray start-up excluded)."""
    game_seconds: float = 0.0
    """Sum of in-host game times of the games played by this invocation."""
    warm_up: list = field(default_factory=list)
    game_times: list = field(default_factory=list, repr=False)
    """In-host seconds of each game recorded by this invocation, in recording order."""
    recorded_at: list = field(default_factory=list, repr=False)
    """Driver ``time.perf_counter()`` when each of those games reached the driver (the games
    of one batch share it; they are durable at the next of ``commits``)."""
    mlflow_run_name: str | None = None
    mlflow_experiment_id: str | None = None
    condition_tables: str = ""
    """Markdown: the result table per varied option (``design.vary``), "" without conditions."""
    batches: int = 0
    """Host calls of this invocation (each played a batch of games)."""
    flushes: int = 0
    """Group commits (store appends) of this invocation."""
    commits: list = field(default_factory=list, repr=False)
    """``(time.perf_counter(), games written)`` of each group commit."""
    sequential: object = None
    """The sequential test's :class:`cluster.analysis.sequential.SequentialResult` (``design.stop``), else None."""
    leaderboard: object = None
    """A tournament's :class:`cluster.analysis.leaderboard.Leaderboard` over every finished game, else None."""
    adaptive: object = None
    """An adaptive tournament's :class:`cluster.analysis.adaptive.AdaptiveResult`, else None."""
    swiss: object = None
    """A Swiss tournament's :class:`cluster.analysis.swiss.SwissResult` (standings), else None."""

    @property
    def counts(self) -> dict[str, int]:
        """What this invocation did: games played, skipped (already in the store),
        retried on another host, errored (and replayed to rebuild learned state), and
        ``abandoned``, the host calls abandoned as hung, when there were any."""
        counts = {"played": self.games_played, "skipped": self.games_skipped,
                  "retried": self.host_retries, "errored": self.error_games,
                  "replayed": self.games_replayed}
        if self.host_abandons:  # host calls abandoned as hung
            counts["abandoned"] = self.host_abandons
        return counts


@dataclass
class Prepared:
    """What :func:`plan_and_resume` found: the study's plan and what is left of it."""

    store: ResultStore
    plan: list
    """The series of the study (:func:`cluster.spec.plan.plan_study`; cut at a sequential test's cap)."""
    total: int
    """Games in the plan."""
    finished: GameSet
    """Games already in the store (grows as games are recorded; a bitmap, one byte per game)."""
    skipped: int
    """Games in the store when this invocation started."""
    runs: list[SeriesRun]
    """The series runs still to play, each from its restart point, in plan order."""
    monitor: SequentialMonitor | None = None
    """The sequential test (``design.stop``), fed the stored games."""
    schedule: AdaptiveSchedule | SwissSchedule | None = None
    """An adaptive tournament's schedule (``design.stop.ranking``) or a Swiss tournament's
    (``format = "swiss"``), fed the stored games."""
    learns: bool = False
    """Some entrant carries learned state (series restart from their saved state)."""


def plan_runs(spec, plan, store, finished, learns: bool) -> list[SeriesRun]:
    """The series runs still to play, each from its restart point, in plan order."""
    carry = bool(spec.design.carry_learned_state) and learns
    runs = []
    for series in plan:
        unfinished = [g for g in series.games if g.game_index not in finished]
        if not unfinished:
            continue
        if not carry:
            runs.append(SeriesRun(series.series_id, unfinished, None, carry=False))
            continue
        first = unfinished[0].index_in_series
        latest = store.latest_learned_state(series.series_id)
        if latest is not None and latest[0] + 1 <= first:
            start, state = latest[0] + 1, latest[1]
        else:
            start, state = 0, None
        games = [g for g in series.games if g.index_in_series >= start]
        runs.append(SeriesRun(series.series_id, games, state, carry=True))
    return runs


def plan_and_resume(spec) -> Prepared:
    """Stage 1: write (or check) the stored spec, plan the study, and find what is left to
    play; a sequential test is fed the stored games first, and a decided test leaves
    nothing to play."""
    store = ResultStore(Path(spec.study_dir))
    store.write_spec(spec)
    if spec.design.tournament and (spec.design.stop is not None or spec.design.format == "swiss"):
        return _plan_and_resume_adaptive(spec, store)
    plan = plan_study(spec)
    monitor = None
    if spec.design.stop is not None:
        monitor = SequentialMonitor.from_spec(spec, plan)
        plan = truncate_plan(plan, monitor.cap)  # games after max_games are never played
    finished = store.finished_set()
    if monitor is not None and finished:
        monitor.add_frame(store.read())  # a resume honours a decision reached before
    learns = any(agent_class(seat.agent).learns(seat.config) for seat in spec.lineup)
    runs = plan_runs(spec, plan, store, finished, learns)
    if monitor is not None and monitor.finished:
        log.info("sequential test already decided (%s); nothing to play", monitor.decision)
        runs = []
    return Prepared(store=store, plan=plan, total=sum(len(s.games) for s in plan), finished=finished,
                    skipped=len(finished), runs=runs, monitor=monitor)


def _plan_and_resume_adaptive(spec, store: ResultStore) -> Prepared:
    """Stage 1 of an adaptive or Swiss tournament: the schedule, fed the stored games (it takes
    again every decision they allow), and what is missing of the rounds decided so far."""
    swiss = spec.design.format == "swiss"
    schedule = SwissSchedule.from_spec(spec) if swiss else AdaptiveSchedule.from_spec(spec)
    finished = store.finished_set()
    if finished:
        try:
            schedule.add_frame(store.read())
        except PlanMismatch as exc:
            raise PlanMismatch(f"{store.results_dir}: {exc}") from None
    else:
        schedule.advance()
    learns = any(agent_class(seat.agent).learns(seat.config) for seat in spec.lineup)
    plan = schedule.series()
    runs = [] if schedule.finished else plan_runs(spec, plan, store, finished, learns)
    if schedule.finished:
        log.info("%s schedule already decided (%s); nothing to play", "swiss" if swiss else "adaptive",
                 schedule.decision)
    return Prepared(store=store, plan=plan, total=spec.design.total_games, finished=finished,
                    skipped=len(finished), runs=runs, schedule=schedule, learns=learns)


def next_round_runs(spec, prepared: Prepared) -> list[SeriesRun]:
    """The runs of the next round of an adaptive tournament, once the schedule decides it (the
    host pool's ``more``); nothing while games of the round before are missing, or once decided."""
    series = prepared.schedule.advance()
    if not series:
        return []
    prepared.plan.extend(series)
    return plan_runs(spec, series, prepared.store, prepared.finished, prepared.learns)


def open_tracker(spec, prepared: Prepared, flush_games: int | None = None,
                 context: RunContext | None = None) -> StudyTracker | None:
    """Stage 2: the study's MLflow run (the study directory's run resumed, or a new one),
    its tallies seeded with the stored games; None when MLflow is unavailable (the
    study runs on: the store is the truth)."""
    existing = prepared.store.read() if prepared.finished else None  # the store's own errors are not MLflow's
    t_start = time.monotonic()
    try:  # the client opens a sqlite store at once: a corrupt or locked database fails here
        tracker = StudyTracker(spec, flush_games=flush_games, context=context)
        tracker.start(existing)
    except Exception as exc:  # the store is the truth: run untracked, log on a later run
        if not _tracking_fault(exc):
            raise  # e.g. an agent's code failing while its parameters are described: not MLflow's doing
        reason = (str(exc).strip() or type(exc).__name__).splitlines()[0][:300]
        database = sqlite_path(spec.tracking.uri)
        if database is not None:  # name the file, and what is wrong with it
            where, reason = f"MLflow tracking store {database} cannot be opened", f"{type(exc).__name__}: {reason}"
        else:
            where = f"MLflow unavailable at {spec.tracking.uri}"
        log.warning("%s (%s; gave up after %.1f s); running without tracking: every game goes to the "
                    "results store, and running the study again once the store is usable logs it", where,
                    reason, time.monotonic() - t_start)
        return None
    return tracker


#: Where an exception raised by tracking comes from when MLflow, its store or the network is to blame.
_TRACKING_MODULES = ("mlflow", "sqlalchemy", "sqlite3", "requests", "urllib3", "http", "socket", "ssl",
                     "alembic", "cluster/run/tracker", "cluster/tracking")


def _tracking_fault(exc: BaseException) -> bool:
    """Whether ``exc`` (raised while the MLflow run was opened) is tracking's: an OSError, or
    raised in MLflow, its database or network libraries, or Arena's tracking code; not, say,
    an agent's or a game's code called on the way (that is a bug to report, not a reason to
    run untracked)."""
    if isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _TRACKING_MODULES:
        return True
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    if last is None:
        return True
    path = last.replace("\\", "/")
    return any(f"/{name}/" in path or path.endswith(f"/{name}.py") for name in _TRACKING_MODULES)


class Recorder:
    """The pool's ``on_batch``: the store, learned state, sequential test, progress bar and
    MLflow, and the books of this invocation: what it played, and how (:func:`dispatch`
    fills in the hosts, retries and time).

    **Group commit.** Games are held in memory as their batches arrive and written
    together by :meth:`flush`: the batches' record packs first, then all their rows as
    one Parquet part, then the learned state after each game (so rows in the store
    mean a finished game, and a series' learned state is never ahead of its rows).
    The pool calls :meth:`flush` whenever the driver would otherwise wait for a host
    (``on_idle``), and the recorder flushes on its own once it holds ``flush_games``
    games or has held a game ``flush_seconds``: a driver that dies loses at most that
    many finished games (plus the batches in flight on the hosts); they are not in the
    store, so a resume plays them again, once. The sequential test is fed each game
    as its batch arrives, and so is an adaptive tournament's schedule (their decisions
    depend on the games' results only, so a resume reaches the same ones from the store); the progress bar, MLflow's tallies and
    ``on_progress`` see a game once its rows are durable."""

    def __init__(self, spec, store, finished, tracker=None, bar=None, on_progress=None, monitor=None,
                 flush_seconds: float = 1.0, flush_games: int = 20_000, standings=None, schedule=None):
        self.spec, self.store, self.finished, self.tracker, self.bar = spec, store, finished, tracker, bar
        self.on_progress = on_progress
        self.monitor = monitor
        self.standings = standings
        """A tournament's live leaderboard (:class:`LiveStandings`, fed at each commit), else None."""
        self.leaderboard = None
        """A tournament's final leaderboard (set by :func:`finish`), else None."""
        self.schedule = schedule
        """An adaptive tournament's schedule (:class:`AdaptiveSchedule`, fed each game as it arrives), else None."""
        self.adaptive = None
        """An adaptive tournament's result (set by :func:`finish`), else None."""
        self.swiss = None
        """A Swiss tournament's standings (set by :func:`finish`), else None."""
        self.flush_seconds = flush_seconds
        self.flush_games = flush_games
        self.tally = Tally()
        self.played = self.replayed = self.errors = 0
        self.game_seconds = 0.0
        # 8 bytes a game each (a million games: 16 MB), the timings the bench reads
        self.game_times = array("d")
        self.recorded_at = array("d")
        self.commits: list[tuple[float, int]] = []
        """``(time.perf_counter(), games written)`` of each group commit."""
        self.commit_seconds = 0.0
        """Wall time spent writing group commits (files, fsyncs) before the books."""
        self.workers = 0
        """Game hosts of this invocation (0: nothing was left to play)."""
        self.retries = 0
        """Games re-submitted because their host died or their call was abandoned."""
        self.abandoned = 0
        """Host calls abandoned as hung."""
        self.conduct = ConductWatch()
        """Warns once per label when its rows first show overruns, invalid actions or a forfeit."""
        self.batches = 0
        """Host calls of this invocation."""
        self.flushes = 0
        """Group commits (store appends) of this invocation."""
        self.seconds = 0.0
        """Wall time of the scheduling phase (Ray start-up and warm-up excluded)."""
        self.warm_up: list = []
        self._held: list = []  # (run, task, rows, learned_after, seconds) not yet written
        self._held_packs: list = []
        self._held_since: float | None = None

    # --- arrival ------------------------------------------------------------------------
    def __call__(self, run, task, rows, learned_after, seconds, record=None):
        """One game (a pool's ``on_game``, or a caller playing games itself): held, then
        written at once. ``record``: the game's :class:`~cluster.replay.records.GameRecord`
        or ``.npz`` bytes, or None."""
        if record is not None and task.game_index not in self.finished:
            save_record(record_path(self.spec.study_dir, task.game_index), record)
        self._hold(run, task, rows, learned_after, seconds)
        self.flush()

    def on_batch(self, done) -> None:
        """A batch from the pool (:class:`cluster.run.scheduler.BatchDone`)."""
        self.batches += 1
        self._held_packs.extend(done.record_packs)
        arrived = time.perf_counter()
        for run, played in done.games:
            self._hold(run, played.task, played.rows, played.learned_after, played.seconds, arrived)
        if self._held_since is not None and (len(self._held) >= self.flush_games
                                             or time.monotonic() - self._held_since >= self.flush_seconds):
            self.flush()

    def _hold(self, run, task, rows, learned_after, seconds, arrived: float | None = None) -> None:
        if self._held_since is None:
            self._held_since = time.monotonic()
        self._held.append((run, task, rows, learned_after, seconds, time.perf_counter() if arrived is None else arrived))
        if self.monitor is not None and task.game_index not in self.finished:
            self.monitor.add_game(rows)
        if self.schedule is not None and task.game_index not in self.finished:
            self.schedule.add_game(rows)

    # The three writes of a commit, in order (small pieces that checksums or a lock can hook into).
    def _write_records(self, packs) -> None:
        """The commit's record packs, as one file (packs of games already stored are dropped)."""
        save_record_packs(self.spec.study_dir, [(games, data) for games, data in packs
                                                if any(g not in self.finished for g in games)])

    def _write_rows(self, fresh) -> None:
        """The rows of the games not yet stored, as one Parquet part."""
        if fresh:
            self.store.append([row for item in fresh for row in item[2]])

    def _write_learned(self, held) -> None:
        """The learned state after each game of a series that carries it (replays included)."""
        for run, task, rows, learned_after, seconds, _ in held:
            if run.carry and learned_after:
                for label, arrays in learned_after.items():
                    self.store.save_learned_state(task.series_id, task.index_in_series, label, arrays)

    @property
    def held_games(self) -> int:
        """Games received and not yet written (lost if the driver dies now; a resume plays them)."""
        return len(self._held)

    # --- the group commit -----------------------------------------------------------------
    def flush(self) -> None:
        """Write what is held: record packs, rows (one part), learned states; then the books."""
        if not self._held and not self._held_packs:
            return
        t_commit = time.perf_counter()
        held, packs = self._held, self._held_packs
        self._held, self._held_packs, self._held_since = [], [], None
        fresh = [item for item in held if item[1].game_index not in self.finished]
        sdir = Path(self.spec.study_dir)
        with _naming_failed_writes(sdir / "records"):
            self._write_records(packs)  # the records first: rows in the store mean a finished game
        with _naming_failed_writes(self.store.results_dir):
            self._write_rows(fresh)  # durable before anything else that depends on them
        with _naming_failed_writes(self.store.learned_dir):
            self._write_learned(held)
        self.flushes += 1
        now = time.perf_counter()
        self.commit_seconds += now - t_commit
        self.commits.append((now, len(fresh)))
        self.replayed += len(held) - len(fresh)
        for run, task, rows, learned_after, seconds, arrived in fresh:
            self.finished.add(task.game_index)
            self.played += 1
            self.game_seconds += seconds
            self.game_times.append(seconds)
            self.recorded_at.append(arrived)
            if rows and rows[0]["result"] == "error":
                self.errors += 1
                log.warning("game %d: %s", task.game_index, (rows[0].get("error") or "").splitlines()[0])
            self.tally.add(rows)
            self.conduct.add(rows)
        if self.tracker is not None:
            self.tracker.add_games([item[2] for item in fresh])
        if self.standings is not None:
            for item in fresh:
                self.standings.add(item[2])
        if self.bar is not None and fresh:
            self.bar.update(len(fresh))
            self.bar.set_postfix_str(" | ".join(f"{s.label} {self.tally.wtl(s.label)}" for s in self.spec.lineup),
                                     refresh=False)
        if self.on_progress is not None:
            for item in fresh:
                self.on_progress(item[2])


@contextmanager
def _naming_failed_writes(directory: Path):
    """A failed write of a group commit (a full disk, an I/O error) as a
    :class:`~cluster.run.faults.StudyWriteError` naming the file (``directory`` when the
    error does not say which file)."""
    try:
        yield
    except OSError as exc:
        raise StudyWriteError(exc.filename or directory, exc) from exc


def export_best_streak_populations(spec) -> list[Path]:
    """For every seat whose agent exports its population (``Agent.exports_population``),
    write the one in force during its longest winning streak to
    ``study_dir/populations/<label>-best-streak.npz`` (a ready ``seed_population``
    for a later study; logged to MLflow)."""
    out = []
    for seat in spec.lineup:
        if not agent_class(seat.agent).exports_population:
            continue
        target = Path(spec.study_dir) / "populations" / f"{seat.label}-best-streak.npz"
        try:
            out.append(Path(export_population(spec.study_dir, seat.label, target)["out"]))
        except PopulationExportError:
            continue  # no game of this seat finished yet
    return out


def tournament_leaderboard(spec, rows):
    """A tournament's full leaderboard of ``rows`` (None for a lineup study, or when there is
    nothing to rate yet: a warning says why)."""
    if not spec.design.tournament or rows is None or not len(rows):
        return None
    from cluster.analysis.leaderboard import leaderboard
    from cluster.analysis.ratings import RatingError

    try:
        return leaderboard(rows, seed=spec.seed)
    except RatingError as exc:
        log.warning("no leaderboard: %s", exc)
        return None


def write_report(spec, rows, sequential=None, board=None, adaptive=None, swiss=None) -> list[Path]:
    """Result table (CSV + Markdown) and win-rate plot under ``study_dir/report``,
    replay pages under ``study_dir/replays`` (linked from ``report/replays.md``),
    from the study's result rows (``ResultStore.read()``); with a sequential test's
    result, ``sprt.md`` and ``sprt_llr.png`` too."""
    out = Path(spec.study_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)
    segments = SEGMENT if spec.design.runs_design else None
    files = report.write_study_report(rows, out, title=spec.study_id, segments=segments,
                                      study_dir=spec.study_dir, first_label=spec.lineup[0].label)
    if sequential is not None:
        files += write_sequential_report(sequential, out, title=spec.study_id)
    if board is not None:
        from cluster.analysis.leaderboard import write_leaderboard

        files += write_leaderboard(board, out, title=spec.study_id)
    if adaptive is not None:
        files += write_adaptive_report(adaptive, out, title=spec.study_id)
    if swiss is not None:
        files += write_swiss_report(swiss, out, title=spec.study_id)
    return files


def dispatch(spec, prepared: Prepared, recorder: Recorder, address: str | None = None,
             num_workers: int | None = None, progress: bool = True, plugins: Sequence[str] = (),
             warm_up: bool = True, check_nodes: bool = True, batch_sizer: BatchSizer | None = None) -> None:
    """Stage 3: play ``prepared.runs`` on Ray, every game handed to ``recorder`` as it
    arrives. Starts Ray (or joins ``address``) only when there is something to play,
    sends the spec and the seed populations to the object store once, warms the numba
    caches once per node, and feeds the hosts by the scheduling policy
    (:func:`cluster.run.policy.dispatch_policy`). Ray, the hosts and the progress bar
    are gone when it returns or raises; ``recorder`` keeps the books either way. A Ray
    head that stops answering raises :class:`~cluster.run.faults.ClusterLost`
    (:mod:`cluster.run.ray_session`)."""
    if not prepared.runs:
        return
    session = RaySession(address, num_workers).__enter__()
    pool = None
    t0 = time.perf_counter()
    try:
        recorder.workers = workers = int(num_workers or ray.cluster_resources().get("CPU", 1))
        if check_nodes:  # one clear error before any game if a node lacks a plugin
            check_plugins_on_nodes(spec)
        spec_ref = ray.put(spec)  # the validated spec, sent once: hosts do not rebuild it
        pop_ref = ray.put(load_populations(spec))  # once; every host reads it from the object store
        if warm_up:
            recorder.warm_up = warm_up_nodes(spec_ref, plugins)
        session.check()
        if progress:  # after Ray start-up and warm-up, so the ETA is about games
            recorder.bar = tqdm(total=prepared.total, initial=prepared.skipped, unit="game", desc=spec.study_id,
                                dynamic_ncols=True)
        t0 = time.perf_counter()
        sizer = batch_sizer or BatchSizer.for_hosts(workers)
        policy = dispatch_policy(prepared.runs, prepared.plan, workers, spec.max_in_flight, prepared.monitor,
                                 more=(lambda: next_round_runs(spec, prepared)) if prepared.schedule else None)
        from cluster.run.play import abandoned_game_rows  # (after the plugins, like the hosts)

        host = GameHost.options(scheduling_strategy="SPREAD")
        pool = HostPool(lambda: host.remote(spec_ref, pop_ref, tuple(plugins)), size=workers,
                        max_in_flight=policy.max_in_flight, sizer=sizer, hang=HangRule.of(spec),
                        error_rows=lambda task, reason: abandoned_game_rows(spec, task, reason, worker="driver"))
        pool.run(policy.runs, stop_when=policy.stop_when, admit=policy.admit, more=policy.more,
                 on_batch=session.watched(recorder.on_batch), on_idle=session.watched(recorder.flush),
                 wait_seconds=recorder.flush_seconds)
    finally:
        try:
            recorder.flush()  # what arrived before a failure or an interruption is kept
        finally:
            recorder.seconds = time.perf_counter() - t0
            if pool is not None:
                recorder.retries = pool.retries
                recorder.abandoned = pool.abandoned
                if not session.lost:  # killing actors asks the GCS: a lost one would keep us waiting
                    pool.shutdown()
            if recorder.bar is not None:
                recorder.bar.close()
            session.close()  # the embedded Ray and every process it started, on every way out


def finish(spec, prepared: Prepared, recorder: Recorder, tracker: StudyTracker | None,
           status: str = "FINISHED"):
    """Stage 4 (also after a failure or an interruption, with its ``status``): compact the
    store, write the report, export the best-streak populations and end the MLflow
    run. Each step only warns when it fails (the store is the truth). Returns the
    study's rows (None if they could not be read) and the sequential test's result."""
    try:
        prepared.store.compact()  # one file per game while running; one file per study at rest
    except Exception as exc:
        log.warning("compacting the results failed (they are intact): %s", exc)
    try:  # the rows once, for the report, the run's description and the result
        rows = prepared.store.read()
    except Exception as exc:  # the report is a convenience; the store is the truth
        log.warning("reading the results for the report failed: %s", exc)
        rows = None
    sequential = prepared.monitor.result() if prepared.monitor is not None else None
    schedule = prepared.schedule
    adaptive = schedule.result() if isinstance(schedule, AdaptiveSchedule) else None
    swiss = schedule.result() if isinstance(schedule, SwissSchedule) else None
    board = None
    try:
        board = tournament_leaderboard(spec, rows)
    except Exception as exc:  # the store is the truth; `arena report` recomputes it
        log.warning("leaderboard failed: %s: %s", type(exc).__name__, exc)
    if rows is not None:
        try:
            write_report(spec, rows, sequential, board, adaptive, swiss)
        except Exception as exc:
            log.warning("report failed: %s", exc)
    try:
        export_best_streak_populations(spec)
    except Exception as exc:
        log.warning("population export failed: %s", exc)
    if tracker is not None:
        sdir = Path(spec.study_dir)
        counts = {"played": recorder.played, "skipped": prepared.skipped, "retried": recorder.retries,
                  "errored": recorder.errors, "replayed": recorder.replayed}
        if recorder.abandoned:
            counts["abandoned"] = recorder.abandoned
        table_markdown = _tables_markdown(rows)
        if sequential is not None:
            tracker.log_sequential(sequential)
            table_markdown = sequential_markdown(sequential) + "\n" + (table_markdown or "")
        if adaptive is not None:
            tracker.log_adaptive(adaptive)
            table_markdown = adaptive_markdown(adaptive) + "\n" + (table_markdown or "")
        if swiss is not None:
            tracker.log_swiss(swiss)
            table_markdown = swiss_markdown(swiss) + "\n" + (table_markdown or "")
        if board is not None:
            from cluster.analysis.leaderboard import leaderboard_markdown

            tracker.log_leaderboard(board, step=len(prepared.finished), final=True)
            table_markdown = leaderboard_markdown(board) + "\n" + (table_markdown or "")
        tracker.finish(status, counts=counts, table_markdown=table_markdown,
                       artifact_dirs={"results": sdir / "results", "learned": sdir / "learned",
                                      "report": sdir / "report", "replays": sdir / "replays",
                                      "populations": sdir / "populations"},
                       artifact_files=[sdir / "spec.json"])
    recorder.leaderboard = board
    recorder.adaptive = adaptive
    recorder.swiss = swiss
    return rows, sequential


def study_result(spec, prepared: Prepared, recorder: Recorder, tracker: StudyTracker | None,
                 rows=None, sequential=None, board=None) -> StudyResult:
    """The :class:`StudyResult` of this invocation (``rows``: the study's rows, read from
    the store when not given; a store that cannot be read raises its own error)."""
    if rows is None:
        rows = prepared.store.read()  # raises the store's own error, naming the file
    has_rows = len(rows) > 0
    return StudyResult(
        study_id=spec.study_id, study_dir=Path(spec.study_dir),
        table=result_table(rows) if has_rows else None,
        condition_tables="\n".join(by_condition_markdown(rows)).strip() if has_rows else "",
        mlflow_run_id=tracker.run_id if tracker is not None else None,
        games_total=prepared.total, games_done=len(prepared.store.finished_set()),
        games_played=recorder.played, games_skipped=prepared.skipped, games_replayed=recorder.replayed,
        error_games=recorder.errors, host_retries=recorder.retries, host_abandons=recorder.abandoned,
        workers=recorder.workers,
        seconds=recorder.seconds, game_seconds=recorder.game_seconds, warm_up=recorder.warm_up,
        game_times=recorder.game_times, recorded_at=recorder.recorded_at,
        batches=recorder.batches, flushes=recorder.flushes, commits=recorder.commits,
        mlflow_run_name=tracker.run_name if tracker is not None else None,
        mlflow_experiment_id=tracker.experiment_id if tracker is not None else None,
        sequential=sequential, leaderboard=board, adaptive=recorder.adaptive, swiss=recorder.swiss)


def run_study(spec, address: str | None = None, num_workers: int | None = None, progress: bool = True,
              tracking: bool = True, *, plugins: Sequence[str] = (), warm_up: bool = True,
              check_nodes: bool = True, flush_games: int | None = None, on_progress=None,
              context: RunContext | None = None, batch_sizer: BatchSizer | None = None) -> StudyResult:
    """Run (or resume) ``spec`` on Ray and return its :class:`StudyResult`: the stages
    of the module docstring, in order.

    address: Ray address to join (default: start a local Ray with
        ``num_workers`` or all CPUs, dashboard off). num_workers: game-hosting
        actors (default: the cluster's CPUs). progress: tqdm bar. tracking:
        mirror into MLflow (also needs ``spec.tracking.enabled``). plugins:
        modules imported on the driver and in every Ray worker before anything
        else (they register extra games or agents). warm_up: compile numba
        caches once per node first. check_nodes: import the spec's plugin
        modules on every node first (one SpecError naming the node); False
        when the caller already did (a sweep checks once, not per trial).
        on_progress: called on the driver with
        the rows (list of dicts, one per seat) of each game recorded by this
        invocation, after the rows are durable (replays and games already in
        the store are not passed; read the store for those). context: how the
        study was invoked (command, overrides, scale) for the MLflow run's
        name, tags and description. batch_sizer: how many games a host plays per
        call (default :class:`cluster.run.scheduler.BatchSizer`: about 0.2 s of games;
        seeds and results do not depend on it).

    The study directory's lock (:class:`cluster.run.lock.StudyLock`) is held throughout:
    while another driver runs the study this raises
    :class:`~cluster.run.lock.StudyBusyError` before reading or writing anything of it.
    """
    import_plugins(plugins)
    gcs_timeout()  # a bad ARENA_GCS_TIMEOUT is refused before anything runs
    with StudyLock(spec.study_dir):  # one driver per study: a second one refuses here
        prepared = plan_and_resume(spec)
        tracker = open_tracker(spec, prepared, flush_games, context) \
            if tracking and spec.tracking.enabled else None
        recorder = Recorder(spec, prepared.store, prepared.finished, tracker, on_progress=on_progress,
                            monitor=prepared.monitor, standings=live_standings(spec, prepared, tracker, progress),
                            schedule=prepared.schedule)
        status = "FINISHED"
        try:
            dispatch(spec, prepared, recorder, address=address, num_workers=num_workers, progress=progress,
                     plugins=plugins, warm_up=warm_up, check_nodes=check_nodes, batch_sizer=batch_sizer)
        except KeyboardInterrupt:  # Ctrl-C, and SIGTERM / SIGHUP under `arena` (cluster.run.faults)
            status = "KILLED"
            raise
        except BaseException:
            status = "FAILED"
            raise
        finally:
            with deferred_signals():  # a SIGTERM now waits for the store and the run to be closed
                rows, sequential = finish(spec, prepared, recorder, tracker, status)
        return study_result(spec, prepared, recorder, tracker, rows, sequential, recorder.leaderboard)


def live_standings(spec, prepared: Prepared, tracker, progress: bool) -> LiveStandings | None:
    """A tournament's live leaderboard (None for a lineup study), seeded with the stored games;
    shown above the progress bar when there is one, else logged."""
    if not spec.design.tournament or not prepared.runs:
        return None
    existing = prepared.store.read() if prepared.finished else None
    def write(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    write = tqdm.write if progress else write
    return LiveStandings(spec, existing=existing, tracker=tracker, write=write)


def _tables_markdown(rows) -> str | None:
    """The study's result table in Markdown, and its tables per condition if it
    has conditions (None without rows)."""
    if rows is None or not len(rows):
        return None
    try:
        return "\n".join([to_markdown(result_table(rows)).rstrip()] + by_condition_markdown(rows))
    except Exception as exc:  # the description is a convenience; the store is the truth
        log.warning("result table for MLflow failed: %s", exc)
        return None
