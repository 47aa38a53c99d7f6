"""The offline Location Categorization tables job.

Plays the games of a study spec whose seekers record tables online
(``lc_update = true``; default ``jobs/scotland_yard/lc_tables.toml``) on the
cluster, sums the tables of all runs (the last saved learned state of each
series), saves them as ``.npz`` and logs them to MLflow (artifact
``lc_tables/<file>``, plus the general weights a_c / n_c as metrics)::

    python -m jobs.scotland_yard.lc_tables [--out tables/lc_tables.npz]
        [--spec lc_tables.toml] [--scale F] [--set key=value ...] [--workers N] [--no-tracking]

A study loads the result through a seekers' lineup entry:
``seed_population = "tables/lc_tables.npz"`` (or ``runs:/<run_id>/lc_tables/lc_tables.npz``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEEKERS = "sy_mcts_seekers"


def collect_tables(spec) -> tuple[dict[str, np.ndarray], int]:
    """The summed tables of every series of a finished study, and how many series."""
    from agents.scotland_yard.mcts_seekers import TABLE_KEYS
    from cluster.store import ResultStore

    labels = [seat.label for seat in spec.lineup if seat.agent == SEEKERS]
    if not labels:
        raise ValueError(f"lineup: no {SEEKERS!r} entry records tables in {spec.source}")
    store = ResultStore(Path(spec.study_dir))
    total: dict[str, np.ndarray] = {}
    series = 0
    for sid in store.learned_series():
        latest = store.latest_learned_state(sid)
        if latest is None:
            continue
        for label in labels:
            arrays = latest[1].get(label)
            if not arrays:
                continue
            series += 1
            for key in TABLE_KEYS:
                total[key] = total.get(key, 0) + np.asarray(arrays[key], dtype=np.float64)
    if not total:
        raise ValueError(f"{spec.study_dir}: no learned tables found (is lc_update = true?)")
    return total, series


def general_weights(tables: dict[str, np.ndarray], rule: str = "presence") -> np.ndarray:
    """The general table's raw weights a_c / n_c (0 where n_c = 0; the agents add
    their prior): ``rule = "presence"`` (the paper's n, the records in which c held
    a possible location, from the detailed table) or ``"locations"``."""
    from agents.scotland_yard._common import presence_counts

    a = np.asarray(tables["lc_general_a"], dtype=np.float64)
    if rule == "presence":
        n = np.zeros_like(a)
        presence_counts(np.asarray(tables["lc_detailed_a"], dtype=np.float64), n)
    else:
        n = np.asarray(tables["lc_general_n"], dtype=np.float64)
    return np.divide(a, n, out=np.zeros_like(a), where=n > 0)


def log_to_mlflow(spec, out: Path, tables: dict, series: int, games: int) -> str:
    """Log the table file and its general weights; returns the artifact URI."""
    import mlflow

    mlflow.set_tracking_uri(spec.tracking.uri)
    mlflow.set_experiment(spec.tracking.experiment)
    with mlflow.start_run(run_name=f"{spec.study_id}-tables") as run:
        mlflow.log_params({"study_id": spec.study_id, "series": series, "games": games,
                           "categories": len(tables["lc_general_n"]),
                           "budget": spec.budget.describe()})
        mlflow.log_metrics({f"lc_weight_{c + 1}": float(w)
                            for c, w in enumerate(general_weights(tables))})
        mlflow.log_metrics({f"lc_weight_per_location_{c + 1}": float(w)
                            for c, w in enumerate(general_weights(tables, "locations"))})
        mlflow.log_artifact(str(out), artifact_path="lc_tables")
        return f"runs:/{run.info.run_id}/lc_tables/{out.name}"


def main(argv=None) -> int:
    from cluster.study import run_study
    from jobs.spec import SpecError, load_spec

    p = argparse.ArgumentParser(prog="python -m jobs.scotland_yard.lc_tables", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default=str(HERE / "lc_tables.toml"))
    p.add_argument("--out", default=str(HERE / "tables" / "lc_tables.npz"))
    p.add_argument("--scale", type=float, default=None)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--no-tracking", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    try:
        spec = load_spec(args.spec, overrides=args.set, scale=args.scale)
    except SpecError as exc:
        print(f"lc_tables: invalid spec {args.spec}: {exc}", file=sys.stderr)
        return 2
    result = run_study(spec, num_workers=args.workers, progress=not args.no_progress,
                       tracking=not args.no_tracking)
    tables, series = collect_tables(spec)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **tables)
    print(f"tables of {series} series ({result.games_done} games): {out}")
    print("general weights a/n per category (n = records with the category present):",
          np.round(general_weights(tables), 3).tolist())
    print("  (n = possible locations, summed):",
          np.round(general_weights(tables, "locations"), 3).tolist())
    if not args.no_tracking and spec.tracking.enabled:
        try:
            print("MLflow artifact:", log_to_mlflow(spec, out, tables, series, result.games_done))
        except Exception as exc:  # noqa: BLE001 - the file is saved; tracking is a mirror
            print(f"lc_tables: MLflow logging failed ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
