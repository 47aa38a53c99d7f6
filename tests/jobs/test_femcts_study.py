"""FEMCTS through the cluster: the population is carried from game to game of a
series, the longest-winning-streak population is exported as .npz, and a later
study seeded with it starts from it."""
from __future__ import annotations

import numpy as np

from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.spec.build import build_spec

FEMCTS = {"n_effective": 2, "population_size": 4, "elite_count": 1, "rollouts_per_individual": 2}


def femcts_spec(tmp_path, name, seed_population=None):
    seat = {"agent": "femcts", "label": "FEMCTS", "params": FEMCTS}
    if seed_population:
        seat["seed_population"] = str(seed_population)
    return build_spec({
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 60},
        "budget": {"iterations": 40},
        "design": {"seeds": 1, "games_per_seed": 3, "series_by": "seed"},
        "lineup": [seat] + [{"agent": "random"} for _ in range(3)],
        "tracking": {"enabled": False},
    })


def test_population_carried_exported_and_seeded(tmp_path, ray_local):
    spec = femcts_spec(tmp_path, "femcts-series")
    result = run_study(spec, num_workers=1, progress=False)
    assert result.games_done == 3
    store = ResultStore(spec.study_dir)
    populations = [store.learned_state_at(0, k)["FEMCTS"]["population"] for k in range(3)]
    assert all(p.shape == (4, 2, 5) for p in populations)
    assert populations[0].any(), "the population evolved during the first game"
    assert not np.array_equal(populations[0], populations[2]), "and kept evolving in later games"
    assert int(store.learned_state_at(0, 2)["FEMCTS"]["counters"][0]) == 3, "three games remembered"

    exported = spec.study_dir / "populations" / "FEMCTS-best-streak.npz"
    assert exported.is_file()
    with np.load(exported, allow_pickle=False) as npz:
        seed = npz["population"]
    assert seed.shape == (4, 2, 5)

    # a later study names a seed file; its first game starts from that population
    # (weights of 7 move by at most mS = 0.001 per generation)
    marked = tmp_path / "marked.npz"
    np.savez(marked, population=np.full((4, 2, 5), 7.0))
    seeded = femcts_spec(tmp_path, "femcts-seeded", seed_population=marked)
    run_study(seeded, num_workers=1, progress=False)
    first = ResultStore(seeded.study_dir).learned_state_at(0, 0)["FEMCTS"]
    assert int(first["counters"][0]) == 1
    assert np.abs(first["population"] - 7.0).max() < 1.0
