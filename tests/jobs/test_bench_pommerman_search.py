"""The Pommerman search benchmark (jobs/bench/pommerman/search.py): FEMCTS's variants
compared on the same positions (moved here from tests/agents/test_femcts.py with the module)."""
from games.pommerman import PommermanConfig
from jobs.bench.pommerman.search import paired_femcts_iterations


def test_paired_speed_benchmark_compares_the_variants_on_the_same_positions():
    out = paired_femcts_iterations(PommermanConfig(ruleset="java"), ms=2.0, games=1, stride=60)
    assert out.pop("positions") >= 2
    assert set(out) == {"nea6", "nea3", "nea2"}
    assert all(0.2 < ratio < 5 for ratio in out.values())
