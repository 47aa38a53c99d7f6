"""``arena conformance``: replay golden trajectories and report mismatches."""
from __future__ import annotations

from pathlib import Path

from . import UsageError


def add_parser(sub) -> None:
    """Register ``arena conformance`` and its options."""
    p = sub.add_parser("conformance", help="replay golden trajectories and report mismatches")
    p.add_argument("game", choices=["pommerman"], help="the game whose trajectories these are")
    p.add_argument("files", nargs="+", help="gzip JSONL trajectory files")
    p.set_defaults(func=run)


def run(args) -> int:
    """Exit 0: no mismatches; 1: mismatches found; 2: invalid input (unknown game,
    missing file, not a gzip JSONL trajectory file)."""
    if args.game != "pommerman":
        raise UsageError(f"no golden format for game {args.game!r}")
    from games.pommerman.conformance import ConformanceReport, check_files

    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise UsageError(f"file not found: {missing[0]}")
    report = ConformanceReport()
    for path in args.files:
        try:
            part = check_files([path])
        except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise UsageError(f"{path}: not a readable golden trajectory file "
                             f"(gzip JSONL): {type(exc).__name__}: {exc}") from exc
        report.trajectories += part.trajectories
        report.steps += part.steps
        report.mismatches += part.mismatches
    print(report.summary())
    for mismatch in report.mismatches:
        print(f"  {mismatch}")
    return 1 if report.mismatches else 0
