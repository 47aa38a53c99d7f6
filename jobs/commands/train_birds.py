"""``arena train-birds``: train the bird game's linear policy."""
from __future__ import annotations


def add_parser(sub) -> None:
    """Register ``arena train-birds`` and its options."""
    p = sub.add_parser("train-birds", help="train the bird game's linear policy (REINFORCE), log to MLflow")
    from jobs.birds.train_policy import add_arguments, main as train_birds_main

    add_arguments(p)
    p.set_defaults(func=train_birds_main)
