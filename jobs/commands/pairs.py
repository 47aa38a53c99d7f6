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


def _game_table(study) -> dict | None:
    """The study's ``[game]`` table from its ``spec.json`` (None without one)."""
    import json

    path = Path(study) / "spec.json"
    if not path.is_file():
        return None
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["game"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: cannot read the study's game ({type(exc).__name__}: {exc})") from None


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
            first = _game_table(args.studies[0])
            for study in args.studies[1:]:
                other = _game_table(study)
                if first is not None and other is not None and first != other:
                    key = next(k for k in sorted(set(first) | set(other), key=lambda k: (k != "name", k))
                               if first.get(k) != other.get(k))
                    what = "games" if key == "name" else f"game.{key}"
                    raise UsageError(f"--diff: {what}: {args.studies[0]} has {first.get(key)!r}, {study} has "
                                     f"{other.get(key)!r}; paired differences need the same boards of one game")
        print(summary_table(studies, diff=args.diff))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return 0
