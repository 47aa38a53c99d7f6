"""The helpers the cluster keeps once: the MLflow batch writer, the Markdown table
writer, the statistics on SciPy, the spec sections' field rules, and the short
parameter names an agent declares (Agent.param_aliases) as MLflow and sweeps show them."""
from __future__ import annotations

import math

import pytest

from cluster.analysis.tables import markdown_table
from cluster.spec.build import build_spec
from cluster.spec.fields import PositiveInt, SpecError, config_class, one_of, section
from cluster.stats import difference_interval, two_proportion_z_test, welch_z_test, wilson_interval
from cluster.spec.sweep import SweepError, build_sweep
from cluster.run.tracker import agent_params
from cluster.tracking import log_batch


class _Client:
    """Records log_batch requests as (metrics, params, tags) key lists."""

    def __init__(self):
        self.calls = []

    def log_batch(self, run_id, metrics=(), params=(), tags=()):
        self.calls.append(([m.key for m in metrics], [p.key for p in params], [t.key for t in tags]))


def test_log_batch_splits_at_mlflow_limits_and_drops_non_finite_values():
    client = _Client()
    params = {f"p{i:03d}": i for i in range(150)}
    metrics = {f"m{i}": float(i) for i in range(1200)}
    metrics.update({"nan": math.nan, "inf": math.inf, "text": "x"})
    log_batch(client, "run", metrics=metrics, params=params, tags={"t": "v"},
              curve=[("llr", 0.5, 1), ("llr", math.nan, 2)])
    assert len(client.calls) == 2  # 1201 metrics and 150 params: two requests, not one per value
    sent_metrics = [k for call in client.calls for k in call[0]]
    assert len(sent_metrics) == 1201 and not {"nan", "inf", "text"} & set(sent_metrics)
    assert [len(call[1]) for call in client.calls] == [100, 50]
    assert [call[2] for call in client.calls] == [["t"], []]


def test_markdown_table_is_the_one_writer():
    assert markdown_table(["a", "b"], [[1, "x"], [2, "y"]], ["---", "---:"]).splitlines() == [
        "| a | b |", "|---|---:|", "| 1 | x |", "| 2 | y |"]
    assert markdown_table(["a"], [], "---:").splitlines()[1] == "|---:|"


def test_tests_and_intervals_match_hand_computed_values():
    # 30/50 against 20/50: pooled p = 0.5, se = sqrt(0.25 * 0.04) = 0.1, z = 2
    z, p = two_proportion_z_test(30, 50, 20, 50)
    assert z == pytest.approx(2.0) and p == pytest.approx(0.0455, abs=1e-4)
    z, p = welch_z_test(1.0, 4.0, 16, 0.0, 4.0, 16)  # se = sqrt(4/16 + 4/16)
    assert z == pytest.approx(1 / math.sqrt(0.5))
    assert all(math.isnan(v) for v in two_proportion_z_test(1, 0, 1, 2))  # an empty sample
    assert welch_z_test(0.5, 0.0, 4, 0.5, 0.0, 4) == (0.0, 1.0)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    # Newcombe (1998), Table II, method 10: 56/70 - 48/80 and 9/10 - 3/10
    assert difference_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert difference_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=1e-4)
    lo, hi = difference_interval(0, 10, 10, 10)  # the extreme: within [-1, 1]
    assert -1.0 <= lo < hi < 0
    assert all(math.isnan(v) for v in difference_interval(1, 0, 1, 2))


@config_class
class _Demo:
    seeds: PositiveInt
    kind: one_of("asha", "fifo") = "asha"


@pytest.mark.parametrize("raw, message", [
    ({"seeds": True}, "demo.seeds: must be a positive int, got True"),
    ({"seeds": 2, "kind": "bogus"}, "demo.kind: must be one of ['asha', 'fifo'], got 'bogus'"),
    ({"seeds": 2, "extra": 1}, "demo.extra: unknown key; known: ['kind', 'seeds']"),
    ({}, "demo.seeds: required (board seeds)"),
    (7, "demo: must be a table, got int 7"),
])
def test_section_errors_name_the_field(raw, message):
    with pytest.raises(SpecError) as info:
        section(_Demo, raw, "demo", required={"seeds": "board seeds"})
    assert str(info.value) == message


def _femcts_study(tmp_path):
    return {
        "study": {"name": "aliases", "seed": 1, "results_dir": str(tmp_path)},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 10},
        "budget": {"iterations": 5},
        "design": {"seeds": 1},
        "lineup": [{"agent": "femcts", "label": "FEMCTS", "params": {"mutation_probability": 0.3}},
                   {"agent": "mcts"}, {"agent": "osla"}, {"agent": "random"}],
        "tracking": {"enabled": False},
    }


def test_mlflow_params_use_the_aliases_the_agent_declares(tmp_path):
    spec = build_spec(_femcts_study(tmp_path))
    params = agent_params(spec)
    assert params["FEMCTS.agent"] == "femcts" and params["FEMCTS.mP"] == params["mP"] == "0.3"
    assert "FEMCTS.mutation_probability" not in params  # logged once, as lineup.0.params.*
    assert spec.flat_params()["lineup.0.params.mutation_probability"] == "0.3"
    assert not any(key.startswith("mcts.") and key != "mcts.agent" for key in params)


def test_sweep_alias_defaults_to_the_agents_declared_name(tmp_path):
    data = {"sweep": {"name": "aliases", "games_per_trial": 1}, "base": _femcts_study(tmp_path),
            "objective": {"label": "FEMCTS"},
            "search": {"lineup.0.params.mutation_probability": {"grid": [0.2, 0.5]},
                       "game.max_steps": {"grid": [10, 20]}}}
    sweep = build_sweep(data)
    assert sweep.aliases() == {"lineup.0.params.mutation_probability": "mP", "game.max_steps": "max_steps"}
    spec = sweep.trial_spec({"lineup.0.params.mutation_probability": 0.5, "game.max_steps": 20})
    assert spec.lineup[0].config.mutation_probability == 0.5 and spec.game_config.max_steps == 20
    data["search"]["game.max_steps"] = {"grid": [10], "choice": [20]}
    with pytest.raises(SweepError, match=r"^search\.game\.max_steps: give exactly one of"):
        build_sweep(data)
