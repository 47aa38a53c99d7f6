"""The rules of the bird card game as pure numba kernels over :class:`BirdsState`.

A turn: the player to move takes one action (see ``_layout``), then the tray
is refilled from the deck, the turn counter advances and the other player
moves. The game ends after ``TURNS_PER_PLAYER`` turns each; the higher board
score wins.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..rng import rng_integer
from ._layout import (
    BOARD_SLOTS, C_COST, C_POINTS, DRAW_DECK, DRAW_TRAY, EMPTY, FEEDER_SIZE, FULL_STATE,
    GAIN_FOOD, HIDDEN, MAX_HAND, M_DECK_POS, M_FEEDER, M_OBSERVER, M_START_FOOD, M_TO_MOVE,
    M_TURN, N_ACTIONS, N_PLAYERS, P_BOARD, P_FOOD, P_HAND, P_SCORE, START_HAND,
    TOTAL_TURNS, TRAY_SLOTS, copy_state,
)


@nb.njit(cache=True)
def shuffle_deck(deck, rng):
    """Fisher-Yates shuffle of ``deck`` (int16[C]) in place with ``rng`` (uint64[2])."""
    for i in range(deck.shape[0] - 1, 0, -1):
        j = rng_integer(rng, i + 1)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t


@nb.njit(cache=True)
def deal(state, start_food, rng):
    """Set up a new game in ``state`` (its ``cards`` already filled): shuffle the
    deck, deal ``START_HAND`` cards to player 0 then player 1, lay out the tray,
    give each player ``start_food`` food and fill the feeder. Player 0 moves first."""
    n = state.cards.shape[0]
    for c in range(n):
        state.deck[c] = c
    shuffle_deck(state.deck, rng)
    state.hand[:, :] = EMPTY
    state.hand_public[:, :] = 0
    state.board[:, :] = EMPTY
    state.player[:, :] = 0
    state.meta[:] = 0
    pos = 0
    for p in range(N_PLAYERS):
        for i in range(START_HAND):
            state.hand[p, i] = state.deck[pos]
            pos += 1
        state.player[p, P_HAND] = START_HAND
        state.player[p, P_FOOD] = start_food
    for j in range(TRAY_SLOTS):
        state.tray[j] = state.deck[pos]
        pos += 1
    state.meta[M_DECK_POS] = pos
    state.meta[M_FEEDER] = FEEDER_SIZE
    state.meta[M_OBSERVER] = FULL_STATE
    state.meta[M_START_FOOD] = start_food


@nb.njit(cache=True, inline="always")
def is_terminal(state):
    """bool: both players have had all their turns."""
    return state.meta[M_TURN] >= TOTAL_TURNS


@nb.njit(cache=True, inline="always")
def to_move(state):
    """int: the player whose turn it is."""
    return state.meta[M_TO_MOVE]


@nb.njit(cache=True, inline="always")
def deck_remaining(state):
    """int: cards left in the deck."""
    return state.deck.shape[0] - state.meta[M_DECK_POS]


@nb.njit(cache=True, inline="always")
def is_legal(state, player, action):
    """bool: ``action`` is legal for ``player`` now (only the player to move has
    legal actions; nothing is legal once the game is over)."""
    if state.meta[M_TURN] >= TOTAL_TURNS or player != state.meta[M_TO_MOVE]:
        return False
    if action < DRAW_TRAY:
        if action >= state.player[player, P_HAND] or state.player[player, P_BOARD] >= BOARD_SLOTS:
            return False
        card = state.hand[player, action]
        if card < 0:
            return False
        return state.cards[card, C_COST] <= state.player[player, P_FOOD]
    if action < DRAW_DECK:
        return state.tray[action - DRAW_TRAY] >= 0 and state.player[player, P_HAND] < MAX_HAND
    if action == DRAW_DECK:
        return state.meta[M_DECK_POS] < state.deck.shape[0] and state.player[player, P_HAND] < MAX_HAND
    return action == GAIN_FOOD


@nb.njit(cache=True, inline="always")
def _nth_legal(meta, players, hand, cards, tray, deck_size, player, k):
    """:func:`nth_legal_action` on the state's arrays (taken out of the state once by
    callers that ask twice: each attribute read of the state costs a reference count)."""
    if meta[M_TURN] >= TOTAL_TURNS or player != meta[M_TO_MOVE]:
        return 0 if k < 0 else -1
    n = 0
    hand_size = players[player, P_HAND]
    if players[player, P_BOARD] < BOARD_SLOTS:
        food = players[player, P_FOOD]
        for i in range(hand_size):
            c = hand[player, i]
            if c >= 0 and cards[c, C_COST] <= food:
                if n == k:
                    return i
                n += 1
    if hand_size < MAX_HAND:
        for j in range(TRAY_SLOTS):
            if tray[j] >= 0:
                if n == k:
                    return DRAW_TRAY + j
                n += 1
        if meta[M_DECK_POS] < deck_size:
            if n == k:
                return DRAW_DECK
            n += 1
    if n == k:
        return GAIN_FOOD
    n += 1
    return n if k < 0 else -1


@nb.njit(cache=True, inline="always")
def nth_legal_action(state, player, k):
    """With ``k < 0``: the number of legal actions of ``player``; else its ``k``-th
    legal action in action order (-1 if there are fewer). One pass, no array:
    the fast path of random moves in rollouts (agrees with :func:`is_legal`)."""
    return _nth_legal(state.meta, state.player, state.hand, state.cards, state.tray,
                      state.deck.shape[0], player, k)


@nb.njit(cache=True, inline="always")
def random_legal_action(state, player, rng):
    """A uniformly random legal action of ``player`` (GAIN_FOOD is always legal for
    the player to move): :func:`nth_legal_action` twice, one draw from ``rng``."""
    meta, players, hand, cards, tray = state.meta, state.player, state.hand, state.cards, state.tray
    deck_size = state.deck.shape[0]
    n = _nth_legal(meta, players, hand, cards, tray, deck_size, player, -1)
    return _nth_legal(meta, players, hand, cards, tray, deck_size, player, rng_integer(rng, n))


@nb.njit(cache=True, inline="always")
def legal_actions_into(state, player, out):
    """Fill ``out`` (bool[N_ACTIONS]) with the legal actions of ``player``; returns their count."""
    for a in range(N_ACTIONS):
        out[a] = False
    if state.meta[M_TURN] >= TOTAL_TURNS or player != state.meta[M_TO_MOVE]:
        return 0
    n = 1
    out[GAIN_FOOD] = True
    hand_size = state.player[player, P_HAND]
    if state.player[player, P_BOARD] < BOARD_SLOTS:
        food = state.player[player, P_FOOD]
        for i in range(hand_size):
            c = state.hand[player, i]
            if c >= 0 and state.cards[c, C_COST] <= food:
                out[i] = True
                n += 1
    if hand_size < MAX_HAND:
        for j in range(TRAY_SLOTS):
            if state.tray[j] >= 0:
                out[DRAW_TRAY + j] = True
                n += 1
        if state.meta[M_DECK_POS] < state.deck.shape[0]:
            out[DRAW_DECK] = True
            n += 1
    return n


@nb.njit(cache=True)
def legal_actions(state, player):
    """bool[N_ACTIONS]: the legal actions of ``player`` (all False if it is not their turn)."""
    out = np.zeros(N_ACTIONS, dtype=np.bool_)
    legal_actions_into(state, player, out)
    return out


@nb.njit(cache=True, inline="always")
def _apply(cards, deck, hand, hand_public, board, tray, players, meta, action):
    """:func:`apply_action` on the state's arrays (read out of the state once per
    turn by :func:`step`: each attribute read of the state costs a reference count)."""
    p = meta[M_TO_MOVE]
    if action < DRAW_TRAY:
        card = hand[p, action]
        k = players[p, P_HAND]
        for i in range(action, k - 1):  # keep the hand in the order it was taken
            hand[p, i] = hand[p, i + 1]
            hand_public[p, i] = hand_public[p, i + 1]
        hand[p, k - 1] = EMPTY
        hand_public[p, k - 1] = 0
        players[p, P_HAND] = k - 1
        players[p, P_FOOD] -= cards[card, C_COST]
        board[p, players[p, P_BOARD]] = card
        players[p, P_BOARD] += 1
        players[p, P_SCORE] += cards[card, C_POINTS]
    elif action < DRAW_DECK:
        j = action - DRAW_TRAY
        k = players[p, P_HAND]
        hand[p, k] = tray[j]
        hand_public[p, k] = 1
        players[p, P_HAND] = k + 1
        tray[j] = EMPTY
    elif action == DRAW_DECK:
        pos = meta[M_DECK_POS]
        k = players[p, P_HAND]
        hand[p, k] = deck[pos]
        hand_public[p, k] = 0
        players[p, P_HAND] = k + 1
        meta[M_DECK_POS] = pos + 1
    else:
        players[p, P_FOOD] += 1
        meta[M_FEEDER] -= 1
        if meta[M_FEEDER] <= 0:
            meta[M_FEEDER] = FEEDER_SIZE


@nb.njit(cache=True, inline="always")
def _refill(deck, tray, meta):
    """:func:`refill_tray` on the state's arrays."""
    for j in range(TRAY_SLOTS):
        if tray[j] == EMPTY and meta[M_DECK_POS] < deck.shape[0]:
            tray[j] = deck[meta[M_DECK_POS]]
            meta[M_DECK_POS] += 1


@nb.njit(cache=True, inline="always")
def _end_turn(deck, tray, meta):
    """:func:`end_turn` on the state's arrays: refill the tray, count the turn, pass it."""
    _refill(deck, tray, meta)
    meta[M_TURN] += 1
    meta[M_TO_MOVE] = 1 - meta[M_TO_MOVE]


@nb.njit(cache=True, inline="always")
def apply_action(state, action):
    """Apply the (legal) ``action`` of the player to move, without ending the turn."""
    _apply(state.cards, state.deck, state.hand, state.hand_public, state.board, state.tray,
           state.player, state.meta, action)


@nb.njit(cache=True, inline="always")
def refill_tray(state):
    """Fill empty tray slots, left to right, from the top of the deck (while it lasts)."""
    _refill(state.deck, state.tray, state.meta)


@nb.njit(cache=True, inline="always")
def end_turn(state):
    """Refill the tray and pass the turn."""
    _end_turn(state.deck, state.tray, state.meta)


@nb.njit(cache=True, inline="always")
def step(state, action):
    """One turn: the player to move takes ``action`` (must be legal; the wrapper
    checks), then the tray is refilled and the turn passes. No-op once terminal."""
    meta = state.meta
    if meta[M_TURN] >= TOTAL_TURNS:
        return
    deck, tray = state.deck, state.tray
    _apply(state.cards, deck, state.hand, state.hand_public, state.board, tray, state.player,
           meta, action)
    _end_turn(deck, tray, meta)


@nb.njit(cache=True, inline="always")
def score(state, player):
    """int: points of the birds on ``player``'s board."""
    return state.player[player, P_SCORE]


@nb.njit(cache=True, inline="always")
def result_of(state, player):
    """float: ``player``'s result, 1 for the higher score, 0 for the lower, 0.5 on a
    tie (0 before the end): one entry of :func:`returns` without allocating (the
    leaf value of the searches)."""
    if state.meta[M_TURN] < TOTAL_TURNS:
        return 0.0
    mine = state.player[player, P_SCORE]
    theirs = state.player[1 - player, P_SCORE]
    if mine > theirs:
        return 1.0
    if mine < theirs:
        return 0.0
    return 0.5


@nb.njit(cache=True)
def returns(state):
    """float64[2]: 1 for the higher score, 0 for the lower, 0.5 each on a tie;
    zeros before the end."""
    out = np.zeros(N_PLAYERS, dtype=np.float64)
    if state.meta[M_TURN] < TOTAL_TURNS:
        return out
    s0 = state.player[0, P_SCORE]
    s1 = state.player[1, P_SCORE]
    if s0 > s1:
        out[0] = 1.0
    elif s1 > s0:
        out[1] = 1.0
    else:
        out[0] = 0.5
        out[1] = 0.5
    return out


@nb.njit(cache=True)
def hide_from(state, player):
    """Remove from ``state`` (in place) what ``player`` cannot see: the deck order
    and the opponent's cards not taken face up (their count stays)."""
    for i in range(state.deck.shape[0]):
        state.deck[i] = HIDDEN
    q = 1 - player
    for i in range(state.player[q, P_HAND]):
        if state.hand_public[q, i] == 0:
            state.hand[q, i] = HIDDEN
    state.meta[M_OBSERVER] = player


def init(cards, start_food, rng):
    """A new dealt state over ``cards`` (int16[C, 2]) with ``start_food`` food each,
    from ``rng`` (uint64[2], advanced). Python: allocates, then calls :func:`deal`."""
    from ._layout import empty_state

    state = empty_state(np.ascontiguousarray(cards, dtype=np.int16))
    deal(state, int(start_food), rng)
    return state


def observe(state, player):
    """A new state: ``state`` as ``player`` knows it (see :func:`hide_from`)."""
    obs = copy_state(state)
    hide_from(obs, int(player))
    return obs
