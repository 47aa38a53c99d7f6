"""``arena population``: export a learned population as a seed .npz."""
from __future__ import annotations

import sys

from . import non_negative_int


def add_parser(sub) -> None:
    """Register ``arena population`` and its options."""
    p = sub.add_parser("population", help="export a learned FEMCTS population as a seed .npz")
    psub = p.add_subparsers(dest="action", required=True)
    e = psub.add_parser("export", help="write a seat's population (default: its longest winning streak's)")
    e.add_argument("study", help="study directory, e.g. arena-studies/femcts-3a-nea2-unseeded")
    e.add_argument("--label", required=True, help="the seat's label in the lineup, e.g. FEMCTS")
    e.add_argument("--out", required=True, help="output .npz (name it as seed_population in a spec)")
    e.add_argument("--which", default="best_streak", choices=["best_streak", "final"],
                   help="best_streak (default): the population in force during the seat's longest "
                        "winning streak; final: the one saved after the last game")
    e.add_argument("--series", type=non_negative_int, help="only this series (default: every series of the study)")
    e.add_argument("--game", type=non_negative_int,
                   help="use the state saved after this game (index in its series) of each series: "
                        "with --which final that population, else the best-streak one recorded by then")
    e.set_defaults(func=run)


def run(args) -> int:
    from cluster.results.populations import PopulationExportError, export_population

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
