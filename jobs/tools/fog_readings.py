"""FEMCTS's win rate per view range in finished studies, with 95% Wilson intervals (issue 38).

Each argument is ``NAME=STUDY_DIR[,STUDY_DIR...]`` (study results directories, as
``arena run`` writes them; several are pooled, e.g. the same reading at two
``study.seed`` values); one Markdown row per name and view range: the FEMCTS
seat's (in team mode, its team's) wins, ties and deaths (in team mode, of the
first FEMCTS seat), and the win % with its interval::

    python -m jobs.tools.fog_readings unseeded=/tmp/r/femcts-7-po-ffa [NAME=DIR ...]
"""
from __future__ import annotations

import sys
from pathlib import Path


def femcts_rows(name: str, *study_dirs: str | Path) -> list[str]:
    """Markdown rows ``| name | range | games | W/T/L | died | win % (95% CI) |``, pooled
    over ``study_dirs``."""
    import pandas as pd

    from cluster.analysis.summary import LabelSummary

    seats = []
    for study_dir in study_dirs:
        parts = sorted(Path(study_dir, "results").glob("*.parquet"))
        if not parts:
            raise SystemExit(f"{study_dir}: no results/*.parquet (not a study directory?)")
        df = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        labels = sorted(label for label in df["label"].unique() if str(label).startswith("FEMCTS"))
        # a team's members share the result: one row per game
        seats.append(df[df["label"] == labels[0]].drop_duplicates("game_index"))
    seat = pd.concat(seats, ignore_index=True)
    rows = []
    for vr, g in seat.groupby("vary.view_range", sort=True):
        summary = LabelSummary.of(g)  # the cluster's one rule for which games count, deaths
        lo, hi = summary.interval("win")
        rows.append(f"| {name} | {vr} | {summary.games} | {summary.wtl()} | {summary.deaths} | "
                    f"{100 * summary.rate('win'):.0f}% ({100 * lo:.0f}-{100 * hi:.0f}) |")
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or any("=" not in a for a in argv):
        print("usage: python -m jobs.tools.fog_readings NAME=STUDY_DIR [...]", file=sys.stderr)
        return 2
    print("| reading | range | games | FEMCTS W/T/L | FEMCTS died | FEMCTS win % (95% Wilson) |")
    print("|---|---|---:|---|---:|---|")
    for arg in argv:
        name, _, path = arg.partition("=")
        for row in femcts_rows(name, *path.split(",")):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
