"""``arena run``: run a study spec on Ray, tracked in MLflow."""
from __future__ import annotations

import sys

from . import command_line, positive_int


def add_parser(sub) -> None:
    """Register ``arena run`` and its options."""
    p = sub.add_parser("run", help="run a study spec (TOML) on Ray, tracked in MLflow")
    p.add_argument("spec", help="study spec, e.g. jobs/pommerman_ffa_demo.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--workers", type=positive_int, help="game-hosting actors (default: one per CPU)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a spec field, e.g. --set design.seeds=2 (repeatable)")
    p.add_argument("--unset", action="append", metavar="KEY",
                   help="remove a spec field (its default applies; after every --set), e.g. "
                        "--unset design.seeds_per_set --set design.series_by='\"game\"' (repeatable)")
    p.add_argument("--scale", type=float, metavar="F",
                   help="quick try: play ceil(F x boards) boards (design.seeds, or design.runs in a "
                        "runs x rounds design), at least one; each board keeps all its games and seat "
                        "rotation, each run all its rounds (see --check for the game count)")
    p.add_argument("--check", action="store_true",
                   help="validate the spec, print the games per condition and exit without playing; a "
                        "tournament (design.format = round_robin, gauntlet or swiss) also prints its "
                        "design: tables and balance, or the Swiss pairing rule")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=run)


def _load_spec_or_exit(args):
    from jobs.spec import SpecError, load_spec

    try:
        return load_spec(args.spec, overrides=args.set or (), scale=args.scale, unsets=args.unset or ())
    except SpecError as exc:
        if getattr(args, "debug", False):  # --debug: the traceback (a plugin's import error, chained)
            raise
        print(f"arena: invalid spec {args.spec}: {exc}", file=sys.stderr)
        raise SystemExit(2)


def run(args) -> int:
    spec = _load_spec_or_exit(args)
    if args.check:
        design = spec.design
        conditions = design.conditions
        more = f", {len(conditions)} conditions" if design.vary else ""
        print(f"{args.spec}: valid: {design.total_games} games{more}")
        print(f"  per condition: {design.shape(spec.num_players)}")
        if design.tournament and design.stop is not None:
            from cluster.spec.adaptive import adaptive_text

            print(f"  {adaptive_text(spec)}")
        elif design.format == "swiss":
            from cluster.spec.swiss import swiss_text

            print(f"  {swiss_text(spec)}")
        elif design.tournament:
            from cluster.spec.tournament import balance_text

            print(f"  {balance_text(spec)}")
        if design.stop is not None and design.stop.sprt is not None:
            stop, sprt = design.stop, design.stop.sprt
            cap = min(stop.max_games or design.total_games, design.total_games)
            print(f"  sequential stop: SPRT {stop.between[0]} vs {stop.between[1]}, elo0 = {sprt.elo0:g}, "
                  f"elo1 = {sprt.elo1:g}, alpha = {sprt.alpha:g}, beta = {sprt.beta:g}, scored by "
                  f"{stop.scoring}; at most {cap} games")
        if design.vary:
            for i in range(len(conditions)):
                print(f"  {spec.condition_label(i)}: {design.games_per_condition} games")
        return 0
    from cluster.run.driver import run_study
    from cluster.run.tracker import RunContext, counts_text

    context = RunContext(command=command_line(args), overrides=tuple(args.set or ()), scale=args.scale,
                         unsets=tuple(args.unset or ()))
    result = run_study(spec, address=args.address, num_workers=args.workers,
                       progress=not args.no_progress, tracking=not args.no_tracking, context=context)
    from cluster.analysis.report import to_markdown

    print()
    if result.leaderboard is not None:
        from cluster.analysis.leaderboard import crosstable_markdown, leaderboard_markdown

        print(leaderboard_markdown(result.leaderboard).rstrip() + "\n")
        print(crosstable_markdown(result.leaderboard).rstrip() + "\n")
    if result.swiss is not None:
        from cluster.analysis.swiss import swiss_markdown

        print(swiss_markdown(result.swiss).rstrip() + "\n")
    if result.table is not None:
        print(to_markdown(result.table).rstrip())
    if result.condition_tables:  # e.g. against the view range
        print("\n" + result.condition_tables)
    if result.sequential is not None:
        from cluster.analysis.sequential import sequential_markdown

        print("\n" + sequential_markdown(result.sequential).rstrip())
    print(f"\ngames: {counts_text(result.counts)}  ({result.games_done} of {result.games_total} in the store)")
    print(f"results: {result.study_dir}")
    if result.mlflow_run_id:
        print(f"MLflow: run {result.mlflow_run_name!r} ({result.mlflow_run_id}) in experiment "
              f"{spec.tracking.experiment!r} at {spec.tracking.uri}  (browse: arena ui {result.study_dir})")
    return 0
