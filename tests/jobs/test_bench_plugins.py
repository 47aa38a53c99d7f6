"""jobs.bench.plugins (``arena bench plugins``) on a tiny setting: every case is played,
its decisions counted, and the derived figures are the differences they are documented as
(structure and arithmetic only: no timing is asserted)."""
from __future__ import annotations

import json
import math

from jobs.bench.plugins import CASES, bench_plugins


def test_bench_plugins_plays_every_case_and_derives_its_figures():
    result = bench_plugins(runs=1, games=1, max_steps=8)
    json.dumps(result)  # what `arena bench plugins --json` prints
    assert (result["game"], result["max_steps"], result["games_per_run"], result["runs"]) == ("pommerman", 8, 1, 1)
    assert result["bandit_agent"] == "bandit"  # the example plugin, from its installed entry point
    assert len(result["load_average_before"]) == len(result["load_average_after"]) == 3
    for name, _, _ in CASES:
        case = result[name]
        # four seats, at most one decision each per tick, every seat alive at the first tick
        assert 4 <= case["decisions_per_run"] <= 4 * 8, (name, case)
        assert case["agent_ms"] > 0 and case["study_ms"] >= case["agent_ms"], (name, case)
    assert math.isclose(result["python_overhead_ms"],
                        result["bandit_1_iteration"]["agent_ms"] - result["random"]["agent_ms"])
    assert math.isclose(result["bandit_ms_per_iteration"],
                        (result["bandit_64_iterations"]["agent_ms"] - result["bandit_1_iteration"]["agent_ms"]) / 63)
