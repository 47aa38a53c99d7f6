"""XCOM rules as numba kernels over :class:`~games.xcom._layout.XcomState`.

A turn is one command of the side to move to one of its living units: move
up to ``max_move`` steps (up, down, left, right; never onto a wall or another
unit, so never through one either), shoot a visible enemy (line of sight:
``sight``), or move then shoot. ``step`` applies it, kills the target (+10 to
the shooter's side, -10 to the other), passes the turn and ends the round
when a side is eliminated (its opponent wins) or after ``max_moves``
commands (a draw unless someone was eliminated).

*Hold* (stay, no shot) is legal only when the side has no other command, so
the mask is never empty.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..rng import rng_integer
from ._layout import (
    ALIENS, EMPTY, HUMANS, KILL_REWARD, M_DONE, XcomState, M_MAX_MOVE, M_MAX_MOVES, M_MOVES, M_SIZE,
    M_TO_MOVE, M_UNITS, M_WINNER, NO_WINNER, U_ALIVE, U_COL, U_ROW,
)

_NEIGHBOUR_DR = np.array([-1, 1, 0, 0], dtype=np.int64)
_NEIGHBOUR_DC = np.array([0, 0, -1, 1], dtype=np.int64)


@nb.njit(cache=True)
def offset_index_table(max_move):
    """int64[2M+1, 2M+1]: the offset index of (drow + M, dcol + M), -1 outside
    the diamond; the order matches ``_layout.move_offsets``."""
    size = 2 * max_move + 1
    table = np.full((size, size), -1, dtype=np.int64)
    table[max_move, max_move] = 0
    k = 1
    for dr in range(-max_move, max_move + 1):
        for dc in range(-max_move, max_move + 1):
            if (dr != 0 or dc != 0) and abs(dr) + abs(dc) <= max_move:
                table[dr + max_move, dc + max_move] = k
                k += 1
    return table


@nb.njit(cache=True)
def offsets_of(max_move):
    """int64[D, 2] (drow, dcol) per offset index (the inverse of ``offset_index_table``)."""
    d = 2 * max_move * max_move + 2 * max_move + 1
    out = np.zeros((d, 2), dtype=np.int64)
    k = 1
    for dr in range(-max_move, max_move + 1):
        for dc in range(-max_move, max_move + 1):
            if (dr != 0 or dc != 0) and abs(dr) + abs(dc) <= max_move:
                out[k, 0] = dr
                out[k, 1] = dc
                k += 1
    return out


@nb.njit(cache=True)
def reachable(state, side, unit, cells, dist):
    """Cells unit ``unit`` of ``side`` can end a move on (start cell first).

    Breadth-first over empty cells, at most ``max_move`` steps.
    Args: cells int64[>= D] (out: cell indices), dist int16[C] scratch (any content).
    Returns: int, how many entries of ``cells`` are filled.
    """
    n = state.meta[M_SIZE]
    max_move = state.meta[M_MAX_MOVE]
    r0 = state.units[side, unit, U_ROW]
    c0 = state.units[side, unit, U_COL]
    start = r0 * n + c0
    cells[0] = start
    count = 1
    head = 0
    # mark visited cells in dist for this search only: reset those we touch at the end
    dist[start] = 0
    while head < count:
        cell = cells[head]
        head += 1
        d = dist[cell]
        if d >= max_move:
            continue
        r = cell // n
        c = cell % n
        for k in range(4):
            rr = r + _NEIGHBOUR_DR[k]
            cc = c + _NEIGHBOUR_DC[k]
            if rr < 0 or rr >= n or cc < 0 or cc >= n:
                continue
            nxt = rr * n + cc
            if state.board[nxt] != EMPTY or dist[nxt] >= 0 or nxt == start:
                continue
            if abs(rr - r0) + abs(cc - c0) > max_move:
                continue
            dist[nxt] = d + 1
            cells[count] = nxt
            count += 1
    for i in range(count):
        dist[cells[i]] = -1
    return count


@nb.njit(cache=True)
def new_dist(state):
    """int16[C] scratch for :func:`reachable` (all -1)."""
    n = state.meta[M_SIZE]
    return np.full(n * n, -1, dtype=np.int16)


@nb.njit(cache=True)
def legal_actions_into(state, side, mask, cells, dist, index_table):
    """Fill ``mask`` (bool[A]) with the legal commands of ``side``; returns their count.

    Scratch: cells int64[>= D], dist int16[C] (all -1), index_table from
    :func:`offset_index_table`. Nothing is legal once the round is over or
    when ``side`` is not to move.
    """
    mask[:] = False
    if state.meta[M_DONE] != 0 or state.meta[M_TO_MOVE] != side:
        return 0
    n = state.meta[M_SIZE]
    k_units = state.meta[M_UNITS]
    max_move = state.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    enemy = 1 - side
    total = 0
    first_alive = -1
    for u in range(k_units):
        if state.units[side, u, U_ALIVE] == 0:
            continue
        if first_alive < 0:
            first_alive = u
        r0 = state.units[side, u, U_ROW]
        c0 = state.units[side, u, U_COL]
        count = reachable(state, side, u, cells, dist)
        for i in range(count):
            cell = cells[i]
            off = index_table[cell // n - r0 + max_move, cell % n - c0 + max_move]
            base = (u * d_count + off) * (k_units + 1)
            if i > 0:
                mask[base] = True
                total += 1
            for j in range(k_units):
                if state.units[enemy, j, U_ALIVE] == 0:
                    continue
                target = state.units[enemy, j, U_ROW] * n + state.units[enemy, j, U_COL]
                if state.sight[target, cell]:
                    mask[base + 1 + j] = True
                    total += 1
    if total == 0 and first_alive >= 0:  # hold: the only command left
        mask[(first_alive * d_count + 0) * (k_units + 1)] = True
        total = 1
    return total


@nb.njit(cache=True)
def legal_actions(state, player):
    """bool[A]: the legal commands of ``player`` (0 humans, 1 aliens); all False
    when it is not ``player``'s turn or the round is over."""
    k_units = state.meta[M_UNITS]
    max_move = state.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    mask = np.zeros(k_units * d_count * (k_units + 1), dtype=np.bool_)
    cells = np.empty(d_count, dtype=np.int64)
    legal_actions_into(state, player, mask, cells, new_dist(state), offset_index_table(max_move))
    return mask


@nb.njit(cache=True)
def decode_action(state, action):
    """(unit, drow, dcol, target) of ``action`` (target -1 = no shot)."""
    k_units = state.meta[M_UNITS]
    max_move = state.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    target = action % (k_units + 1) - 1
    rest = action // (k_units + 1)
    off = rest % d_count
    unit = rest // d_count
    # walk the diamond to the offset (D <= 2*32^2: cheap, and no table needed)
    if off == 0:
        return unit, 0, 0, target
    k = 1
    for dr in range(-max_move, max_move + 1):
        for dc in range(-max_move, max_move + 1):
            if (dr != 0 or dc != 0) and abs(dr) + abs(dc) <= max_move:
                if k == off:
                    return unit, dr, dc, target
                k += 1
    return unit, 0, 0, target


@nb.njit(cache=True)
def apply_command(state, unit, dest, target):
    """Play a (legal) command of the side to move: ``unit`` moves to cell
    ``dest`` and shoots enemy ``target`` (-1: no shot); then the turn passes
    and the end of the round is checked. No legality checks."""
    n = state.meta[M_SIZE]
    side = state.meta[M_TO_MOVE]
    enemy = 1 - side
    r0 = state.units[side, unit, U_ROW]
    c0 = state.units[side, unit, U_COL]
    start = r0 * n + c0
    if dest != start:
        code = state.board[start]
        state.board[start] = EMPTY
        state.board[dest] = code
        state.units[side, unit, U_ROW] = dest // n
        state.units[side, unit, U_COL] = dest % n
    if target >= 0:
        t = state.units[enemy, target, U_ROW] * n + state.units[enemy, target, U_COL]
        state.board[t] = EMPTY
        state.units[enemy, target, U_ALIVE] = 0
        state.rewards[side] += KILL_REWARD
        state.rewards[enemy] -= KILL_REWARD
    state.meta[M_MOVES] += 1
    state.meta[M_TO_MOVE] = enemy
    k_units = state.meta[M_UNITS]
    alive = 0
    for j in range(k_units):
        alive += state.units[enemy, j, U_ALIVE]
    if alive == 0:
        state.meta[M_DONE] = 1
        state.meta[M_WINNER] = side
    elif state.meta[M_MOVES] >= state.meta[M_MAX_MOVES]:
        state.meta[M_DONE] = 1
        state.meta[M_WINNER] = NO_WINNER


@nb.njit(cache=True)
def apply_action(state, action):
    """Play ``action`` (assumed legal) for the side to move, in place."""
    unit, dr, dc, target = decode_action(state, action)
    n = state.meta[M_SIZE]
    side = state.meta[M_TO_MOVE]
    dest = (state.units[side, unit, U_ROW] + dr) * n + state.units[side, unit, U_COL] + dc
    apply_command(state, unit, dest, target)


@nb.njit(cache=True)
def step(state, actions):
    """Advance ``state`` in place by one turn: the side to move plays
    ``actions[side]`` (int64[2]; the other entry is ignored). The action must
    be legal (the wrapper replaces illegal ones); a no-op once the round is over."""
    if state.meta[M_DONE] != 0:
        return
    apply_action(state, actions[state.meta[M_TO_MOVE]])


@nb.njit(cache=True)
def is_terminal(state):
    """bool: a side is eliminated or ``max_moves`` commands were played."""
    return state.meta[M_DONE] != 0


@nb.njit(cache=True)
def returns(state):
    """float64[2]: accumulated rewards (humans, aliens): +10 per kill, -10 per loss."""
    return state.rewards.copy()


@nb.njit(cache=True)
def observe(state, player):
    """The full state (XCOM is fully observable): a copy."""
    return XcomState(state.board.copy(), state.units.copy(), state.sight.copy(),
                       state.rewards.copy(), state.meta.copy())


@nb.njit(cache=True)
def random_command(state, cells, dist, buf, rng):
    """Play one random command for the side to move (the rollout policy), in place.

    A living unit is drawn uniformly, then a command uniformly among that
    unit's legal commands (move, shoot, move then shoot); a unit without any
    holds. Cheaper than a full mask: one breadth-first search per call, the
    candidates listed in one pass (line of sight read as ``sight[target, cell]``,
    cache-friendly since the reachable cells are close together).
    Scratch: cells int64[>= D], dist int16[C] (all -1), buf int64[>= D * (K + 1)];
    rng uint64[2].
    """
    n = state.meta[M_SIZE]
    k_units = state.meta[M_UNITS]
    side = state.meta[M_TO_MOVE]
    enemy = 1 - side
    alive = 0
    for u in range(k_units):
        alive += state.units[side, u, U_ALIVE]
    pick = rng_integer(rng, alive)
    unit = 0
    for u in range(k_units):
        if state.units[side, u, U_ALIVE]:
            if pick == 0:
                unit = u
                break
            pick -= 1
    count = reachable(state, side, unit, cells, dist)
    stride = k_units + 1
    total = 0
    for i in range(1, count):  # moves without a shot
        buf[total] = i * stride
        total += 1
    for j in range(k_units):
        if state.units[enemy, j, U_ALIVE] == 0:
            continue
        target = state.units[enemy, j, U_ROW] * n + state.units[enemy, j, U_COL]
        for i in range(count):
            if state.sight[target, cells[i]]:
                buf[total] = i * stride + j + 1
                total += 1
    if total == 0:
        apply_command(state, unit, cells[0], -1)
        return
    code = buf[rng_integer(rng, total)]
    apply_command(state, unit, cells[code // stride], code % stride - 1)


@nb.njit(cache=True)
def rollout_scratch(state):
    """(cells, dist, buf): the scratch arrays of :func:`random_command` for ``state``'s board."""
    m = state.meta[M_MAX_MOVE]
    d_count = 2 * m * m + 2 * m + 1
    return (np.empty(d_count, dtype=np.int64), new_dist(state),
            np.empty(d_count * (state.meta[M_UNITS] + 1), dtype=np.int64))


@nb.njit(cache=True)
def random_playout(state, rng):
    """Random commands (:func:`random_command`) until the round ends, in place."""
    cells, dist, buf = rollout_scratch(state)
    while state.meta[M_DONE] == 0:
        random_command(state, cells, dist, buf, rng)


@nb.njit(cache=True)
def count_alive(state, side):
    k_units = state.meta[M_UNITS]
    alive = 0
    for u in range(k_units):
        alive += state.units[side, u, U_ALIVE]
    return alive


__all__ = ["ALIENS", "HUMANS"]
