"""Scotland Yard rules as pure numba kernels (private; see ``kernels.py``).

One round: Mr X moves (one move, or two after a double-move card; each of his
moves is a round of his travel log), then each detective in order. A move uses
the ticket of the connection travelled (Mr X may use a black ticket on any
connection; the ferry needs one). Detectives may not move onto a detective; a
ticket a detective uses goes to Mr X. Mr X may not move onto a detective. He is
shown after his moves in the reveal rounds. The seekers win when a detective
moves onto Mr X's station or when Mr X cannot move at the start of his turn;
Mr X wins after the detectives' moves of the last round, or when no detective
can move at the start of the detectives' turn. A detective who cannot move is
skipped.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer

from ._board import FERRY
from ._layout import (
    BLACK_TICKET, DOUBLE_MOVE, DOUBLE_TICKET, HIDDEN, MRX, M_CAPTURER, M_IN_DOUBLE,
    M_LAST_REVEAL, M_MOVES_LEFT, M_NUM_DETECTIVES, M_PLIES, M_RESULT, M_ROUND, M_ROUNDS,
    M_SEEKER_VIEW, M_TO_MOVE, M_TRACK_POSSIBLE, NUM_ACTIONS, RESULT_MRX_WINS, RESULT_ONGOING,
    RESULT_SEEKERS_WIN, copy_state,
)


@nb.njit(cache=True, inline="always")
def occupied_by_detective(state, station, except_player):
    """Whether a detective other than ``except_player`` stands on ``station``."""
    for d in range(1, state.meta[M_NUM_DETECTIVES] + 1):
        if d != except_player and state.positions[d] == station:
            return True
    return False


@nb.njit(cache=True, inline="always")
def is_legal(state, player, action):
    """Whether ``player`` (0 Mr X, 1..D a detective) may play ``action`` now.

    Args: state; player (int); action (int in [0, NUM_ACTIONS)).
    Returns: bool (False for a player not to move or a finished game).
    """
    meta = state.meta
    if meta[M_RESULT] != RESULT_ONGOING or meta[M_TO_MOVE] != player:
        return False
    if action < 0 or action >= NUM_ACTIONS:
        return False
    if action == DOUBLE_MOVE:
        return (player == MRX and state.tickets[MRX, DOUBLE_TICKET] > 0
                and meta[M_IN_DOUBLE] == 0 and meta[M_ROUND] + 2 <= meta[M_ROUNDS])
    u = state.positions[player]
    slot = action >> 1
    black = action & 1
    if slot >= state.degree[u]:
        return False
    v = state.neighbours[u, slot]
    if occupied_by_detective(state, v, player):
        return False
    if black:
        return player == MRX and state.black_ok[u, slot] and state.tickets[MRX, BLACK_TICKET] > 0
    t = state.transport[u, slot]
    return t != FERRY and state.tickets[player, t] > 0


@nb.njit(cache=True, inline="always")
def legal_actions_into(state, player, mask):
    """Fill ``mask`` (bool[NUM_ACTIONS]) with the legal actions of ``player``;
    returns how many there are (the same moves as :func:`is_legal`, in one pass
    over the station's connections: this is the search's hot path)."""
    for a in range(NUM_ACTIONS):
        mask[a] = False
    meta = state.meta
    if meta[M_RESULT] != RESULT_ONGOING or meta[M_TO_MOVE] != player:
        return 0
    n = 0
    u = state.positions[player]
    tickets = state.tickets
    black = player == MRX and tickets[MRX, BLACK_TICKET] > 0
    for k in range(state.degree[u]):
        v = state.neighbours[u, k]
        if occupied_by_detective(state, v, player):
            continue
        t = state.transport[u, k]
        if t != FERRY and tickets[player, t] > 0:
            mask[2 * k] = True
            n += 1
        if black and state.black_ok[u, k]:
            mask[2 * k + 1] = True
            n += 1
    if player == MRX and n > 0 and is_legal(state, player, DOUBLE_MOVE):
        mask[DOUBLE_MOVE] = True
        n += 1
    return n


@nb.njit(cache=True)
def legal_actions(state, player):
    """bool[NUM_ACTIONS]: the legal actions of ``player`` (0 = Mr X, 1..D a
    detective; the wrapper's seat 1 maps to the detective to move)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    if player != MRX and state.meta[M_TO_MOVE] != MRX:
        player = state.meta[M_TO_MOVE]
    legal_actions_into(state, player, mask)
    return mask


@nb.njit(cache=True, inline="always")
def can_move(state, player):
    """Whether ``player`` has a station it could move to (ignoring whose turn it is)."""
    u = state.positions[player]
    for k in range(state.degree[u]):
        v = state.neighbours[u, k]
        if occupied_by_detective(state, v, player):
            continue
        t = state.transport[u, k]
        if player == MRX:
            if state.tickets[MRX, BLACK_TICKET] > 0:
                return True
            if t != FERRY and state.tickets[MRX, t] > 0:
                return True
        elif t != FERRY and state.tickets[player, t] > 0:
            return True
    return False


@nb.njit(cache=True)
def _expand_possible(state, ticket):
    """Where Mr X may be after a move with ``ticket``, from where he might have been."""
    possible = state.possible
    nxt = state.scratch
    n = possible.shape[0]
    for v in range(n):
        nxt[v] = False
    for u in range(1, n):
        if not possible[u]:
            continue
        for k in range(state.degree[u]):
            t = state.transport[u, k]
            if ticket == BLACK_TICKET or (t == ticket and t != FERRY):
                nxt[state.neighbours[u, k]] = True
    for v in range(n):
        possible[v] = nxt[v]
    for d in range(1, state.meta[M_NUM_DETECTIVES] + 1):
        possible[state.positions[d]] = False


@nb.njit(cache=True, inline="always")
def _start_detectives_turn(state, first):
    """Hand the move to the first detective from ``first`` on who can move; after
    the last, end the round (Mr X's win after the last round, or his turn)."""
    meta = state.meta
    for d in range(first, meta[M_NUM_DETECTIVES] + 1):
        if can_move(state, d):
            meta[M_TO_MOVE] = d
            return
    if first == 1:  # nobody can move at all
        meta[M_RESULT] = RESULT_MRX_WINS
        return
    if meta[M_ROUND] >= meta[M_ROUNDS]:
        meta[M_RESULT] = RESULT_MRX_WINS
        return
    meta[M_TO_MOVE] = MRX
    meta[M_MOVES_LEFT] = 1
    meta[M_IN_DOUBLE] = 0
    if not can_move(state, MRX):
        meta[M_RESULT] = RESULT_SEEKERS_WIN


@nb.njit(cache=True, inline="always")
def travel(state, player, action):
    """The journey part of :func:`step`: ``player`` travels along ``action``'s
    connection (a single move, not DOUBLE_MOVE) and pays its ticket; for Mr X
    the round advances and is logged (ticket, station, last reveal). Turn
    order, captures, the detective's ticket to Mr X and the possible set are
    :func:`step`'s. Returns (station reached, ticket used)."""
    meta = state.meta
    u = state.positions[player]
    slot = action >> 1
    v = state.neighbours[u, slot]
    ticket = BLACK_TICKET if action & 1 else state.transport[u, slot]
    state.tickets[player, ticket] -= 1
    state.positions[player] = v
    if player == MRX:
        meta[M_ROUND] += 1
        r = meta[M_ROUND]
        state.ticket_log[r] = ticket
        state.mrx_path[r] = v
        if state.reveal[r]:
            meta[M_LAST_REVEAL] = v
    return v, ticket


@nb.njit(cache=True, inline="always")
def step(state, action):
    """Play ``action`` for the player to move (in place). The action must be
    legal (:func:`is_legal`); the wrapper replaces illegal ones first.

    Args: state; action (int in [0, NUM_ACTIONS)).
    """
    meta = state.meta
    if meta[M_RESULT] != RESULT_ONGOING:
        return
    player = meta[M_TO_MOVE]
    meta[M_PLIES] += 1
    if action == DOUBLE_MOVE:
        state.tickets[MRX, DOUBLE_TICKET] -= 1
        meta[M_MOVES_LEFT] = 2
        meta[M_IN_DOUBLE] = 1
        return
    v, ticket = travel(state, player, action)
    if player == MRX:
        r = meta[M_ROUND]
        if meta[M_TRACK_POSSIBLE]:
            if state.reveal[r]:
                for w in range(state.possible.shape[0]):
                    state.possible[w] = False
                state.possible[v] = True
            else:
                _expand_possible(state, ticket)
        meta[M_MOVES_LEFT] -= 1
        if meta[M_MOVES_LEFT] > 0:
            if not can_move(state, MRX):  # stuck halfway through a double move
                meta[M_RESULT] = RESULT_SEEKERS_WIN
            return
        _start_detectives_turn(state, 1)
    else:
        state.tickets[MRX, ticket] += 1
        if v == state.positions[MRX]:
            meta[M_RESULT] = RESULT_SEEKERS_WIN
            meta[M_CAPTURER] = player
            return
        if meta[M_TRACK_POSSIBLE]:
            state.possible[v] = False
        _start_detectives_turn(state, player + 1)


@nb.njit(cache=True, inline="always")
def is_terminal(state):
    """bool: whether the game is over."""
    return state.meta[M_RESULT] != RESULT_ONGOING


@nb.njit(cache=True)
def returns(state):
    """float64[2]: (Mr X, seekers) = (1, 0) when Mr X won, (0, 1) when the
    seekers did, zeros before the end."""
    out = np.zeros(2, dtype=np.float64)
    if state.meta[M_RESULT] == RESULT_MRX_WINS:
        out[0] = 1.0
    elif state.meta[M_RESULT] == RESULT_SEEKERS_WIN:
        out[1] = 1.0
    return out


@nb.njit(cache=True)
def observe(state, seat):
    """The state as ``seat`` may know it (a new state, same layout).

    Seat 0 (Mr X) sees everything. Seat 1 (the seekers) sees the detectives,
    all tickets, the ticket log, the stations shown at reveals and the set of
    possible locations; Mr X's station is HIDDEN (0) and his path is cleared
    outside reveal rounds, until the game is over (then everything is shown).
    """
    obs = copy_state(state)
    if seat == MRX or state.meta[M_RESULT] != RESULT_ONGOING:
        return obs
    obs.meta[M_SEEKER_VIEW] = 1
    obs.positions[MRX] = HIDDEN
    for r in range(obs.mrx_path.shape[0]):
        if not obs.reveal[r] or r > obs.meta[M_ROUND]:
            obs.mrx_path[r] = HIDDEN
    return obs


@nb.njit(cache=True)
def init(state, detective_cards, mrx_cards, detective_tickets, mrx_tickets, num_detectives,
         rounds, reveal_rounds, rng):
    """Deal a new game into ``state`` (in place).

    Args:
        state: a state on the game's board (``empty_state``).
        detective_cards, mrx_cards: int32[*] start stations to deal from
            (without collision: Mr X's card is drawn among those no detective holds).
        detective_tickets: int32[3] (taxi, bus, underground) per detective.
        mrx_tickets: int32[5] (taxi, bus, underground, black, double).
        num_detectives: int in [1, MAX_DETECTIVES]; rounds: int; reveal_rounds:
            int32[*] round numbers; rng: uint64[2] (advanced).
    """
    meta = state.meta
    for i in range(meta.shape[0]):
        meta[i] = 0
    state.positions[:] = 0
    state.tickets[:, :] = 0
    state.ticket_log[:] = -1
    state.mrx_path[:] = 0
    state.reveal[:] = False
    for r in reveal_rounds:
        state.reveal[r] = True
    meta[M_NUM_DETECTIVES] = num_detectives
    cards = detective_cards.copy()
    n = cards.shape[0]
    for d in range(1, num_detectives + 1):  # partial Fisher-Yates
        j = d - 1 + rng_integer(rng, n - (d - 1))
        cards[d - 1], cards[j] = cards[j], cards[d - 1]
        state.positions[d] = cards[d - 1]
        for t in range(3):
            state.tickets[d, t] = detective_tickets[t]
    free = 0
    for c in mrx_cards:
        if not occupied_by_detective(state, c, MRX):
            free += 1
    k = rng_integer(rng, free)
    for c in mrx_cards:
        if not occupied_by_detective(state, c, MRX):
            if k == 0:
                state.positions[MRX] = c
                break
            k -= 1
    for t in range(5):
        state.tickets[MRX, t] = mrx_tickets[t]
    state.mrx_path[0] = state.positions[MRX]
    state.possible[:] = False
    for c in mrx_cards:
        if not occupied_by_detective(state, c, MRX):
            state.possible[c] = True
    meta[M_ROUNDS] = rounds
    meta[M_NUM_DETECTIVES] = num_detectives
    meta[M_TO_MOVE] = MRX
    meta[M_MOVES_LEFT] = 1
    meta[M_TRACK_POSSIBLE] = 1
    if not can_move(state, MRX):
        meta[M_RESULT] = RESULT_SEEKERS_WIN
