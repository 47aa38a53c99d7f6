"""Issue 25's search options of the bird MCTS: the seed's probability-weighted UCB at a
chance node, the point-differential backup, outcome grouping at chance nodes, and today's
options under their names replaying the games recorded before the options existed."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cluster.replay import load_record, verify

DATA = Path(__file__).resolve().parent / "data" / "birds_main"


def _records_module():
    spec = importlib.util.spec_from_file_location("birds_make_records", DATA / "make_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDS = _records_module()


@pytest.mark.parametrize("name", sorted(RECORDS.SERIES))
def test_todays_options_replay_games_recorded_before_the_new_options(name):
    """Games of main at 69cbfb1: with today's options under their names (``opponent =
    "random"`` now that the policy is the default, ``chance_selection = "proportional"``
    for what was ``pw_ucb``) the agents make the recorded decisions, state for state."""
    recorded = [load_record(p) for p in sorted(DATA.glob(f"{name}-*.npz"))]
    assert len(recorded) == 2
    for want, got in zip(recorded, RECORDS.play_series(name, "now")):
        assert verify(want) == want.length == 20
        assert np.array_equal(got.actions, want.actions)
        assert np.array_equal(got.fingerprints, want.fingerprints)
