"""The bench wing: every benchmark of Arena, behind ``arena bench TARGET`` (README.md here:
what each target measures, its command and the latest figures).

Each target is one module (:data:`TARGETS`, the registry ``arena bench`` takes its choices
and help from) with a documented entry

    bench(options: BenchOptions) -> dict

that returns one JSON-able dict of figures (``arena bench TARGET --json`` prints it). The
paired check (``--against REV``, :mod:`jobs.bench.paired`) runs a target, or a probe
script of ``probes/``, in this tree and in another revision, interleaved. Games are played
through the one shared loop, :mod:`agents.episodes`; the wing uses only the public APIs
of ``games``, ``agents`` and ``cluster`` (``tests/test_layers.py``).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BenchOptions", "BenchInputError", "Target", "TARGETS", "run_target"]


class BenchInputError(ValueError):
    """An option a target needs is missing or wrong (the CLI: one line, exit code 2)."""


@dataclass(frozen=True)
class BenchOptions:
    """The options of ``arena bench`` a target reads (each target reads those it names)."""

    quick: bool = False
    """Shorter runs (and for pommerman no start-up timing)."""
    seconds: float = 3.0
    """Length of the timed random play of the engines (pommerman, birds)."""
    ruleset: str = "canonical"
    """pommerman: the ruleset timed (``canonical`` or ``java``)."""
    java_dir: Path | None = None
    """java: the Java harness build's scratch folder (``jp``, ``jbuild``, ``harness``)."""
    rounds: int = 3
    """java: interleaved rounds of JBench and Arena's benchmark."""
    out: Path | None = None
    """java: where the raw outputs and the log go (None: a new folder in /tmp)."""


@dataclass(frozen=True)
class Target:
    """One target of ``arena bench``."""

    name: str
    """The CLI's name for it (``arena bench NAME``)."""
    module: str
    """The module whose ``bench(options) -> dict`` runs it."""
    measures: str
    """What it measures, in a phrase (the CLI's help)."""
    pairable: bool = True
    """Whether ``--against REV`` may run it in both trees (a benchmark of this tree's code)."""


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("pommerman", "jobs.bench.pommerman",
           "engine and search speed (without --quick also the cold start of `arena play`)"),
    Target("scotland_yard", "jobs.bench.scotland_yard", "moves and MCTS iterations per second"),
    Target("birds", "jobs.bench.birds", "random games and MCTS iterations per CPU-second"),
    Target("xcom", "jobs.bench.xcom", "moves per second and decision times"),
    Target("cluster", "jobs.bench.cluster_scale",
           "scheduling overhead and scaling; the driver's own costs and the model of a 1,000-worker run"),
    Target("pettingzoo", "jobs.bench.pettingzoo",
           "the PettingZoo face's time per step against the kernel step, every game"),
    Target("plugins", "jobs.bench.plugins",
           "a pure-Python agent's cost per decision inside a study (median of 3 runs)"),
    Target("ranking", "jobs.bench.ranking",
           "the adaptive tournament schedule on entrants of known strength: games and ranking accuracy "
           "against the full round robin, wrong orders claimed (200 simulated tournaments per setting; "
           "--quick 20)"),
    Target("openspiel", "jobs.bench.openspiel",
           "OpenSpiel's own evaluation loop beside an Arena study on 2 workers, the same bots: "
           "win rates with their agreement, games per wall- and CPU-hour, Arena's start-up and "
           "the break-even run length (needs the openspiel extra)", pairable=False),
    Target("java", "jobs.bench.java_sitting",
           "one sitting against the Java framework: its JBench and `arena bench pommerman --json "
           "--ruleset java` interleaved, the ratios of the speed table (needs --java-dir)", pairable=False),
)}
"""The targets, in the order of ``arena bench --help``."""


def run_target(name: str, options: BenchOptions) -> dict:
    """The figures of target ``name`` (``TARGETS[name]``'s ``bench(options)``)."""
    if name not in TARGETS:
        raise BenchInputError(f"target: unknown benchmark {name!r} (one of {', '.join(TARGETS)})")
    return importlib.import_module(TARGETS[name].module).bench(options)
