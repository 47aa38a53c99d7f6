"""One module per ``arena`` subcommand, each with ``add_parser(sub)`` (its options,
``--help`` text and ``set_defaults(func=...)``) and the function it runs.

:data:`COMMANDS` is the order ``arena --help`` lists them in; :mod:`jobs.cli`
builds the parser from it and turns errors into exit codes.
"""
from __future__ import annotations

import sys

__all__ = ["COMMANDS", "UsageError", "command_line", "positive_int", "non_negative_int"]

#: The subcommand modules, in the order of ``arena --help``.
COMMANDS = ("run", "sweep", "report", "population", "compare", "rate", "train_encoder", "ui", "play",
            "replay", "conformance", "train_birds", "bench", "pairs", "check_agent", "check_game", "agents", "games")


class UsageError(Exception):
    """Invalid input found by a subcommand (exit code 2, one line on stderr)."""


def command_line(args) -> str:
    """The command as a user would type it again (for MLflow's run description)."""
    import shlex

    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    return "arena " + " ".join(shlex.quote(a) for a in argv)


def _integer(text: str, least: int, what: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (e.g. ``--workers``)."""
    return _integer(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0 (e.g. a seed, a count that may be zero)."""
    return _integer(text, 0, "a non-negative integer")
