"""The bird game's generic kernels (``games.generic``): what ``mcts_generic`` searches it with.

Turn-based with hidden information: a player does not see the deck's order nor the
opponent's cards drawn face down. :func:`determinize` deals those unseen cards at
random (uniformly: every arrangement consistent with what the player saw is equally
likely), which is also where the game's chance lives (the deck), so the search
declares no chance node of its own.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..generic import GenericKernels
from ..rng import rng_integer
from ._layout import (
    FULL_STATE, M_DECK_POS, M_OBSERVER, M_TO_MOVE, N_PLAYERS, P_BOARD, P_HAND, TRAY_SLOTS, BirdsState, copy_into,
)
from ._rules import is_terminal, legal_actions, returns
from ._rules import step as step_action


@nb.njit(cache=True)
def copy_state(src):
    """A new state with copies of every array (the layout's ``copy_state``, compiled)."""
    return BirdsState(src.cards.copy(), src.deck.copy(), src.hand.copy(), src.hand_public.copy(),
                      src.board.copy(), src.tray.copy(), src.player.copy(), src.meta.copy())


@nb.njit(cache=True)
def current_player(state):
    return state.meta[M_TO_MOVE]


@nb.njit(cache=True)
def step(state, joint):
    """The generic ``step``: the player to move plays ``joint[player]``."""
    step_action(state, joint[state.meta[M_TO_MOVE]])


@nb.njit(cache=True)
def determinize(out, observation, player, rng):
    """``out`` := ``observation`` (``player``'s) with the cards it has not seen (the
    rest of the deck and the opponent's face-down cards) dealt back at random from
    ``rng``: the opponent's face-down cards first, then the deck from its position."""
    copy_into(out, observation)
    n_cards = out.cards.shape[0]
    seen = np.zeros(n_cards, dtype=np.bool_)
    q = 1 - player
    for i in range(out.player[player, P_HAND]):
        seen[out.hand[player, i]] = True
    for i in range(out.player[q, P_HAND]):
        if out.hand_public[q, i] != 0:
            seen[out.hand[q, i]] = True
    for p in range(N_PLAYERS):
        for i in range(out.player[p, P_BOARD]):
            seen[out.board[p, i]] = True
    for j in range(TRAY_SLOTS):
        if out.tray[j] >= 0:
            seen[out.tray[j]] = True
    pool = np.empty(n_cards, dtype=np.int16)
    n = 0
    for c in range(n_cards):
        if not seen[c]:
            pool[n] = c
            n += 1
    for i in range(n - 1, 0, -1):
        j = rng_integer(rng, i + 1)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    k = 0
    for i in range(out.player[q, P_HAND]):
        if out.hand_public[q, i] == 0:
            out.hand[q, i] = pool[k]
            k += 1
    for pos in range(out.meta[M_DECK_POS], out.deck.shape[0]):
        out.deck[pos] = pool[k]
        k += 1
    out.meta[M_OBSERVER] = FULL_STATE


GENERIC_KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                                 legal_actions=legal_actions, step=step, is_terminal=is_terminal,
                                 returns=returns, determinize=determinize)
