"""One sitting against the Java framework: its JBench and ``arena bench pommerman --json
--ruleset java`` interleaved, and the ratios of the speed table (jobs/bench/README.md).

    arena bench java --java-dir W [--rounds 3] [--out DIR]
    python -m jobs.bench.java_sitting --java-dir W [--rounds 3] [--out DIR]     # the same

``W`` is the scratch folder of the side-by-side harness's build (the developers'
``java-pommerman`` harness; see its README): the framework's files in ``W/jp`` (JBench runs from there: the
framework loads resources by relative path), its classes in ``W/jbuild``, the harness's in
``W/harness``. Each round runs ``java -cp CP core.JBench false 8`` then Arena's benchmark
(from this repository), one after the other on an idle machine; the raw outputs and a log
with the load average go to ``--out``. Prints one JSON object: per figure, the paired check's
summary (:func:`ratios`: Arena as ``tree``, Java as ``rev``) and ``advantage``, Arena's (Java's
time / Arena's for the decision times, where lower is better). Only ratios taken
in one sitting compare (the machine's speed moves by up to 1.7x between days, the JVM's by a
fifth between sittings 15 minutes apart).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent.parent

#: (figure, JBench line key, JBench field or None for the first number, Arena's key). A
#: figure's name says which way is better (``jobs.bench.paired.better_direction``:
#: the decision times are better lower).
FIGURES = (
    ("ticks_per_s", "fm_ticks_per_s", None, "ticks_per_s"),
    ("copies_per_s", "copies_per_s", None, "copies_per_s"),
    ("mcts_iters_per_40ms", "mcts_default_40ms", "median_iters", "mcts_iters_per_40ms"),
    ("rhea_iters_per_40ms", "rhea_default_40ms", "median_iters", "rhea_iters_per_40ms"),
    ("mcts_200_decision_ms", "mcts_default_200it", "median_ms", "ms_per_decision_mcts_200"),
    ("rhea_200_decision_ms", "rhea_default_200it", "median_ms", "rhea_ms_per_decision_200"),
)


def parse_jbench(text: str) -> dict[str, float]:
    """JBench's figures by :data:`FIGURES` name, from its ``JAVA key value ...`` lines (the
    first number after the key, or the number after ``field``)."""
    lines = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "JAVA":
            lines[parts[1]] = parts[2:]
    out = {}
    for name, key, field, _ in FIGURES:
        words = lines.get(key)
        if words is None:
            raise ValueError(f"JBench output: no line for {key!r}")
        value = words[0] if field is None else words[words.index(field) + 1]
        out[name] = float(value)
    return out


def arena_figures(bench: dict) -> dict[str, float]:
    """Arena's benchmark JSON (``arena bench pommerman --json``) by :data:`FIGURES` name."""
    return {name: float(bench[key]) for name, _, _, key in FIGURES}


def ratios(rounds: list[tuple[dict, dict]]) -> dict[str, dict]:
    """Per figure, from ``rounds`` of (Java, Arena) figure dicts: the paired check's summary
    (:func:`jobs.bench.paired.summarise`, Arena as the tree and Java as the revision:
    ``tree`` / ``rev`` medians, per-round ratios Arena / Java with their median, min and
    max) and ``advantage``, the median of Arena's per-round advantage (``speedup``: Java's
    time / Arena's for the decision times)."""
    from jobs.bench.paired import summarise

    figures, _ = summarise([a for _, a in rounds], [j for j, _ in rounds])
    return {name: {**entry, "advantage": entry["speedup"]} for name, entry in figures.items()}


def harness_classpath(java_dir: Path) -> tuple[Path, str]:
    """(the harness build's folder, resolved; JBench's class path), or
    :class:`jobs.bench.BenchInputError` naming ``--java-dir`` when a part is missing."""
    from jobs.bench import BenchInputError

    w = Path(java_dir).resolve()
    for sub in ("jp", "jbuild", "harness"):
        if not (w / sub).is_dir():
            raise BenchInputError(f"--java-dir: {w / sub} is missing (build the harness first, see "
                                  f"jobs/bench/java_sitting.py)")
    jars = sorted(str(j) for j in (w / "jp" / "lib").glob("*.jar"))
    return w, os.pathsep.join([str(w / "harness"), str(w / "jbuild"), *jars])


def sit(java_dir: Path, rounds: int = 3, out: Path | None = None) -> dict:
    """One sitting (the module docstring): ``{"arena_commit", "rounds", "out", "figures":
    {figure: the paired check's summary and "advantage"}}``."""
    w, cp = harness_classpath(java_dir)
    out = out or Path(f"/tmp/java-sitting-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    log = out / "log"
    pairs = []
    for r in range(1, rounds + 1):
        with log.open("a") as f:
            f.write(f"round {r} java {time.strftime('%H:%M:%S')} load {os.getloadavg()}\n")
        java = subprocess.run(["java", "-cp", cp, "core.JBench", "false", "8"], cwd=w / "jp",
                              capture_output=True, text=True, check=True).stdout
        (out / f"java-{r}.txt").write_text(java)
        with log.open("a") as f:
            f.write(f"round {r} arena {time.strftime('%H:%M:%S')} load {os.getloadavg()}\n")
        arena = subprocess.run([sys.executable, "-m", "jobs.cli", "bench", "pommerman", "--json", "--ruleset", "java"],
                               cwd=_ROOT, capture_output=True, text=True, check=True).stdout
        (out / f"arena-{r}.json").write_text(arena)
        pairs.append((parse_jbench(java), arena_figures(json.loads(arena))))
    with log.open("a") as f:
        f.write(f"end {time.strftime('%H:%M:%S')} load {os.getloadavg()}\n")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_ROOT, capture_output=True,
                            text=True).stdout.strip()
    return {"arena_commit": commit, "rounds": rounds, "out": str(out), "figures": ratios(pairs)}


def bench(options) -> dict:
    """``arena bench java --java-dir W [--rounds N] [--out DIR]``: :func:`sit`."""
    from jobs.bench import BenchInputError

    if options.java_dir is None:
        raise BenchInputError("--java-dir: required for the java target (the harness build's scratch "
                              "folder, see jobs/bench/java_sitting.py)")
    return sit(options.java_dir, options.rounds, options.out)


def main(argv: list[str] | None = None) -> int:
    from jobs.bench import BenchInputError

    p = argparse.ArgumentParser(prog="python -m jobs.bench.java_sitting", description=__doc__.split("\n\n")[0])
    p.add_argument("--java-dir", required=True, type=Path, help="the harness build's scratch folder (jp, jbuild, harness)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=None, help="raw outputs and log (default: a new folder in /tmp)")
    a = p.parse_args(argv)
    try:
        result = sit(a.java_dir, a.rounds, a.out)
    except BenchInputError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
