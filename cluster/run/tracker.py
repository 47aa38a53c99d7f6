"""MLflow mirror of a study: one run per study directory, child runs per series of a runs x rounds design.

The results store is the source of truth; MLflow mirrors summaries for
browsing and comparing. Everything is logged from the driver, in batches
(``MlflowClient.log_batch``: at most 1000 metrics / 100 params per request),
every ``flush_seconds`` seconds or ``flush_games`` games (at most once a
``min_flush_seconds``), never one request per value or per game: a study of
thousands of games a second makes a few requests a second. Per-game rows go to MLflow only as artifacts (the Parquet dataset).

* **Identity.** A study's identity is its study directory. When the run is
  created its id is written to ``<study_dir>/mlflow_run.json`` (next to
  ``spec.json``), keyed by tracking store and experiment; a resume reuses
  exactly that run. A new study directory always gets a new run, even with
  the same study name: the run name is the study id plus the scale and the
  result-relevant ``--set`` overrides, and ``@<hash of the study directory>``
  when another run of the experiment already has that name.
* **Tags:** ``arena.study_id``, ``arena.study_dir``, ``arena.results_dir``
  (absolute), ``arena.scale``, ``arena.git_commit`` (also
  ``mlflow.source.git.commit``), ``arena.version``, ``arena.command``.
* **Experiment:** created with the tag ``mlflow.experimentKind =
  custom_model_development`` (MLflow 3's UI then shows the model-training
  view, not the GenAI one) and, on a ``sqlite:`` store, with its artifact
  location set explicitly beside the database file
  (``<db dir>/mlartifacts/<experiment>``, absolute); on a tracking server the
  server's artifact root is used.
* **Description** (``mlflow.note.content``): the result table in Markdown, the
  game counts of the last invocation and the command that produced it.
* **Params:** ``spec.flat_params()`` (values cut to MLflow's 6000 characters),
  every parameter once; beside them each seat's agent under its label
  (``FEMCTS.agent``) and the short names its agent declares
  (``Agent.param_aliases``: ``FEMCTS.mP``, ``mS``, ``E``, ``P``, ``L``; without
  the label prefix too when one seat declares them).
* **Metrics** (step = games done), sorted so that W/T/L come first (capital
  letters sort before the lower-case bookkeeping names): ``L/<label>``,
  ``T/<label>``, ``W/<label>`` (rates over the games that ended without
  error, as in the report table), ``W_hi/<label>`` and ``W_lo/<label>`` (95%
  Wilson interval of the win rate), ``error_rate/<label>``,
  ``death_rate/<label>`` (share of its games the seat died in, from the rows'
  ``died_at``), ``score/<label>`` (mean result, win 1, tie 0.5) and, in games with
  scores (rows with ``score_margin``), ``margin/<label>`` (mean score margin),
  ``metric.<name>/<label>`` (the mean of an agent's per-game figure, rows'
  ``metric.<name>``, over the label's games without error), ``overruns/<label>``,
  ``invalid_actions/<label>`` and ``forfeits/<label>`` (totals over all the label's
  rows, logged once nonzero: decisions over the time budget's tolerance, actions the
  game replaced, games lost on time), then
  ``games/done`` and, for the last invocation, ``games/played``,
  ``games/skipped`` (already in the store), ``games/retried`` (after a lost
  host) and ``games/errored``; a tournament adds its leaderboard
  (:meth:`StudyTracker.log_leaderboard`: ``rating/<label>``, ``rating_lo``,
  ``rating_hi``, ``rank``, ``rank_lo``, ``rank_hi``, ``leaderboard/boards``), refreshed
  while it runs (:mod:`cluster.run.standings`) and at the end, with the leaderboard and
  crosstable as MLflow tables (``tournament/``).
* **A server that is down or dies.** The results store has every game; tracking
  never stops a study. A server is probed (``GET /health``, ``PROBE_SECONDS``)
  before the run is opened: one that does not answer is reported in one line,
  with how long Arena waited, and the study runs untracked (run it again once
  the server is up: every game is skipped and the study is logged, to the same
  run if it had one). While a study runs, the tracker's requests use
  :data:`HTTP_LIMITS` (fewer retries and a shorter timeout than MLflow's client,
  which retries for about 4 minutes) unless the user set those variables; the
  first request that fails ends tracking for the invocation (one line, with the
  time it took); the run stays RUNNING until a later invocation completes it. A ``sqlite:``
  store that cannot be opened (a corrupt, locked or unwritable database) is the same: one
  line naming the file, the study untracked (:func:`cluster.run.driver.open_tracker`).
* Artifacts at the end (also after an interruption): ``results/`` (Parquet),
  ``report/`` (table CSV + Markdown, win-rate plot), ``learned/`` (.npz),
  ``populations/``, ``spec.json``.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import re
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from agents.registry import agent_class
from cluster.analysis.summary import LabelSummary
from cluster.results.store import GameSet
from cluster.tracking.client import (MAX_RUN_NAME, NOTE_TAG, PARENT_TAG, RESULT_KEYS, RESULTS, RUN_FILE, SERIES_TAG,
                                     STUDY_TAG, arena_version, bounded_http, ensure_experiment, filter_quote,
                                     find_run_record, git_commit, key_safe, log_batch, metric_key, normalize_uri,
                                     probe_server, update_runs_view, write_run_record)

log = logging.getLogger(__name__)

#: ``--set`` keys that name a run (the others, e.g. study.results_dir or tracking.*, do not
#: change what is played; the study directory tells those runs apart).
NAMING_PREFIXES = ("study.seed", "game.", "budget.", "design.", "lineup.")


def _bounded(method):
    """A :class:`StudyTracker` method run under :func:`bounded_http` of its store."""
    @functools.wraps(method)
    def bounded(self, *args, **kwargs):
        with bounded_http(self.uri):
            return method(self, *args, **kwargs)
    return bounded


@dataclass(frozen=True)
class RunContext:
    """How a study was invoked (for the run's name, tags and description)."""

    command: str = ""
    """The command line that produced the run, e.g. ``arena run jobs/x.toml --scale 0.25``."""
    overrides: tuple[str, ...] = ()
    """The ``--set key=value`` overrides."""
    scale: float | None = None
    """``--scale`` (None: not scaled)."""
    unsets: tuple[str, ...] = ()
    """The ``--unset key`` removals."""


def run_name(spec, context: RunContext | None) -> str:
    """``<study id>`` plus the scale and the overrides that change what is played."""
    parts = [spec.study_id]
    if context is not None:
        if context.scale is not None and context.scale != 1:
            parts.append(f"scale={context.scale:g}")
        for item in context.overrides:
            key = item.partition("=")[0].strip()
            if key.startswith(NAMING_PREFIXES):
                parts.append(item.strip().replace(" ", ""))
        parts.extend(f"-{key.strip()}" for key in context.unsets if key.strip().startswith(NAMING_PREFIXES))
    return " ".join(parts)[:MAX_RUN_NAME]


def _dir_hash(study_dir) -> str:
    return hashlib.sha1(str(Path(study_dir).resolve()).encode()).hexdigest()[:6]


def agent_params(spec) -> dict[str, str]:
    """Each seat's agent under its label (``FEMCTS.agent``) and the short names its agent
    class declares (``Agent.param_aliases``, e.g. FEMCTS's ``FEMCTS.mP``; also bare ``mP``
    when one seat of the lineup declares it). The full parameters are logged once, in
    :meth:`cluster.spec.study.StudySpec.flat_params` (``lineup.<i>.params.<name>``)."""
    out: dict[str, str] = {}
    aliased = [(seat, agent_class(seat.agent).param_aliases) for seat in spec.lineup]
    counts: dict[str, int] = defaultdict(int)
    for _, aliases in aliased:
        for alias in aliases.values():
            counts[alias] += 1
    for seat, aliases in aliased:
        label = key_safe(seat.label)
        out[f"{label}.agent"] = seat.agent
        config = asdict(seat.config) if seat.config is not None else dict(seat.params)
        for key, alias in aliases.items():
            if key in config:
                value = "" if config[key] is None else str(config[key])
                out[f"{label}.{alias}"] = value
                if counts[alias] == 1:
                    out[alias] = value
    return out


class Tally:
    """Per-label summaries of the rows recorded so far (:class:`~cluster.analysis.summary.LabelSummary`:
    which games count, deaths, ties and the score are decided there), as MLflow metrics."""
    def __init__(self):
        self.labels: dict[str, LabelSummary] = defaultdict(LabelSummary)
        self.games = GameSet()
        """The games counted (a bitmap: a byte per game, not a Python set of a million ints)."""

    def add(self, rows: Iterable[dict]) -> None:
        for row in rows:
            self.labels[row["label"]].add(row)
            self.games.add(int(row["game_index"]))

    def metrics(self) -> dict[str, float]:
        """W/T/L rates over the games that ended without error (as in the report table),
        the win rate's 95% Wilson bounds, ``error_rate`` over all of the label's games,
        ``death_rate``, ``score``, ``margin`` (games with scores), the agents' figures
        and ``games/done``; 0 where a label has no game yet (MLflow charts no NaN); the
        conduct totals (``overruns``, ``invalid_actions``, ``forfeits``) once nonzero."""
        out = {"games/done": float(len(self.games))}
        for label, summary in self.labels.items():
            played = summary.games > 0
            for result in RESULTS:
                out[metric_key(RESULT_KEYS[result], label)] = summary.rate(result) if played else 0.0
            lo, hi = summary.interval("win") if played else (0.0, 0.0)
            out[metric_key("W_lo", label)] = lo
            out[metric_key("W_hi", label)] = hi
            out[metric_key("error_rate", label)] = summary.error_rate if summary.errors else 0.0
            out[metric_key("death_rate", label)] = summary.death_rate if played else 0.0
            out[metric_key("score", label)] = summary.score if played else 0.0
            if summary.margin.n:
                out[metric_key("margin", label)] = summary.margin.mean
            for key, figure in summary.figures.items():
                out[metric_key(key, label)] = figure.mean
            for key in ("overruns", "invalid_actions", "forfeits"):  # once it happened: totals so far
                if getattr(summary, key):
                    out[metric_key(key, label)] = float(getattr(summary, key))
        return dict(sorted(out.items()))

    def wtl(self, label: str) -> str:
        return self.labels[label].wtl() if label in self.labels else "0/0/0"


class StudyTracker:
    """Mirrors one study into MLflow (see the module docstring)."""

    def __init__(self, spec, flush_games: int | None = None, flush_seconds: float = 15.0,
                 child_runs: bool | None = None, context: RunContext | None = None,
                 min_flush_seconds: float = 1.0):
        from mlflow.tracking import MlflowClient

        self.spec = spec
        self.context = context or RunContext()
        self.uri = normalize_uri(spec.tracking.uri)
        self.client = MlflowClient(tracking_uri=self.uri)
        total = max(1, int(spec.design.total_games))
        self.flush_games = flush_games or max(10, min(200, total // 50))
        self.flush_seconds = flush_seconds
        self.min_flush_seconds = min_flush_seconds
        """At most one flush per this many seconds on the games trigger (the rate bound)."""
        self.child_runs = spec.design.runs_design if child_runs is None else child_runs
        self.run_id: str | None = None
        self.run_name: str | None = None
        self.experiment_id: str | None = None
        self.tally = Tally()
        self.series_tally: dict[int, Tally] = defaultdict(Tally)
        self.series_runs: dict[int, str] = {}
        self._dirty_series: set[int] = set()
        self._unflushed = 0
        self._last_flush = time.monotonic()
        self.enabled = True

    # --- life cycle -------------------------------------------------------------
    def _existing_run(self):
        """The run named in the study directory, if it still exists in this store."""
        record = find_run_record(self.spec.study_dir, self.uri, self.spec.tracking.experiment)
        if record is None:
            return None
        try:
            run = self.client.get_run(record["run_id"])
        except Exception:  # deleted from the store (or a new database): start a new run
            log.warning("MLflow run %s named in %s is gone from %s; starting a new run",
                        record["run_id"], Path(self.spec.study_dir) / RUN_FILE, self.uri)
            return None
        if run.info.lifecycle_stage == "deleted" or run.info.experiment_id != self.experiment_id:
            return None
        return run

    def _new_run_name(self) -> str:
        name = run_name(self.spec, self.context)
        taken = self.client.search_runs([self.experiment_id],
                                        filter_string=f"attributes.run_name = '{filter_quote(name)}'",
                                        max_results=1)
        if taken:
            name = f"{name[:MAX_RUN_NAME - 8]} @{_dir_hash(self.spec.study_dir)}"
        return name

    def _tags(self) -> dict[str, str]:
        study_dir = Path(self.spec.study_dir).resolve()
        commit = git_commit()
        tags = {
            STUDY_TAG: self.spec.study_id,
            "arena.game": self.spec.game,
            "arena.study_dir": str(study_dir),
            "arena.results_dir": str(study_dir.parent),
            "arena.scale": f"{self.context.scale:g}" if self.context.scale is not None else "1",
            "arena.git_commit": commit,
            "arena.version": arena_version(),
            "mlflow.source.type": "LOCAL",
            "mlflow.source.name": self.spec.source or "arena",
        }
        if commit != "unknown":
            tags["mlflow.source.git.commit"] = commit
        if self.context.command:
            tags["arena.command"] = self.context.command[:5000]
        return tags

    @_bounded
    def start(self, existing_rows=None) -> str:
        """Reuse the study directory's run or create one; log tags and params; seed the tallies.
        Raises :class:`TrackingUnavailable` at once when a tracking server does not answer."""
        probe_server(self.uri)
        self.experiment_id = ensure_experiment(self.client, self.spec.tracking.experiment, self.uri)
        run = self._existing_run()
        tags = self._tags()
        if run is not None:
            self.run_id = run.info.run_id
            self.run_name = run.info.run_name
            self.client.update_run(self.run_id, status="RUNNING")
            logged = set(run.data.params)
        else:
            self.run_name = self._new_run_name()
            run = self.client.create_run(self.experiment_id, run_name=self.run_name, tags=tags)
            self.run_id = run.info.run_id
            write_run_record(self.spec.study_dir, {
                "tracking_uri": self.uri, "experiment": self.spec.tracking.experiment,
                "experiment_id": self.experiment_id, "run_id": self.run_id, "run_name": self.run_name})
            logged = set()
        log_batch(self.client, self.run_id, tags=tags)
        update_runs_view(self.client, self.experiment_id, self.spec.labels, ratings=self.spec.design.tournament)
        for child in self.client.search_runs([self.experiment_id],
                                             filter_string=f"tags.`{PARENT_TAG}` = '{self.run_id}'",
                                             max_results=5000):
            if SERIES_TAG in child.data.tags:
                self.series_runs[int(child.data.tags[SERIES_TAG])] = child.info.run_id
        params = dict(self.spec.flat_params())
        params.update(agent_params(self.spec))
        log_batch(self.client, self.run_id, params={k: v for k, v in params.items() if k not in logged})
        if existing_rows is not None and len(existing_rows):
            rows = existing_rows.to_dict("records")
            self.tally.add(rows)
            if self.child_runs:
                for row in rows:
                    self.series_tally[int(row["series_id"])].add([row])
        self.describe(None, note=f"Running: {len(self.tally.games)} of {self.spec.design.total_games} "
                                 f"games done.")
        return self.run_id

    def add(self, rows: list[dict]) -> None:
        """Count the rows of one finished game; flush when a batch is due."""
        self.add_games([rows])

    def add_games(self, games: list[list[dict]]) -> None:
        """Count the rows of finished games (one list per game); flush when due: every
        ``flush_seconds``, or after ``flush_games`` games but at most once per
        ``min_flush_seconds`` (a few ``log_batch`` requests each time, however many games
        a second the study records)."""
        for rows in games:
            self.tally.add(rows)
            if self.child_runs and rows:
                sid = int(rows[0]["series_id"])
                self.series_tally[sid].add(rows)
                self._dirty_series.add(sid)
        self._unflushed += len(games)
        since = time.monotonic() - self._last_flush
        if since >= self.flush_seconds or (self._unflushed >= self.flush_games and since >= self.min_flush_seconds):
            self.flush()

    @_bounded
    def flush(self, extra: dict[str, float] | None = None) -> None:
        """Log the current summaries (a few log_batch requests)."""
        if not self.enabled or self.run_id is None:
            return
        t0 = time.monotonic()
        try:
            now = int(time.time() * 1000)
            step = len(self.tally.games)
            metrics = self.tally.metrics()
            metrics.update(extra or {})
            log_batch(self.client, self.run_id, metrics=metrics, step=step, timestamp=now)
            for sid in sorted(self._dirty_series):
                run_id = self._series_run(sid)
                t = self.series_tally[sid]
                log_batch(self.client, run_id, metrics=t.metrics(), step=len(t.games), timestamp=now)
            self._dirty_series.clear()
        except Exception as exc:  # tracking must never stop a study; the store has everything
            self._give_up("logging", exc, t0)
        self._unflushed = 0
        self._last_flush = time.monotonic()

    @_bounded
    def log_sequential(self, result) -> None:
        """A sequential test's outcome (:class:`cluster.analysis.sequential.SequentialResult`):
        the LLR curve as ``sprt/llr`` (step = units scored), ``sprt/elo``,
        ``sprt/elo_lo``, ``sprt/elo_hi``, ``sprt/games_used``, ``sprt/units_used``, and
        the tags ``arena.sprt_decision`` and ``arena.sprt_between``."""
        if not self.enabled or self.run_id is None:
            return
        t0 = time.monotonic()
        try:
            log_batch(self.client, self.run_id, curve=[("sprt/llr", v, i + 1) for i, v in enumerate(result.llr)])
            log_batch(self.client, self.run_id, step=len(result.llr),
                      metrics={f"sprt/{key}": getattr(result, key) for key in
                               ("elo", "elo_lo", "elo_hi", "games_used", "units_used", "lower", "upper")},
                      tags={"arena.sprt_decision": result.decision,
                            "arena.sprt_between": " vs ".join(result.between)})
        except Exception as exc:  # tracking must never fail a study
            self._give_up("logging of the sequential test", exc, t0)

    def log_adaptive(self, result) -> None:
        """An adaptive tournament's outcome (:class:`cluster.analysis.adaptive.AdaptiveResult`):
        ``adaptive/games_used``, ``adaptive/rounds``, ``adaptive/open_pairs``, the open pairs
        after every look (``adaptive/open_pairs_at_look``, step = games used), the tag
        ``arena.adaptive_decision`` and the adjacent pairs as a table (``adaptive/pairs.json``,
        replaced on a resume)."""
        if not self.enabled or self.run_id is None:
            return
        t0 = time.monotonic()
        try:
            open_pairs = sum(1 for p in result.pair_rows() if p["state"] == "open")
            log_batch(self.client, self.run_id, curve=[("adaptive/open_pairs_at_look", float(n), int(games))
                                                       for _, games, n in result.looks])
            log_batch(self.client, self.run_id, metrics={"adaptive/games_used": float(result.games_used),
                                                         "adaptive/rounds": float(result.rounds),
                                                         "adaptive/open_pairs": float(open_pairs)},
                      tags={"arena.adaptive_decision": result.decision})
            if result.pair_rows():
                import pandas as pd

                self._clear_artifacts("adaptive")
                self.client.log_table(self.run_id, pd.DataFrame(result.pair_rows()), "adaptive/pairs.json")
        except Exception as exc:  # tracking must never fail a study
            self._give_up("logging of the adaptive schedule", exc, t0)

    def log_swiss(self, result) -> None:
        """A Swiss tournament's standings (:class:`cluster.analysis.swiss.SwissResult`): one
        metric per entrant, ``swiss_points/<label>`` and ``swiss_buchholz/<label>``, and
        ``swiss/rounds`` (rounds read), ``swiss/rematches``; the standings as a table
        (``swiss/standings.json``, replaced on a resume)."""
        if not self.enabled or self.run_id is None:
            return
        t0 = time.monotonic()
        try:
            metrics = {"swiss/rounds": float(result.rounds_read), "swiss/rematches": float(result.rematches)}
            for row in result.standings:
                metrics[metric_key("swiss_points", row["entrant"])] = float(row["points"])
                metrics[metric_key("swiss_buchholz", row["entrant"])] = float(row["buchholz"])
            log_batch(self.client, self.run_id, metrics=metrics)
            if result.standings:
                import pandas as pd

                self._clear_artifacts("swiss")
                self.client.log_table(self.run_id, pd.DataFrame(result.standings).astype({"bye": str}),
                                      "swiss/standings.json")
        except Exception as exc:  # tracking must never fail a study
            self._give_up("logging of the Swiss standings", exc, t0)

    @_bounded
    def log_leaderboard(self, board, step: int, final: bool = False) -> None:
        """A tournament's leaderboard (:class:`cluster.analysis.leaderboard.Leaderboard`): one
        metric per entrant and figure (``rating/<label>``, ``rating_lo``, ``rating_hi``,
        ``rank``, ``rank_lo``, ``rank_hi``; step = games done), so that two tournaments chart
        side by side; when ``final``, the leaderboard and the crosstable as MLflow tables too
        (``tournament/leaderboard.json``, ``tournament/crosstable.json``, replaced on a resume)."""
        if not self.enabled or self.run_id is None:
            return
        from cluster.analysis.leaderboard import leaderboard_metrics

        t0 = time.monotonic()
        try:
            log_batch(self.client, self.run_id, metrics=leaderboard_metrics(board), step=step)
            if final:
                self._clear_artifacts("tournament")
                self.client.log_table(self.run_id, board.table.reset_index(), "tournament/leaderboard.json")
                self.client.log_table(self.run_id, board.crosstable, "tournament/crosstable.json")
        except Exception as exc:  # tracking must never fail a study
            self._give_up("logging of the leaderboard", exc, t0)

    @_bounded
    def describe(self, table_markdown: str | None, note: str = "") -> None:
        """Set the run's description: the result table, a note and the command."""
        if not self.enabled or self.run_id is None:
            return
        spec = self.spec
        lines = [f"**{spec.study_id}**: {len(self.tally.games)} of {spec.design.total_games} games, "
                 f"game `{spec.game}`, budget {_budget_text(spec.budget)}.", ""]
        if table_markdown:
            lines += [table_markdown, ""]
        if note:
            lines += [note, ""]
        if self.context.command:
            fence = _fence(self.context.command)
            lines += ["Command:", "", fence, self.context.command, fence, ""]
        lines += [f"Study directory: {_code_span(str(Path(spec.study_dir).resolve()))}"]
        t0 = time.monotonic()
        try:
            self.client.set_tag(self.run_id, NOTE_TAG, "\n".join(lines)[:60000])
        except Exception as exc:
            self._give_up("description", exc, t0)

    @_bounded
    def finish(self, status: str = "FINISHED", artifact_dirs: dict[str, Path] | None = None,
               artifact_files: Iterable[Path] = (), counts: dict[str, int] | None = None,
               table_markdown: str | None = None) -> None:
        """Final flush (with the invocation's ``counts``: played, skipped, retried,
        errored), description, artifacts, and the run's status (FINISHED / KILLED / FAILED)."""
        if self.run_id is None:
            return
        self.flush({f"games/{k}": float(v) for k, v in (counts or {}).items()})
        if not self.enabled:
            return
        note = ""
        if counts:
            note = ("Last invocation: " + counts_text(counts) + "."
                    + ("" if status == "FINISHED" else f" Status: {status}."))
        self.describe(table_markdown, note=note)
        if not self.enabled:
            return
        t0 = time.monotonic()
        try:
            for name, path in (artifact_dirs or {}).items():
                if Path(path).is_dir() and any(Path(path).iterdir()):
                    self._clear_artifacts(name)
                    self.client.log_artifacts(self.run_id, str(path), artifact_path=name)
            for path in artifact_files:
                if Path(path).is_file():
                    self.client.log_artifact(self.run_id, str(path))
            for sid, run_id in self.series_runs.items():
                self.client.set_terminated(run_id, status=status)
            self.client.set_terminated(self.run_id, status=status)
        except Exception as exc:
            self._give_up("artifact logging", exc, t0)

    # --- helpers ---------------------------------------------------------------
    def _give_up(self, what: str, exc: Exception, t0: float) -> None:
        """Tracking off for the rest of this invocation after a failed request (one line:
        the error and how long the request took, retries included)."""
        log.warning("MLflow %s failed after %.1f s (%s); continuing without tracking (the results "
                    "store has every game; run the study again to complete its MLflow run)",
                    what, time.monotonic() - t0, _first_line(exc))
        self.enabled = False

    def _clear_artifacts(self, name: str) -> None:
        """Remove the run's artifact directory ``name`` before it is logged again (a resumed
        study: the store's part files were merged under new names; without this the run's
        ``results/`` would hold the same games twice)."""
        if not self.client.list_artifacts(self.run_id, name):
            return
        from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

        try:
            get_artifact_repository(self.client.get_run(self.run_id).info.artifact_uri).delete_artifacts(name)
        except Exception as exc:  # e.g. a store without deletes: say so, keep going
            log.warning("could not replace the run's %s/ artifacts (%s); older files stay beside "
                        "the new ones (readers deduplicate by game_index, seat)", name, exc)

    def _series_run(self, series_id: int) -> str:
        if series_id not in self.series_runs:
            run = self.client.create_run(
                self.experiment_id, run_name=f"{self.run_name or self.spec.study_id}/series-{series_id}",
                tags={STUDY_TAG: self.spec.study_id, SERIES_TAG: str(series_id), PARENT_TAG: self.run_id})
            self.series_runs[series_id] = run.info.run_id
        return self.series_runs[series_id]


def _first_line(exc: BaseException) -> str:
    """The reason of a failed request in a few words (MLflow's own message for a refused
    connection is a paragraph of urllib3's)."""
    text = str(exc).strip() or type(exc).__name__
    if "Connection refused" in text or "Failed to establish a new connection" in text:
        return "the server refused the connection"
    if "timed out" in text.lower():
        return "the server did not answer in time"
    return text.splitlines()[0][:300]


def counts_text(counts: dict[str, int]) -> str:
    """``32 played, 0 skipped (already in the store), 0 retried on another host, 0 errored``."""
    text = (f"{counts.get('played', 0)} played, {counts.get('skipped', 0)} skipped (already in the store), "
            f"{counts.get('retried', 0)} retried on another host, {counts.get('errored', 0)} errored")
    if counts.get("replayed"):
        text += f", {counts['replayed']} replayed to rebuild learned state"
    if counts.get("abandoned"):
        text += f", {counts['abandoned']} host call{'s' * (counts['abandoned'] != 1)} abandoned as hung"
    return text


def _fence(text: str, shortest: int = 3) -> str:
    """A run of backticks longer than any in ``text`` (at least ``shortest``), so that a
    command or a path with backticks stays inside its Markdown code span or block."""
    return "`" * max(shortest, max(map(len, re.findall("`+", text)), default=0) + 1)


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds."""
    fence = _fence(text, 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _budget_text(budget) -> str:
    return f"{budget.iterations} iterations" if budget.iterations is not None else f"{budget.ms:g} ms"


