"""Probe: what a one-lineup study costs the driver per game, for a paired check against an
older tree (``arena bench cluster --against REV --script jobs/bench/probes/lineup_study_cost.py``).

Plays, on a local Ray of ``--workers`` hosts, a one-lineup study of ``--games`` one-tick games
(the bench's ``bench-tick`` game and ``bench-spin`` agent: all of a game's cost is planning,
scheduling, hosting and recording) and then one of ``--pommerman`` Pommerman FFA games of four
rule-based players (a real game, about 0.1 s). For each it prints the driver's process CPU per
game (``run_study`` alone: Ray is started before the clock) and the wall time per game from
the first recorded game to the last. Both trees need only ``run_study``, ``build_spec`` and the
cluster bench's plugin, so the probe runs against trees from before tournaments.

    python jobs/bench/probes/lineup_study_cost.py --games 4000 --pommerman 48

Prints one JSON object: ``tick_driver_cpu_us_per_game``, ``tick_wall_us_per_game``,
``pommerman_driver_cpu_ms_per_game``, ``pommerman_wall_ms_per_game``.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def _study(run_study, spec, workers: int, plugins) -> tuple[float, float, int]:
    """(driver CPU s, wall s between the first and last recorded game, games - 1)."""
    cpu = time.process_time()
    result = run_study(spec, num_workers=workers, progress=False, tracking=False, plugins=plugins)
    cpu = time.process_time() - cpu
    times = result.recorded_at
    if result.error_games:
        raise SystemExit(f"{result.error_games} games ended in an error: see {result.study_dir}")
    return cpu, times[-1] - times[0], len(times) - 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4000, help="one-tick games")
    parser.add_argument("--pommerman", type=int, default=48, help="Pommerman games of four rule-based players")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)

    import ray

    from cluster.run.driver import run_study
    from cluster.spec.build import build_spec
    from jobs.bench import cluster as bench_cluster

    try:
        from cluster.run.local_ray import init_local_ray
    except ImportError:  # a tree from before it: the same options by hand
        def init_local_ray(num_cpus):
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    init_local_ray(max(2, args.workers))
    out = {}
    try:
        with tempfile.TemporaryDirectory(prefix="arena-probe-") as tmp:
            root = Path(tmp)
            tick = bench_cluster._spec(root, "tick", max_steps=1, seeds=args.games, games_per_seed=1, params={},
                                       series_by="game")
            cpu, wall, games = _study(run_study, tick, args.workers, bench_cluster.PLUGINS)
            out["tick_driver_cpu_us_per_game"] = 1e6 * cpu / (games + 1)
            out["tick_wall_us_per_game"] = 1e6 * wall / games
            pommerman = build_spec({
                "study": {"name": "pommerman", "seed": 3, "results_dir": str(root / "studies")},
                "game": {"name": "pommerman", "mode": "ffa"},
                "budget": {"iterations": 1},
                "design": {"seeds": args.pommerman, "games_per_seed": 1, "series_by": "game"},
                "lineup": [{"agent": "rule_based", "label": f"R{i}"} for i in range(4)],
                "tracking": {"enabled": False},
            })
            cpu, wall, games = _study(run_study, pommerman, args.workers, ())
            out["pommerman_driver_cpu_ms_per_game"] = 1e3 * cpu / (games + 1)
            out["pommerman_wall_ms_per_game"] = 1e3 * wall / games
    finally:
        ray.shutdown()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
