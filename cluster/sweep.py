"""Hyperparameter sweeps on Ray Tune: trials are studies, mirrored to MLflow, re-evaluated honestly.

    >>> result = run_sweep(sweep)   # a SweepSpec, as jobs.spec.load_sweep makes it  # doctest: +SKIP
    >>> print(result.markdown)

Shape:

* **Trials.** Ray Tune drives the search (grid / random via Tune's basic
  variant generator, or Optuna through ``OptunaSearch``). A trial is a
  function trainable that builds its study spec (:meth:`SweepSpec.trial_spec`:
  deterministic study id, the search stream's study seed, so every trial
  plays the same boards) and runs it with :func:`cluster.study.run_study`
  (inner MLflow tracking off, no warm-up: the driver warmed the nodes once).
  The trial reserves no CPU (``{"cpu": 0, "memory": 1 MiB}``: Tune refuses an
  empty bundle); its game hosts take the CPUs. Each time a board completes
  (a board seed with all its games, or a run with all its rounds) the trial
  reports the objective over its completed boards (``tune.report``), so ASHA
  (``time_attr = boards_done``: grace period and rungs in whole boards) can
  stop settings that are clearly behind, comparing them on the same boards.
* **Fault tolerance.** A trial whose worker dies is retried
  (``FailureConfig(max_failures)``); its study resumes from its Parquet store
  (same study id), skipping finished games. A restarted driver restores the
  Tune experiment (``Tuner.restore``) from ``<sweep_dir>/tune``: finished
  trials are not run again.
* **MLflow** (:class:`SweepTracker`, a Tune ``Callback`` in the driver
  process): one parent run per sweep (tag ``arena.sweep``), one child run per
  trial (tag ``mlflow.parentRunId``, ``arena.trial_study_id``) with the
  searched parameters under their aliases (``mP``, ``mS``, ``E``, ``P``,
  ``L``) and the metrics ``objective``, ``objective_lo``, ``objective_hi``
  (95% CI), ``games``, ``wins``, ``ties``, ``losses``, ``errors``,
  ``boards_done``; when a trial ends, the tag ``arena.trial_status``
  (``complete``, ``stopped_early`` with ``arena.stopped_at_boards``, or
  ``error``). One
  ``log_batch`` request per trial at most every ``flush_seconds`` and at the
  end of a trial; never one request per value.
* **Honest selection** (:func:`reevaluate`): the top ``k`` settings
  (:func:`order_trials`: complete trials first, then by search objective;
  trials ASHA stopped early only fill the list when fewer than ``k``
  completed) are played again on the re-evaluation
  stream's study seed (boards disjoint from the search's), ranked with 95%
  intervals; each is compared with the best by a two-sided two-proportion
  z-test (win rate) or Welch z-test (mean reward), Holm-corrected over the
  ``k - 1`` comparisons. Table printed and logged as CSV / Markdown artifacts
  of the parent run, with the best setting's final learned population
  (``best_population.npz``) when its agent learns one.
* **Deterministic ties.** Neither ordering depends on the order Tune returns
  trials in: ties in the search are broken by :func:`setting_key` (the
  searched values in ``[search]`` order, numbers ascending), ties in the
  re-evaluation by the number of games, then the search ranking. A re-run on
  the same data gives the same winner, ``best_population.npz`` and
  ``arena.best_setting`` tag.
"""
from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .tracking import PARENT_TAG, log_batch
from .stats import Z95, holm, sample_variance, two_proportion_z_test, welch_z_test, wilson_interval

log = logging.getLogger(__name__)

__all__ = ["ObjectiveTally", "SweepTracker", "SweepResult", "run_sweep", "reevaluate",
           "rank_settings", "SWEEP_TAG", "TRIAL_TAG"]

SWEEP_TAG = "arena.sweep"
TRIAL_TAG = "arena.trial_study_id"
#: Tune's time attribute for ASHA: whole boards (a board seed with all its games, or a
#: run with all its rounds) the trial has completed; the objective counts only those.
TIME_ATTR = "boards_done"
#: Games of the completed boards (``boards_done * games per board``).
GAMES_ATTR = "games_done"
#: Child-run tag: ``complete``, ``stopped_early`` (by ASHA) or ``error``.
STATUS_TAG = "arena.trial_status"
METRIC = "objective"
#: Trial resources: no CPU (the game hosts take them); Tune refuses an empty bundle.
TRIAL_RESOURCES = {"cpu": 0, "memory": 1 << 20}


# --- the objective ----------------------------------------------------------------------
class ObjectiveTally:
    """Running objective of one label from result rows: win rate (Wilson CI) or mean reward (normal CI).

    Games come in whole boards of ``games_per_board`` games (game ``g`` is on
    board ``g // games_per_board``; see :mod:`cluster.sweep_spec`). The objective
    counts the games of *completed* boards only, so what ASHA compares at a rung
    is always whole boards (every seat rotation of each), the same boards for
    every setting of the search."""

    def __init__(self, label: str, metric: str = "win_rate", games_per_board: int = 1):
        self.label, self.metric = label, metric
        self.games_per_board = max(1, int(games_per_board))
        self.results: dict[int, list[tuple[str, float]]] = {}  # game -> the label's (result, reward)

    def add(self, rows: Iterable[Mapping]) -> None:
        for row in rows:
            entries = self.results.setdefault(int(row["game_index"]), [])
            if row["label"] != self.label:
                continue
            result = row["result"]
            reward = float(row.get("reward", 0.0) or 0.0) if result != "error" else 0.0
            entries.append((result, reward))

    def add_frame(self, df: pd.DataFrame | None) -> None:
        if df is not None and len(df):
            self.add(df.to_dict("records"))

    @property
    def games(self) -> set[int]:
        """Indices of the games recorded so far (complete boards or not)."""
        return set(self.results)

    def complete_boards(self) -> list[int]:
        per = self.games_per_board
        boards: dict[int, int] = {}
        for g in self.results:
            boards[g // per] = boards.get(g // per, 0) + 1
        return sorted(b for b, count in boards.items() if count == per)

    def _counted(self) -> list[tuple[str, float]]:
        per = self.games_per_board
        boards = set(self.complete_boards())
        return [e for g, entries in self.results.items() if g // per in boards for e in entries]

    @property
    def counts(self) -> dict[str, int]:
        counts = {"win": 0, "tie": 0, "loss": 0, "error": 0}
        for result, _ in self._counted():
            counts[result] = counts.get(result, 0) + 1
        return counts

    @property
    def n(self) -> int:
        """Games of the label on complete boards that ended without error."""
        counts = self.counts
        return counts["win"] + counts["tie"] + counts["loss"]

    def metrics(self) -> dict[str, float]:
        counted = self._counted()
        counts = {"win": 0, "tie": 0, "loss": 0, "error": 0}
        reward_sum = reward_sq = 0.0
        for result, reward in counted:
            counts[result] = counts.get(result, 0) + 1
            if result != "error":
                reward_sum += reward
                reward_sq += reward * reward
        n = counts["win"] + counts["tie"] + counts["loss"]
        if self.metric == "win_rate":
            value = counts["win"] / n if n else 0.0
            lo, hi = wilson_interval(counts["win"], n) if n else (0.0, 1.0)
        else:
            value = reward_sum / n if n else 0.0
            var = sample_variance(reward_sum, reward_sq, n)
            half = Z95 * math.sqrt(var / n) if n else math.inf
            lo, hi = value - half, value + half
        boards = len(self.complete_boards())
        return {METRIC: float(value), "objective_lo": float(lo), "objective_hi": float(hi),
                TIME_ATTR: boards, GAMES_ATTR: boards * self.games_per_board, "games": n,
                "wins": counts["win"], "ties": counts["tie"], "losses": counts["loss"],
                "errors": counts["error"], "reward_sq_sum": reward_sq}


def _plain(value):
    """Tune / numpy scalars as plain Python values (for TOML overrides and JSON)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


# --- the trial ---------------------------------------------------------------------------
def _sweep_trial(config: dict, *, sweep_dict: dict, plugins: Sequence[str], workers: int) -> None:
    """Tune function trainable: run one setting's study, reporting the objective each time a
    board completes (``boards_done`` is ASHA's time attribute)."""
    from ray import tune

    from cluster.scheduler import import_plugins
    from cluster.store import ResultStore
    from cluster.study import run_study
    from cluster.sweep_spec import SweepSpec

    import_plugins(plugins)
    sweep = SweepSpec.from_dict(sweep_dict)
    params = {p.path: _plain(config[p.path]) for p in sweep.search}
    spec = sweep.trial_spec(params)
    tally = ObjectiveTally(sweep.objective_label, sweep.objective_metric, sweep.games_per_board)
    store = ResultStore(Path(spec.study_dir))
    if store.finished_games():  # a retried or resumed trial: count what its store has
        tally.add_frame(store.read())
    reported = [-1]

    def report() -> None:
        metrics = tally.metrics()
        metrics["study_id"] = spec.study_id
        reported[0] = metrics[TIME_ATTR]
        tune.report(metrics)

    def on_progress(rows) -> None:
        tally.add(rows)
        if len(tally.complete_boards()) > reported[0]:
            report()

    run_study(spec, num_workers=workers, progress=False, tracking=False, plugins=plugins,
              warm_up=False, on_progress=on_progress)
    if reported[0] != len(tally.complete_boards()):
        report()


# --- MLflow ------------------------------------------------------------------------------
def _mlflow_client(uri: str):
    from mlflow.tracking import MlflowClient

    from .tracking import normalize_uri

    return MlflowClient(tracking_uri=normalize_uri(uri))


def _experiment_id(client, name: str, uri: str = "") -> str:
    """Studies' rules: model-training kind; on sqlite, artifacts beside the database."""
    from .tracking import ensure_experiment, normalize_uri

    return ensure_experiment(client, name, normalize_uri(uri))


def _q(text: str) -> str:
    return text.replace("'", "\\'")


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
        self.uri = sweep.tracking["uri"]
        self.experiment = sweep.tracking["experiment"]
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
        from cluster.sweep_spec import SweepSpec

        return SweepSpec.from_dict(self.sweep_dict)

    # --- runs ---------------------------------------------------------------------
    def start(self) -> str | None:
        """Find or create the parent run (idempotent); log the sweep's settings once."""
        if self.parent_id is not None or not self.enabled:
            return self.parent_id
        try:
            self.client = _mlflow_client(self.uri)
            self.experiment_id = _experiment_id(self.client, self.experiment, self.uri)
            sweep = self.sweep
            found = self.client.search_runs(
                [self.experiment_id], filter_string=f"tags.`{SWEEP_TAG}` = '{_q(sweep.name)}'",
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
        params = {k: _plain(v) for k, v in params.items()}
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
                params = {p.path: _plain(row[p.path]) for p in sweep.search}
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


# --- selection and statistics -----------------------------------------------------------
def compare_to_best(best: Mapping, other: Mapping, metric: str) -> tuple[float, float]:
    """(z, two-sided p) of best vs other: pooled two-proportion z-test (win rate) or
    Welch's z-test (mean reward)."""
    if metric == "win_rate":
        return two_proportion_z_test(best["wins"], best["games"], other["wins"], other["games"])

    def var(s):
        return sample_variance(s[METRIC] * s["games"], s["reward_sq_sum"], s["games"])

    return welch_z_test(best[METRIC], var(best), best["games"], other[METRIC], var(other), other["games"])


def rank_settings(stats: list[dict], metric: str, alpha: float = 0.05) -> pd.DataFrame:
    """Rank re-evaluated settings by objective; test each against the best (Holm-corrected).

    Ties are broken by a fixed rule, so a re-run ranks the same data the same way:
    higher re-evaluation objective, then more re-evaluation games without error, then the
    better search rank (``search_rank``: the search's objective, then the setting order of
    :func:`setting_key`)."""
    ordered = sorted(stats, key=lambda s: (-s[METRIC], -s["games"], s.get("search_rank", 0)))
    best = ordered[0]
    raw = [math.nan] + [compare_to_best(best, s, metric)[1] for s in ordered[1:]]
    adjusted = holm(raw)
    rows = []
    for rank, (s, p, p_adj) in enumerate(zip(ordered, raw, adjusted), start=1):
        row = dict(s)
        row["rank"] = rank
        row["p_vs_best"] = p
        row["p_holm"] = p_adj
        row["significant"] = "best" if rank == 1 else ("yes" if p_adj < alpha else "no")
        rows.append(row)
    return pd.DataFrame(rows).set_index("rank")


def _fmt_objective(value: float, lo: float, hi: float, metric: str) -> str:
    if metric == "win_rate":
        return f"{100 * value:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"
    return f"{value:.3f} ({lo:.3f} to {hi:.3f})"


# --- the sweep ---------------------------------------------------------------------------
@dataclass
class SweepResult:
    """What :func:`run_sweep` returns."""

    sweep_dir: Path
    trials: pd.DataFrame
    """One row per search trial: params (by path), objective, CI, games, status."""
    ranked: pd.DataFrame | None
    """The re-evaluated top k, ranked (see :func:`rank_settings`)."""
    markdown: str = ""
    parent_run_id: str | None = None
    population: Path | None = None
    seconds: float = 0.0
    artifacts: list = field(default_factory=list)


def _trials_frame(grid, sweep) -> pd.DataFrame:
    rows = []
    for result in grid:
        metrics = dict(result.metrics or {})
        config = result.config or {}
        row = {p.path: _plain(config.get(p.path)) for p in sweep.search}
        row["trial_id"] = metrics.get("trial_id", "")
        for key in (METRIC, "objective_lo", "objective_hi", TIME_ATTR, GAMES_ATTR, "games", "wins",
                    "ties", "losses", "errors", "reward_sq_sum"):
            row[key] = metrics.get(key, math.nan)
        row["study_id"] = sweep.trial_study_id({p.path: row[p.path] for p in sweep.search})
        if result.error is not None:
            row["status"] = "ERROR"
        elif metrics.get(TIME_ATTR, 0) >= sweep.boards_per_trial:
            row["status"] = "COMPLETE"
        else:
            row["status"] = "STOPPED"
        rows.append(row)
    return order_trials(pd.DataFrame(rows), sweep) if rows else pd.DataFrame(rows)


def _value_key(value) -> tuple:
    """Numbers (and bools) by value, anything else after them by its JSON text."""
    if isinstance(value, (bool, int, float, np.integer, np.floating)) and not (
            isinstance(value, float) and math.isnan(value)):
        return (0, float(value), "")
    return (1, 0.0, json.dumps(value, sort_keys=True, default=str))


def setting_key(sweep, params: Mapping) -> tuple:
    """The fixed order of settings that breaks ties: the searched values in the order of
    ``[search]``, each compared by value (numbers ascending; other values after them, by text)."""
    return tuple(_value_key(_plain(params[p.path])) for p in sweep.search)


def order_trials(trials: pd.DataFrame, sweep) -> pd.DataFrame:
    """Search trials in selection order (a pure function of their results, never of the order
    Tune returns them in): complete before stopped-early before error; then more completed
    boards; then higher search objective; then :func:`setting_key`. Adds ``search_rank`` (1 = best)."""
    status_order = {"COMPLETE": 0, "STOPPED": 1, "ERROR": 2}
    keyed = []
    for i, (_, row) in enumerate(trials.iterrows()):
        boards = row.get(TIME_ATTR, math.nan)
        objective = row.get(METRIC, math.nan)
        keyed.append(((status_order.get(row["status"], 3),
                       -(0 if pd.isna(boards) else boards),
                       math.inf if pd.isna(objective) else -objective,
                       setting_key(sweep, {p.path: row[p.path] for p in sweep.search})), i))
    order = [i for _, i in sorted(keyed)]
    out = trials.iloc[order].reset_index(drop=True)
    out["search_rank"] = range(1, len(out) + 1)
    return out


def select_top(trials: pd.DataFrame, k: int, sweep=None) -> pd.DataFrame:
    """The settings to re-evaluate: the first ``k`` trials of :func:`order_trials` that did not
    fail. Complete trials always come first; a trial ASHA stopped early is re-evaluated only when
    fewer than ``k`` trials completed (stopped trials were behind at a rung, on fewer boards, so
    their search scores are not comparable with complete trials'); the ranked report lists the
    best stopped trial anyway."""
    if sweep is not None:
        trials = order_trials(trials, sweep)
    return trials[trials["status"] != "ERROR"].head(k)


def reevaluate(sweep, top: pd.DataFrame, *, num_workers: int | None, plugins: Sequence[str] = (),
               progress: bool = True) -> tuple[list[dict], dict[str, Path]]:
    """Play each of ``top``'s settings on the re-evaluation stream (fresh boards); per-setting stats."""
    from cluster.sweep_spec import REEVAL_STREAM

    from .store import ResultStore
    from .study import run_study

    stats, dirs = [], {}
    for position, (_, row) in enumerate(top.iterrows(), start=1):
        params = {p.path: _plain(row[p.path]) for p in sweep.search}
        spec = sweep.trial_spec(params, stream=REEVAL_STREAM, games=sweep.reeval_games)
        run_study(spec, num_workers=num_workers, progress=progress, tracking=False, plugins=plugins,
                  warm_up=False)
        tally = ObjectiveTally(sweep.objective_label, sweep.objective_metric, sweep.games_per_board)
        tally.add_frame(ResultStore(Path(spec.study_dir)).read())
        entry = {p.alias: params[p.path] for p in sweep.search}
        entry.update(tally.metrics())
        entry["search_objective"] = float(row[METRIC])
        entry["search_games"] = int(row["games"]) if not pd.isna(row["games"]) else 0
        entry["search_boards"] = int(row[TIME_ATTR]) if not pd.isna(row[TIME_ATTR]) else 0
        entry["search_status"] = {"STOPPED": "stopped_early"}.get(row["status"], "complete")
        entry["search_rank"] = int(row["search_rank"]) if "search_rank" in row else position
        entry["trial_study_id"] = row["study_id"]
        entry["reeval_study_id"] = spec.study_id
        entry["study_seed"] = spec.seed
        stats.append(entry)
        dirs[spec.study_id] = Path(spec.study_dir)
    return stats, dirs


def ranked_table(ranked: pd.DataFrame, sweep) -> pd.DataFrame:
    """The printed table: settings, objective with 95% CI, W/T/L, search objective, significance."""
    metric = sweep.objective_metric
    out = pd.DataFrame(index=ranked.index)
    for p in sweep.search:
        out[p.alias] = ranked[p.alias]
    out["objective"] = [_fmt_objective(r[METRIC], r["objective_lo"], r["objective_hi"], metric)
                        for _, r in ranked.iterrows()]
    out["games"] = ranked["games"]
    out["W/T/L"] = [f"{r.wins}/{r.ties}/{r.losses}" for r in ranked.itertuples()]
    out["search"] = [_fmt_search(r, metric) for _, r in ranked.iterrows()]
    out["p_holm"] = [("" if math.isnan(p) else f"{p:.3g}") for p in ranked["p_holm"]]
    out["worse than best"] = ranked["significant"]
    return out


def _fmt_search(row: Mapping, metric: str) -> str:
    """The search score of a setting with its games; ``stopped`` when ASHA cut it short."""
    value = _fmt_objective(row["search_objective"], 0, 0, metric).split(" ")[0]
    games = row.get("search_games", 0)
    games = 0 if games is None or pd.isna(games) else int(games)
    stopped = row.get("search_status") == "stopped_early"
    return f"{value} ({games} g{', stopped' if stopped else ''})"


def _default_concurrency(sweep, cpus: int) -> tuple[int, int]:
    """(max concurrent trials, game hosts per trial) on a cluster of ``cpus`` CPUs."""
    conc = sweep.max_concurrent_trials
    workers = sweep.workers_per_trial
    if conc is None:
        conc = max(1, cpus // workers) if workers else max(1, min(cpus, 8))
    conc = max(1, min(conc, sweep.total_trials))
    if workers is None:
        workers = max(1, cpus // conc)
    return conc, workers


def run_sweep(sweep, address: str | None = None, resume: bool = False, *, plugins: Sequence[str] = (),
              progress: bool = True, tracking: bool = True, verbose: int | None = None) -> SweepResult:
    """Run (or resume) ``sweep`` on Ray Tune, re-evaluate the top k, report; see the module docstring."""
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # the CLIReporter table below
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    from .scheduler import import_plugins, warm_up_nodes
    from .study import _init_ray

    t0 = time.perf_counter()
    import_plugins(plugins)
    sweep_dir = sweep.sweep_dir.resolve()
    sweep_dir.mkdir(parents=True, exist_ok=True)
    exp_path = sweep_dir / "tune"
    _check_same_sweep(sweep, sweep_dir, exp_path)

    started = _init_ray(address, None)
    tracker = SweepTracker(sweep) if tracking and sweep.tracking.get("enabled", True) else None
    status = "FAILED"
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        conc, workers = _default_concurrency(sweep, cpus)
        from cluster.sweep_spec import SEARCH_STREAM

        first = {p.path: p.probe_values()[0] for p in sweep.search}
        warm_up_nodes(sweep.trial_spec(first, SEARCH_STREAM).to_dict(), plugins)

        trainable = tune.with_resources(
            tune.with_parameters(_sweep_trial, sweep_dict=sweep.to_dict(), plugins=tuple(plugins),
                                 workers=workers),
            TRIAL_RESOURCES)
        if tracker is not None:
            tracker.start()
        if Tuner_can_restore(exp_path):
            log.info("restoring the Tune experiment at %s", exp_path)
            print(f"resuming sweep {sweep.name} from {exp_path}")
            tuner = tune.Tuner.restore(str(exp_path), trainable=trainable, resume_unfinished=True,
                                       resume_errored=True)
        else:
            if resume:
                print(f"nothing to resume at {exp_path}; starting the sweep")
            tuner = tune.Tuner(trainable, param_space=sweep.param_space(),
                               tune_config=_tune_config(sweep, conc, ASHAScheduler, FIFOScheduler),
                               run_config=_run_config(sweep, sweep_dir, tracker, progress, verbose))
        grid = tuner.fit()
        trials = _trials_frame(grid, sweep)
        if tracker is not None:
            tracker.ensure_children(trials)
        trials.to_csv(sweep_dir / "trials.csv", index=False)

        top = select_top(trials, sweep.top_k, sweep)
        if top.empty:
            raise RuntimeError(f"sweep {sweep.name}: no trial finished without error; see {exp_path}")
        print(f"\nre-evaluating the top {len(top)} of {len(trials)} settings on "
              f"{sweep.reeval_games} fresh games each (study seed {sweep.study_seed(1)})")
        stats, dirs = reevaluate(sweep, top, num_workers=cpus, plugins=plugins, progress=progress)
        ranked = rank_settings(stats, sweep.objective_metric)
        table = ranked_table(ranked, sweep)
        markdown = _report_markdown(sweep, table, trials, top)
        report_dir = sweep_dir / "report"
        report_dir.mkdir(exist_ok=True)
        ranked.to_csv(report_dir / "ranked.csv")
        (report_dir / "ranked.md").write_text(markdown, encoding="utf-8")
        artifacts = [report_dir / "ranked.csv", report_dir / "ranked.md", sweep_dir / "trials.csv",
                     sweep_dir / "sweep.json"]
        population = _export_best_population(sweep, ranked, dirs, sweep_dir)
        if population is not None:
            artifacts.append(population)
        status = "FINISHED"
        parent_id = None
        if tracker is not None:
            best = ranked.iloc[0]
            metrics = {"best_objective": best[METRIC], "best_objective_lo": best["objective_lo"],
                       "best_objective_hi": best["objective_hi"], "trials": len(trials),
                       "trials_complete": int((trials["status"] == "COMPLETE").sum()),
                       "trials_stopped": int((trials["status"] == "STOPPED").sum()),
                       "trials_error": int((trials["status"] == "ERROR").sum())}
            for rank, row in ranked.iterrows():
                metrics[f"reeval_objective/rank{rank}"] = row[METRIC]
            tags = {"arena.best_setting": json.dumps({p.alias: _plain(best[p.alias]) for p in sweep.search})}
            tracker.finish(metrics, artifacts, tags=tags)
            parent_id = tracker.parent_id
        return SweepResult(sweep_dir=sweep_dir, trials=trials, ranked=ranked, markdown=markdown,
                           parent_run_id=parent_id, population=population,
                           seconds=time.perf_counter() - t0, artifacts=artifacts)
    finally:
        if tracker is not None and status != "FINISHED" and tracker.parent_id is not None:
            try:
                tracker.client.set_terminated(tracker.parent_id, status="FAILED")
            except Exception:
                pass
        if started:
            ray.shutdown()


def Tuner_can_restore(path: Path) -> bool:  # noqa: N802 - named after the Tune call it wraps
    from ray import tune

    return path.exists() and tune.Tuner.can_restore(str(path))


def _check_same_sweep(sweep, sweep_dir: Path, exp_path: Path) -> None:
    """A restored experiment must belong to the same sweep spec (else trials would not match)."""
    from cluster.sweep_spec import SweepError

    current = json.loads(json.dumps(sweep.to_dict(), default=str))
    path = sweep_dir / "sweep.json"
    if path.is_file() and exp_path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved != current:
            diff = sorted(k for k in set(saved) | set(current) if saved.get(k) != current.get(k))
            raise SweepError(f"sweep.name: {sweep.name!r} already has a Tune experiment at {exp_path} "
                             f"from a different sweep spec (differs in {diff}); rename the sweep "
                             f"or delete {sweep_dir}")
    path.write_text(json.dumps(current, indent=2), encoding="utf-8")


def _tune_config(sweep, conc: int, ASHAScheduler, FIFOScheduler):
    from ray import tune

    if sweep.scheduler == "asha":
        scheduler = ASHAScheduler(time_attr=TIME_ATTR, max_t=sweep.boards_per_trial,
                                  grace_period=sweep.grace_period, reduction_factor=sweep.reduction_factor)
    else:
        scheduler = FIFOScheduler()
    search_alg = None
    if sweep.searcher == "optuna":
        try:
            from ray.tune.search.optuna import OptunaSearch
            import optuna  # noqa: F401
        except ImportError:
            from cluster.sweep_spec import SweepError

            raise SweepError("searcher.kind: 'optuna' needs the optuna package: pip install optuna") from None
        search_alg = OptunaSearch(seed=sweep.seed)
    return tune.TuneConfig(metric=METRIC, mode="max", scheduler=scheduler, search_alg=search_alg,
                           num_samples=sweep.num_samples, max_concurrent_trials=conc,
                           trial_dirname_creator=lambda trial: trial.trial_id)


def _run_config(sweep, sweep_dir: Path, tracker, progress: bool, verbose: int | None):
    from ray import tune

    reporter = None
    if progress:
        reporter = tune.CLIReporter(
            parameter_columns={p.path: p.alias for p in sweep.search},
            metric_columns={METRIC: "objective", "objective_lo": "lo", "objective_hi": "hi",
                            TIME_ATTR: "boards", GAMES_ATTR: "games", "wins": "W", "ties": "T",
                            "losses": "L"},
            max_report_frequency=10, sort_by_metric=True)
    return tune.RunConfig(
        name="tune", storage_path=str(sweep_dir),
        failure_config=tune.FailureConfig(max_failures=sweep.max_failures),
        callbacks=[tracker] if tracker is not None else None,
        progress_reporter=reporter, verbose=(1 if progress else 0) if verbose is None else verbose)


def _report_markdown(sweep, table: pd.DataFrame, trials: pd.DataFrame, top: pd.DataFrame | None = None) -> str:
    metric = "win rate" if sweep.objective_metric == "win_rate" else "mean reward"
    counts = trials["status"].value_counts().to_dict()
    lines = [
        f"## Sweep {sweep.name}: {metric} of {sweep.objective_label}, re-evaluated top {len(table)}",
        "",
        f"Search: {len(trials)} trials ({', '.join(f'{v} {k.lower()}' for k, v in counts.items())}), "
        f"{sweep.games_per_trial} games ({sweep.boards_per_trial} boards of {sweep.games_per_board}) each "
        f"on study seed {sweep.study_seed(0)}. Re-evaluation: "
        f"{sweep.reeval_games} games per setting on study seed {sweep.study_seed(1)} (fresh boards).",
        "",
        _markdown(table),
        "",
        "Objective: re-evaluation estimate with 95% CI "
        + ("(Wilson)" if sweep.objective_metric == "win_rate" else "(normal approximation)")
        + "; `search`: the (selection-biased) estimate during the search. `worse than best`: "
        + ("two-proportion z-test" if sweep.objective_metric == "win_rate" else "Welch z-test")
        + f" against rank 1, Holm-corrected over {max(0, len(table) - 1)} comparisons, alpha 0.05. "
        "The comparisons are post-selection and not independent (same boards), so treat them as a guide; "
        "'no' means the data do not separate the setting from the best, not that they are equal. "
        "`search` shows the games it rests on, and `stopped` when ASHA stopped the trial early.",
        "",
        "Selection rule: the top settings are the complete trials with the highest search objective; "
        "trials stopped early fill the list only when fewer trials completed. Ties (in the search and "
        "in the re-evaluation) are broken by a fixed rule: more games, then the search ranking, then "
        "the setting's values in the order of [search], smaller first.",
    ]
    stopped = trials[trials["status"] == "STOPPED"]
    if len(stopped):
        best = stopped.iloc[0]  # trials are in selection order (order_trials)
        chosen = set(top["study_id"]) if top is not None else set()
        setting = ", ".join(f"{p.alias} {_plain(best[p.path])}" for p in sweep.search)
        note = "re-evaluated" if best["study_id"] in chosen else "not re-evaluated"
        lines += ["", f"Stopped early by ASHA: {len(stopped)} trial(s); the furthest, best of them "
                      f"({setting}) scored {_fmt_search({'search_objective': best[METRIC], 'search_games': best['games'], 'search_status': 'stopped_early'}, sweep.objective_metric)} "
                      f"in the search ({note})."]
    return "\n".join(lines) + "\n"


def _markdown(table: pd.DataFrame) -> str:
    header = ["rank"] + list(table.columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---:"] * len(header)) + "|"]
    for rank, row in table.iterrows():
        lines.append("| " + " | ".join([str(rank)] + [str(v) for v in row.tolist()]) + " |")
    return "\n".join(lines)


def _export_best_population(sweep, ranked: pd.DataFrame, dirs: Mapping[str, Path], sweep_dir: Path):
    """The best setting's final learned population as ``best_population.npz`` (None if none)."""
    from .populations import PopulationExportError, export_population

    best_dir = dirs.get(ranked.iloc[0]["reeval_study_id"])
    if best_dir is None:
        return None
    out = sweep_dir / "best_population.npz"
    try:
        export_population(best_dir, sweep.objective_label, out, which="final")
    except (PopulationExportError, ValueError, OSError) as exc:
        log.info("no population to export (%s)", exc)
        return None
    return out

