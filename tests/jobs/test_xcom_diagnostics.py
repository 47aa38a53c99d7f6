"""jobs.xcom.diagnostics (issue 23, point 5): how often an XCOM TD agent's search reads its
value, and how often its choice differs from plain MCTS's from the same generator state.
Plain MCTS against itself is the check that the reference replays the agent's random numbers
(``generator_state``) in a tree of the agent's capacity (``search_tree``)."""
from __future__ import annotations

import pytest


def test_diagnostic_shares():
    from jobs.xcom.diagnostics import diagnose, main

    plain = diagnose("mini", "xcom_mcts", runs=1, rounds=3, iterations=60, seed=3)
    assert plain["decisions"] > 0
    assert plain["share_differs_from_mcts"] == 0.0  # plain MCTS is its own reference
    learner = diagnose("mini", "xcom_mf_fa", runs=1, rounds=3, iterations=60, seed=3)
    assert learner == diagnose("mini", "xcom_mf_fa", runs=1, rounds=3, iterations=60, seed=3) | {
        "seconds": learner["seconds"]}  # a pure function of its arguments (but the clock)
    for key in ("share_reading_v_at_root", "share_reading_v_deeper", "share_reading_v",
                "share_differs_from_mcts", "share_mcts_differs_from_mcts"):
        assert 0.0 <= learner[key] <= 1.0
    # 60 iterations on 6x6 (median ~20 commands) always get past expanding the root
    assert learner["share_reading_v_at_root"] == 1.0
    assert learner["wins"] + learner["draws"] + learner["losses"] == 3
    with pytest.raises(ValueError, match="^rounds"):
        diagnose("mini", rounds=0)
    assert main(["--board", "6x6", "--value-target", "td_target", "--rounds", "0"]) == 2


def test_diagnostic_with_the_two_level_encoding():
    from jobs.xcom.diagnostics import diagnose

    plain = diagnose("mini", "xcom_mcts", {"move_encoding": "two_level"}, runs=1, rounds=2,
                     iterations=60, seed=3)
    assert plain["decisions"] > 0 and plain["share_differs_from_mcts"] == 0.0
    learner = diagnose("mini", "xcom_mf_fa", {"move_encoding": "two_level"}, runs=1, rounds=2,
                       iterations=60, seed=3)
    assert learner["share_reading_v_at_root"] > 0.9
