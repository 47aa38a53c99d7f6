"""XCOM's generic kernels (``games.generic``): what ``mcts_generic`` searches it with.

Turn-based, nothing hidden, no chance: the rules' own ``legal_actions``, ``step``,
``is_terminal``, ``returns`` (the sides' kill rewards, +-10 a kill: an exploration
constant on that scale) and ``copy_into``, with a compiled ``copy_state`` and the side
to move.
"""
from __future__ import annotations

import numba as nb

from ..generic import GenericKernels
from ._layout import M_TO_MOVE, XcomState, copy_into
from ._rules import is_terminal, legal_actions, returns, step


@nb.njit(cache=True)
def copy_state(state):
    """A new state with copies of every array (the layout's ``copy_state``, compiled)."""
    return XcomState(state.board.copy(), state.units.copy(), state.sight.copy(), state.rewards.copy(),
                     state.meta.copy())


@nb.njit(cache=True)
def current_player(state):
    """The side to move (0 humans, 1 aliens)."""
    return state.meta[M_TO_MOVE]


GENERIC_KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                                 legal_actions=legal_actions, step=step, is_terminal=is_terminal,
                                 returns=returns)
