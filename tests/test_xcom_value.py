"""XCOM value readings (issue 23): the command's TD target r + gamma * V(s') as the UCT
bonus, the reward-only control, and today's reading (V(s') alone) replaying games
recorded before the option existed."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cluster.replay import load_record, verify

DATA = Path(__file__).resolve().parent / "data" / "xcom_next_state"


def _records_module():
    spec = importlib.util.spec_from_file_location("xcom_make_records", DATA / "make_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDS = _records_module()


@pytest.mark.parametrize("name", sorted(RECORDS.SERIES))
def test_next_state_reading_replays_games_recorded_before_the_option(name):
    """Games of main at 5968b82 (V(s') alone): with ``value_target = "next_state"`` the
    agents make the recorded decisions, round after round of the series (weights
    carried); on 6x6 the default reading plays another game (on 18x18 at 30 iterations
    the root is never fully expanded, so no bonus is read and both readings agree)."""
    from cluster.play import build_agents, play_recorded_game
    from cluster.plan import plan_study

    recorded = [load_record(p) for p in sorted(DATA.glob(f"{name}-*.npz"))]
    assert len(recorded) == RECORDS.SERIES[name][1]
    for params, same in (({"value_target": "next_state"}, True), ({}, False)):
        spec = RECORDS.series_spec(name, params)
        agents = build_agents(spec)
        matches = []
        for task, want in zip(plan_study(spec)[0].games, recorded):
            assert verify(want) == want.length
            _, _, got = play_recorded_game(spec, task, agents)
            matches.append(got.length == want.length and np.array_equal(got.actions, want.actions)
                           and np.array_equal(got.fingerprints, want.fingerprints))
        if same:
            assert all(matches)
        elif RECORDS.SERIES[name][0] == "mini":
            assert not all(matches)
