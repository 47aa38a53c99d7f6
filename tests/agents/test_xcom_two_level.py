"""The two-level move encoding of the XCOM searches (issue 23, point 5): the root chooses a
unit, the unit's node one of its commands (``move_encoding = "two_level"``). The game is
unchanged; the same commands must be reachable as with the flat encoding, values must be
backed up from the right side's perspective although plies no longer alternate with depth,
and the flat default must stay as it was."""
from __future__ import annotations

import numpy as np
import pytest

# Humans to move; human 1 (top right) can walk down the open right-hand columns and shoot
# either alien; the wall row covers both aliens from the top row (as in test_xcom_value).
POSITION = """
    H . . . . H
    . . . . . .
    # # # # . .
    . . . . . .
    . . . . . .
    A . . . . A
"""


def _position():
    from games.xcom.kernels import grid_from_ascii, state_from_grid

    return state_from_grid(grid_from_ascii(POSITION), 4)


def _two_level_tree(state, player, iterations, value_kind=None, value_weight=0.0, seed=0):
    from agents.search import new_tree
    from agents.xcom._value import TARGET_NEXT_STATE, TARGET_TD, VALUE_NONE
    from agents.xcom.mcts import SEARCH_STATS, XcomParams, dummy_encoder, xcom_search_two_level
    from games.rng import make_rng
    from games.xcom.kernels import copy_state, legal_actions

    width = legal_actions(state, player).shape[0]
    tree = new_tree(2 * iterations + 1, width)
    stats = np.zeros(SEARCH_STATS, dtype=np.int64)
    kind = VALUE_NONE if value_kind is None else value_kind
    target = TARGET_TD if value_weight > 0 else TARGET_NEXT_STATE
    params = XcomParams(iterations, 0.0, np.sqrt(2), 1e-6, kind, target, 0.9, value_weight)
    action, done = xcom_search_two_level(
        state, player, tree, copy_state(state), copy_state(state), params, np.zeros(1), dummy_encoder(),
        stats, make_rng(seed))
    assert done == iterations
    return tree, int(action), stats


def _reachable_two_level(tree):
    """Flat commands a two-level root offers: every non-ILLEGAL entry of the command node
    of every non-ILLEGAL unit of the root (expanded or not)."""
    from agents.search import ROOT_INDEX
    from agents.search.tree import ILLEGAL, UNVISITED

    out = set()
    for unit in np.flatnonzero(tree.children[ROOT_INDEX] != ILLEGAL):
        node = tree.children[ROOT_INDEX, unit]
        assert node != UNVISITED, "every unit of the root must have been expanded"
        out |= {int(a) for a in np.flatnonzero(tree.children[node] != ILLEGAL)}
    return out


def test_two_level_reaches_the_same_commands_as_flat_on_a_hand_made_position():
    """Both humans can act: the root has two units, and their command nodes together offer
    exactly the flat legal commands (37, 16 of them kills), each under its own unit."""
    from agents.search import ROOT_INDEX
    from agents.search.tree import ILLEGAL
    from games.xcom.kernels import HUMANS, decode_action, legal_actions

    state = _position()
    legal = {int(a) for a in np.flatnonzero(legal_actions(state, HUMANS))}
    tree, action, _ = _two_level_tree(state, HUMANS, 2)
    assert set(np.flatnonzero(tree.children[ROOT_INDEX] != ILLEGAL)) == {0, 1}
    assert _reachable_two_level(tree) == legal
    for unit in (0, 1):
        node = tree.children[ROOT_INDEX, unit]
        assert {int(decode_action(state, a)[0])
                for a in np.flatnonzero(tree.children[node] != ILLEGAL)} == {unit}
    assert action in legal


def test_two_level_reaches_the_same_commands_along_played_rounds():
    """At every decision of random rounds on both boards (holds, dead units, the last
    unit), the two-level root offers the flat legal set and plays a legal command."""
    from games.registry import make_game
    from games.xcom.kernels import count_alive, legal_actions

    rng = np.random.default_rng(7)
    for board in ("mini", "large"):
        game = make_game("xcom", board=board)
        for seed in range(2):
            game.reset(seed)
            while not game.done:
                side = game.acting_players()[0]
                state = game.observation(side)
                legal = legal_actions(state, side)
                units = int(count_alive(state, side))
                tree, action, _ = _two_level_tree(state, side, units, seed=seed)
                assert _reachable_two_level(tree) == {int(a) for a in np.flatnonzero(legal)}
                assert legal[action]
                choice = int(rng.choice(np.flatnonzero(legal)))
                game.step([choice, choice])


def test_two_level_backs_values_up_from_the_chooser_perspective():
    """A unit node and its commands are chosen by the same side: the unit's value sum is
    the sum of its commands' (none of them is a rollout leaf), and its visits theirs."""
    from agents.search import ROOT_INDEX
    from games.xcom.kernels import HUMANS

    tree, _, _ = _two_level_tree(_position(), HUMANS, 300)
    for unit in (0, 1):
        node = tree.children[ROOT_INDEX, unit]
        kids = tree.children[node][tree.children[node] >= 0]
        assert tree.node_visits[node] == tree.node_visits[kids].sum() > 0
        assert tree.node_value_sum[node] == pytest.approx(tree.node_value_sum[kids].sum())
    assert tree.node_visits[ROOT_INDEX] == 300


def test_two_level_reward_control_reads_the_kill_at_the_unit_level():
    """With the reward-only bonus, the unit that can kill carries a kill's +10 (the best
    of its expanded commands) once a kill of its has been expanded, UCT selects among the
    units, and the control plays a kill."""
    from agents.search import ROOT_INDEX
    from agents.xcom.mcts import STAT_ROOT_SELECTIONS
    from games.xcom.kernels import HUMANS, decode_action

    state = _position()
    tree, action, stats = _two_level_tree(state, HUMANS, 200, value_weight=0.2)
    killer = tree.children[ROOT_INDEX, 1]
    kills = [a for a in np.flatnonzero(tree.children[killer] >= 0)
             if decode_action(state, a)[3] >= 0]
    assert kills and tree.node_bonus[killer] == 10.0
    assert stats[STAT_ROOT_SELECTIONS] > 0
    assert decode_action(state, action)[3] >= 0  # the control plays a kill


def test_two_level_reads_the_value_at_the_root_on_18x18():
    """At the start of an 18x18 round (six units, about 160 commands) 100 flat iterations
    never select at the root; the two-level root (six units) is selected from the seventh."""
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_game

    game = make_game("xcom", board="large")
    game.reset(0)
    state = game.observation(0)
    shares = {}
    for encoding in ("flat", "two_level"):
        bot = make_agent("xcom_mf_fa", {"move_encoding": encoding}, Budget(iterations=100),
                         game.config)
        bot.begin_game(0, np.random.SeedSequence(1))
        bot.act(state)
        shares[encoding] = int(bot.search_stats[0])
    assert shares["flat"] == 0 and shares["two_level"] > 0


def test_move_encoding_is_checked_and_flat_by_default():
    from agents.registry import make_agent_config

    for name in ("xcom_mcts", "xcom_mcts_reward", "xcom_mcts_td", "xcom_mf_fa", "xcom_convae_fa"):
        assert make_agent_config(name, {}).move_encoding == "flat"
        assert make_agent_config(name, {"move_encoding": "two_level"}).move_encoding == "two_level"
        with pytest.raises(ValueError, match=r"^params\.move_encoding: must be one of"):
            make_agent_config(name, {"move_encoding": "per_unit"})
