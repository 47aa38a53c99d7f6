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
    p.set_defaults(func=run)


def run(args) -> int:
    from cluster.analysis.report import NotAStudyError, report_study

    try:
        text = report_study(Path(args.study), plot=not args.no_plot)
    except NotAStudyError as exc:
        print(f"arena report: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
