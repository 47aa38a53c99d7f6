"""``arena replay``: re-simulate a recorded game, check it, render it."""
from __future__ import annotations

import sys
from pathlib import Path

from . import non_negative_int


def add_parser(sub) -> None:
    """Register ``arena replay`` and its options."""
    p = sub.add_parser("replay", help="re-simulate a recorded game, check it step by step, render it",
                       description="Re-simulate a recorded game from its record, checking at every "
                                   "step that it reproduces what was recorded, and render it.")
    p.add_argument("target", help="a study directory (then give GAME) or a record file from "
                                  "`arena play --record`")
    p.add_argument("game", type=non_negative_int, nargs="?", help="game index in the study (the game_index column)")
    p.add_argument("--png", type=non_negative_int, metavar="STEP", help="write the frame of STEP (0 = initial state)")
    p.add_argument("--gif", action="store_true", help="write an animation (one frame per state)")
    p.add_argument("--html", action="store_true",
                   help="write a self-contained page: step slider, play/pause, per-step details")
    p.add_argument("--view", type=int, metavar="SEAT",
                   help="draw the board as SEAT observes it (fog) instead of the true state")
    p.add_argument("--out", help="output directory (default: the current directory)")
    p.set_defaults(func=run)


def run(args) -> int:
    from cluster.replay.records import RecordError, ReplayMismatch, load_record, load_study_record, verify
    from cluster.replay.view import write_gif, write_html, write_png

    target = Path(args.target)
    try:
        if target.is_dir():
            if not (target / "spec.json").is_file():
                raise RecordError(f"{target}: not a study directory (no spec.json inside) nor a record file")
            if args.game is None:
                raise RecordError(f"{target} is a study directory: name a game index, e.g. arena replay {target} 0")
            try:
                record = load_study_record(target, args.game)
            except RecordError as exc:
                if "no record of game" not in str(exc):
                    raise
                raise RecordError(f"{target}: no record of game {args.game} (records/ holds the games "
                                  "this version of Arena played)") from None
            stem = f"{target.name}-game-{args.game:06d}"
            where = f"{target} game {args.game}"
        else:
            if args.game is not None:
                raise RecordError(f"{target}: a record file takes no game index")
            stem, where = target.stem, target
            record = load_record(target)
        out = Path(args.out) if args.out else Path.cwd()
        out.mkdir(parents=True, exist_ok=True)
        suffix = f"-view{args.view}" if args.view is not None else ""
        if args.view is not None and not 0 <= args.view < record.num_players:
            raise RecordError(f"--view: seat must be in [0, {record.num_players - 1}], got {args.view}")
        written = []
        if args.png is not None:
            written.append(write_png(record, args.png, out / f"{stem}{suffix}-step{args.png:04d}.png", args.view))
        if args.gif:
            written.append(write_gif(record, out / f"{stem}{suffix}.gif", args.view))
        if args.html:
            written.append(write_html(record, out / f"{stem}{suffix}.html", args.view))
        if not written:
            verify(record)
    except (RecordError, ValueError) as exc:
        print(f"arena replay: {exc}", file=sys.stderr)
        return 2
    except ReplayMismatch as exc:
        print(f"arena replay: {where}: mismatch at {exc}", file=sys.stderr)
        return 1
    print(f"{where}: {record.length} steps replayed, every step matches the record")
    for item in written:
        print(f"wrote {item} ({item.stat().st_size:,} bytes)")
    return 0
