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

_ROOT = Path(__file__).resolve().parent.parent


def timed_play(cache_root: str, ruleset: str = "canonical") -> tuple[float, float]:
    """Wall and CPU seconds (the process and its subprocesses) of one ``arena play``
    subprocess with ``ARENA_CACHE_DIR=cache_root``."""
    import resource

    env = dict(os.environ, ARENA_CACHE_DIR=cache_root)
    env.pop("NUMBA_CACHE_DIR", None)  # else the subprocess would use (or inherit) another cache
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    env["PYTHONPATH"] = os.pathsep.join([str(_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jobs.cli", *PLAY_ARGS, "--ruleset", ruleset], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=_ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def bench_cold_start(ruleset: str = "canonical") -> dict:
    """``cold_start_s``: the play from an empty cache; ``warm_start_s``: the same play
    again with the cache the first left (``*_cpu_s``: their CPU seconds, subprocesses
    included: on a loaded machine the wall times stretch, the CPU times hardly);
    ``start_command``: what was timed."""
    cache_root = tempfile.mkdtemp(prefix="arena-cold-")
    try:
        cold, cold_cpu = timed_play(cache_root, ruleset)
        warm, warm_cpu = timed_play(cache_root, ruleset)
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)
    return {"cold_start_s": cold, "warm_start_s": warm, "cold_start_cpu_s": cold_cpu,
            "warm_start_cpu_s": warm_cpu,
            "start_command": "ARENA_CACHE_DIR=<empty> arena " + " ".join(PLAY_ARGS)
            + f" --ruleset {ruleset}"}


if __name__ == "__main__":  # python -m jobs.tools.cold_start [RULESET]: the figures as JSON
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m jobs.tools.cold_start",
                                     description="Time `arena " + " ".join(PLAY_ARGS) + "` from an empty "
                                     "numba cache and again warm; prints JSON.")
    parser.add_argument("ruleset", nargs="?", default="canonical", choices=("canonical", "java"))
    print(json.dumps(bench_cold_start(parser.parse_args().ruleset)))
