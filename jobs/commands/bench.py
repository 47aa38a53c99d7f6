"""``arena bench``: benchmarks."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import UsageError, positive_int


def add_parser(sub) -> None:
    """Register ``arena bench`` and its options."""
    p = sub.add_parser("bench", help="benchmarks (prints JSON with --json)")
    p.add_argument("target", choices=["pommerman", "scotland_yard", "birds", "xcom", "cluster",
                                       "pettingzoo", "plugins"],
                   help="pommerman: engine and search speed; scotland_yard: moves and MCTS iterations "
                        "per second; birds: random games and MCTS iterations per CPU-second; xcom: "
                        "moves per second and decision times; cluster: scheduling overhead and scaling; "
                        "pettingzoo: the PettingZoo face's time per step against the kernel step, "
                        "every game; plugins: a pure-Python agent's cost per decision inside a study "
                        "(median of 3 runs)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"],
                   help="pommerman: the ruleset to time (default canonical)")
    p.add_argument("--seconds", type=float, default=3.0, help="engine timing length")
    p.add_argument("--quick", action="store_true",
                   help="shorter runs, no start-up timing (pommerman: without --quick, cold_start_s is "
                        "an `arena play` of four agents from an empty numba cache, warm_start_s the same "
                        "again; see jobs/bench/pommerman/cold_start.py)")
    p.add_argument("--against", metavar="REV", default=None,
                   help="paired check: run this benchmark for the working tree and for git revision "
                        "REV (e.g. main), each in its own process and tree, interleaved over "
                        "--rounds rounds, and print each figure's ratio tree / REV with its spread "
                        "(JSON; see jobs/bench/paired.py)")
    p.add_argument("--rounds", type=positive_int, default=5, help="--against: paired rounds (default 5)")
    p.add_argument("--script", default=None,
                   help="--against: a probe script (prints one JSON object) run in both trees "
                        "instead of the benchmark, e.g. jobs/bench/probes/pommerman_search_cpu.py; its own "
                        "options follow '--' (... --script PROBE -- --iterations 50)")
    p.set_defaults(func=run)


def _cmd_bench_paired(args) -> int:
    """``arena bench GAME --against REV``: the paired speed check (jobs/bench/paired.py)."""
    import subprocess

    from jobs.bench.paired import paired_bench

    probe = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise UsageError(f"--against: not a git revision of this repository: {args.against!r}")
    if args.rounds < 1:
        raise UsageError(f"--rounds: must be >= 1, got {args.rounds}")
    if args.script is not None:
        if not Path(args.script).is_file():
            raise UsageError(f"--script: file not found: {args.script}")
        bench_args = (["--ruleset", args.ruleset] if args.target == "pommerman" else []) + args.passthrough
    else:
        bench_args = [args.target, "--seconds", str(args.seconds)]
        if args.target == "pommerman":
            bench_args += ["--ruleset", args.ruleset]
        if args.quick:
            bench_args.append("--quick")
    result = paired_bench(bench_args, args.against, args.rounds, script=args.script,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=None if args.json else 1))
    return 0


def run(args) -> int:
    if args.passthrough and (args.against is None or args.script is None):
        raise UsageError(f"arguments after '--' ({' '.join(args.passthrough)}): only a probe script takes "
                         f"them (--against REV --script PROBE -- ...)")
    if args.against is not None:
        return _cmd_bench_paired(args)
    if args.target == "pommerman":
        from jobs.bench.pommerman.engine import bench_engine

        result = {"ruleset": args.ruleset}
        result.update(bench_engine(ruleset=args.ruleset, seconds=args.seconds))
        from jobs.bench.pommerman.search import bench_agents

        result.update(bench_agents(games=1 if args.quick else 3,
                                   decisions_per_game=15 if args.quick else 40,
                                   ruleset=args.ruleset))
        if not args.quick:
            from jobs.bench.pommerman.cold_start import bench_cold_start

            result.update(bench_cold_start(args.ruleset))
    elif args.target == "scotland_yard":
        from jobs.bench.scotland_yard import bench_search

        result = bench_search(quick=args.quick)
    elif args.target == "cluster":
        from jobs.bench.cluster import bench_cluster

        result = bench_cluster(quick=args.quick)
    elif args.target == "birds":
        from jobs.bench.birds import bench_birds

        result = bench_birds(seconds=args.seconds, quick=args.quick)
    elif args.target == "xcom":
        from jobs.bench.xcom import bench_xcom

        result = bench_xcom(quick=args.quick)
    elif args.target == "pettingzoo":
        from jobs.bench.pettingzoo import bench_pettingzoo

        result = bench_pettingzoo(quick=args.quick)
    elif args.target == "plugins":
        from jobs.bench.plugins import bench_plugins

        result = bench_plugins(games=1 if args.quick else 4, max_steps=60 if args.quick else 200)
    else:  # pragma: no cover - argparse restricts choices
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    return 0
