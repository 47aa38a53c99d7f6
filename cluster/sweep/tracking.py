"""MLflow mirror of a sweep: one parent run per sweep, one child run per trial, batched.

:class:`SweepTracker` is a Tune ``Callback`` in the driver process (see
:mod:`cluster.sweep.driver` for what it logs). It pickles without its client or run ids
(Tune stores callbacks with the experiment); a restored sweep finds its runs
again by tag.
"""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from cluster.spec.sweep import SweepSpec, plain
from cluster.sweep.results import GAMES_ATTR, METRIC, TIME_ATTR
from cluster.tracking.client import PARENT_TAG, ensure_experiment, filter_quote, log_batch, normalize_uri, probe_server

log = logging.getLogger(__name__)

__all__ = ["SweepTracker", "SWEEP_TAG", "TRIAL_TAG", "STATUS_TAG", "CHILD_METRICS"]

SWEEP_TAG = "arena.sweep"
TRIAL_TAG = "arena.trial_study_id"
#: Child-run tag: ``complete``, ``stopped_early`` (by ASHA) or ``error``.
STATUS_TAG = "arena.trial_status"


#: Trial result keys mirrored into MLflow child runs.
CHILD_METRICS = (METRIC, "objective_lo", "objective_hi", "games", "wins", "ties", "losses", "errors",
                 TIME_ATTR)


def _get_tune_callback_base():
    from ray.tune import Callback

    return Callback


class SweepTracker(_get_tune_callback_base()):
    """Tune callback in the driver: parent run per sweep, child run per trial, batched metrics.

    Pickles without its client or run ids (Tune stores callbacks with the
    experiment); a restored sweep finds its runs again by tag."""

    def __init__(self, sweep, flush_seconds: float = 10.0):
        self.sweep_dict = sweep.to_dict()
        self.uri = sweep.tracking.uri
        self.experiment = sweep.tracking.experiment
        self.flush_seconds = flush_seconds
        self._reset()

    def _reset(self):
        self.client = None
        self.experiment_id = None
        self.parent_id: str | None = None
        self.children: dict[str, str] = {}  # trial study id -> run id
        self._last_flush: dict[str, float] = {}
        self.enabled = True

    def __getstate__(self):
        return {"sweep_dict": self.sweep_dict, "uri": self.uri, "experiment": self.experiment,
                "flush_seconds": self.flush_seconds}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._reset()

    @property
    def sweep(self):
        return SweepSpec.from_dict(self.sweep_dict)

    # --- runs ---------------------------------------------------------------------
    def start(self) -> str | None:
        """Find or create the parent run (idempotent); log the sweep's settings once."""
        if self.parent_id is not None or not self.enabled:
            return self.parent_id
        try:
            from mlflow.tracking import MlflowClient

            probe_server(normalize_uri(self.uri))  # a server that is down: seconds, not the client's retries
            self.client = MlflowClient(tracking_uri=normalize_uri(self.uri))
            self.experiment_id = ensure_experiment(self.client, self.experiment, normalize_uri(self.uri))
            sweep = self.sweep
            found = self.client.search_runs(
                [self.experiment_id], filter_string=f"tags.`{SWEEP_TAG}` = '{filter_quote(sweep.name)}'",
                max_results=5000)
            parents = [r for r in found if PARENT_TAG not in r.data.tags]
            if parents:
                self.parent_id = parents[0].info.run_id
                self.client.update_run(self.parent_id, status="RUNNING")
                logged = set(parents[0].data.params)
            else:
                run = self.client.create_run(self.experiment_id, run_name=sweep.name,
                                             tags={SWEEP_TAG: sweep.name, "arena.kind": "sweep"})
                self.parent_id = run.info.run_id
                logged = set()
            for r in found:
                if r.data.tags.get(PARENT_TAG) == self.parent_id and TRIAL_TAG in r.data.tags:
                    self.children[r.data.tags[TRIAL_TAG]] = r.info.run_id
            params = {f"sweep.{k}": v for k, v in self.sweep_dict.items() if k not in ("base", "search")}
            for p in sweep.search:
                params[f"search.{p.alias}"] = f"{p.path} {p.kind} {list(p.values)}"
            params["sweep.search_seed"] = sweep.study_seed(0)
            params["sweep.reeval_seed"] = sweep.study_seed(1)
            log_batch(self.client, self.parent_id,
                       params={k: v for k, v in params.items() if k not in logged})
        except Exception as exc:  # tracking never stops a sweep; Tune's experiment has everything
            log.warning("MLflow unavailable at %s (%s); sweep runs without tracking", self.uri, exc)
            self.enabled = False
        return self.parent_id

    def child(self, params: Mapping[str, Any], tune_trial_id: str = "") -> str | None:
        """Find or create the child run of the setting ``params`` ({path: value})."""
        if self.start() is None:
            return None
        sweep = self.sweep
        params = {k: plain(v) for k, v in params.items()}
        study_id = sweep.trial_study_id(params)
        if study_id in self.children:
            return self.children[study_id]
        aliases = sweep.aliases()
        run = self.client.create_run(
            self.experiment_id, run_name=study_id,
            tags={PARENT_TAG: self.parent_id, SWEEP_TAG: sweep.name, TRIAL_TAG: study_id,
                  "arena.tune_trial_id": tune_trial_id})
        self.children[study_id] = run.info.run_id
        logged = {aliases[k]: v for k, v in params.items()}  # the paths: the parent's search.<alias>
        logged["trial.study_id"] = study_id
        logged["trial.study_seed"] = sweep.study_seed(0)
        logged["trial.games_per_trial"] = sweep.games_per_trial
        log_batch(self.client, run.info.run_id, params=logged)
        return run.info.run_id

    def trial_status(self, result: Mapping, error: bool = False) -> str:
        """``complete``, ``stopped_early`` (fewer boards than a trial has) or ``error``."""
        if error:
            return "error"
        boards = result.get(TIME_ATTR, 0)
        boards = 0 if boards is None or (isinstance(boards, float) and math.isnan(boards)) else boards
        return "complete" if boards >= self.sweep.boards_per_trial else "stopped_early"

    def log_trial(self, params: Mapping, result: Mapping, tune_trial_id: str = "",
                  status: str | None = None) -> None:
        """One log_batch of a trial's current metrics; when it ended, its run status and the
        tag ``arena.trial_status`` (``complete``, ``stopped_early`` by ASHA, or ``error``)."""
        if not self.enabled:
            return
        try:
            run_id = self.child(params, tune_trial_id)
            if run_id is None:
                return
            metrics = {k: result[k] for k in CHILD_METRICS if k in result}
            if metrics:
                step = result.get(GAMES_ATTR, 0)
                log_batch(self.client, run_id, metrics=metrics, step=0 if pd.isna(step) else int(step))
            if status is not None:
                trial_status = self.trial_status(result, error=status == "FAILED")
                self.client.set_tag(run_id, STATUS_TAG, trial_status)
                if trial_status == "stopped_early":
                    self.client.set_tag(run_id, "arena.stopped_at_boards", str(int(result.get(TIME_ATTR, 0))))
                self.client.set_terminated(run_id, status=status)
        except Exception as exc:
            log.warning("MLflow logging failed (%s); continuing without tracking", exc)
            self.enabled = False

    # --- Tune callback hooks (driver process) ---------------------------------------------
    def _params(self, trial) -> dict:
        return {p.path: trial.config[p.path] for p in self.sweep.search}

    def setup(self, **info):
        self.start()

    def on_trial_start(self, iteration, trials, trial, **info):
        if self.enabled:
            try:
                self.child(self._params(trial), trial.trial_id)
            except Exception as exc:
                log.warning("MLflow child run failed (%s)", exc)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        now = time.monotonic()
        if now - self._last_flush.get(trial.trial_id, 0.0) >= self.flush_seconds:
            self._last_flush[trial.trial_id] = now
            self.log_trial(self._params(trial), result, trial.trial_id)

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.log_trial(self._params(trial), trial.last_result or {}, trial.trial_id, status="FINISHED")

    def on_trial_error(self, iteration, trials, trial, **info):
        self.log_trial(self._params(trial), trial.last_result or {}, trial.trial_id, status="FAILED")

    # --- after the search ------------------------------------------------------------
    def ensure_children(self, trials: pd.DataFrame) -> None:
        """Post-hoc: every trial has a child run with its final metrics (trials that ended
        while no driver was watching, e.g. before a restart)."""
        if self.start() is None:
            return
        sweep = self.sweep
        try:
            found = {r.data.tags.get(TRIAL_TAG): r for r in self.client.search_runs(
                [self.experiment_id], filter_string=f"tags.`{PARENT_TAG}` = '{self.parent_id}'",
                max_results=5000)}
            for _, row in trials.iterrows():
                params = {p.path: plain(row[p.path]) for p in sweep.search}
                run = found.get(sweep.trial_study_id(params))
                expected = {"ERROR": "error", "STOPPED": "stopped_early"}.get(row["status"], "complete")
                done = run is not None and run.data.metrics.get("games") == row.get("games") \
                    and run.info.status != "RUNNING" and run.data.tags.get(STATUS_TAG) == expected
                if not done:
                    status = "FAILED" if row["status"] == "ERROR" else "FINISHED"
                    self.log_trial(params, row.to_dict(), str(row.get("trial_id", "")), status=status)
        except Exception as exc:
            log.warning("MLflow post-hoc logging failed: %s", exc)

    def finish(self, metrics: Mapping[str, float], artifacts: Sequence[Path], status: str = "FINISHED",
               tags: Mapping[str, str] | None = None) -> None:
        if self.start() is None:
            return
        try:
            log_batch(self.client, self.parent_id, metrics=metrics)
            for key, value in (tags or {}).items():
                self.client.set_tag(self.parent_id, key, value)
            for path in artifacts:
                if Path(path).is_file():
                    self.client.log_artifact(self.parent_id, str(path))
            self.client.set_terminated(self.parent_id, status=status)
        except Exception as exc:
            log.warning("MLflow artifact logging failed: %s", exc)


