"""Make the recorded bird games of today's search options (before issue 25's options).

Run from a checkout of main at 69cbfb1, the code before ``chance_grouping``, ``backup``,
the seed's ``pw_ucb`` and the policy as default opponent model existed::

    cd /path/to/main && python /path/to/tests/data/birds_main/make_records.py OUT_DIR

Each record is one game of a two-game study (one board, seats swapped), played exactly as
``cluster.run.play.play_recorded_game`` plays a study's games. ``SERIES`` gives each lineup in
the option names of main (``main``) and, for the replay test
(``tests/agents/test_birds_chance.py``), the same agents in today's names (``now``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())  # the checkout we are run from, not this file's

ROOT = Path(__file__).resolve().parents[3]
POLICY = str(ROOT / "jobs" / "birds" / "policy" / "birds_policy.npz")

# name: (study seed, iterations, [(agent, main params, now params, with policy weights)] x 2)
SERIES = {
    "sample_random_vs_1det": (11, 60, [
        ("birds_mcts", {}, {"opponent": "random"}, False),
        ("birds_mcts", {"chance_nodes": False}, {"chance_nodes": False, "opponent": "random"}, False),
    ]),
    "proportional_policy_vs_greedy_1det": (12, 60, [
        ("birds_mcts", {"chance_selection": "pw_ucb", "opponent": "policy"},
         {"chance_selection": "proportional", "opponent": "policy"}, True),
        ("birds_mcts", {"chance_nodes": False, "opponent": "greedy", "rollout": "greedy"},
         {"chance_nodes": False, "opponent": "greedy", "rollout": "greedy"}, False),
    ]),
    "policy_rollout_vs_random": (13, 60, [
        ("birds_mcts", {"opponent": "policy", "rollout": "policy", "final": "best_mean"},
         {"opponent": "policy", "rollout": "policy", "final": "best_mean"}, True),
        ("random", {}, {}, False),
    ]),
}


def series_spec(name: str, which: str = "main"):
    """The two-game study of lineup ``name`` with its params in ``which`` names."""
    from cluster.spec.build import build_spec

    seed, iterations, seats = SERIES[name]
    lineup = []
    for i, (agent, main, now, weights) in enumerate(seats):
        entry = {"agent": agent, "label": f"{agent}-{i}", "params": dict(main if which == "main" else now)}
        if weights:
            entry["seed_population"] = POLICY
        lineup.append(entry)
    return build_spec({
        "study": {"name": f"birds-replay-{name.replace('_', '-')}", "seed": seed,
                  "results_dir": "/tmp/birds-replay-unused"},
        "game": {"name": "birds"},
        "budget": {"iterations": iterations},
        "design": {"seeds": 1, "games_per_seed": 2, "rotate_seats": True, "series_by": "game"},
        "lineup": lineup,
        "tracking": {"enabled": False},
    })


def play_series(name: str, which: str):
    """The records of the study's games, in game order."""
    from cluster.run.play import build_agents, play_recorded_game
    from cluster.spec.plan import plan_study
    from cluster.spec.seed_populations import load_populations

    spec = series_spec(name, which)
    agents = build_agents(spec)
    learned = load_populations(spec)
    records = []
    for series in plan_study(spec):
        for task in series.games:
            rows, _, record = play_recorded_game(spec, task, agents, learned)
            assert all(r["error"] is None for r in rows), rows[0]["error"]
            records.append((task.game_index, record))
    return [r for _, r in sorted(records, key=lambda x: x[0])]


def main(out: Path) -> None:
    from cluster.replay.records import save_record

    out.mkdir(parents=True, exist_ok=True)
    for name in SERIES:
        for k, record in enumerate(play_series(name, "main")):
            save_record(out / f"{name}-{k}.npz", record)
            print(name, k, record.length)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
