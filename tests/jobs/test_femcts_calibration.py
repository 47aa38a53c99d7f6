"""jobs.femcts.calibration, the budget calibration of the FEMCTS study: MCTS's and each
FEMCTS variant's forward-model ticks per iteration on the same positions, and the FEMCTS
iteration budget with MCTS's ticks."""
from __future__ import annotations

import pytest

from jobs.femcts.calibration import VARIANTS, calibrate


def test_ticks_per_iteration_and_the_budget_they_give():
    out = calibrate(games=1, stride=50, mcts_iterations=30)
    assert out["positions"] > 0 and out["mcts_iterations"] == 30 and out["rollout_depth"] == 12
    mcts = out["mcts_ticks_per_iteration"]
    # an iteration simulates rollout_depth ticks counted from the root, fewer only when its
    # simulated game ends: on the early positions of a game that is rare
    for tpi in [mcts] + [out[f"{key}_ticks_per_iteration"] for key in VARIANTS]:
        assert 11.0 < tpi <= 12.0, out
    for key in VARIANTS:
        assert out[f"{key}_iterations_same_ticks"] == round(30 * mcts / out[f"{key}_ticks_per_iteration"])
    # iteration budgets: a pure function of its arguments
    assert calibrate(games=1, stride=50, mcts_iterations=30) == out


def test_the_calibration_counts_what_the_mcts_search_simulates():
    """mcts_ticks is MCTS's search loop with a tick counter: a budget of one iteration from
    a fresh game's first position simulates exactly rollout_depth ticks (nobody can die in
    the first ticks of a game), and more iterations simulate proportionally more."""
    import math

    import numpy as np

    from agents.pommerman.search_model import scratch_state
    from agents.search import new_tree
    from games.pommerman import Pommerman, PommermanConfig
    from games.pommerman.kernels import N_ACTIONS
    from games.rng import make_rng
    from jobs.femcts.calibration import mcts_ticks

    game = Pommerman(PommermanConfig(ruleset="java"))
    game.reset(np.random.SeedSequence(3))
    observation = game.observation(0)
    for iterations, depth in ((1, 12), (1, 5), (20, 8)):
        tree, root, scratch = new_tree(iterations + 1, N_ACTIONS), scratch_state(), scratch_state()
        ticks = mcts_ticks(observation, 0, tree, root, scratch, iterations, math.sqrt(2), 1e-6, depth,
                           make_rng(0))
        assert ticks == pytest.approx(iterations * depth), (iterations, depth)
