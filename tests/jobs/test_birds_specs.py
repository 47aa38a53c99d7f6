"""Every jobs/birds/*.toml validates; a bird study's game plays through the cluster's play loop."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cluster.spec.plan import plan_study
from cluster.run.play import build_agents, play_game
from cluster.analysis.report import result_table, to_markdown
from cluster.spec.seed_populations import load_populations
from jobs.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "jobs" / "birds").glob("*.toml"))


def test_there_are_bird_specs():
    assert len(SPECS) >= 10


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_bird_spec_validates(path):
    spec = load_spec(path)
    assert spec.game == "birds" and spec.num_players == 2
    if spec.design.format == "swiss":  # a Swiss tournament has fewer rounds than entrants: a small example
        entrants = len(spec.lineup)
        assert spec.design.rounds < entrants
        assert spec.design.total_games == spec.design.rounds * (entrants // 2) * 2
    else:
        assert spec.design.rotate_seats and spec.design.total_games >= 200
    for seat in spec.lineup:
        if seat.seed_population:
            assert Path(seat.seed_population).is_file()


def test_bird_games_through_the_play_loop():
    spec = load_spec(ROOT / "jobs" / "birds" / "05_mcts_pol_vs_random.toml",
                     overrides=["budget.iterations=50", "design.seeds=2"])
    tasks = [t for series in plan_study(spec) for t in series.games]
    agents = build_agents(spec)
    learned = load_populations(spec)
    rows = []
    for task in tasks:
        game_rows, after = play_game(spec, task, agents, learned)
        assert all(r["error"] is None for r in game_rows), game_rows[0]["error"]
        assert game_rows[0]["length"] == 20
        assert game_rows[0]["score_margin"] == -game_rows[1]["score_margin"]
        assert sorted(r["result"] for r in game_rows) in (["loss", "win"], ["tie", "tie"])
        assert np.array_equal(after["MCTS-chance-pol"]["weights"], learned["MCTS-chance-pol"]["weights"])
        rows += game_rows
    assert {r["seat"] for r in rows if r["label"] == "Random"} == {0, 1}  # seats alternate
    import pandas as pd

    table = result_table(pd.DataFrame(rows))
    assert "Score diff" in to_markdown(table) and np.isfinite(table.loc["MCTS-chance-pol", "score_diff"])
    # the mean result (win 1, tie 0.5) beside the margin, with its interval; both seats sum to 1
    header = to_markdown(table).splitlines()[0]
    assert header.index("Mean result") < header.index("Score diff")
    means = table["result_mean"]
    assert means.sum() == pytest.approx(1.0) and (table["result_lo"] <= means).all()
    from cluster.run.tracker import Tally

    tally = Tally()
    tally.add(rows)
    metrics = tally.metrics()
    assert metrics["score/Random"] == pytest.approx(means["Random"])
    assert metrics["margin/Random"] == pytest.approx(table.loc["Random", "score_diff"])


def test_a_policy_seat_without_weights_plays_the_shipped_policy():
    """No learned state: the policy opponent model is the shipped one (package data,
    the same weights as jobs/birds/policy/birds_policy.npz), not an error."""
    from agents.birds._agent import SHIPPED_POLICY, load_weights, shipped_policy_id

    assert np.array_equal(load_weights(SHIPPED_POLICY),
                          load_weights(ROOT / "jobs" / "birds" / "policy" / "birds_policy.npz"))
    spec = load_spec(ROOT / "jobs" / "birds" / "05_mcts_pol_vs_random.toml",
                     overrides=["budget.iterations=20"], scale=0.01)
    task = plan_study(spec)[0].games[0]
    without, _ = play_game(spec, task, build_agents(spec), learned=None)
    assert without[0]["error"] is None
    with_file, _ = play_game(spec, task, build_agents(spec), learned=load_populations(spec))
    assert [r["score"] for r in without] == [r["score"] for r in with_file]  # the same weights
    assert spec.flat_params()["lineup.0.params.default_policy"] == shipped_policy_id()
