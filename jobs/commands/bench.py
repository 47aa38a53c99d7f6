"""``arena bench``: benchmarks (the targets of the bench wing's registry, :mod:`jobs.bench`)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import UsageError, positive_int

#: ``--rounds`` when not given: the paired check's rounds, the Java sitting's.
PAIRED_ROUNDS, JAVA_ROUNDS = 5, 3


def add_parser(sub) -> None:
    """Register ``arena bench`` and its options (the targets and their help from
    :data:`jobs.bench.TARGETS`)."""
    from jobs.bench import TARGETS

    p = sub.add_parser("bench", help="benchmarks (prints JSON with --json)")
    p.add_argument("target", choices=list(TARGETS),
                   help="; ".join(f"{t.name}: {t.measures}" for t in TARGETS.values())
                   + " (jobs/bench/README.md: what each measures, the latest figures)")
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
    p.add_argument("--rounds", type=positive_int, default=None,
                   help=f"--against: paired rounds (default {PAIRED_ROUNDS}); java: rounds of the sitting "
                        f"(default {JAVA_ROUNDS})")
    p.add_argument("--script", default=None,
                   help="--against: a probe script (prints one JSON object) run in both trees "
                        "instead of the benchmark, e.g. jobs/bench/probes/pommerman_search_cpu.py; its own "
                        "options follow '--' (... --script PROBE -- --iterations 50)")
    p.add_argument("--java-dir", type=Path, default=None,
                   help="java: the Java harness build's scratch folder (jp, jbuild, harness; see "
                        "jobs/bench/java_sitting.py)")
    p.add_argument("--out", type=Path, default=None,
                   help="java: folder for the raw outputs and the log (default: a new folder in /tmp)")
    p.set_defaults(func=run)


def _cmd_bench_paired(args) -> int:
    """``arena bench TARGET --against REV``: the paired speed check (jobs/bench/paired.py)."""
    import subprocess

    from jobs.bench import TARGETS
    from jobs.bench.paired import paired_bench

    if not TARGETS[args.target].pairable:
        raise UsageError(f"--against: the {args.target} target does not time this tree alone; "
                         f"pair a benchmark or a probe instead (--against REV with pommerman, ...)")
    probe = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.against}^{{commit}}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise UsageError(f"--against: not a git revision of this repository: {args.against!r}")
    rounds = PAIRED_ROUNDS if args.rounds is None else args.rounds
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
    result = paired_bench(bench_args, args.against, rounds, script=args.script,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=None if args.json else 1))
    return 0


def run(args) -> int:
    from jobs.bench import BenchInputError, BenchOptions, run_target

    if args.passthrough and (args.against is None or args.script is None):
        raise UsageError(f"arguments after '--' ({' '.join(args.passthrough)}): only a probe script takes "
                         f"them (--against REV --script PROBE -- ...)")
    if args.against is not None:
        return _cmd_bench_paired(args)
    options = BenchOptions(quick=args.quick, seconds=args.seconds, ruleset=args.ruleset, java_dir=args.java_dir,
                           rounds=JAVA_ROUNDS if args.rounds is None else args.rounds, out=args.out)
    try:
        result = run_target(args.target, options)
    except BenchInputError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>28}: {value:,.3f}" if isinstance(value, float) else f"{key:>28}: {value}")
    return 0
