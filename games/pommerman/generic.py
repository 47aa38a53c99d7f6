"""Pommerman's generic kernels (``games.generic``): what ``mcts_generic`` searches it with.

Simultaneous moves (every agent acts each tick; a dead one can only stop): the search
keeps decoupled statistics per agent. What an agent does not see under a limited view
is planned on as the observation shows it (no ``determinize``: fogged cells stay
fogged), and a rollout cut at ``max_rollout_depth`` is valued by the reference
framework's heuristic.
"""
from __future__ import annotations

import numba as nb

from ..generic import SIMULTANEOUS, GenericKernels
from ._engine import count_wood, heuristic as framework_heuristic, is_terminal, legal_actions, returns, step
from ._layout import copy_into, copy_state


@nb.njit(cache=True)
def current_player(state):
    """Every agent moves at once."""
    return SIMULTANEOUS


@nb.njit(cache=True)
def heuristic(root, state, player):
    """The framework's heuristic of ``state`` for ``player`` relative to ``root``."""
    return framework_heuristic(root, count_wood(root), state, player)


GENERIC_KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                                 legal_actions=legal_actions, step=step, is_terminal=is_terminal,
                                 returns=returns, heuristic=heuristic, simultaneous=True)
