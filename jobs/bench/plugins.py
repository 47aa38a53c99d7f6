"""``arena bench plugins``: what a pure-Python agent costs per decision inside a study.

Plays the games of small Pommerman studies with the study's own per-game function
(:func:`cluster.run.play.play_game`, what every Ray host runs; no Ray, so the figures are
the per-decision costs, not scheduling), every seat played by one agent:

* ``random``: Arena's trivial agent (Python glue around the numba ``legal_actions``
  kernel and a numpy draw);
* ``bandit``: the example plugin's pure-Python agent (``tests/plugin_example``,
  loaded from its installed entry point, else by import path from the checkout), at
  1 iteration per decision (its fixed cost) and at 64 (its per-iteration Python loop);
* ``mcts``: Arena's numba MCTS at 64 iterations, for scale.

Per case: ``agent_ms`` (the agent's own ``act`` time per decision, what
``mean_ms`` in result rows records) and ``study_ms`` (the game's wall time per
decision: agent, observation, step, fingerprints and rows). Each figure is the
median over ``runs`` runs; ``python_overhead_ms`` is bandit at 1 iteration minus
random (agent time per decision). The machine's load average is part of the result.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: The example plugin (for a checkout where it is not installed).
EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "tests" / "plugin_example"

#: (case name, agent, iterations per decision).
CASES = (("random", "random", 1), ("bandit_1_iteration", "bandit", 1), ("bandit_64_iterations", "bandit", 64),
         ("mcts_64_iterations", "mcts", 64))


def _bandit_name() -> str:
    """``bandit`` when the example is installed, else its import path from this checkout."""
    from agents.registry import agent_names

    if "bandit" in agent_names():
        return "bandit"
    if str(EXAMPLE_DIR) not in sys.path:
        sys.path.append(str(EXAMPLE_DIR))
    return "arena_example.agent:BanditAgent"


def _spec(agent: str, iterations: int, games: int, max_steps: int, results_dir: str):
    from cluster.spec.build import build_spec

    return build_spec({
        "study": {"name": "bench-plugins", "seed": 35, "results_dir": results_dir},
        "game": {"name": "pommerman", "max_steps": max_steps},
        "budget": {"iterations": iterations},
        "design": {"seeds": games, "rotate_seats": False, "series_by": "seed"},
        "lineup": [{"agent": agent, "label": f"p{i}"} for i in range(4)],
        "tracking": {"enabled": False},
    })


def time_study(spec) -> dict:
    """Play every game of ``spec`` in this process; decisions and seconds."""
    from cluster.run.play import build_agents, play_game
    from cluster.spec.plan import plan_study

    agents = build_agents(spec)
    decisions, agent_seconds, wall = 0, 0.0, 0.0
    for series in plan_study(spec):
        for task in series.games:
            t0 = time.perf_counter()
            rows, _ = play_game(spec, task, agents)
            wall += time.perf_counter() - t0
            if any(row["error"] for row in rows):
                raise RuntimeError(f"bench game failed: {rows[0]['error']}")
            decisions += sum(a.decisions for a in agents)
            agent_seconds += sum(a.total_seconds for a in agents)
    return {"decisions": decisions, "agent_ms": 1000.0 * agent_seconds / decisions,
            "study_ms": 1000.0 * wall / decisions}


def bench_plugins(runs: int = 3, games: int = 4, max_steps: int = 200) -> dict:
    """The figures described in the module docstring, as one JSON-able dict."""
    import agents  # noqa: F401

    bandit = _bandit_name()
    load_before = os.getloadavg()
    per_case: dict[str, list[dict]] = {name: [] for name, _, _ in CASES}
    with tempfile.TemporaryDirectory() as results_dir:
        specs = {name: _spec(bandit if agent == "bandit" else agent, iterations, games, max_steps, results_dir)
                 for name, agent, iterations in CASES}
        for name in specs:  # warm-up: numba compilation and first-call costs out of the figures
            time_study(_spec(specs[name].lineup[0].agent, specs[name].budget.iterations, 1, 20, results_dir))
        for _ in range(runs):  # interleaved, so a change of load hits every case alike
            for name, spec in specs.items():
                per_case[name].append(time_study(spec))
    result: dict = {"game": "pommerman", "max_steps": max_steps, "games_per_run": games, "runs": runs,
                    "bandit_agent": bandit, "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    for name, figures in per_case.items():
        result[name] = {"decisions_per_run": figures[0]["decisions"],
                        "agent_ms": statistics.median(f["agent_ms"] for f in figures),
                        "study_ms": statistics.median(f["study_ms"] for f in figures)}
    result["python_overhead_ms"] = result["bandit_1_iteration"]["agent_ms"] - result["random"]["agent_ms"]
    result["bandit_ms_per_iteration"] = (result["bandit_64_iterations"]["agent_ms"]
                                         - result["bandit_1_iteration"]["agent_ms"]) / 63
    return result


def bench(options) -> dict:
    """``arena bench plugins``: :func:`bench_plugins`, 4 games of at most 200 steps per
    run (``options.quick``: 1 game of 60)."""
    return bench_plugins(games=1 if options.quick else 4, max_steps=60 if options.quick else 200)
