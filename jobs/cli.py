"""The ``arena`` command line: run studies, play games, check conformance, benchmark.

    arena run jobs/pommerman_ffa_demo.toml        # a tournament on local Ray, tracked in MLflow
    arena report arena-studies/<study>            # re-print and re-plot a study from its Parquet data
    arena ui                                      # MLflow UI on 127.0.0.1 for the configured store
    arena play --agents mcts,rhea,osla,random --seed 3 --show
    arena conformance pommerman FILE...
    arena bench pommerman --json | arena bench cluster --json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _cmd_conformance(args) -> int:
    if args.game != "pommerman":
        print(f"conformance: no golden format for game {args.game!r}", file=sys.stderr)
        return 2
    from games.pommerman.conformance import check_files

    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        print(f"conformance: file not found: {missing[0]}", file=sys.stderr)
        return 2
    report = check_files(args.files)
    print(report.summary())
    for mismatch in report.mismatches:
        print(f"  {mismatch}")
    return 1 if report.mismatches else 0


def parse_value(text: str):
    """A TOML scalar (``2``, ``0.5``, ``true``, ``"x"``), else the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _parse_agent_spec(text: str):
    """``name`` or ``name:key=value;key=value`` -> (name, params)."""
    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(";")):
        key, eq, value = item.partition("=")
        if not eq:
            raise SystemExit(f"--agents: expected key=value in {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def _cmd_play(args) -> int:
    import numpy as np

    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_game

    options = {"mode": args.mode, "ruleset": args.ruleset}
    if args.view_range is not None:
        options["view_range"] = args.view_range
    if args.collapse is not None:
        options["collapse"] = args.collapse
    if args.max_steps:
        options["max_steps"] = args.max_steps
    try:
        game = make_game("pommerman", **options)
        budget = Budget(iterations=args.iterations) if args.iterations else Budget(ms=args.ms)
        specs = [_parse_agent_spec(s) for s in args.agents.split(",")]
        if len(specs) != game.num_players:
            raise ValueError(f"--agents: expected {game.num_players} agents, got {len(specs)}")
        agents = [make_agent(name, params, budget, game.config) for name, params in specs]
    except ValueError as exc:
        print(f"arena play: {exc}", file=sys.stderr)
        return 2
    root = np.random.SeedSequence(args.seed)
    game.reset(np.random.SeedSequence(args.seed, spawn_key=(0,)))
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(args.seed, spawn_key=(1, seat)))
    del root
    if args.show:
        print(game.render(), "\n")
    from cluster.play import acting_players

    while not game.done:
        actions = [0] * len(agents)
        for i in acting_players(game):
            actions[i] = agents[i].act(game.observation(i))
        game.step(actions)
        if args.show:
            print(f"actions {actions}")
            print(game.render(), "\n")
    outcomes = game.outcomes()
    rewards = game.returns()
    print(f"seed {args.seed}  {args.mode} / {args.ruleset}  length {game.step_count}")
    print(f"{'seat':<5}{'agent':<14}{'team':<6}{'result':<8}{'reward':>7}{'it/dec':>9}{'ms/dec':>9}{'invalid':>9}")
    for i, agent in enumerate(agents):
        print(f"{i:<5}{specs[i][0]:<14}{game.teams()[i]:<6}{outcomes[i]:<8}{rewards[i]:>7.0f}"
              f"{agent.mean_iterations:>9.0f}{agent.mean_ms:>9.2f}{int(game.invalid_actions[i]):>9}")
    return 0


def _cmd_bench(args) -> int:
    if args.target == "pommerman":
        from games.pommerman.engine_speed import bench_engine, bench_start

        result = {"ruleset": args.ruleset}
        result.update(bench_engine(ruleset=args.ruleset, seconds=args.seconds))
        from agents.pommerman.search_speed import bench_agents

        result.update(bench_agents(games=1 if args.quick else 3,
                                   decisions_per_game=15 if args.quick else 40,
                                   ruleset=args.ruleset))
        if not args.quick:
            result.update(bench_start())
    elif args.target == "cluster":
        from cluster.scaling_bench import bench_cluster

        result = bench_cluster(quick=args.quick)
    else:  # pragma: no cover - argparse restricts choices
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    return 0


def _load_spec_or_exit(args):
    from jobs.spec import SpecError, load_spec

    try:
        return load_spec(args.spec, overrides=args.set or (), scale=args.scale)
    except SpecError as exc:
        print(f"arena: invalid spec {args.spec}: {exc}", file=sys.stderr)
        raise SystemExit(2)


def _cmd_run(args) -> int:
    spec = _load_spec_or_exit(args)
    if args.check:
        print(f"{args.spec}: valid ({spec.design.total_games} games)")
        return 0
    from cluster.study import run_study

    result = run_study(spec, address=args.address, num_workers=args.workers,
                       progress=not args.no_progress, tracking=not args.no_tracking)
    from cluster.report import to_markdown

    print()
    print(to_markdown(result.table))
    print(f"\nresults: {result.study_dir}")
    if result.mlflow_run_id:
        print(f"MLflow: run {result.mlflow_run_id} in experiment {spec.tracking.experiment!r} "
              f"at {spec.tracking.uri}  (browse: arena ui --tracking-uri {spec.tracking.uri})")
    return 0


def _cmd_sweep(args) -> int:
    from jobs.spec import SweepError, load_sweep

    try:
        sweep = load_sweep(args.sweep, overrides=args.set or (), scale=args.scale)
    except SweepError as exc:
        print(f"arena: invalid sweep {args.sweep}: {exc}", file=sys.stderr)
        return 2
    print(f"sweep {sweep.name}: {sweep.total_trials} trial(s) x {sweep.games_per_trial} games, "
          f"scheduler {sweep.scheduler}, searcher {sweep.searcher}; re-evaluating the top "
          f"{sweep.top_k} on {sweep.reeval_games} games each")
    if args.check:
        return 0
    from cluster.sweep import run_sweep

    result = run_sweep(sweep, address=args.address, resume=args.resume, progress=not args.no_progress,
                       tracking=not args.no_tracking)
    print()
    print(result.markdown)
    print(f"sweep directory: {result.sweep_dir}  ({result.seconds:.0f} s)")
    if result.population is not None:
        print(f"best population: {result.population}  (use as seed_population)")
    if result.parent_run_id:
        print(f"MLflow: parent run {result.parent_run_id} in experiment "
              f"{sweep.tracking['experiment']!r} at {sweep.tracking['uri']}")
    return 0


def _cmd_report(args) -> int:
    from cluster.report import report_study

    print(report_study(Path(args.study), plot=not args.no_plot))
    return 0


def _cmd_population(args) -> int:
    from cluster.populations import PopulationExportError, export_population

    try:
        info = export_population(args.study, args.label, args.out, which=args.which,
                                 series=args.series, game=args.game)
    except (PopulationExportError, ValueError) as exc:
        print(f"arena population export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {info['out']}: population {tuple(info['shape'])} of {info['label']!r} "
          f"(series {info['series_id']}, after game {info['index_in_series']}, "
          f"longest winning streak {info['best_streak']}, {info['which']})")
    return 0


def _cmd_ui(args) -> int:
    import os
    import subprocess

    cmd = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", args.tracking_uri,
           "--host", args.host, "--port", str(args.port)]
    print(f"MLflow UI for {args.tracking_uri} at http://{args.host}:{args.port}  (Ctrl-C to stop)")
    return subprocess.call(cmd, env=dict(os.environ))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a study spec (TOML) on Ray, tracked in MLflow")
    p.add_argument("spec", help="study spec, e.g. jobs/pommerman_ffa_demo.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--workers", type=int, help="game-hosting actors (default: one per CPU)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a spec field, e.g. --set design.seeds=2 (repeatable)")
    p.add_argument("--scale", type=float, help="shrink the design by this factor for a quick try")
    p.add_argument("--check", action="store_true", help="validate the spec and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("sweep", help="hyperparameter sweep (Ray Tune) over a study's agent parameters")
    p.add_argument("sweep", help="sweep spec, e.g. jobs/sweeps/femcts_ffa.toml")
    p.add_argument("--address", help="Ray cluster address (default: a local embedded Ray)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a sweep field, e.g. --set sweep.games_per_trial=8 or "
                        "--set base.budget.ms=10 (repeatable)")
    p.add_argument("--scale", type=float,
                   help="quick try: keep the first ceil(n*F) values of each grid axis and scale "
                        "games per trial and re-evaluation games by F")
    p.add_argument("--resume", action="store_true",
                   help="resume the sweep's Tune experiment (also automatic when it exists)")
    p.add_argument("--check", action="store_true", help="validate the sweep spec and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress table")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("report", help="re-print and re-plot a study from its Parquet data")
    p.add_argument("study", help="study directory, e.g. arena-studies/pommerman-ffa-demo")
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("population", help="export a learned FEMCTS population as a seed .npz")
    psub = p.add_subparsers(dest="action", required=True)
    e = psub.add_parser("export", help="write a seat's population (default: its longest winning streak's)")
    e.add_argument("study", help="study directory, e.g. arena-studies/femcts-3a-nea2-unseeded")
    e.add_argument("--label", required=True, help="the seat's label in the lineup, e.g. FEMCTS")
    e.add_argument("--out", required=True, help="output .npz (name it as seed_population in a spec)")
    e.add_argument("--which", default="best_streak", choices=["best_streak", "final"])
    e.add_argument("--series", type=int, help="only this series")
    e.add_argument("--game", type=int, help="the state saved after this game of the series")
    e.set_defaults(func=_cmd_population)

    p = sub.add_parser("ui", help="start the MLflow UI on 127.0.0.1")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.set_defaults(func=_cmd_ui)

    p = sub.add_parser("play", help="play one Pommerman game between named agents")
    p.add_argument("--agents", default="mcts,rhea,osla,rule_based",
                   help="four agents, comma separated; parameters as name:key=value;key=value")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", default="ffa", choices=["ffa", "team"])
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"])
    p.add_argument("--collapse", action=argparse.BooleanOptionalAction, default=None,
                   help="java ruleset: board collapse (default: on for java, as in the framework)")
    p.add_argument("--view-range", type=int, choices=[0, 1, 2, 3, 4], help="partial observability")
    p.add_argument("--max-steps", type=int)
    p.add_argument("--ms", type=float, default=40.0, help="milliseconds per decision (default 40)")
    p.add_argument("--iterations", type=int, help="iterations per decision (reproducible games)")
    p.add_argument("--show", action="store_true", help="print the board every step")
    p.set_defaults(func=_cmd_play)

    p = sub.add_parser("conformance", help="replay golden trajectories and report mismatches")
    p.add_argument("game", choices=["pommerman"])
    p.add_argument("files", nargs="+", help="gzip JSONL trajectory files")
    p.set_defaults(func=_cmd_conformance)

    p = sub.add_parser("bench", help="benchmarks (prints JSON with --json)")
    p.add_argument("target", choices=["pommerman", "cluster"])
    p.add_argument("--json", action="store_true")
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"])
    p.add_argument("--seconds", type=float, default=3.0, help="engine timing length")
    p.add_argument("--quick", action="store_true", help="shorter runs, no start-up timing")
    p.set_defaults(func=_cmd_bench)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
