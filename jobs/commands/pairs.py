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


def _game_of(study):
    """The study's game and options from its stored spec (None without one)."""
    from cluster.results.store import StoreError, read_stored_spec

    try:
        stored = read_stored_spec(study)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    return stored.game if stored is not None else None


def run(args) -> int:
    from cluster.analysis.board_pairs import load_study, summary_table

    studies = []
    try:
        for study in args.studies:
            df = load_study(study)
            if not len(df):
                raise UsageError(f"{study}: no finished games (results/ is empty)")
            studies.append((Path(study).name, df, args.label or str(df["label"].iloc[0])))
        if args.diff:  # a board seed is the same board only in the same game with the same options
            first = _game_of(args.studies[0])
            for study in args.studies[1:]:
                other = _game_of(study)
                difference = first.first_difference(other) if first is not None and other is not None else None
                if difference is not None:
                    what, theirs, ours = difference
                    raise UsageError(f"--diff: {what}: {args.studies[0]} has {theirs!r}, {study} has "
                                     f"{ours!r}; paired differences need the same boards of one game")
        print(summary_table(studies, diff=args.diff))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0
