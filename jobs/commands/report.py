"""``arena report``: re-print and re-plot a study from its Parquet data."""
from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    """Register ``arena report`` and its options."""
    p = sub.add_parser("report", help="re-print and re-plot a study from its Parquet data")
    p.add_argument("study", help="study directory (it holds results/), e.g. arena-studies/pommerman-ffa-demo")
    p.add_argument("--no-plot", action="store_true",
                   help="print the tables only; do not rewrite the plots and table files in <study>/report/")
    p.add_argument("--rounds", type=_positive_int, default=None, metavar="N",
                   help="a round robin or gauntlet: report its first N rounds only, each of which must be "
                        "complete (a tournament stopped before its last round, read as a shorter balanced one)")
    p.set_defaults(func=run)


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def run(args) -> int:
    from cluster.analysis.report import NotAStudyError, RoundsError, report_study

    try:
        text = report_study(Path(args.study), plot=not args.no_plot, rounds=args.rounds)
    except (NotAStudyError, RoundsError) as exc:
        print(f"arena report: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
