"""``arena pairs``: scores and point margins over boards (seat-swapped games averaged)."""
from __future__ import annotations

from pathlib import Path

from . import UsageError


def add_parser(sub) -> None:
    """Register ``arena pairs`` and its options."""
    p = sub.add_parser("pairs", help="mean result and point margin per board, 95%% t intervals over "
                                     "boards, and paired differences between studies",
                       description="For two-player studies that play every board with the seats "
                                   "swapped: each board's games averaged first, then a 95%% Student "
                                   "t interval over the boards (mean result: win 1, tie 0.5; point "
                                   "margin). With --diff, each study's per-board difference from the "
                                   "first study's on the boards both played.")
    p.add_argument("studies", nargs="+", metavar="STUDY", help="study directories (each holds results/)")
    p.add_argument("--label", default=None,
                   help="the player to report (default: the first label of each study's rows)")
    p.add_argument("--diff", action="store_true",
                   help="also each study's per-board difference from the first study's")
    p.set_defaults(func=run)


def run(args) -> int:
    from cluster.analysis.board_pairs import load_study, summary_table

    studies = []
    try:
        for study in args.studies:
            df = load_study(study)
            studies.append((Path(study).name, df, args.label or str(df["label"].iloc[0])))
        print(summary_table(studies, diff=args.diff))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0
