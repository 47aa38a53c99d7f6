"""One module per ``arena`` subcommand, each with ``add_parser(sub)`` (its options,
``--help`` text and ``set_defaults(func=...)``) and the function it runs.

:data:`COMMANDS` is the order ``arena --help`` lists them in; :mod:`jobs.cli`
builds the parser from it and turns errors into exit codes.
"""
from __future__ import annotations

import sys

__all__ = ["COMMANDS", "UsageError", "command_line"]

#: The subcommand modules, in the order of ``arena --help``.
COMMANDS = ("run", "sweep", "report", "population", "compare", "rate", "train_encoder", "ui", "play",
            "replay", "conformance", "train_birds", "bench", "pairs", "check_agent")


class UsageError(Exception):
    """Invalid input found by a subcommand (exit code 2, one line on stderr)."""


def command_line(args) -> str:
    """The command as a user would type it again (for MLflow's run description)."""
    import shlex

    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    return "arena " + " ".join(shlex.quote(a) for a in argv)
