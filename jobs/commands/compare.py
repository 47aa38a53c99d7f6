"""``arena compare``: win ratio of the second lineup entry to the first across studies."""
from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    """Register ``arena compare`` and its options."""
    p = sub.add_parser("compare", help="win ratio of the 2nd lineup entry to the 1st across studies (plot)")
    p.add_argument("studies", nargs="+", help="study directories, e.g. arena-studies/xcom-mini-*")
    p.add_argument("--out", default="arena-studies/compare", help="directory for the table and plot")
    p.set_defaults(func=run)


def run(args) -> int:
    """Win ratio (second lineup entry's wins / first's) across studies, table and plot."""
    import pandas as pd

    from cluster.analysis.tables import markdown_table
    from cluster.analysis.learning_curves import ratio_plot, win_ratio
    from cluster.results.store import ResultStore

    ratios = []
    for study in args.studies:
        path = Path(study)
        if not (path / "results").is_dir():
            print(f"arena compare: {study}: not a study directory (no results/ inside)", file=sys.stderr)
            return 2
        rows = ResultStore(path).read()
        labels = list(dict.fromkeys(rows["label"])) if len(rows) else []
        if len(labels) < 2:
            found = f"only {labels[0]!r}" if labels else "no finished games"
            print(f"arena compare: {study}: a win ratio needs games between two lineup labels; {found}",
                  file=sys.stderr)
            return 2
        ratios.append({"study": path.name, **win_ratio(rows)})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(ratios)
    table.to_csv(out / "win_ratios.csv", index=False)
    print(markdown_table(["Study", "Opponent", "Opponent wins", "Learner wins", "Draws", "Ratio"],
                         [[r["study"], r["opponent"], r["opponent_wins"], r["learner_wins"], r["draws"],
                           f"{r['ratio']:.3f}"] for r in ratios], ["---"] * 2 + ["---:"] * 4))
    plot = ratio_plot(ratios, out / "win_ratios.png",
                      title=f"opponent wins / {ratios[0]['learner']} wins (below 1: {ratios[0]['learner']} stronger)")
    print(f"\nfiles: {out / 'win_ratios.csv'}, {plot}")
    return 0
