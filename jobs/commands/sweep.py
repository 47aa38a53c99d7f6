"""``arena sweep``: a hyperparameter sweep on Ray Tune."""
from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Register ``arena sweep`` and its options."""
    p = sub.add_parser("sweep", help="hyperparameter sweep (Ray Tune) over a study's agent parameters")
    p.add_argument("sweep", help="sweep spec, e.g. jobs/sweeps/femcts_ffa.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a sweep field, e.g. --set sweep.games_per_trial=8 or "
                        "--set base.budget.ms=10 (repeatable)")
    p.add_argument("--unset", action="append", metavar="KEY",
                   help="remove a sweep field, its base study's included (its default applies; after "
                        "every --set), e.g. --unset base.design.seeds_per_set (repeatable)")
    p.add_argument("--scale", type=float, metavar="F",
                   help="quick try: boards per trial, re-evaluation boards and the ASHA grace period "
                        "scaled as in `arena run --scale` (whole boards, at least one); each grid axis "
                        "keeps its first ceil(n*F) values")
    p.add_argument("--resume", action="store_true",
                   help="resume the sweep's Tune experiment (also automatic when it exists)")
    p.add_argument("--check", action="store_true",
                   help="validate the sweep spec, print its size and exit without running")
    p.add_argument("--no-progress", action="store_true", help="no progress table")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=run)


def run(args) -> int:
    from jobs.spec import SweepError, load_sweep

    try:
        sweep = load_sweep(args.sweep, overrides=args.set or (), scale=args.scale, unsets=args.unset or ())
    except SweepError as exc:
        if getattr(args, "debug", False):  # --debug: the traceback (a plugin's import error, chained)
            raise
        print(f"arena: invalid sweep {args.sweep}: {exc}", file=sys.stderr)
        return 2
    board = sweep.group_name
    asha = (f" (ASHA grace period {sweep.grace_period} {board}s, reduction factor {sweep.reduction_factor})"
            if sweep.scheduler == "asha" else "")
    print(f"sweep {sweep.name}: {sweep.total_trials} trial(s) x {sweep.games_per_trial} games "
          f"({sweep.boards_per_trial} {board}s of {sweep.games_per_board}), scheduler "
          f"{sweep.scheduler}{asha}, searcher {sweep.searcher}; re-evaluating the top "
          f"{sweep.top_k} on {sweep.reeval_games} games each")
    if args.check:
        return 0
    from cluster.sweep.driver import run_sweep

    result = run_sweep(sweep, address=args.address, resume=args.resume, progress=not args.no_progress,
                       tracking=not args.no_tracking)
    print()
    print(result.markdown)
    print(f"sweep directory: {result.sweep_dir}  ({result.seconds:.0f} s)")
    if result.population is not None:
        print(f"best population: {result.population}  (use as seed_population)")
    if result.parent_run_id:
        print(f"MLflow: parent run {result.parent_run_id} in experiment "
              f"{sweep.tracking.experiment!r} at {sweep.tracking.uri}")
    return 0
