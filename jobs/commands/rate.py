"""``arena rate``: Bradley-Terry ratings over studies of one game."""
from __future__ import annotations

from pathlib import Path

from . import UsageError, command_line, non_negative_int


def add_parser(sub) -> None:
    """Register ``arena rate`` and its options."""
    p = sub.add_parser("rate", help="Bradley-Terry ratings with 95%% bootstrap intervals over studies "
                                    "of one game",
                       description="Rate every player (agent label + config hash) over the finished "
                                   "games of one or more studies of one game and condition: "
                                   "Bradley-Terry with ties (Davidson) by maximum likelihood, an FFA "
                                   "game counted as the pairwise results it implies, 95% intervals "
                                   "from a bootstrap over boards. Prints the table, writes it as "
                                   "Markdown/CSV with a plot, and logs them to MLflow.")
    p.add_argument("studies", nargs="+", metavar="STORE_OR_STUDY",
                   help="study directories, or results folders holding studies (e.g. arena-studies)")
    p.add_argument("--anchor", metavar="LABEL",
                   help="fix this player's rating (a label, or 'label [hash]' when the label has "
                        "several configs); default: the mean rating is fixed")
    p.add_argument("--anchor-rating", type=float, default=0.0, metavar="R",
                   help="the anchor's (or the mean's) rating, e.g. 1500 (default 0)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the bootstrap (default 0): same seed, same table")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    p.add_argument("--resample", default="boards", choices=["boards", "games"],
                   help="bootstrap unit: boards (a board seed with all its seat rotations, default) or games")
    p.add_argument("--condition", help="with design.vary studies: the condition to rate, e.g. view_range=2")
    p.add_argument("--game", help="only the studies of this game (when a results folder holds several)")
    p.add_argument("--out", default="arena-studies/ratings",
                   help="directory for ratings.md, ratings.csv and ratings.png (default arena-studies/ratings)")
    p.add_argument("--tracking-uri", help="MLflow store (default: the first study's, else sqlite:///mlflow.db)")
    p.add_argument("--experiment", default="arena-ratings", help="MLflow experiment (default arena-ratings)")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=run)


def run(args) -> int:
    """Ratings of every player (label + config hash) over studies of one game and condition."""
    from cluster.analysis.ratings import (RatingError, default_tracking_uri, load_rows, log_ratings, rate,
                                 ratings_markdown, write_ratings)

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory (the ratings are written into it: ratings.md, "
                         f"ratings.csv, ratings.png)")
    try:
        pooled = load_rows(args.studies, condition=args.condition, game=args.game)
        table = rate(pooled.rows, anchor=args.anchor, anchor_rating=args.anchor_rating, seed=args.seed,
                     bootstrap=args.bootstrap, resample=args.resample)
    except RatingError as exc:
        raise UsageError(str(exc)) from None
    games = pooled.rows.drop_duplicates(["study_id", "game_index"]).shape[0]
    print(f"{len(pooled.studies)} stud{'y' if len(pooled.studies) == 1 else 'ies'}, {games} games of "
          f"{pooled.game.name}" + (f" ({pooled.condition})" if pooled.condition else ""))
    print()
    print(ratings_markdown(table).rstrip())
    try:
        files = write_ratings(table, out, title=f"Ratings: {pooled.game.name}")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write the ratings there ({exc.strerror or exc})") from None
    print(f"\nfiles: {', '.join(str(f) for f in files)}")
    if not args.no_tracking:
        from cluster.tracking import TrackingUnavailable, bounded_http, probe_server

        uri = args.tracking_uri or default_tracking_uri(pooled.studies)
        try:
            probe_server(uri)
        except TrackingUnavailable as exc:
            raise UsageError(f"MLflow at {uri}: {exc}; the ratings are in {args.out} (not logged; "
                             f"--no-tracking skips MLflow)") from None
        with bounded_http(uri):
            run_id, _ = log_ratings(table, files, pooled, uri, args.experiment, command=command_line(args))
        print(f"MLflow: run {run_id} in experiment {args.experiment!r} at {uri}")
    return 0
