"""Make the recorded XCOM games of the ``next_state`` reading (V of the afterstate alone).

Run from a checkout of main at 5968b82, the code before ``value_target`` existed::

    cd /path/to/main && python /path/to/tests/data/xcom_next_state/make_records.py OUT_DIR

Each record is one round of a series of rounds played in order (learned weights carried),
exactly as ``cluster.run.play.play_recorded_game`` plays a study's games; the lineups and the
design are in ``SERIES`` below and are re-played by ``tests/agents/test_xcom_value.py``.
"""
from __future__ import annotations

import sys
from pathlib import Path

# board, rounds, iterations, lineup (agent registry names), study seed
SERIES = {
    "mini_convae_vs_mcts_td": ("mini", 3, 30, ("xcom_convae_fa", "xcom_mcts_td"), 11),
    "mini_mf_fa_vs_mcts": ("mini", 3, 30, ("xcom_mf_fa", "xcom_mcts"), 12),
    "large_convae_vs_mf_fa": ("large", 1, 30, ("xcom_convae_fa", "xcom_mf_fa"), 13),
}


def series_spec(name: str, params: dict | None = None):
    from cluster.spec.build import build_spec

    board, rounds, iterations, agents, seed = SERIES[name]
    return build_spec({
        "study": {"name": f"xcom-replay-{name.replace('_', '-')}", "seed": seed,
                  "results_dir": "/tmp/xcom-replay-unused"},
        "game": {"name": "xcom", "board": board},
        "budget": {"iterations": iterations},
        "design": {"runs": 1, "rounds": rounds, "rotate_seats": False},
        "lineup": [{"agent": a, "label": f"{a}-{i}",
                    "params": dict(params or {}) if a != "xcom_mcts" else {}}
                   for i, a in enumerate(agents)],
        "tracking": {"enabled": False},
    })


def main(out: Path) -> None:
    from cluster.run.play import build_agents, play_recorded_game
    from cluster.spec.plan import plan_study
    from cluster.replay.records import save_record

    out.mkdir(parents=True, exist_ok=True)
    for name in SERIES:
        spec = series_spec(name)
        agents = build_agents(spec)
        for k, task in enumerate(plan_study(spec)[0].games):
            _, _, record = play_recorded_game(spec, task, agents)
            save_record(out / f"{name}-{k}.npz", record)
            print(name, k, record.length)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
