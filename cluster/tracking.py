"""MLflow mirror of a study: one run per study, child runs per series of a runs x rounds design.

The results store is the source of truth; MLflow mirrors summaries for
browsing. Everything is logged from the driver, in batches
(``MlflowClient.log_batch``: at most 1000 metrics / 100 params per request),
every ``flush_games`` games or ``flush_seconds`` seconds, never one request
per value. Per-game rows go to MLflow only as artifacts (the Parquet dataset).

* Run name = study id; the run carries the tag ``arena.study_id`` and a
  re-run of the same study (resume) finds and reuses it.
* Params: ``spec.flat_params()`` (values cut to MLflow's 6000 characters).
* Metrics, per label: ``win_rate/<label>``, ``win_rate_lo/<label>``,
  ``win_rate_hi/<label>`` (95% Wilson interval), same for ``tie_rate`` and
  ``loss_rate``, ``error_rate/<label>``, ``death_rate/<label>`` (share of its
  games the seat died in, from the rows' ``died_at``), and ``games_done``; step = games done.
* Artifacts at the end (also after an interruption): ``results/`` (Parquet),
  ``report/`` (table CSV + Markdown, win-rate plot), ``learned/`` (.npz),
  ``spec.json``.
"""
from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from .report import wilson_interval

log = logging.getLogger(__name__)

STUDY_TAG = "arena.study_id"
SERIES_TAG = "arena.series_id"
PARENT_TAG = "mlflow.parentRunId"
MAX_PARAM_CHARS = 6000
MAX_PARAMS_PER_BATCH = 100
MAX_METRICS_PER_BATCH = 1000
RESULTS = ("win", "tie", "loss")


_KEY_OK = re.compile(r"[^0-9A-Za-z_\-. /]")


def metric_key(name: str, label: str) -> str:
    """An MLflow-safe key ``name/label`` (MLflow allows alphanumerics, _ - . space /)."""
    return f"{name}/{_KEY_OK.sub('_', label)}"


class Tally:
    """Per-label result counts (one entry per seat row)."""

    def __init__(self):
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.deaths: dict[str, int] = defaultdict(int)
        self.games: set[int] = set()

    def add(self, rows: Iterable[dict]) -> None:
        for row in rows:
            self.counts[row["label"]][row["result"]] += 1
            died_at = row.get("died_at")
            if row["result"] != "error" and died_at is not None and died_at == died_at:
                self.deaths[row["label"]] += 1
            self.games.add(int(row["game_index"]))

    def metrics(self) -> dict[str, float]:
        """W/T/L rates with Wilson bounds over the games that ended without error
        (as in the report table); ``error_rate`` over all of the label's games."""
        out = {"games_done": float(len(self.games))}
        for label, counts in self.counts.items():
            n = sum(counts.get(result, 0) for result in RESULTS)
            total = n + counts.get("error", 0)
            for result in RESULTS:
                k = counts.get(result, 0)
                lo, hi = wilson_interval(k, n) if n else (0.0, 0.0)
                out[metric_key(f"{result}_rate", label)] = k / n if n else 0.0
                out[metric_key(f"{result}_rate_lo", label)] = lo
                out[metric_key(f"{result}_rate_hi", label)] = hi
            out[metric_key("error_rate", label)] = counts.get("error", 0) / total if total else 0.0
            out[metric_key("death_rate", label)] = self.deaths.get(label, 0) / n if n else 0.0
            out[metric_key("games", label)] = float(n)
        return out

    def wtl(self, label: str) -> str:
        c = self.counts.get(label, {})
        return f"{c.get('win', 0)}/{c.get('tie', 0)}/{c.get('loss', 0)}"


class StudyTracker:
    """Mirrors one study into MLflow (see the module docstring)."""

    def __init__(self, spec, flush_games: int | None = None, flush_seconds: float = 15.0,
                 child_runs: bool | None = None):
        from mlflow.tracking import MlflowClient

        self.spec = spec
        self.uri = spec.tracking.uri
        self.client = MlflowClient(tracking_uri=self.uri)
        total = max(1, int(spec.design.total_games))
        self.flush_games = flush_games or max(10, min(200, total // 50))
        self.flush_seconds = flush_seconds
        self.child_runs = (spec.design.runs is not None) if child_runs is None else child_runs
        self.run_id: str | None = None
        self.experiment_id: str | None = None
        self.tally = Tally()
        self.series_tally: dict[int, Tally] = defaultdict(Tally)
        self.series_runs: dict[int, str] = {}
        self._dirty_series: set[int] = set()
        self._unflushed = 0
        self._last_flush = time.monotonic()
        self.enabled = True

    # --- life cycle -------------------------------------------------------------
    def start(self, existing_rows=None) -> str:
        """Find (resume) or create the study's run, log params, seed the tallies."""
        exp = self.client.get_experiment_by_name(self.spec.tracking.experiment)
        self.experiment_id = exp.experiment_id if exp else self.client.create_experiment(
            self.spec.tracking.experiment)
        study_id = self.spec.study_id
        found = self.client.search_runs(
            [self.experiment_id], filter_string=f"tags.`{STUDY_TAG}` = '{_quote(study_id)}'",
            max_results=50)
        parents = [r for r in found if PARENT_TAG not in r.data.tags]
        if parents:
            run = parents[0]
            self.run_id = run.info.run_id
            self.client.update_run(self.run_id, status="RUNNING")
            logged = set(run.data.params)
        else:
            run = self.client.create_run(self.experiment_id, run_name=study_id,
                                         tags={STUDY_TAG: study_id, "arena.game": self.spec.game})
            self.run_id = run.info.run_id
            logged = set()
        for child in found:
            if child.data.tags.get(PARENT_TAG) == self.run_id and SERIES_TAG in child.data.tags:
                self.series_runs[int(child.data.tags[SERIES_TAG])] = child.info.run_id
        self._log_params(self.run_id, self.spec.flat_params(), skip=logged)
        if existing_rows is not None and len(existing_rows):
            rows = existing_rows.to_dict("records")
            self.tally.add(rows)
            if self.child_runs:
                for row in rows:
                    self.series_tally[int(row["series_id"])].add([row])
        return self.run_id

    def add(self, rows: list[dict]) -> None:
        """Count the rows of one finished game; flush when a batch is due."""
        self.tally.add(rows)
        if self.child_runs and rows:
            sid = int(rows[0]["series_id"])
            self.series_tally[sid].add(rows)
            self._dirty_series.add(sid)
        self._unflushed += 1
        if self._unflushed >= self.flush_games or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Log the current summaries (a few log_batch requests)."""
        if not self.enabled or self.run_id is None:
            return
        try:
            now = int(time.time() * 1000)
            step = len(self.tally.games)
            self._log_metrics(self.run_id, self.tally.metrics(), now, step)
            for sid in sorted(self._dirty_series):
                run_id = self._series_run(sid)
                t = self.series_tally[sid]
                self._log_metrics(run_id, t.metrics(), now, len(t.games))
            self._dirty_series.clear()
        except Exception as exc:  # tracking must never stop a study; the store has everything
            log.warning("MLflow logging failed (%s); continuing without tracking", exc)
            self.enabled = False
        self._unflushed = 0
        self._last_flush = time.monotonic()

    def finish(self, status: str = "FINISHED", artifact_dirs: dict[str, Path] | None = None,
               artifact_files: Iterable[Path] = ()) -> None:
        """Final flush, artifacts, and the run's status (FINISHED / KILLED / FAILED)."""
        if self.run_id is None:
            return
        self.flush()
        if not self.enabled:
            return
        try:
            for name, path in (artifact_dirs or {}).items():
                if Path(path).is_dir() and any(Path(path).iterdir()):
                    self.client.log_artifacts(self.run_id, str(path), artifact_path=name)
            for path in artifact_files:
                if Path(path).is_file():
                    self.client.log_artifact(self.run_id, str(path))
            for sid, run_id in self.series_runs.items():
                self.client.set_terminated(run_id, status=status)
            self.client.set_terminated(self.run_id, status=status)
        except Exception as exc:
            log.warning("MLflow artifact logging failed: %s", exc)

    # --- helpers ---------------------------------------------------------------
    def _series_run(self, series_id: int) -> str:
        if series_id not in self.series_runs:
            run = self.client.create_run(
                self.experiment_id, run_name=f"{self.spec.study_id}/series-{series_id}",
                tags={STUDY_TAG: self.spec.study_id, SERIES_TAG: str(series_id), PARENT_TAG: self.run_id})
            self.series_runs[series_id] = run.info.run_id
        return self.series_runs[series_id]

    def _log_params(self, run_id: str, params: dict, skip: set) -> None:
        from mlflow.entities import Param

        items = [Param(str(k), str(v)[:MAX_PARAM_CHARS]) for k, v in sorted(params.items()) if k not in skip]
        for i in range(0, len(items), MAX_PARAMS_PER_BATCH):
            self.client.log_batch(run_id, params=items[i:i + MAX_PARAMS_PER_BATCH])

    def _log_metrics(self, run_id: str, values: dict[str, float], timestamp: int, step: int) -> None:
        from mlflow.entities import Metric

        items = [Metric(k, float(v), timestamp, step) for k, v in values.items()]
        for i in range(0, len(items), MAX_METRICS_PER_BATCH):
            self.client.log_batch(run_id, metrics=items[i:i + MAX_METRICS_PER_BATCH])


def _quote(text: str) -> str:
    return text.replace("'", "\\'")
