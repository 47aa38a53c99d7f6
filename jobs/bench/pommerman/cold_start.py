"""The cold start: wall time of an ``arena play`` from a fresh numba cache, and again warm.

``arena bench pommerman`` (without ``--quick``) reports it beside the engine and
search figures. Each run is a fresh process (``python -m jobs.cli play``, the lineup
of :data:`PLAY_ARGS`) with ``ARENA_CACHE_DIR`` pointing at a new empty directory: the
first run compiles every kernel the game and the four agents use (in parallel
processes, see :mod:`cluster.run.warm`), the second loads them from the cache it left.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAY_ARGS = ("play", "--agents", "mcts,rhea,osla,rule_based", "--iterations", "50", "--max-steps", "5")
"""The ``arena`` arguments timed: one short game, every agent deciding from tick 0."""

_ROOT = Path(__file__).resolve().parents[3]
"""The checkout this file is in (jobs/bench/pommerman/cold_start.py: three folders up)."""


def play_args(agents: str | None = None) -> tuple[str, ...]:
    """:data:`PLAY_ARGS`, with ``agents`` (comma separated) for its lineup if given."""
    if agents is None:
        return PLAY_ARGS
    i = PLAY_ARGS.index("--agents")
    return PLAY_ARGS[:i + 1] + (agents,) + PLAY_ARGS[i + 2:]


def timed_play(cache_root: str, ruleset: str = "canonical", agents: str | None = None,
               tree: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its subprocesses) of one ``arena play``
    subprocess with ``ARENA_CACHE_DIR=cache_root``, in ``tree`` (default: this
    repository) with its code first on the path."""
    import resource

    env = dict(os.environ, ARENA_CACHE_DIR=cache_root)
    env.pop("NUMBA_CACHE_DIR", None)  # else the subprocess would use (or inherit) another cache
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    root = Path(tree or _ROOT).resolve()
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in [env.get("PYTHONPATH")] if p])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jobs.cli", *play_args(agents), "--ruleset", ruleset], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def bench_cold_start(ruleset: str = "canonical", agents: str | None = None, tree: Path | None = None) -> dict:
    """``cold_start_s``: the play from an empty cache; ``warm_start_s``: the same play
    again with the cache the first left (``*_cpu_s``: their CPU seconds, subprocesses
    included: on a loaded machine the wall times stretch, the CPU times hardly);
    ``start_command``: what was timed."""
    cache_root = tempfile.mkdtemp(prefix="arena-cold-")
    try:
        cold, cold_cpu = timed_play(cache_root, ruleset, agents, tree)
        warm, warm_cpu = timed_play(cache_root, ruleset, agents, tree)
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)
    return {"cold_start_s": cold, "warm_start_s": warm, "cold_start_cpu_s": cold_cpu,
            "warm_start_cpu_s": warm_cpu,
            "start_command": "ARENA_CACHE_DIR=<empty> arena " + " ".join(play_args(agents))
            + f" --ruleset {ruleset}"}


if __name__ == "__main__":  # python -m jobs.bench.pommerman.cold_start [RULESET]: the figures as JSON
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m jobs.bench.pommerman.cold_start",
                                     description="Time `arena " + " ".join(PLAY_ARGS) + "` from an empty "
                                     "numba cache and again warm; prints JSON.")
    parser.add_argument("ruleset", nargs="?", default=None, choices=("canonical", "java"),
                        help="the ruleset (default: --ruleset's, else canonical)")
    parser.add_argument("--ruleset", dest="ruleset_option", default="canonical", choices=("canonical", "java"),
                        help="the same as the positional ruleset (which wins when both are given); the "
                        "paired check passes it: `arena bench pommerman --ruleset java --against REV --script "
                        "jobs/bench/pommerman/cold_start.py -- --tree .`")
    parser.add_argument("--agents", default=None,
                        help="the lineup, comma separated (default: " + PLAY_ARGS[PLAY_ARGS.index("--agents") + 1] + ")")
    parser.add_argument("--tree", default=None,
                        help="the checkout whose `arena play` is timed (default: this file's; '.' when run "
                        "by the paired check, which runs this file in both trees)")
    args = parser.parse_args()
    ruleset = args.ruleset or args.ruleset_option
    print(json.dumps(bench_cold_start(ruleset, args.agents, Path(args.tree) if args.tree else None)))
