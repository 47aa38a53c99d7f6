"""Issue 38: FEMCTS's rollout features from a remembered map (``features_from = "memory"``,
agents/pommerman/fog_memory.py): what is remembered and forgotten, the features it gives,
and games that stay the same where nothing can be remembered."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.pommerman.features import (
    ALL_FEATURES, C_FULL_SCAN, C_GHOSTS, F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_POWERUP, F_NEAR_RIGID,
    F_NEAR_WOOD, G_BOMB, G_ENEMY, G_POWER, G_RIGID, G_WOOD, new_feature_cache, prepare_feature_cache,
)
from agents.pommerman.femcts import FEMCTSConfig, rollout_features
from agents.pommerman.fog_memory import new_fog_memory, remember
from agents.registry import make_agent
from games.pommerman import PommermanConfig
from games.pommerman.kernels import EXTRA_BOMB, M_STEP, copy_state, observe
from tests.jobs.test_femcts_fog import BEFORE, _game_hash
from tests.agents.test_profiles import java_state

#: agent 0 at (5, 5) sees, at range 2: a rigid wall 2 up, wood 2 right, a power-up
#: (placed below) at (4, 4), a bomb at (6, 4) and agent 1 at (7, 6)
SEEN = """
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . # . . . . .
. . . . . . . . . . .
. . . . . 0 . + . . .
. . . . b . . . . . .
. . . . . . 1 . . . .
. . . . . . . . . . .
. . . . . . . . . . 2
3 . . . . . . . . . .
"""
#: the same board a few ticks on: agent 0 at (5, 1) sees none of those (columns 0-3),
#: agent 1 has walked out of its view
AWAY = """
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . # . . . . .
. . . . . . . . . . .
. 0 . . . . . + . . .
. . . . b . . . . . .
. . . . . . . . . . .
. . . . . . . . . 1 .
. . . . . . . . . . 2
3 . . . . . . . . . .
"""
#: back at (5, 5): the wood has burnt, the bomb is gone, agent 1 is not where it was
BACK = """
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . # . . . . .
. . . . . . . . . . .
. . . . . 0 . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . 1 .
. . . . . . . . . . 2
3 . . . . . . . . . .
"""


def _obs(picture, step, view_range=2, bomb_life=9):
    state = java_state(picture, bombs=[(6, 4, bomb_life, 2)] if "b" in picture else ())
    state.board[4 * 11 + 4] = EXTRA_BOMB
    state.meta[M_STEP] = step
    return observe(state, 0, view_range)


def _features(obs, cache, absent=0.0, full_scan=False):
    """FEMCTS's rollout features of ``obs``'s root, from the cache (or the full scan)."""
    root = copy_state(obs)
    prepare_feature_cache(cache, root, 12, ALL_FEATURES)
    if full_scan:
        cache.counts[C_FULL_SCAN] = 1
    out = np.zeros(8)
    rollout_features(root, 0, cache, out, absent)
    return out


def _closeness(d2):
    return 1.0 / (np.sqrt(d2) + 1.0)


@pytest.mark.parametrize("absent", [0.0, 1.0])
@pytest.mark.parametrize("full_scan", [False, True])
def test_an_object_seen_then_out_of_view_stays_in_the_features_under_memory(absent, full_scan):
    memory, cache = new_fog_memory(), new_feature_cache()
    seen = remember(memory, _obs(SEEN, 10), 0, 10, cache)
    assert list(seen) == [0, 0, 0, 0, 0], "everything is in view: nothing comes from memory"
    assert cache.counts[C_GHOSTS] == 0
    away = _obs(AWAY, 12)
    blind_cache = new_feature_cache()  # the observation reading: a cache without memory
    without = _features(away, blind_cache, absent, full_scan)
    for f in (F_NEAR_BOMB, F_NEAR_POWERUP, F_NEAR_ENEMY, F_NEAR_RIGID, F_NEAR_WOOD):
        assert without[f] == absent, "out of view, nothing of it in the observation's features"
    counts = remember(memory, away, 0, 10, cache)
    assert counts[G_BOMB] == counts[G_POWER] == counts[G_ENEMY] == counts[G_RIGID] == counts[G_WOOD] == 1
    assert cache.counts[C_GHOSTS] == 1
    with_memory = _features(away, cache, absent, full_scan)
    # from (5, 1): the wall at (3, 5), the wood at (5, 7), the bomb at (6, 4), the power-up
    # at (4, 4) and agent 1 where it was last seen, (7, 6)
    assert with_memory[F_NEAR_RIGID] == pytest.approx(_closeness(4 + 16))
    assert with_memory[F_NEAR_WOOD] == pytest.approx(_closeness(36))
    assert with_memory[F_NEAR_BOMB] == pytest.approx(_closeness(1 + 9))
    assert with_memory[F_NEAR_POWERUP] == pytest.approx(_closeness(1 + 9))
    assert with_memory[F_NEAR_ENEMY] == pytest.approx(_closeness(4 + 25))


def test_cached_and_scanned_features_agree_under_memory():
    memory, cache = new_fog_memory(), new_feature_cache()
    remember(memory, _obs(SEEN, 10), 0, 10, cache)
    away = _obs(AWAY, 12)
    remember(memory, away, 0, 10, cache)
    for absent in (0.0, 0.5, 1.0):
        np.testing.assert_array_equal(_features(away, cache, absent), _features(away, cache, absent, True))


def test_what_is_seen_gone_or_outlives_memory_ticks_is_forgotten():
    memory, cache = new_fog_memory(), new_feature_cache()
    remember(memory, _obs(SEEN, 10), 0, 10, cache)
    remember(memory, _obs(BACK, 11), 0, 10, cache)  # wood, bomb and agent 1's cell seen empty
    counts = remember(memory, _obs(AWAY.replace("b", "."), 12), 0, 10, cache)
    assert (counts[G_RIGID], counts[G_POWER]) == (1, 1), "the wall for good, the power-up still there"
    assert counts[G_WOOD] == counts[G_BOMB] == counts[G_ENEMY] == 0
    # memory_ticks bounds enemies and bombs; a bomb also its timer as last seen
    for ticks, later, expect in ((3, 12, 1), (3, 13, 0), (100, 18, 1), (100, 19, 0)):
        memory, cache = new_fog_memory(), new_feature_cache()
        remember(memory, _obs(SEEN, 10), 0, ticks, cache)
        counts = remember(memory, _obs(AWAY, later), 0, ticks, cache)
        assert counts[G_BOMB] == expect, (ticks, later)  # life 9 at tick 10: exploded by 19
    memory, cache = new_fog_memory(), new_feature_cache()
    remember(memory, _obs(SEEN, 10), 0, 3, cache)
    assert remember(memory, _obs(AWAY, 12), 0, 3, cache)[G_ENEMY] == 1
    assert remember(memory, _obs(AWAY, 13), 0, 3, cache)[G_ENEMY] == 0


def test_blind_memory_holds_only_own_bombs():
    """Range 0: the agent sees its own cell, so nothing is remembered but a bomb on it."""
    memory, cache = new_fog_memory(), new_feature_cache()
    assert list(remember(memory, _obs(SEEN, 10, view_range=0), 0, 10, cache)) == [0] * 5
    assert list(remember(memory, _obs(AWAY, 12, view_range=0), 0, 10, cache)) == [0] * 5
    assert cache.counts[C_GHOSTS] == 0


def test_the_option_is_validated_and_off_by_default():
    assert FEMCTSConfig().features_from == "observation" and FEMCTSConfig().memory_ticks == 10
    with pytest.raises(ValueError, match="features_from"):
        FEMCTSConfig(features_from="map")
    with pytest.raises(ValueError, match="memory_ticks"):
        FEMCTSConfig(memory_ticks=0)
    agent = make_agent("femcts", {"features_from": "memory"}, Budget(iterations=5), PommermanConfig())
    assert agent.game_metrics()["remembered_bomb"] == 0.0
    assert make_agent("femcts", {}, Budget(iterations=5), PommermanConfig()).game_metrics() == {}


def test_memory_changes_nothing_where_nothing_can_be_remembered():
    """Full observability hides nothing: the recorded games, move for move. Blind
    (range 0), the agent sees only its own cell: no wall, wood or power-up is ever
    remembered, only its own bombs after it steps off them and an enemy seen on its
    cell (the java rules let two agents share a cell for a tick); with
    ``memory_ticks = 1`` not even those (they are remembered while in view only), and
    the game is the observation reading's, move for move."""
    assert _game_hash(None, 0, {"features_from": "memory"}) == BEFORE[(None, 0)]
    for seed, params in ((0, {"fog_moves": "open"}), (1, {})):
        remembering = {**params, "features_from": "memory"}
        _, remembered = _game_hash(0, seed, remembering, metrics=True)
        for m in remembered:
            assert m["remembered_powerup"] == m["remembered_rigid"] == m["remembered_wood"] == 0.0
        assert any(m["remembered_bomb"] > 0 for m in remembered), "its own bombs, stepped off"
        blind, remembered = _game_hash(0, seed, {**remembering, "memory_ticks": 1}, metrics=True)
        assert all(v == 0.0 for m in remembered for v in m.values())
        assert blind == _game_hash(0, seed, params)
    assert _game_hash(0, 1, {"features_from": "memory"}, metrics=True)[1][0]["remembered_enemy"] > 0
