"""The searches' playout as one flat kernel: epsilon-greedy play to the end of the game.

:func:`playout_flat` plays exactly the game that stepping the state move by move
with ``_common.playout_mrx_action`` / ``playout_detective_action`` and
``kernels.step`` plays (``_common.playout_by_steps``): the same moves, the same
random draws in the same order, the same final state (positions, tickets, meta,
Mr X's log and path). It is faster because it

* keeps the detectives' stations in an occupancy table (``occupied``), so a
  move's legality is one look-up instead of a pass over the detectives;
* lists the mover's legal moves once per ply: the pass that finds who moves
  next (the rules' ``can_move``) is the pass that lists that player's moves;
* inlines every helper (a numba call that passes the state tuple costs about
  100 ns, more than a whole ply here).

The greedy policies' scores (:func:`mrx_move_score`, :func:`detective_move_score`)
are defined here once and used by ``_common``'s per-move policies too.

It does not keep the possible-locations set (the searches switch
``M_TRACK_POSSIBLE`` off); ``_common.playout`` falls back to stepping when it is on.

Work buffers (owned by the caller, reused across playouts)::

    occupied  bool[S + 1]        all False on entry and on return (True at the
                                 detectives' stations during the playout)
    moves     int64[2 * MAX_DEGREE]  the mover's legal actions, ascending
"""
from __future__ import annotations

import numba as nb

from games.rng import rng_integer, rng_uniform
from games.scotland_yard.kernels import (
    BLACK_TICKET, FERRY, MRX, M_CAPTURER, M_IN_DOUBLE, M_MOVES_LEFT, M_NUM_DETECTIVES,
    M_PLIES, M_RESULT, M_ROUND, M_ROUNDS, M_TO_MOVE, RESULT_MRX_WINS, RESULT_ONGOING,
    RESULT_SEEKERS_WIN, travel,
)

_NEAREST_NONE = 1 << 20  # nearest-detective distance with no detective (as ``_common``)


@nb.njit(cache=True, inline="always")
def _single_moves(state, player, occupied, moves):
    """Fill ``moves`` with ``player``'s legal single moves, ascending: ``2k`` along
    slot k by its ticket, ``2k + 1`` by a black ticket (Mr X). Returns (how many,
    how many by a normal ticket)."""
    u = state.positions[player]
    black = player == MRX and state.tickets[MRX, BLACK_TICKET] > 0
    n = 0
    plain = 0
    for k in range(state.degree[u]):
        if occupied[state.neighbours[u, k]]:
            continue
        t = state.transport[u, k]
        if t != FERRY and state.tickets[player, t] > 0:
            moves[n] = 2 * k
            n += 1
            plain += 1
        if black and state.black_ok[u, k]:
            moves[n] = 2 * k + 1
            n += 1
    return n, plain


@nb.njit(cache=True, inline="always")
def _detective_moves(state, d, occupied, moves):
    """Fill ``moves`` with detective ``d``'s legal actions; returns how many (0: he
    cannot move)."""
    n, _ = _single_moves(state, d, occupied, moves)
    return n


@nb.njit(cache=True, inline="always")
def _mrx_moves(state, occupied, moves):
    """Fill ``moves`` with Mr X's playout moves, ascending: his legal single moves,
    the black ones dropped when a normal ticket moves him too. Returns how many
    (0: he cannot move)."""
    n, plain = _single_moves(state, MRX, occupied, moves)
    if 0 < plain < n:
        j = 0
        for i in range(n):
            if moves[i] & 1 == 0:
                moves[j] = moves[i]
                j += 1
        n = plain
    return n


@nb.njit(cache=True, inline="always")
def nearest_detective_distance(state, station):
    """Moves from ``station`` to the nearest detective (detectives' transports)."""
    best = _NEAREST_NONE
    for d in range(1, state.meta[M_NUM_DETECTIVES] + 1):
        dist = state.dist_detective[state.positions[d], station]
        if dist < best:
            best = dist
    return best


@nb.njit(cache=True, inline="always")
def mrx_move_score(state, action, station, rng):
    """Greedy Mr X's score of ``action`` (reaching ``station``; one random draw):
    twice the distance to the nearest detective, minus 1 for a black ticket, plus
    a tie-breaking half of a uniform. The highest wins."""
    return 2.0 * nearest_detective_distance(state, station) - (action & 1) + 0.5 * rng_uniform(rng)


@nb.njit(cache=True, inline="always")
def detective_move_score(state, station, target, rng):
    """A greedy detective's score of a move to ``station`` (one random draw): its
    distance to ``target`` plus a tie-breaking half of a uniform. The lowest wins."""
    return state.dist_detective[station, target] + 0.5 * rng_uniform(rng)


@nb.njit(cache=True, inline="always")
def _mrx_choice(state, moves, n, epsilon, rng):
    """Mr X's epsilon-greedy pick among ``moves[:n]`` (``_common.playout_mrx_action``)."""
    if rng_uniform(rng) < epsilon:
        return moves[rng_integer(rng, n)]
    u = state.positions[MRX]
    best = -1
    best_score = -1.0
    for i in range(n):
        a = moves[i]
        v = state.neighbours[u, a >> 1]
        score = mrx_move_score(state, a, v, rng)
        if score > best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True, inline="always")
def _detective_choice(state, d, moves, n, epsilon, rng):
    """Detective ``d``'s epsilon-greedy pick among ``moves[:n]``, toward Mr X's
    station in ``state`` (``_common.playout_detective_action``)."""
    if rng_uniform(rng) < epsilon:
        return moves[rng_integer(rng, n)]
    u = state.positions[d]
    target = state.positions[MRX]
    best = -1
    best_score = 1e18
    for i in range(n):
        a = moves[i]
        v = state.neighbours[u, a >> 1]
        score = detective_move_score(state, v, target, rng)
        if score < best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True, inline="always")
def _next_detective(state, first, occupied, moves):
    """The first detective from ``first`` on who can move, his moves in ``moves``
    (returns (detective, count)); (0, 0) if none (the rules'
    ``_start_detectives_turn`` loop)."""
    for d in range(first, state.meta[M_NUM_DETECTIVES] + 1):
        n = _detective_moves(state, d, occupied, moves)
        if n > 0:
            return d, n
    return 0, 0


@nb.njit(cache=True)
def playout_flat(state, epsilon_mrx, epsilon_detectives, occupied, moves, rng):
    """Play ``state`` to the end in place, as ``_common.playout_by_steps`` does.

    Args:
        state: ScotlandYardState with ``M_TRACK_POSSIBLE`` off (the possible set
            is not updated); Mr X's station set (true or guessed).
        epsilon_mrx, epsilon_detectives: float, the playout randomness.
        occupied: bool[S + 1], all False (restored before returning).
        moves: int64[>= 2 * MAX_DEGREE], work buffer.
        rng: uint64[2] (advanced exactly as the stepwise playout advances it).
    """
    meta = state.meta
    if meta[M_RESULT] != RESULT_ONGOING:
        return
    positions = state.positions
    tickets = state.tickets
    num_detectives = meta[M_NUM_DETECTIVES]
    for d in range(1, num_detectives + 1):
        occupied[positions[d]] = True
    player = meta[M_TO_MOVE]
    if player == MRX:
        n = _mrx_moves(state, occupied, moves)
    else:
        n = _detective_moves(state, player, occupied, moves)
    while True:
        meta[M_PLIES] += 1
        if player == MRX:
            travel(state, MRX, _mrx_choice(state, moves, n, epsilon_mrx, rng))
            meta[M_MOVES_LEFT] -= 1
            if meta[M_MOVES_LEFT] > 0:  # the second move of a double move
                n = _mrx_moves(state, occupied, moves)
                if n == 0:
                    meta[M_RESULT] = RESULT_SEEKERS_WIN
                    break
                continue
            player, n = _next_detective(state, 1, occupied, moves)
            if player == 0:  # nobody can move at all
                meta[M_RESULT] = RESULT_MRX_WINS
                break
            meta[M_TO_MOVE] = player
        else:
            occupied[positions[player]] = False
            v, ticket = travel(state, player,
                               _detective_choice(state, player, moves, n, epsilon_detectives, rng))
            occupied[v] = True
            tickets[MRX, ticket] += 1
            if v == positions[MRX]:
                meta[M_RESULT] = RESULT_SEEKERS_WIN
                meta[M_CAPTURER] = player
                break
            player, n = _next_detective(state, player + 1, occupied, moves)
            if player > 0:
                meta[M_TO_MOVE] = player
                continue
            if meta[M_ROUND] >= meta[M_ROUNDS]:
                meta[M_RESULT] = RESULT_MRX_WINS
                break
            player = MRX
            meta[M_TO_MOVE] = MRX
            meta[M_MOVES_LEFT] = 1
            meta[M_IN_DOUBLE] = 0
            n = _mrx_moves(state, occupied, moves)
            if n == 0:
                meta[M_RESULT] = RESULT_SEEKERS_WIN
                break
    for d in range(1, num_detectives + 1):
        occupied[positions[d]] = False
