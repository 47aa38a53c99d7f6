"""UCT for XCOM on the shared search core; the one driver of all five XCOM agents.

One decision is one call of :func:`xcom_search`. XCOM is deterministic and
fully observable, so re-simulating the actions from the root is exact
(closed loop). Each iteration::

    copy the root into the scratch state
    descend: at a node with untried legal commands expand a random one (its
             legal mask is stored as ILLEGAL children); else pick a child by
             UCT + value_weight * node_bonus (search.select_uct_bonus)
    roll out: random commands (kernels.random_command) to the end of the round
    value: the searching side's reward gained since the root (+10 per kill,
           -10 per loss)
    back up with alternating perspectives (search.backup_alternating)

and the most visited root command is played. The value term is data:
``value_kind`` (``_value.VALUE_*``) with its ``weights`` (and ``enc`` for the
encoder), read as ``value_target`` (``_value.TARGET_*``). When a child of one
of the agent's own decision nodes is expanded (once per child), its
``node_bonus`` is the value of the command ``c`` into it, on the reward scale
(``_value.command_value``)::

    TARGET_TD          node_bonus = r(s, c) + gamma * V(s')   (V(s') = 0 if s' ends the round)
    TARGET_NEXT_STATE  node_bonus = V(s')

with ``r(s, c)`` the agent's reward from the command itself (+10 for a kill)
and ``s'`` the afterstate; selection at the agent's own nodes then scores
``uct(child) + value_weight * node_bonus[child]``. Plain MCTS passes
``VALUE_NONE`` with ``TARGET_NEXT_STATE`` (no bonus is computed); the
reward-only control (``xcom_mcts_reward``) passes ``VALUE_NONE`` with
``TARGET_TD``: ``node_bonus = r(s, c)``.

``stats`` (int64[SEARCH_STATS], zeroed by each search) counts what the search
did with the value term: UCT selections at the root (each reads the bonuses
of the root's children), UCT selections at the agent's own nodes deeper down,
and children given a bonus (``agents.xcom.diagnostics`` reports the shares).
"""
from __future__ import annotations

from typing import Annotated

import numba as nb
import numpy as np
from pydantic import Field

from games.rng import make_rng
from games.validation import Real, config_class
from games.xcom.kernels import (
    M_DONE, M_MAX_MOVE, M_SIZE, M_TO_MOVE, XcomState, apply_action,
    copy_into, copy_state, decode_action, legal_actions_into, offset_index_table,
    random_command, rollout_scratch, state_from_grid,
)

from ..api import Agent
from ..registry import register
from ..search import (
    ROOT_INDEX, backup_alternating, budget_exhausted, deadline_ns, expand, mark_illegal,
    monotonic_ns, most_visited_child, new_tree, random_untried_action, reset_tree, SearchConfig,
    select_uct_bonus,
)
from ._value import TARGET_NEXT_STATE, TARGET_TD, VALUE_NONE, command_value
from .encoder import Encoder


STAT_ROOT_SELECTIONS, STAT_OWN_SELECTIONS_BELOW, STAT_BONUSES = 0, 1, 2
SEARCH_STATS = 3


@nb.njit(cache=True)
def descend(tree, state, player, exploration, epsilon, value_kind, value_target, gamma,
            value_weight, weights, enc, mask, cells, dist, index_table, board_scratch, phi,
            stats, rng):
    """Tree policy: walk down from the root applying commands to ``state``; expand
    one node (giving it its command's value as ``node_bonus`` when the agent chose
    the command). Returns the node the rollout starts from."""
    node = ROOT_INDEX
    with_bonus = value_kind != VALUE_NONE or value_target == TARGET_TD
    while state.meta[M_DONE] == 0:
        action = random_untried_action(tree, node, rng)
        if action >= 0:
            mover = state.meta[M_TO_MOVE]
            reward_before = state.rewards[player]
            apply_action(state, action)
            child = expand(tree, node, action)
            if child < 0:  # tree full: roll out from the state reached
                return node
            if state.meta[M_DONE] == 0:
                legal_actions_into(state, state.meta[M_TO_MOVE], mask, cells, dist, index_table)
                mark_illegal(tree, child, mask)
            if with_bonus and mover == player:
                unit = decode_action(state, action)[0]
                tree.node_bonus[child] = command_value(
                    state, player, unit, state.rewards[player] - reward_before, value_target,
                    gamma, value_kind, weights, enc, cells, dist, board_scratch, phi)
                stats[STAT_BONUSES] += 1
            return child
        if state.meta[M_TO_MOVE] == player:
            stats[STAT_ROOT_SELECTIONS if node == ROOT_INDEX else STAT_OWN_SELECTIONS_BELOW] += 1
        action = select_uct_bonus(tree, node, exploration, epsilon, value_weight, rng)
        if action < 0:
            return node
        apply_action(state, action)
        node = tree.children[node, action]
    return node


@nb.njit(cache=True)
def xcom_search(observation, player, tree, root, scratch, max_iterations, time_limit,
                exploration, epsilon, value_kind, value_target, gamma, value_weight, weights, enc,
                stats, rng):
    """One decision of the XCOM agents.

    Args:
        observation: XcomState (unchanged); player: int, the searching side (0 humans, 1 aliens).
        tree: Tree over the game's actions (reset here).
        root, scratch: XcomStates of the same board (overwritten).
        max_iterations: int; time_limit: float seconds (0 = none).
        exploration (K), epsilon: floats.
        value_kind: int (``_value.VALUE_*``); value_target: int (``_value.TARGET_*``);
        gamma: float, the discount of V in TARGET_TD; value_weight: float, the weight of
        the command's value in UCT;
        weights: float64[W] (table or linear weights; unused for VALUE_NONE);
        enc: Encoder (used by VALUE_CONV only).
        stats: int64[SEARCH_STATS] (zeroed, then counted; see the module docstring).
        rng: uint64[2] (advanced).
    Returns:
        (action, iterations): int64, int64.
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    copy_into(root, observation)
    n = root.meta[M_SIZE]
    max_move = root.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    mask = np.zeros(tree.children.shape[1], dtype=np.bool_)
    cells = np.empty(d_count, dtype=np.int64)
    dist = np.full(n * n, -1, dtype=np.int16)
    index_table = offset_index_table(max_move)
    board_scratch = np.zeros((n, n))
    phi = np.zeros(max(weights.shape[0], 1))
    buf = rollout_scratch(root)[2]
    stats[:] = 0
    reset_tree(tree)
    legal_actions_into(root, player, mask, cells, dist, index_table)
    mark_illegal(tree, ROOT_INDEX, mask)
    root_reward = root.rewards[player]
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_into(scratch, root)
        leaf = descend(tree, scratch, player, exploration, epsilon, value_kind, value_target,
                       gamma, value_weight, weights, enc, mask, cells, dist, index_table,
                       board_scratch, phi, stats, rng)
        while scratch.meta[M_DONE] == 0:
            random_command(scratch, cells, dist, buf, rng)
        backup_alternating(tree, leaf, scratch.rewards[player] - root_reward)
        iterations += 1
    action = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    return action, iterations


# --------------------------------------------------------------------- glue
def dummy_encoder() -> Encoder:
    """A 1-channel, 1-feature encoder for drivers that do not encode (numba needs a value)."""
    z = np.zeros
    return Encoder(z((1, 1, 3, 3)), z(1), z((1, 1, 3, 3)), z(1), z((1, 1)), z(1))


def fresh_state(game_config) -> XcomState:
    """A state of the configured board (the agents' preallocated root and scratch)."""
    return state_from_grid(game_config.grid, game_config.max_move, game_config.max_moves)


@config_class
class MCTSConfig(SearchConfig):
    """UCT with random rollouts to the end of the round."""

    max_nodes: Annotated[int, Field(ge=2, le=1 << 20)] = 1 << 14
    """Tree capacity under a time budget (an iteration budget of n uses n + 1)."""


class XcomSearchAgent(Agent):
    """Shared glue of the XCOM agents: generator, states, tree, one search per decision.

    Subclasses set ``value_kind`` and provide ``weights`` / ``encoder``, and set
    ``_value_target``, ``_gamma`` and ``_value_weight`` from their config."""

    value_kind = VALUE_NONE

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        from games.xcom import XcomConfig

        if not isinstance(game_config, XcomConfig):
            raise ValueError(f"agent {self.name!r} plays only the game 'xcom'")
        max_iterations, _ = budget.kernel_args()
        self._tree = new_tree(min(max_iterations + 1, config.max_nodes), game_config.num_actions)
        self._root = fresh_state(game_config)
        self._scratch = copy_state(self._root)
        self._rng = make_rng(0)
        self._weights = np.zeros(1)
        self._encoder = dummy_encoder()
        self._value_weight = 0.0
        self._value_target = TARGET_NEXT_STATE
        self._gamma = 0.0
        self.search_stats = np.zeros(SEARCH_STATS, dtype=np.int64)
        """What the last search did with the value term (``STAT_*``; see the module docstring)."""

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)

    def search(self, observation) -> tuple[int, int]:
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        action, iterations = xcom_search(
            observation, self.seat, self._tree, self._root, self._scratch, max_iterations, seconds,
            float(c.exploration), float(c.epsilon), self.value_kind, self._value_target,
            self._gamma, self._value_weight, self._weights, self._encoder, self.search_stats,
            self._rng)
        return int(action), int(iterations)

    def decide(self, observation):
        return self.search(observation)


@register
class MCTSAgent(XcomSearchAgent):
    """XCOM MCTS: UCT, random rollouts to the end of the round, most visited command."""

    name = "xcom_mcts"
    Config = MCTSConfig


#: The weight of a command's value in a child's UCT score.
ValueWeight = Annotated[Real, Field(ge=0, le=100)]


@config_class
class RewardGuidedConfig(MCTSConfig):
    """MCTS whose own commands get their reward as the UCT bonus (no learned value)."""

    value_weight: ValueWeight = 0.05
    """Weight of the command's reward in a child's UCT score (rewards are +-10 per kill,
    UCT's mean values are normalised to [0, 1]): the TD agents' default, so that a kill
    weighs what it weighs in their ``r + gamma * V`` bonus; 0 makes it plain MCTS."""


@register
class RewardGuidedAgent(XcomSearchAgent):
    """The reward-only control (study name "MCTS+R"): XCOM MCTS whose own children get
    ``node_bonus = r(s, c)``, the reward of the command itself (+10 for a kill), added
    as ``value_weight * r`` to their UCT score: the TD agents' ``r + gamma * V(s')``
    with ``V = 0``. It learns nothing, so a study against it shows what the learned V
    adds to the reward term."""

    name = "xcom_mcts_reward"
    Config = RewardGuidedConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._value_target = TARGET_TD
        self._value_weight = float(config.value_weight)
