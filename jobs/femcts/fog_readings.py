"""FEMCTS's win rate per view range in finished studies, with 95% Wilson intervals (issue 38).

Each argument is ``NAME=STUDY_DIR[,STUDY_DIR...]`` (study results directories, as
``arena run`` writes them; several are pooled, e.g. the same reading at two
``study.seed`` values); one Markdown row per name and view range: the FEMCTS
seat's (in team mode, its team's) wins, ties and deaths (in team mode, of the
first FEMCTS seat), and the win % with its interval; then one row per name with the
trend, the win % at the widest view minus the narrowest (``--trend 0,4``, the
default) with its 95% interval (Newcombe's, :func:`cluster.stats.difference_interval`;
the two ranges' games as independent samples)::

    python -m jobs.femcts.fog_readings unseeded=/tmp/r/femcts-7-po-ffa [NAME=DIR ...] [--trend 0,4]
"""
from __future__ import annotations

import sys
from pathlib import Path


def femcts_by_range(*study_dirs: str | Path) -> dict:
    """``{view range: LabelSummary}`` of the FEMCTS seat (a team: its first seat, once
    per game), pooled over ``study_dirs``, in view-range order."""
    import pandas as pd

    from cluster.analysis.summary import LabelSummary

    from cluster.results.store import ResultStore

    seats = []
    for study_dir in study_dirs:
        if not Path(study_dir, "results").is_dir():
            raise SystemExit(f"{study_dir}: no results/ (not a study directory?)")
        df = ResultStore(study_dir).read()  # checked, one row per seat per game (StoreError names a bad file)
        if not len(df):
            raise SystemExit(f"{study_dir}: no games in the store")
        labels = sorted(label for label in df["label"].unique() if str(label).startswith("FEMCTS"))
        # a team's members share the result: one row per game
        seats.append(df[df["label"] == labels[0]].drop_duplicates("game_index"))
    seat = pd.concat(seats, ignore_index=True)
    # the cluster's one rule for which games count, and deaths
    return {vr: LabelSummary.of(g) for vr, g in seat.groupby("vary.view_range", sort=True)}


def femcts_rows(name: str, *study_dirs: str | Path) -> list[str]:
    """Markdown rows ``| name | range | games | W/T/L | died | win % (95% CI) |``, pooled
    over ``study_dirs``."""
    rows = []
    for vr, summary in femcts_by_range(*study_dirs).items():
        lo, hi = summary.interval("win")
        rows.append(f"| {name} | {vr} | {summary.games} | {summary.wtl()} | {summary.deaths} | "
                    f"{100 * summary.rate('win'):.0f}% ({100 * lo:.0f}-{100 * hi:.0f}) |")
    return rows


def trend_row(name: str, low: str, high: str, *study_dirs: str | Path) -> str:
    """``| name | win % at low | win % at high | high - low (95% CI) |`` in points; the
    difference's interval is Newcombe's (:func:`cluster.stats.difference_interval`)."""
    from cluster.stats import difference_interval

    by_range = {str(vr): summary for vr, summary in femcts_by_range(*study_dirs).items()}
    missing = [vr for vr in (low, high) if vr not in by_range]
    if missing:
        raise SystemExit(f"{name}: no games at view range {', '.join(missing)} "
                         f"(has {', '.join(by_range) or 'none'})")
    a, b = by_range[low], by_range[high]
    wins_a, wins_b = a.counts["win"], b.counts["win"]
    lo, hi = difference_interval(wins_b, b.games, wins_a, a.games)
    diff = 100 * (b.rate("win") - a.rate("win"))
    return (f"| {name} | {100 * a.rate('win'):.0f}% ({wins_a}/{a.games}) | "
            f"{100 * b.rate('win'):.0f}% ({wins_b}/{b.games}) | {diff:+.0f} ({100 * lo:+.0f} to {100 * hi:+.0f}) |")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    low, high = "0", "4"
    if "--trend" in argv:
        at = argv.index("--trend")
        value = argv[at + 1] if at + 1 < len(argv) else ""
        if value.count(",") != 1:
            print(f"--trend: expected two view ranges LOW,HIGH (e.g. 0,4), got {value!r}", file=sys.stderr)
            return 2
        low, high = (v.strip() for v in value.split(","))
        del argv[at:at + 2]
    if not argv or any("=" not in a for a in argv):
        print("usage: python -m jobs.femcts.fog_readings NAME=STUDY_DIR[,STUDY_DIR...] [...] [--trend 0,4]",
              file=sys.stderr)
        return 2
    readings = [(name, path.split(",")) for name, _, path in (a.partition("=") for a in argv)]
    print("| reading | range | games | FEMCTS W/T/L | FEMCTS died | FEMCTS win % (95% Wilson) |")
    print("|---|---|---:|---|---:|---|")
    for name, dirs in readings:
        for row in femcts_rows(name, *dirs):
            print(row)
    print(f"\n| reading | win % at range {low} | at range {high} | {high} - {low}, points (95% Newcombe) |")
    print("|---|---|---|---|")
    for name, dirs in readings:
        print(trend_row(name, low, high, *dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
