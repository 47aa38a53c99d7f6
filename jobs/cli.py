"""The ``arena`` command line: run studies and sweeps, play games, check conformance, benchmark.

examples (one per subcommand; `arena <subcommand> --help` for its options):
  arena run jobs/pommerman_ffa_demo.toml --scale 0.25       # 2 boards x 4 seat rotations = 8 games
  arena sweep jobs/sweeps/femcts_ffa.toml --scale 0.4 --check   # validate a Ray Tune sweep, print its size
  arena report arena-studies/pommerman-ffa-demo            # tables and plots from a study's Parquet data
  arena population export arena-studies/femcts-3a-nea2-unseeded --label FEMCTS --out seeds/nea2.npz
  arena ui arena-studies/pommerman-ffa-demo --open          # the study's run in the MLflow UI (127.0.0.1)
  arena play --agents mcts,rhea,osla,random --seed 3 --view-range 2 --show-view 0
  arena replay arena-studies/pommerman-ffa-demo 12 --html   # re-simulate a game, check it, render it
  arena conformance pommerman GOLDEN/pommerman/*.jsonl.gz   # replay recorded reference trajectories
  arena bench pommerman --json                              # engine and search speed as JSON
  arena bench pommerman --quick --against main              # paired: this tree / main, 5 interleaved rounds
  arena bench scotland_yard --json                          # moves and MCTS iterations per second
  arena bench birds --json                                  # random games and MCTS iterations per CPU-second
  arena train-birds --out jobs/birds/policy/birds_policy.npz   # train the bird policy, log it to MLflow
  arena bench xcom --json                                   # XCOM moves per second, decision times
  arena train-encoder --board mini                          # XCOM autoencoder (needs the train extra)
  arena compare arena-studies/xcom-mini-convae-vs-*         # win ratio across studies (plot)
  arena rate arena-studies/pommerman-ffa-* --anchor OSLA    # Bradley-Terry ratings with 95% intervals
  arena pairs arena-studies/birds-* --diff                  # per-board means of seat-swapped pairs, paired differences
  arena check-agent my_package.agent:MyAgent --game pommerman   # the agent contract for your agent
  arena check-game my_package.game:MyGame                   # the game contract for your game (games/CONTRACT.md)
  arena bench plugins --json                                # a Python agent's cost per decision in a study
  arena bench java --java-dir W                             # one sitting against the Java framework's JBench
  arena agents femcts                                       # an agent's parameters: type, default, meaning
  arena games pommerman                                     # a game's options and the agents that play it
"""
from __future__ import annotations

import argparse
import importlib
import sys

from jobs.commands import COMMANDS, UsageError

__all__ = ["main", "build_parser", "UsageError"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``arena run: argument --workers: must be a positive
    integer, got 0``, exit 2) instead of the usage block and the error; subcommand parsers
    are of this class too."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class _Version(argparse.Action):
    """``arena --version``: the package version and the git commit of the code."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from cluster.tracking import arena_version, git_commit

        print(f"arena {arena_version()} (commit {git_commit()})")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arena", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, help="print the version and the git commit, and exit")
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks (also ARENA_DEBUG=1; accepted anywhere on the line)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"jobs.commands.{name}").add_parser(sub)
    return parser


#: Commands that pass the arguments after ``--`` on to another program (``args.passthrough``).
PASSTHROUGH_COMMANDS = ("bench",)
#: Exit codes (the table in jobs/README.md): 0 ok; 1 conformance mismatches found; 2 invalid
#: input (spec, flags, files, a corrupt or foreign store file: anything the user can fix);
#: 3 a run failed (or an internal error); 4 another driver holds the study (its lock); 5 the
#: infrastructure failed (the Ray head / GCS lost, a full disk or an I/O error writing the
#: study); 128 + the signal's number when a signal stopped it: 130 SIGINT (Ctrl-C), 129 SIGHUP,
#: 143 SIGTERM.
EXIT_MISMATCHES = 1
EXIT_INVALID = 2
EXIT_FAILED = 3
EXIT_BUSY = 4
EXIT_INFRA = 5
EXIT_INTERRUPTED = 130


def _input_errors() -> tuple[type, ...]:
    """The project's error types that mean "fix your input" (exit 2)."""
    import gzip

    from cluster.results.populations import PopulationExportError
    from cluster.spec.fields import SpecError
    from cluster.results.store import SpecMismatchError, StoreError

    return (UsageError, SpecError, StoreError, SpecMismatchError, PopulationExportError, gzip.BadGzipFile,
            OSError, ValueError)


def _infrastructure_error(exc: BaseException) -> bool:
    """Exit code 5: the cluster or the disk failed, not the input (an OSError of a full disk
    or an I/O error, wherever it was raised)."""
    from cluster.run.faults import INFRA_ERRNOS, InfrastructureError

    return isinstance(exc, InfrastructureError) or (isinstance(exc, OSError) and exc.errno in INFRA_ERRNOS)


def _one_line(exc: BaseException) -> str:
    """The error's first line; an OSError as ``FILE: reason`` (every file error names its file)."""
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    elif isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        text = f"{exc.filename}: {text}"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] + (" (...)" if len(lines) > 1 else "")


def main(argv=None) -> int:
    """``arena``: every user-facing error is one or two lines on stderr and a non-zero exit
    code (see EXIT_*); ``--debug`` (anywhere on the line) or ``ARENA_DEBUG=1`` shows tracebacks."""
    import os

    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = []
    if "--" in argv:  # what follows is another program's (a probe script's) options
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    debug = "--debug" in argv or os.environ.get("ARENA_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
    args = build_parser().parse_args(argv)
    args.argv = argv + (["--", *passthrough] if passthrough else [])
    args.passthrough = passthrough
    args.debug = debug
    if passthrough and args.command not in PASSTHROUGH_COMMANDS:
        print(f"arena {args.command}: unexpected arguments after '--': {' '.join(passthrough)} (only "
              f"`arena bench --against REV --script PROBE -- ...` passes options on)", file=sys.stderr)
        return EXIT_INVALID
    from cluster.run.faults import install_signal_handlers, restore_signal_handlers

    install_signal_handlers()  # SIGTERM and SIGHUP take Ctrl-C's way out (cluster/run/faults.py)
    try:
        return _run(args, debug)
    finally:
        restore_signal_handlers()


def _run(args, debug: bool) -> int:
    """The subcommand, its errors turned into one line and an exit code (``debug``: the
    interruptions' and the lock's lines and codes, other errors as tracebacks)."""
    from cluster.run.faults import Interrupted, received_signal
    from cluster.run.lock import StudyBusyError

    prog = f"arena {args.command}"
    if debug:
        import logging

        logging.basicConfig(level=logging.INFO)
    try:
        return args.func(args)
    except Interrupted as exc:  # SIGTERM, SIGHUP: what was received is stored, as after Ctrl-C
        print(f"{prog}: stopped by {exc.signal_name}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # Ctrl-C, or a SIGTERM/SIGHUP that Ray re-raised as a plain one
        signalled = received_signal()
        if signalled is not None:
            print(f"{prog}: stopped by {signalled.signal_name}", file=sys.stderr)
            return signalled.exit_code
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StudyBusyError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except Exception as exc:
        if debug:
            raise
        if _infrastructure_error(exc):
            print(f"{prog}: {_one_line(exc)}", file=sys.stderr)
            return EXIT_INFRA
        if isinstance(exc, _input_errors()):
            print(f"{prog}: {_one_line(exc)}", file=sys.stderr)
            return EXIT_INVALID
        # a bug or a failed run: one line, the traceback on request
        print(f"{prog}: failed: {type(exc).__name__}: {_one_line(exc)}\n"
              f"  (run again with --debug or ARENA_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
