"""``arena train-encoder``: train the XCOM Conv-AE encoder."""
from __future__ import annotations

import argparse
import sys

from . import non_negative_int, positive_int


def _channels_arg(text: str) -> tuple[int, int]:
    try:
        c1, c2 = (int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected C1,C2 (two ints), got {text!r}") from None
    return c1, c2


def add_parser(sub) -> None:
    """Register ``arena train-encoder`` and its options."""
    p = sub.add_parser("train-encoder", help="train the XCOM Conv-AE encoder (needs the train extra)")
    p.add_argument("--board", default="mini", help="mini, large or a layout file")
    p.add_argument("--samples", type=positive_int, help="dataset size (default 10000 for 6x6, 60000 for 18x18)")
    p.add_argument("--epochs", type=positive_int, default=10, help="training epochs (default 10)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--batch-size", type=positive_int, default=16, help="mini-batch size (default 16)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the dataset and the initial weights (default 0)")
    p.add_argument("--out", help="encoder .npz (default arena-encoders/encoder_<n>x<n>.npz)")
    p.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    p.add_argument("--channels", type=_channels_arg, metavar="C1,C2",
                   help="conv channels (default the board's: 8,16 on 6x6, 4,8 on 18x18)")
    p.add_argument("--tracking-uri", default="sqlite:///mlflow.db",
                   help="MLflow store for the loss curve and the encoder (default sqlite:///mlflow.db)")
    p.add_argument("--experiment", default="arena-encoders", help="MLflow experiment (default arena-encoders)")
    p.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    p.set_defaults(func=run)


def run(args) -> int:
    from jobs.xcom.train_encoder import train_encoder_job

    try:
        train_encoder_job(board=args.board, samples=args.samples, epochs=args.epochs, lr=args.lr,
                          batch_size=args.batch_size, seed=args.seed, out=args.out,
                          tracking_uri=None if args.no_tracking else args.tracking_uri,
                          experiment=args.experiment, threads=args.threads, channels=args.channels)
    except (ValueError, RuntimeError) as exc:
        print(f"arena train-encoder: {exc}", file=sys.stderr)
        return 2
    return 0
