"""The paired speed check: a benchmark of the working tree against a git revision,
in one sitting, interleaved.

    arena bench pommerman --quick --against main            # 5 rounds (default)
    arena bench scotland_yard --quick --against b3b39ae --rounds 3
    arena bench pommerman --against HEAD~3 --script jobs/bench/probes/pommerman_search_cpu.py

(from a checkout, ``python -m jobs.cli bench ...``: the ``arena`` script of an
editable install imports the tree it was installed from.)

How it works:

- the revision is checked out (detached) as a temporary ``git worktree`` under
  ``/tmp`` and removed afterwards;
- each side runs in its own subprocess whose working directory is its own tree,
  started as ``python -c`` with :data:`_SIDE_SNIPPET`, which puts that
  directory first on ``sys.path`` (as ``python -m`` does), prints where it
  imported ``games`` from, and then runs either that tree's own
  ``python -m jobs.cli bench <game> --json ...`` (through :mod:`runpy`, i.e.
  exactly ``-m``) or a probe script (``--script``, read from the working tree
  and executed in the side's tree, so both sides are measured by the same
  code). A side that imported ``games`` from anywhere but its own tree is an
  error;
- one warm-up run per side first (it compiles that tree's numba kernels into
  its own cache and is not counted), then ``rounds`` rounds, each running both
  sides once, the order alternating from round to round so that a slow spell
  of a shared machine does not always hit the same side;
- every numeric figure both sides report is compared: per-side medians over
  the rounds, ``ratio`` = the median of the per-round ratios tree / revision
  (paired: each round's two runs are close in time), their ``min`` / ``max``
  and interquartile range, ``better``: ``higher`` for rates (``*_per_s``,
  ``*_per_40ms`` ...), ``lower`` for times (a unit suffix ``_ns``, ``_us``, ``_ms``
  or ``_s``, or ``ns_per`` / ``us_per`` / ``ms_per``, or ``_s_`` inside), and
  ``speedup``: the median of the per-round ratios turned so that above 1 means
  the tree is better (tree / revision for a rate, revision / tree for a time).
  Figures that are equal in every run (settings such as ``games``) are listed
  under ``settings`` instead.
- with ``--script``, the probe's own options follow ``--`` on the command line
  (``arena bench pommerman --against main --script PROBE -- --iterations 50``)
  and reach the probe in both trees.

The benchmarks themselves decide what they time (wall or process CPU time);
the ratios are only as good as the figures, so prefer the CPU-time figures
(``*_per_cpu_s``, ``*_us_per_iteration``) on a loaded machine. The load
average before and after is part of the output.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MARKER = "ARENA_PAIRED_SIDE "
"""Prefix of the line a side prints with the directory its ``games`` came from."""

_SIDE_SNIPPET = r"""
import json, os, runpy, sys
sys.path.insert(0, os.getcwd())
import games
print("ARENA_PAIRED_SIDE " + json.dumps(os.path.dirname(os.path.dirname(os.path.abspath(games.__file__)))),
      flush=True)
mode, rest = sys.argv[1], sys.argv[2:]
if mode == "--script":
    path = rest[0]
    sys.argv = [path] + rest[1:]
    code = compile(open(path).read(), path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path})
else:
    sys.argv = ["jobs.cli", "bench"] + rest
    runpy.run_module("jobs.cli", run_name="__main__", alter_sys=True)
"""


class PairedBenchError(RuntimeError):
    """A side failed, printed no JSON, or imported another tree's code."""


def _git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def repo_root(path: str | Path = ".") -> Path:
    """The top of the git work tree containing ``path``."""
    return Path(_git(Path(path), "rev-parse", "--show-toplevel")).resolve()


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on Linux
        return []


def run_side(tree: Path, bench_args: list[str], script: str | None = None,
             python: str = sys.executable, timeout: float = 3600) -> tuple[dict, float]:
    """One benchmark run in ``tree``: (its JSON figures, wall seconds).

    ``bench_args`` go to ``jobs.cli bench`` (e.g. ``["pommerman", "--quick"]``;
    ``--json`` is added) or, with ``script``, to the script.
    """
    if script is not None:
        argv = [python, "-c", _SIDE_SNIPPET, "--script", str(Path(script).resolve()), *bench_args]
    else:
        argv = [python, "-c", _SIDE_SNIPPET, "--bench", *bench_args, "--json"]
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)  # each tree keys its own cache by its sources
    env.pop("PYTHONPATH", None)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=str(tree), env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise PairedBenchError(f"{tree}: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    imported, figures = None, None
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            imported = Path(json.loads(line[len(MARKER):])).resolve()
    for line in reversed(proc.stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            figures = json.loads(line)
            break
    if imported != Path(tree).resolve():
        raise PairedBenchError(f"{tree}: imported games from {imported}, not from its own tree")
    if not isinstance(figures, dict):
        raise PairedBenchError(f"{tree}: no JSON object on stdout: {proc.stdout.strip()[-500:]}")
    return figures, wall


def _numeric(figures: dict) -> dict[str, float]:
    return {k: float(v) for k, v in figures.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


#: Unit suffixes of a time: a figure ending in one is better lower (``step_ns``,
#: ``decision_us``, ``median_ms``, ``warm_start_s``).
TIME_SUFFIXES = ("_ns", "_us", "_ms", "_s")


def better_direction(key: str) -> str:
    """``higher`` for a rate (``*_per_s``, ``*_per_cpu_s``, ``*_per_40ms`` ...); ``lower`` for a
    time (a unit suffix of :data:`TIME_SUFFIXES`, ``ms`` as a word, ``ns_per_*`` /
    ``us_per_*`` / ``ms_per_*``, ``*_s_*``); else ``higher``."""
    k = key.lower()
    if "per_s" in k or "per_cpu_s" in k or "per_wall_s" in k or "per_40ms" in k:
        return "higher"
    if (k.endswith(TIME_SUFFIXES) or "ms" in k.split("_") or "_s_" in k
            or "us_per" in k or "ns_per" in k or "ms_per" in k):
        return "lower"
    return "higher"


def _quartiles(xs: list[float]) -> tuple[float, float]:
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def summarise(tree_runs: list[dict], rev_runs: list[dict]) -> tuple[dict, dict]:
    """(figures, settings) from the paired runs (round ``i`` of each side is a pair).

    ``figures[key]`` = ``{"tree": median, "rev": median, "ratio": median of the
    per-round ratios tree / rev, "ratio_min", "ratio_max", "ratio_iqr": [q1, q3],
    "better": "higher" | "lower", "speedup": the median of the per-round ratios
    turned so that above 1 favours the tree}`` for every numeric key both sides report in
    every round and that differs somewhere; ``settings`` holds the others that
    are constant (key: value).
    """
    tree_n = [_numeric(r) for r in tree_runs]
    rev_n = [_numeric(r) for r in rev_runs]
    common = set(tree_n[0])
    for r in tree_n + rev_n:
        common &= set(r)
    figures, settings = {}, {}
    for key in sorted(common):
        t = [r[key] for r in tree_n]
        v = [r[key] for r in rev_n]
        if len(set(t + v)) == 1:
            settings[key] = t[0]
            continue
        ratios = [a / b for a, b in zip(t, v) if b != 0]
        better = better_direction(key)
        entry = {"tree": statistics.median(t), "rev": statistics.median(v), "better": better}
        if ratios:
            q1, q3 = _quartiles(ratios)
            entry.update(ratio=round(statistics.median(ratios), 4), ratio_min=round(min(ratios), 4),
                         ratio_max=round(max(ratios), 4), ratio_iqr=[round(q1, 4), round(q3, 4)])
            speedups = ratios if better == "higher" else [1 / r for r in ratios if r != 0]
            if speedups:
                entry["speedup"] = round(statistics.median(speedups), 4)
        figures[key] = entry
    return figures, settings


def paired_bench(bench_args: list[str], against: str = "main", rounds: int = 5,
                 tree: str | Path = ".", script: str | None = None, python: str = sys.executable,
                 warmup: bool = True, progress=None) -> dict:
    """Benchmark the work tree containing ``tree`` against git revision ``against``.

    Args:
        bench_args: the benchmark's arguments (``["pommerman", "--quick"]``), or
            the script's with ``script``.
        against: a git revision (branch, tag, commit) of the same repository.
        rounds: paired rounds (each runs both sides once, order alternating).
        script: a probe script (path in the working tree) run in both trees
            instead of ``jobs.cli bench``; it prints one JSON object.
        warmup: one uncounted run per side first (compiles the kernels).
        progress: optional callable taking a line of text (e.g. ``print`` to stderr).
    Returns:
        a JSON-able dict: ``against`` (revision and commit), ``tree`` (path,
        HEAD commit, dirty flag), ``rounds``, ``command``, ``figures`` and
        ``settings`` (see :func:`summarise`), ``sides_imported`` (where each
        side's ``games`` came from), ``load_before`` / ``load_after`` (1, 5, 15
        minute load averages) and ``seconds`` (wall time of each run).
    """
    if rounds < 1:
        raise ValueError(f"rounds: must be >= 1, got {rounds}")
    root = repo_root(tree)
    commit = _git(root, "rev-parse", "--verify", f"{against}^{{commit}}")
    head = _git(root, "rev-parse", "HEAD")
    dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    say = progress or (lambda line: None)
    tmp = Path(tempfile.mkdtemp(prefix="arena-paired-"))
    other = tmp / f"rev-{commit[:10]}"
    _git(root, "worktree", "add", "--detach", str(other), commit)
    load_before = _load()
    seconds = {"tree": [], "rev": []}
    runs = {"tree": [], "rev": []}
    sides = {"tree": root, "rev": other.resolve()}
    try:
        if warmup:
            for side in ("tree", "rev"):
                say(f"warm-up {side} ({sides[side]})")
                run_side(sides[side], bench_args, script, python)
        for r in range(rounds):
            order = ("tree", "rev") if r % 2 == 0 else ("rev", "tree")
            for side in order:
                figures, wall = run_side(sides[side], bench_args, script, python)
                runs[side].append(figures)
                seconds[side].append(round(wall, 1))
                say(f"round {r + 1}/{rounds} {side}: {wall:.1f} s")
    finally:
        subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(other)],
                       capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(root), "worktree", "prune"], capture_output=True)
    figures, settings = summarise(runs["tree"], runs["rev"])
    command = (["--script", str(script)] if script else ["bench"]) + list(bench_args)
    return {"against": {"revision": against, "commit": commit},
            "tree": {"path": str(root), "head": head, "dirty": dirty},
            "rounds": rounds, "command": command,
            "ratio": "tree / rev, median of the per-round ratios",
            "figures": figures, "settings": settings,
            "sides_imported": {"tree": str(root), "rev": str(sides["rev"])},
            "load_before": load_before, "load_after": _load(), "seconds": seconds}


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="git revision to compare with (default main)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--script", default=None, help="probe script run in both trees instead of the bench")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the benchmark's (or script's) arguments")
    args = parser.parse_args(argv)
    result = paired_bench(args.args, args.against, args.rounds, script=args.script,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
