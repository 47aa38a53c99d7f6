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

and the most visited root command is played. A decision works on borrowed views
(``games.lowlevel.borrow``) of its states, tree, buffers and rng: no atomic reference
counts as an iteration hands them from kernel to kernel. The value term is data:
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
and children given a bonus (``jobs/xcom/diagnostics.py`` reports the shares).

The kernels' ``value_kind`` and ``value_target`` constants (``VALUE_NONE``,
``TARGET_TD``, ``TARGET_NEXT_STATE``, defined in the private ``_value.py``) are public
here, for drivers outside this package that call :func:`search_kernel`'s kernels.
"""
from __future__ import annotations

from typing import Annotated, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field

from games.lowlevel import borrow, keep_alive
from games.rng import make_rng
from games.validation import Real, config_class, one_of
from games.xcom.kernels import (
    M_DONE, M_MAX_MOVE, M_SIZE, M_TO_MOVE, M_UNITS, XcomState, apply_action, borrowed_state,
    copy_into, copy_state, decode_action, legal_actions_into, offset_index_table,
    random_command, state_from_grid,
)

from ..api import Agent
from ..registry import register
from ..search import (
    NO_PARENT, ROOT_INDEX, SearchConfig, backup_alternating, borrowed_tree, budget_exhausted,
    deadline_ns, expand,
    mark_illegal, monotonic_ns, most_visited_child, new_tree, random_untried_action, record_visit,
    reset_tree, select_uct_bonus,
)
from ._value import TARGET_NEXT_STATE, TARGET_TD, VALUE_NONE, command_value
from .encoder import Encoder


STAT_ROOT_SELECTIONS, STAT_OWN_SELECTIONS_BELOW, STAT_BONUSES = 0, 1, 2
SEARCH_STATS = 3

#: ``move_encoding`` of the XCOM agents: ``"flat"``, one tree edge per command (unit,
#: destination, target), or ``"two_level"``, a unit first and then one of its commands
#: (:func:`xcom_search_two_level`).
MOVE_ENCODINGS = ("flat", "two_level")
#: Node kinds of the two-level tree: the side to move chooses a unit (children indexed by
#: unit) or a command of the unit it chose (children indexed by the flat action).
KIND_UNIT, KIND_COMMAND = 0, 1


class XcomParams(NamedTuple):
    """An XCOM agent's search settings (built once per agent, at its first search:
    :meth:`XcomSearchAgent.search`).

    Fields:
        max_iterations: int; time_limit: float seconds (0 = none): the budget.
        exploration: float, K; epsilon: float, the tie-breaking noise.
        value_kind: int, ``_value.VALUE_*`` (the value term's kind; VALUE_NONE: none).
        value_target: int, ``_value.TARGET_*`` (how the command's value is read).
        gamma: float, the discount of V in TARGET_TD.
        value_weight: float, the weight of the command's value in UCT.
    """

    max_iterations: int
    time_limit: float
    exploration: float
    epsilon: float
    value_kind: int
    value_target: int
    gamma: float
    value_weight: float


class XcomScratch(NamedTuple):
    """The scratch arrays of one search of a board (:func:`search_scratch`).

    Fields:
        mask: bool[width], a legal mask; cells: int64[D] and dist: int16[C], the move
        generator's; index_table: its offset index table; board: float64[n, n] and
        phi: float64[W], the value features'; marked: bool[capacity], the nodes whose
        illegal commands are marked (all False: see :func:`descend`).
    """

    mask: np.ndarray
    cells: np.ndarray
    dist: np.ndarray
    index_table: np.ndarray
    board: np.ndarray
    phi: np.ndarray
    marked: np.ndarray


@nb.njit(cache=True)
def descend(tree, state, player, params, weights, enc, scratch, stats, rng):
    """Tree policy: walk down from the root applying commands to ``state``; expand
    one node (giving it its command's value as ``node_bonus`` when the agent chose
    the command). Returns the node the rollout starts from. ``params``:
    :class:`XcomParams`; ``weights``, ``enc``: the value term's; ``scratch``:
    :class:`XcomScratch` (borrowed views).

    A node's illegal commands are marked (``mark_illegal``) when the descent first
    goes on from it, not when it is expanded: most nodes of a short search are leaves
    that are never entered again, and their legal commands cost more than the rest of
    the iteration's tree work. ``marked`` (bool[N]) says which nodes are; the rng is
    not involved, so the tree and the moves are those of marking at expansion."""
    mask, cells, dist, index_table, marked = (scratch.mask, scratch.cells, scratch.dist,
                                              scratch.index_table, scratch.marked)
    exploration, epsilon, value_weight = params.exploration, params.epsilon, params.value_weight
    node = ROOT_INDEX
    with_bonus = params.value_kind != VALUE_NONE or params.value_target == TARGET_TD
    while state.meta[M_DONE] == 0:
        if not marked[node]:
            legal_actions_into(state, state.meta[M_TO_MOVE], mask, cells, dist, index_table)
            mark_illegal(tree, node, mask)
            marked[node] = True
        action = random_untried_action(tree, node, rng)
        if action >= 0:
            mover = state.meta[M_TO_MOVE]
            reward_before = state.rewards[player]
            apply_action(state, action)
            child = expand(tree, node, action)
            if child < 0:  # tree full: roll out from the state reached
                return node
            marked[child] = False
            if with_bonus and mover == player:
                unit = decode_action(state, action)[0]
                tree.node_bonus[child] = command_value(
                    state, player, unit, state.rewards[player] - reward_before, params, weights, enc,
                    scratch)
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
def search_scratch(root, width, capacity, weights):
    """The scratch arrays of one search of ``root``'s board: an :class:`XcomScratch` (legal
    mask bool[width], marked bool[capacity], phi of the ``weights``' length)."""
    n = root.meta[M_SIZE]
    max_move = root.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    return XcomScratch(np.zeros(width, dtype=np.bool_), np.empty(d_count, dtype=np.int64),
                       np.full(n * n, -1, dtype=np.int16), offset_index_table(max_move), np.zeros((n, n)),
                       np.zeros(max(weights.shape[0], 1)), np.zeros(capacity, dtype=np.bool_))


@nb.njit(cache=True, inline="always")
def borrowed_scratch(owners):
    """The :class:`XcomScratch` of :func:`search_scratch` as borrowed views
    (``games.lowlevel.borrow``). Inlined, so ``owners`` is the calling kernel's local, and
    it must call ``keep_alive(owners)`` after its last use of a view."""
    return XcomScratch(borrow(owners.mask), borrow(owners.cells), borrow(owners.dist),
                       borrow(owners.index_table), borrow(owners.board), borrow(owners.phi),
                       borrow(owners.marked))


@nb.njit(cache=True, inline="always")
def borrowed_search_arguments(root, scratch, tree, weights, stats, rng):
    """A decision's arguments as borrowed views (no reference counts while an iteration
    hands them from kernel to kernel; the caller's arrays outlive the decision):
    (root, scratch, tree, weights, stats, rng)."""
    return (borrowed_state(root), borrowed_state(scratch), borrowed_tree(tree), borrow(weights),
            borrow(stats), borrow(rng))


@nb.njit(cache=True)
def xcom_search(observation, player, tree, root, scratch, params, weights, enc, stats, rng):
    """One decision of the XCOM agents.

    Args:
        observation: XcomState (unchanged); player: int, the searching side (0 humans, 1 aliens).
        tree: Tree over the game's actions (reset here).
        root, scratch: XcomStates of the same board (overwritten).
        params: :class:`XcomParams`, the budget and the search's settings.
        weights: float64[W] (table or linear weights; unused for VALUE_NONE);
        enc: Encoder (used by VALUE_CONV only).
        stats: int64[SEARCH_STATS] (zeroed, then counted; see the module docstring).
        rng: uint64[2] (advanced).
    Returns:
        (action, iterations): int64, int64.
    """
    deadline = deadline_ns(params.time_limit)
    start = monotonic_ns()
    max_iterations, epsilon = params.max_iterations, params.epsilon
    copy_into(root, observation)
    owners = search_scratch(root, tree.children.shape[1], tree.node_visits.shape[0], weights)
    work = borrowed_scratch(owners)
    mask, cells, dist, index_table, marked = work.mask, work.cells, work.dist, work.index_table, work.marked
    root, scratch, tree, weights, stats, rng = borrowed_search_arguments(root, scratch, tree,
                                                                        weights, stats, rng)
    stats[:] = 0
    reset_tree(tree)
    legal_actions_into(root, player, mask, cells, dist, index_table)
    mark_illegal(tree, ROOT_INDEX, mask)
    marked[ROOT_INDEX] = True
    root_reward = root.rewards[player]
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_into(scratch, root)
        leaf = descend(tree, scratch, player, params, weights, enc, work, stats, rng)
        while scratch.meta[M_DONE] == 0:
            random_command(scratch, cells, dist, rng)
        backup_alternating(tree, leaf, scratch.rewards[player] - root_reward)
        iterations += 1
    action = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    keep_alive(owners)
    return action, iterations


# ------------------------------------------------------------ two-level encoding
@nb.njit(cache=True)
def units_of(mask, umask, k_units, span):
    """``umask[u]`` (bool[A], the rest False): unit ``u`` has a legal command in ``mask``
    (commands of unit ``u`` are the flat actions ``[u * span, (u + 1) * span)``)."""
    umask[:] = False
    for u in range(k_units):
        for a in range(u * span, (u + 1) * span):
            if mask[a]:
                umask[u] = True
                break


@nb.njit(cache=True)
def backup_two_level(tree, mover, leaf, value, player):
    """:func:`search.backup_alternating` for a tree whose plies do not alternate with
    depth: each node's value sum is kept from the perspective of the side that chose the
    edge into it (the side to move at its parent, ``mover[parent]``), its observed
    min / max from that of the side to move at the node (``mover[node]``). ``value`` is
    ``player``'s."""
    node = leaf
    while node != NO_PARENT:
        parent = tree.parents[node]
        chooser = mover[parent] if parent != NO_PARENT else 1 - player
        record_visit(tree, node, value if chooser == player else -value,
                     value if mover[node] == player else -value)
        node = parent


@nb.njit(cache=True)
def descend_two_level(tree, kind, mover, state, player, params, weights, enc, scratch, umask, stats, rng):
    """:func:`descend` on the two-level tree. At a unit node, an untried unit is expanded
    and the descent goes on at once into that unit's command node (so a new unit is
    always tried with one of its own commands); at a command node, an untried command is
    played and expanded, and its child (the next unit node) gets the command's value as
    ``node_bonus`` when the agent chose it. A command node (a unit) of the agent carries
    the best bonus among its expanded commands, so UCT compares units by their best known
    ``r + gamma * V``. Returns the node the rollout starts from. ``kind``, ``mover``: the
    nodes' kinds and sides to move; ``umask``: bool[A], a unit mask (scratch); the rest as
    :func:`descend`."""
    mask, cells, dist, index_table = scratch.mask, scratch.cells, scratch.dist, scratch.index_table
    exploration, epsilon, value_weight = params.exploration, params.epsilon, params.value_weight
    node = ROOT_INDEX
    with_bonus = params.value_kind != VALUE_NONE or params.value_target == TARGET_TD
    k_units = state.meta[M_UNITS]
    max_move = state.meta[M_MAX_MOVE]
    span = (2 * max_move * max_move + 2 * max_move + 1) * (k_units + 1)
    while state.meta[M_DONE] == 0:
        own = mover[node] == player
        if kind[node] == KIND_UNIT:
            unit = random_untried_action(tree, node, rng)
            if unit >= 0:
                child = expand(tree, node, unit)
                if child < 0:
                    return node
                kind[child] = KIND_COMMAND
                mover[child] = mover[node]
                legal_actions_into(state, state.meta[M_TO_MOVE], mask, cells, dist, index_table)
                mask[:unit * span] = False
                mask[(unit + 1) * span:] = False
                mark_illegal(tree, child, mask)
                node = child
                continue
        else:
            action = random_untried_action(tree, node, rng)
            if action >= 0:
                reward_before = state.rewards[player]
                apply_action(state, action)
                child = expand(tree, node, action)
                if child < 0:
                    return node
                kind[child] = KIND_UNIT
                mover[child] = state.meta[M_TO_MOVE]
                if state.meta[M_DONE] == 0:
                    legal_actions_into(state, state.meta[M_TO_MOVE], mask, cells, dist, index_table)
                    units_of(mask, umask, k_units, span)
                    mark_illegal(tree, child, umask)
                if with_bonus and own:
                    unit = tree.action_from_parent[node]
                    bonus = command_value(
                        state, player, unit, state.rewards[player] - reward_before, params, weights,
                        enc, scratch)
                    tree.node_bonus[child] = bonus
                    if tree.node_visits[node] == 0 or bonus > tree.node_bonus[node]:
                        tree.node_bonus[node] = bonus
                    stats[STAT_BONUSES] += 1
                return child
        if own:
            at_root = node == ROOT_INDEX or tree.parents[node] == ROOT_INDEX
            stats[STAT_ROOT_SELECTIONS if at_root else STAT_OWN_SELECTIONS_BELOW] += 1
        action = select_uct_bonus(tree, node, exploration, epsilon, value_weight, rng)
        if action < 0:
            return node
        if kind[node] == KIND_COMMAND:
            apply_action(state, action)
        node = tree.children[node, action]
    return node


@nb.njit(cache=True)
def xcom_search_two_level(observation, player, tree, root, scratch, params, weights, enc, stats, rng):
    """:func:`xcom_search` with the two-level move encoding: the root chooses a unit, the
    unit's node one of its commands (``move_encoding = "two_level"``). The same commands are
    reachable as with the flat encoding; the tree needs up to two nodes an iteration
    (``2 * max_iterations + 1``). The played command is the most visited command of the
    most visited unit. Arguments and result as :func:`xcom_search`."""
    deadline = deadline_ns(params.time_limit)
    start = monotonic_ns()
    max_iterations, epsilon = params.max_iterations, params.epsilon
    copy_into(root, observation)
    owners = search_scratch(root, tree.children.shape[1], 1, weights)
    work = borrowed_scratch(owners)
    mask, cells, dist, index_table = work.mask, work.cells, work.dist, work.index_table
    k_units = root.meta[M_UNITS]
    span = cells.shape[0] * (k_units + 1)
    capacity = tree.node_visits.shape[0]
    level_owners = (np.zeros(capacity, dtype=np.int8), np.zeros(capacity, dtype=np.int8),
                    np.zeros(tree.children.shape[1], dtype=np.bool_))
    kind, mover, umask = (borrow(level_owners[0]), borrow(level_owners[1]),
                          borrow(level_owners[2]))
    root, scratch, tree, weights, stats, rng = borrowed_search_arguments(root, scratch, tree,
                                                                        weights, stats, rng)
    stats[:] = 0
    reset_tree(tree)
    kind[ROOT_INDEX] = KIND_UNIT
    mover[ROOT_INDEX] = player
    legal_actions_into(root, player, mask, cells, dist, index_table)
    units_of(mask, umask, k_units, span)
    mark_illegal(tree, ROOT_INDEX, umask)
    root_reward = root.rewards[player]
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_into(scratch, root)
        leaf = descend_two_level(tree, kind, mover, scratch, player, params, weights, enc, work, umask,
                                 stats, rng)
        while scratch.meta[M_DONE] == 0:
            random_command(scratch, cells, dist, rng)
        backup_two_level(tree, mover, leaf, scratch.rewards[player] - root_reward, player)
        iterations += 1
    action = two_level_choice(tree, root, player, epsilon, mask, umask, cells, dist, index_table,
                              k_units, span, rng)
    keep_alive(owners)
    keep_alive(level_owners)
    return action, iterations


@nb.njit(cache=True)
def two_level_choice(tree, root, player, epsilon, mask, umask, cells, dist, index_table, k_units,
                     span, rng):
    """The command a two-level search plays: the most visited command of the most visited
    unit, or, when no command of that unit was expanded (no iteration ran, or the tree
    was full), the first legal command of that unit (or of the first unit with one)."""
    unit = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    node = tree.children[ROOT_INDEX, unit]
    if node >= 0 and tree.node_visits[node] > 0:
        for a in range(tree.children.shape[1]):
            if tree.children[node, a] >= 0:
                return most_visited_child(tree, node, epsilon, rng)
    legal_actions_into(root, player, mask, cells, dist, index_table)
    units_of(mask, umask, k_units, span)
    if not umask[unit]:
        for u in range(k_units):
            if umask[u]:
                unit = u
                break
    for a in range(unit * span, (unit + 1) * span):
        if mask[a]:
            return a
    return 0


# --------------------------------------------------------------------- glue
def search_kernel(move_encoding: str):
    """The search of ``move_encoding``: :func:`xcom_search` or :func:`xcom_search_two_level`."""
    return xcom_search_two_level if move_encoding == "two_level" else xcom_search


def tree_capacity(max_iterations: int, config) -> int:
    """Nodes the tree needs: one an iteration (flat) or two (two-level), plus the root."""
    per = 2 if config.move_encoding == "two_level" else 1
    return min(per * max_iterations + 1, config.max_nodes)


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
    move_encoding: Annotated[str, one_of(MOVE_ENCODINGS)] = "flat"
    """``"flat"``: one tree edge per command (unit, destination, target); ``"two_level"``:
    the unit first, then one of its commands (``xcom_search_two_level``)."""


class XcomSearchAgent(Agent):
    """Shared glue of the XCOM agents: generator, states, tree, one search per decision.

    Subclasses set ``value_kind`` and provide ``weights`` / ``encoder``, and set
    ``_value_target``, ``_gamma`` and ``_value_weight`` from their config."""

    value_kind = VALUE_NONE
    games = ("xcom",)

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        from games.xcom import XcomConfig

        if not isinstance(game_config, XcomConfig):
            raise ValueError(f"agent {self.name!r} plays only the game 'xcom'")
        max_iterations, _ = budget.kernel_args()
        self._tree = new_tree(tree_capacity(max_iterations, config), game_config.num_actions)
        self._search = search_kernel(config.move_encoding)
        self._root = fresh_state(game_config)
        self._scratch = copy_state(self._root)
        self._rng = make_rng(0)
        self._weights = np.zeros(1)
        self._encoder = dummy_encoder()
        self._value_weight = 0.0
        self._value_target = TARGET_NEXT_STATE
        self._gamma = 0.0
        self._params = None  # the XcomParams, built at the first search (subclasses set the value term's)
        self.search_stats = np.zeros(SEARCH_STATS, dtype=np.int64)
        """What the last search did with the value term (``STAT_*``; see the module docstring)."""

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)

    def search_params(self) -> XcomParams:
        """The :class:`XcomParams` of this agent's budget, config and value term."""
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        return XcomParams(int(max_iterations), float(seconds), float(c.exploration), float(c.epsilon),
                          int(self.value_kind), int(self._value_target), float(self._gamma),
                          float(self._value_weight))

    def search(self, observation) -> tuple[int, int]:
        if self._params is None:
            self._params = self.search_params()
        action, iterations = self._search(
            observation, self.seat, self._tree, self._root, self._scratch, self._params, self._weights,
            self._encoder, self.search_stats, self._rng)
        return int(action), int(iterations)

    def decide(self, observation):
        return self.search(observation)

    @property
    def search_tree(self):
        """The search tree as the last decision left it (its capacity and action axis are
        what another search of this agent's budget needs: ``jobs/xcom/diagnostics.py``)."""
        return self._tree

    def generator_state(self) -> np.ndarray:
        """A copy of the ``uint64[2]`` generator the next search draws from, so that a
        diagnostic can run another search from the same random numbers (the agent's own
        generator is not touched)."""
        return self._rng.copy()


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

    value_weight: ValueWeight = 0.5
    """Weight of the command's reward in a child's UCT score (rewards are +-10 per kill,
    UCT's mean values are normalised to [0, 1]): the TD agents' default (0.5 since the
    sweeps of issue 23, 0.05 before), so that a kill weighs what it weighs in their
    ``r + gamma * V`` bonus; 0 makes it plain MCTS."""


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
