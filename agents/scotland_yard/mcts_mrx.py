"""MCTS for Mr X, who sees everything.

One decision is one call of :func:`mrx_decide`. Mr X's tree holds every ply
(his moves and the detectives'), closed loop: the tree path determines the
state, since nothing is hidden from him. Each node stores the player who
moved into it and values are backed up per player (``backup_by_player``): Mr X
scores 1 for an escape, every detective 1 for a capture (the detectives are
modelled as knowing where he is: the paranoid model, fine for the one who sees
everything). Each iteration::

    copy the root; descend by UCB over the legal (for Mr X: filtered) moves,
    expand one untried move; play out epsilon-greedily to the end of the game;
    back up (escape, capture) to the root

and the root move with the best mean value (or the most visited) is played.
"""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field

from games.lowlevel import keep_alive
from games.rng import make_rng
from games.validation import Real, config_class
from games.scotland_yard.kernels import (
    MAX_DETECTIVES, MRX, M_RESULT, M_TO_MOVE, NUM_ACTIONS, RESULT_MRX_WINS,
    copy_dynamic_into, copy_into, empty_state, is_terminal, legal_actions_into, step,
)

from ..api import Agent
from ..registry import register
from ..search import (
    ROOT_INDEX, backup_by_player, budget_exhausted, deadline_ns, expand, Exploration, MaxNodes,
    monotonic_ns, new_tree, random_untried_legal, recommend_root_action, reset_tree,
    select_ucb_among_legal_children,
)
from ._common import (
    borrowed_search_arguments, check_seat, filter_mrx_moves, playout, prepare_root, search_work_buffers,
)


@nb.njit(cache=True)
def legal_moves(state, mask, filter_black, filter_double, double_distance):
    """The legal moves of the player to move; Mr X's filtered. Returns the count."""
    p = state.meta[M_TO_MOVE]
    n = legal_actions_into(state, p, mask)
    if p == MRX and n > 0:
        n = filter_mrx_moves(state, mask, filter_black, filter_double, double_distance)
    return n


class MrxParams(NamedTuple):
    """A Mr X MCTS agent's search settings (built once per agent: :class:`MrXMCTSAgent`).

    Fields:
        max_iterations: int; time_limit: float seconds (0 = none): the budget.
        exploration: float, C of UCB.
        epsilon_mrx, epsilon_detectives: float, the playout randomness of Mr X's and
            the detectives' moves.
        filter_black, filter_double: bool, and double_distance: float: the filters of
            Mr X's moves (:func:`~._common.filter_mrx_moves`).
        best_mean: bool, play the best mean root child (else the most visited).
    """

    max_iterations: int
    time_limit: float
    exploration: float
    epsilon_mrx: float
    epsilon_detectives: float
    filter_black: bool
    filter_double: bool
    double_distance: float
    best_mean: bool


@nb.njit(cache=True)
def mrx_decide(observation, tree, node_player, root, scratch, params, rng):
    """One decision of Mr X.

    Args:
        observation: ScotlandYardState, Mr X's (full) view, Mr X to move (unchanged).
        tree: Tree over NUM_ACTIONS actions (reset here); node_player: int8[capacity].
        root, scratch: preallocated states on the same board (overwritten).
        params: :class:`MrxParams`, the budget and the search's settings.
        rng: uint64[2] (advanced).
    Returns: (action, iterations).
    """
    exploration, epsilon_mrx = params.exploration, params.epsilon_mrx
    epsilon_detectives = params.epsilon_detectives
    filter_black, filter_double = params.filter_black, params.filter_double
    double_distance = params.double_distance
    max_iterations = params.max_iterations
    deadline = deadline_ns(params.time_limit)
    start = monotonic_ns()
    prepare_root(root, observation)
    reset_tree(tree)
    node_player[ROOT_INDEX] = -1
    root, scratch, tree, node_player, rng = borrowed_search_arguments(root, scratch, tree,
                                                                     node_player, rng)
    buffers, (mask, values, occupied, moves) = search_work_buffers(root)
    iterations = 0
    copy_into(scratch, root)
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_dynamic_into(scratch, root)
        node = ROOT_INDEX
        while not is_terminal(scratch):
            p = scratch.meta[M_TO_MOVE]
            legal_moves(scratch, mask, filter_black, filter_double, double_distance)
            a = random_untried_legal(tree, node, mask, rng)
            if a >= 0:
                child = expand(tree, node, a)
                if child >= 0:
                    node_player[child] = p
                    node = child
                step(scratch, a)
                break
            a = select_ucb_among_legal_children(tree, node, mask, exploration, rng)
            step(scratch, a)
            node = tree.children[node, a]
        playout(scratch, epsilon_mrx, epsilon_detectives, mask, occupied, moves, rng)
        escaped = 1.0 if scratch.meta[M_RESULT] == RESULT_MRX_WINS else 0.0
        values[0] = escaped
        for d in range(1, MAX_DETECTIVES + 1):
            values[d] = 1.0 - escaped
        backup_by_player(tree, node, values, node_player)
        iterations += 1
    action = recommend_root_action(tree, params.best_mean, 1e-9, rng)
    if action < 0:
        legal_moves(root, mask, filter_black, filter_double, double_distance)
        action = np.argmax(mask)
    keep_alive(buffers)
    return action, iterations


#: A probability (playout randomness, a reduction), in [0, 1].
Probability = Annotated[Real, Field(ge=0, le=1)]


@config_class
class MrXMCTSConfig:
    """MCTS for Mr X (defaults: the study's; the reference uses C = 0.2)."""

    exploration: Exploration = 0.2
    """UCB constant C in ``mean + C sqrt(2 ln N / n)`` (values in [0, 1])."""
    epsilon: Probability = 0.2
    """Playout randomness of Mr X's moves (0.2: 80% greedy, away from the nearest detective)."""
    epsilon_detectives: Probability = 0.2
    """Playout randomness of the detectives' moves (greedy: toward Mr X)."""
    filter_black: bool = True
    """No black ticket in rounds 1, 2, 3, 8, 13, 18, 24 nor from all-taxi stations."""
    filter_double: bool = True
    """The double-move card only when the detectives' mean distance is at most ``double_distance``."""
    double_distance: Annotated[Real, Field(ge=0)] = 3.0
    """Threshold of ``filter_double``."""
    final_move: Literal["best_mean", "most_visited"] = "best_mean"
    """``best_mean`` (the reference) or ``most_visited``."""
    max_nodes: MaxNodes = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1)."""


class ScotlandYardAgent(Agent):
    """Shared glue: the seat check, the seeded generator, the model states."""

    side = 0
    games = ("scotland_yard",)
    plays_seats = (0,)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.plays_seats = (cls.side,)  # Mr X agents seat 0, seekers' agents seat 1 (check_seat)

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        from games.scotland_yard import board_for

        board = board_for(game_config)
        self._root = empty_state(board)
        self._scratch = empty_state(board)
        self._rng = make_rng(0)
        self._tree = None  # the MCTS agents preallocate it (_preallocate_search)

    @property
    def search_tree(self):
        """The tree of the last decision (the MCTS agents); None for the greedy ones.
        See :attr:`agents.api.Agent.search_tree`."""
        return self._tree

    def begin_game(self, seat, seed):
        check_seat(self.name, seat, self.side)
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)

    def _preallocate_search(self, budget, max_nodes: int) -> None:
        """The search tree for ``budget`` (at most ``max_nodes`` nodes) and the
        per-node player array that per-player backups read."""
        max_iterations, _ = budget.kernel_args()
        capacity = min(max_iterations + 1, max_nodes)
        self._tree = new_tree(capacity, NUM_ACTIONS)
        self._node_player = np.zeros(capacity, dtype=np.int8)


@register
class MrXMCTSAgent(ScotlandYardAgent):
    """MCTS for Mr X (full information, per-player values, move filters)."""

    name = "sy_mcts_mrx"
    Config = MrXMCTSConfig
    side = 0

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._preallocate_search(budget, config.max_nodes)
        max_iterations, seconds = budget.kernel_args()
        c = config
        self._params = MrxParams(int(max_iterations), float(seconds), float(c.exploration), float(c.epsilon),
                                 float(c.epsilon_detectives), bool(c.filter_black), bool(c.filter_double),
                                 float(c.double_distance), c.final_move == "best_mean")

    def decide(self, observation):
        action, iterations = mrx_decide(observation, self._tree, self._node_player, self._root,
                                        self._scratch, self._params, self._rng)
        return int(action), int(iterations)
