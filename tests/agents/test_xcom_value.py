"""XCOM value readings (issue 23): the command's TD target r + gamma * V(s') as the UCT
bonus, the reward-only control, and today's reading (V(s') alone) replaying games
recorded before the option existed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recorded_games import records_script

from cluster.replay.records import load_record, verify

DATA = Path(__file__).resolve().parents[1] / "data" / "xcom_next_state"


RECORDS = records_script("xcom_next_state")


@pytest.mark.parametrize("name", sorted(RECORDS.SERIES))
def test_next_state_reading_replays_games_recorded_before_the_option(name):
    """Games of main at 5968b82 (V(s') alone, value_weight 0.05, the default then): with
    ``value_target = "next_state"`` and that weight the
    agents make the recorded decisions, round after round of the series (weights
    carried); on 6x6 the default reading plays another game (on 18x18 at 30 iterations
    the root is never fully expanded, so no bonus is read and both readings agree)."""
    from cluster.run.play import build_agents, play_recorded_game
    from cluster.spec.plan import plan_study

    recorded = [load_record(p) for p in sorted(DATA.glob(f"{name}-*.npz"))]
    assert len(recorded) == RECORDS.SERIES[name][1]
    for params, same in (({"value_target": "next_state", "value_weight": 0.05}, True),
                         ({"value_weight": 0.05}, False)):
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


# --- the bonus on a hand-computed position ------------------------------------------
# Humans to move; human 1 (top right) can walk down the open right-hand columns and shoot
# either alien; the wall row covers both aliens from the top row.
POSITION = """
    H . . . . H
    . . . . . .
    # # # # . .
    . . . . . .
    . . . . . .
    A . . . . A
"""


def _position(last_alien: bool = False):
    from games.xcom.kernels import ALIENS, grid_from_ascii, state_from_grid

    state = state_from_grid(grid_from_ascii(POSITION), 4)
    if last_alien:  # alien 1 is already dead: a kill ends the round
        state.units[ALIENS, 1, 2] = 0
        state.board[5 * 6 + 5] = 0
    return state


def _root_bonuses(state, value_kind, value_target, gamma, weights, seed=0):
    """Search until every legal root command has been expanded once (no UCT selection at
    the root yet); returns {action: node_bonus of its child} and the search stats."""
    from agents.search import ROOT_INDEX, new_tree
    from agents.xcom.mcts import SEARCH_STATS, STAT_BONUSES, STAT_ROOT_SELECTIONS, \
        XcomParams, dummy_encoder, xcom_search
    from games.rng import make_rng
    from games.xcom.kernels import HUMANS, copy_state, legal_actions

    legal = np.flatnonzero(legal_actions(state, HUMANS))
    tree = new_tree(len(legal) + 1, legal_actions(state, HUMANS).shape[0])
    stats = np.zeros(SEARCH_STATS, dtype=np.int64)
    params = XcomParams(len(legal), 0.0, np.sqrt(2), 1e-6, value_kind, value_target, gamma, 0.05)
    xcom_search(state, HUMANS, tree, copy_state(state), copy_state(state), params, weights,
                dummy_encoder(), stats, make_rng(seed))
    assert stats[STAT_ROOT_SELECTIONS] == 0 and stats[STAT_BONUSES] == len(legal)
    return {int(a): float(tree.node_bonus[tree.children[ROOT_INDEX, a]]) for a in legal}


def _is_kill(state, action) -> bool:
    from games.xcom.kernels import decode_action

    return int(decode_action(state, action)[3]) >= 0


def test_td_target_bonus_gives_a_kill_its_reward():
    """MF+FA weights (0, 1, 0, 0, 0): V(s') = enemy units alive / 2. Kill: r = 10,
    V = 1/2, bonus 10 + 0.9 * 0.5 = 10.45; any other command: 0 + 0.9 * 1 = 0.9.
    Today's reading (next_state) gives the kill 0.5 and the others 1.0: it ranks every
    kill last."""
    from agents.xcom._value import TARGET_NEXT_STATE, TARGET_TD, VALUE_MANUAL

    state = _position()
    weights = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    td = _root_bonuses(state, VALUE_MANUAL, TARGET_TD, 0.9, weights)
    kills = [a for a in td if _is_kill(state, a)]
    assert kills and len(kills) < len(td)
    for a, bonus in td.items():
        assert bonus == pytest.approx(10.45 if a in kills else 0.9, abs=1e-12)
    old = _root_bonuses(state, VALUE_MANUAL, TARGET_NEXT_STATE, 0.9, weights)
    for a, bonus in old.items():
        assert bonus == pytest.approx(0.5 if a in kills else 1.0, abs=1e-12)


def test_td_target_bonus_of_a_round_ending_kill_is_its_reward():
    """The kill of the last alien ends the round: V(s') = 0 there, so its bonus is r = 10,
    whatever the weights say of the terminal afterstate. Weights (2, 0, 0, 0, 0):
    V = 2 * own units alive / 2 = 2 everywhere; other commands get 0.9 * 2 = 1.8;
    next_state reads V = 2 for every command, the kill included."""
    from agents.xcom._value import TARGET_NEXT_STATE, TARGET_TD, VALUE_MANUAL

    state = _position(last_alien=True)
    weights = np.array([2.0, 0.0, 0.0, 0.0, 0.0])  # V = 2 * own units alive / 2 = 2
    td = _root_bonuses(state, VALUE_MANUAL, TARGET_TD, 0.9, weights)
    kills = [a for a in td if _is_kill(state, a)]
    assert kills
    for a, bonus in td.items():
        assert bonus == pytest.approx(10.0 if a in kills else 0.9 * 2.0, abs=1e-12)
    old = _root_bonuses(state, VALUE_MANUAL, TARGET_NEXT_STATE, 0.9, weights)
    assert all(b == pytest.approx(2.0, abs=1e-12) for b in old.values())


def test_reward_only_bonus_is_the_reward():
    from agents.xcom._value import TARGET_TD, VALUE_NONE

    state = _position()
    bonus = _root_bonuses(state, VALUE_NONE, TARGET_TD, 0.9, np.zeros(1))
    assert {a for a, b in bonus.items() if b == 10.0} == {a for a in bonus if _is_kill(state, a)}
    assert all(b in (0.0, 10.0) for b in bonus.values())


@pytest.mark.parametrize("seed", range(6))
def test_reward_only_control_ranks_a_kill_first(seed):
    """With every root command expanded once (equal visits, equal exploration terms), the
    next UCT selection is a kill whenever value_weight * 10 exceeds the spread of the
    normalised means (at most 1): that child then has the most visits and is played.
    Plain MCTS at the same budget plays a non-kill for some of these seeds (16 of the 37
    commands are kills)."""
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_config
    from games.xcom.kernels import HUMANS, legal_actions

    state = _position()
    n = int(legal_actions(state, HUMANS).sum())
    config = make_config("xcom", {"board": "mini"})
    bot = make_agent("xcom_mcts_reward", {"value_weight": 0.2}, Budget(iterations=n + 1), config)
    bot.begin_game(HUMANS, np.random.SeedSequence(seed))
    action = bot.act(state)
    assert _is_kill(state, action)
    assert bot.search_stats[0] == 1  # exactly one UCT selection at the root


def test_plain_mcts_at_that_budget_does_not_always_kill():
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_config
    from games.xcom.kernels import HUMANS, legal_actions

    state = _position()
    n = int(legal_actions(state, HUMANS).sum())
    config = make_config("xcom", {"board": "mini"})
    kills = []
    for seed in range(6):
        bot = make_agent("xcom_mcts", {}, Budget(iterations=n + 1), config)
        bot.begin_game(HUMANS, np.random.SeedSequence(seed))
        kills.append(_is_kill(state, bot.act(state)))
    assert not all(kills)


def test_reward_only_control_params_are_checked():
    from agents.registry import make_agent_config

    with pytest.raises(ValueError, match=r"^params\.value_weight: "):
        make_agent_config("xcom_mcts_reward", {"value_weight": -1})
    with pytest.raises(ValueError, match=r"^params\.value_target: must be one of"):
        make_agent_config("xcom_convae_fa", {"value_target": "afterstate"})
    assert make_agent_config("xcom_mf_fa", {}).value_target == "td_target"
