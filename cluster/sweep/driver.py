"""Hyperparameter sweeps on Ray Tune: trials are studies, mirrored to MLflow, re-evaluated honestly.

    >>> result = run_sweep(sweep)   # a SweepSpec, as jobs.spec.load_sweep makes it  # doctest: +SKIP
    >>> print(result.markdown)

This module is the Ray Tune part (trials, restore, re-evaluation);
:mod:`cluster.sweep.tracking` mirrors the sweep to MLflow and
:mod:`cluster.sweep.results` holds the objective, the selection and the report
(its tests through :mod:`cluster.stats`).

Shape:

* **Trials.** Ray Tune drives the search (grid / random via Tune's basic
  variant generator, or Optuna through ``OptunaSearch``). A trial is a
  function trainable that builds its study spec (:meth:`SweepSpec.trial_spec`:
  deterministic study id, the search stream's study seed, so every trial
  plays the same boards) and runs it with :func:`cluster.run.driver.run_study`
  (inner MLflow tracking off, no warm-up or plugin check: the driver warmed and checked the
  nodes once).
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

import importlib
import importlib.util
import json
import logging
import math
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from cluster.results.populations import PopulationExportError, export_population
from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.run.plugin_nodes import check_plugins_on_nodes
from cluster.run.lock import StudyLock
from cluster.run.ray_session import RaySession
from cluster.run.scheduler import import_plugins, warm_up_nodes
from cluster.spec.sweep import REEVAL_STREAM, SEARCH_STREAM, SweepError, plain
from cluster.sweep.results import (GAMES_ATTR, METRIC, TIME_ATTR, ObjectiveTally, order_trials, rank_settings,
                                   ranked_table, report_markdown, select_top)
from cluster.sweep.tracking import SweepTracker

log = logging.getLogger(__name__)

__all__ = ["SweepResult", "run_sweep", "reevaluate"]

#: Trial resources: no CPU (the game hosts take them); Tune refuses an empty bundle.
TRIAL_RESOURCES = {"cpu": 0, "memory": 1 << 20}


# --- the trial ---------------------------------------------------------------------------
def _sweep_trial(config: dict, *, sweep, plugins: Sequence[str], workers: int) -> None:
    """Tune function trainable: run one setting's study, reporting the objective each time a
    board completes (``boards_done`` is ASHA's time attribute)."""
    from ray import tune

    import_plugins(plugins)
    params = {p.path: plain(config[p.path]) for p in sweep.search}
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
              warm_up=False, check_nodes=False, on_progress=on_progress)
    if reported[0] != len(tally.complete_boards()):
        report()


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
        row = {p.path: plain(config.get(p.path)) for p in sweep.search}
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


def reevaluate(sweep, top: pd.DataFrame, *, num_workers: int | None, plugins: Sequence[str] = (),
               progress: bool = True) -> tuple[list[dict], dict[str, Path]]:
    """Play each of ``top``'s settings on the re-evaluation stream (fresh boards); per-setting stats."""
    stats, dirs = [], {}
    for position, (_, row) in enumerate(top.iterrows(), start=1):
        params = {p.path: plain(row[p.path]) for p in sweep.search}
        spec = sweep.trial_spec(params, stream=REEVAL_STREAM, games=sweep.reeval_games)
        run_study(spec, num_workers=num_workers, progress=progress, tracking=False, plugins=plugins,
                  warm_up=False, check_nodes=False)
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
    """Run (or resume) ``sweep`` on Ray Tune, re-evaluate the top k, report; see the module docstring.

    One driver per sweep: the sweep directory's lock (:class:`cluster.run.lock.StudyLock`) is
    held throughout (a second driver raises :class:`~cluster.run.lock.StudyBusyError`); each
    trial and each re-evaluation takes its own study's lock (:func:`run_study`), one study
    directory each, so the sweep never waits on itself."""
    sweep_dir = sweep.sweep_dir.resolve()
    with StudyLock(sweep_dir):
        return _run_sweep(sweep, address, resume, plugins=plugins, progress=progress, tracking=tracking,
                          verbose=verbose)


def _run_sweep(sweep, address: str | None, resume: bool, *, plugins: Sequence[str], progress: bool,
               tracking: bool, verbose: int | None) -> SweepResult:
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # the CLIReporter table below
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    t0 = time.perf_counter()
    import_plugins(plugins)
    sweep_dir = sweep.sweep_dir.resolve()
    sweep_dir.mkdir(parents=True, exist_ok=True)
    exp_path = sweep_dir / "tune"
    _check_same_sweep(sweep, sweep_dir, exp_path)

    session = RaySession(address, None).__enter__()
    status = "FAILED"
    tracker = None
    try:
        tracker = SweepTracker(sweep) if tracking and sweep.tracking.enabled else None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        conc, workers = _default_concurrency(sweep, cpus)

        first = {p.path: p.probe_values()[0] for p in sweep.search}
        probe = sweep.trial_spec(first, SEARCH_STREAM)
        check_plugins_on_nodes(probe)  # once for the sweep: its trials and re-evaluation skip it
        warm_up_nodes(probe, plugins)

        trainable = tune.with_resources(
            tune.with_parameters(_sweep_trial, sweep=sweep, plugins=tuple(plugins),
                                 workers=workers),
            TRIAL_RESOURCES)
        if tracker is not None:
            tracker.start()
        with moved_module_names():  # an experiment begun before the move names the old modules
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
        markdown = report_markdown(sweep, table, trials, top)
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
            tags = {"arena.best_setting": json.dumps({p.alias: plain(best[p.alias]) for p in sweep.search})}
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
        session.close()  # the embedded Ray and every process it started, on every way out


#: Modules a Tune experiment's pickles may name from before the cluster floor moved into
#: rooms (issue 36): ``tuner.pkl`` holds the :class:`~cluster.sweep.tracking.SweepTracker`
#: callback by its module. Old name -> the module that holds the same classes now.
MOVED_MODULES = {"cluster.sweep_tracking": "cluster.sweep.tracking", "cluster.sweep_spec": "cluster.spec.sweep",
                 "cluster.sweep_results": "cluster.sweep.results"}


@contextmanager
def moved_module_names():
    """While restoring a Tune experiment: the old module names of :data:`MOVED_MODULES`
    resolve to their modules now, so that an experiment begun before the move unpickles
    (names that are importable anyway are left alone)."""
    added = []
    for old, new in MOVED_MODULES.items():
        if old in sys.modules or importlib.util.find_spec(old) is not None:
            continue
        sys.modules[old] = importlib.import_module(new)
        added.append(old)
    try:
        yield
    finally:
        for old in added:
            sys.modules.pop(old, None)


def Tuner_can_restore(path: Path) -> bool:  # noqa: N802 - named after the Tune call it wraps
    from ray import tune

    return path.exists() and tune.Tuner.can_restore(str(path))


def _check_same_sweep(sweep, sweep_dir: Path, exp_path: Path) -> None:
    """A restored experiment must belong to the same sweep spec (else trials would not match).
    The saved spec is read back with this release's defaults, so an upgrade that only adds
    options with defaults still restores."""
    def plain_dict(spec) -> dict:
        return json.loads(json.dumps(spec.to_dict(), default=str))

    current = plain_dict(sweep)
    path = sweep_dir / "sweep.json"
    if path.is_file() and exp_path.exists():
        saved = json.loads(path.read_text(encoding="utf-8"))
        try:
            saved = plain_dict(type(sweep).from_dict(saved))
        except (TypeError, KeyError, ValueError):
            pass  # a field this release does not know: compared as saved, so it differs
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
            import optuna  # noqa: F401
            from ray.tune.search.optuna import OptunaSearch
        except ImportError:

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


def _export_best_population(sweep, ranked: pd.DataFrame, dirs: Mapping[str, Path], sweep_dir: Path):
    """The best setting's final learned population as ``best_population.npz`` (None if none)."""
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

