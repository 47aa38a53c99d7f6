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

from ..lowlevel import stack_alloca
from ..rng import rng_integer
from ._layout import (
    ALIENS, EMPTY, HUMANS, KILL_REWARD, MAX_REACH, MAX_UNITS, M_DONE, XcomState, M_MAX_MOVE, M_MAX_MOVES,
    M_MOVES, M_SIZE, M_TO_MOVE, M_UNITS, M_WINNER, NO_WINNER, U_ALIVE, U_COL, U_ROW,
)


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


@nb.njit(cache=True, inline="always")
def reach(state, side, unit, cells, rows, cols, dist):
    """:func:`reachable`, also giving each cell's row and column (``rows``, ``cols``:
    int64[>= D]), so that callers need no division. Inlined (the BFS is the inner
    loop of every rollout command): the state is not passed, and the callers' row and
    column scratch can live on their stack."""
    n = state.meta[M_SIZE]
    max_move = state.meta[M_MAX_MOVE]
    board = state.board
    r0 = np.int64(state.units[side, unit, U_ROW])
    c0 = np.int64(state.units[side, unit, U_COL])
    start = r0 * n + c0
    cells[0] = start
    rows[0] = r0
    cols[0] = c0
    count = 1
    head = 0
    # mark visited cells in dist for this search only: reset those we touch at the end
    dist[start] = 0
    # the queue holds rows and columns beside the cells: a division per cell cost a
    # third of a rollout command. Neighbours in the order up, down, left, right (written
    # out rather than an IR-inlined helper per neighbour, which numba compiles per site).
    # Within max_move steps a cell is never farther than max_move from the start, and
    # the start's dist is 0, so neither needs a test.
    while head < count:
        cell = cells[head]
        r = rows[head]
        c = cols[head]
        head += 1
        d = dist[cell]
        if d >= max_move:
            continue
        d += 1
        if r > 0:
            nxt = cell - n
            if board[nxt] == EMPTY and dist[nxt] < 0:
                dist[nxt] = d
                cells[count] = nxt
                rows[count] = r - 1
                cols[count] = c
                count += 1
        if r < n - 1:
            nxt = cell + n
            if board[nxt] == EMPTY and dist[nxt] < 0:
                dist[nxt] = d
                cells[count] = nxt
                rows[count] = r + 1
                cols[count] = c
                count += 1
        if c > 0:
            nxt = cell - 1
            if board[nxt] == EMPTY and dist[nxt] < 0:
                dist[nxt] = d
                cells[count] = nxt
                rows[count] = r
                cols[count] = c - 1
                count += 1
        if c < n - 1:
            nxt = cell + 1
            if board[nxt] == EMPTY and dist[nxt] < 0:
                dist[nxt] = d
                cells[count] = nxt
                rows[count] = r
                cols[count] = c + 1
                count += 1
    for i in range(count):
        dist[cells[i]] = -1
    return count


@nb.njit(cache=True)
def reachable(state, side, unit, cells, dist):
    """Cells unit ``unit`` of ``side`` can end a move on (start cell first).

    Breadth-first over empty cells, at most ``max_move`` steps (neighbours in the
    order up, down, left, right).
    Args: cells int64[>= D] (out: cell indices), dist int16[C] scratch (all -1; left so).
    Returns: int, how many entries of ``cells`` are filled.
    """
    rows = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    cols = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    return reach(state, side, unit, cells, rows, cols, dist)


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
    rows = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    cols = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    n = state.meta[M_SIZE]
    k_units = state.meta[M_UNITS]
    max_move = state.meta[M_MAX_MOVE]
    d_count = 2 * max_move * max_move + 2 * max_move + 1
    enemy = 1 - side
    targets = nb.carray(stack_alloca(MAX_UNITS, np.int64), MAX_UNITS)  # -1: dead
    for j in range(k_units):
        targets[j] = -1
        if state.units[enemy, j, U_ALIVE]:
            targets[j] = state.units[enemy, j, U_ROW] * n + state.units[enemy, j, U_COL]
    sight = state.sight
    total = 0
    first_alive = -1
    for u in range(k_units):
        if state.units[side, u, U_ALIVE] == 0:
            continue
        if first_alive < 0:
            first_alive = u
        r0 = state.units[side, u, U_ROW]
        c0 = state.units[side, u, U_COL]
        count = reach(state, side, u, cells, rows, cols, dist)
        for i in range(count):
            cell = cells[i]
            off = index_table[rows[i] - r0 + max_move, cols[i] - c0 + max_move]
            base = (u * d_count + off) * (k_units + 1)
            if i > 0:
                mask[base] = True
                total += 1
            for j in range(k_units):
                if targets[j] >= 0:  # branch-free below: the mask entry was False
                    visible = sight[targets[j], cell]
                    mask[base + 1 + j] = visible
                    total += np.int64(visible)
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
def random_command(state, cells, dist, rng):
    """Play one random command for the side to move (the rollout policy), in place.

    A living unit is drawn uniformly, then a command uniformly among that
    unit's legal commands (move, shoot, move then shoot) in the order: its
    moves without a shot by reachable cell (:func:`reachable`'s order, the
    start cell left out), then per living enemy every reachable cell (start
    included) it is visible from; a unit without any holds. Cheaper than a
    full mask: one breadth-first search per call, the shots only counted
    (line of sight read as ``sight[target, cell]``, cache-friendly since the
    reachable cells are close together) and looked up again only when the
    draw falls on one.
    Scratch: cells int64[>= D], dist int16[C] (all -1); rng uint64[2].
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
    rows = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    cols = nb.carray(stack_alloca(MAX_REACH, np.int64), MAX_REACH)
    count = reach(state, side, unit, cells, rows, cols, dist)
    moves = count - 1
    sight = state.sight
    targets = nb.carray(stack_alloca(MAX_UNITS, np.int64), MAX_UNITS)
    visible = nb.carray(stack_alloca(MAX_UNITS, np.int64), MAX_UNITS)  # cells seeing enemy j
    shots = 0
    for j in range(k_units):
        visible[j] = 0
        if state.units[enemy, j, U_ALIVE] == 0:
            continue
        target = state.units[enemy, j, U_ROW] * n + state.units[enemy, j, U_COL]
        targets[j] = target
        seen = 0
        for i in range(count):  # branch-free: whether a cell sees the target is a coin toss
            seen += np.int64(sight[target, cells[i]])
        visible[j] = seen
        shots += seen
    if moves + shots == 0:
        apply_command(state, unit, cells[0], -1)
        return
    pick = rng_integer(rng, moves + shots)
    if pick < moves:
        apply_command(state, unit, cells[pick + 1], -1)
        return
    pick -= moves
    for j in range(k_units):
        if pick < visible[j]:
            target = targets[j]
            for i in range(count):
                if sight[target, cells[i]]:
                    if pick == 0:
                        apply_command(state, unit, cells[i], j)
                        return
                    pick -= 1
        pick -= visible[j]


@nb.njit(cache=True)
def rollout_scratch(state):
    """(cells, dist): the scratch arrays of :func:`random_command` for ``state``'s board."""
    m = state.meta[M_MAX_MOVE]
    return np.empty(2 * m * m + 2 * m + 1, dtype=np.int64), new_dist(state)


@nb.njit(cache=True)
def random_playout(state, rng):
    """Random commands (:func:`random_command`) until the round ends, in place."""
    cells, dist = rollout_scratch(state)
    while state.meta[M_DONE] == 0:
        random_command(state, cells, dist, rng)


@nb.njit(cache=True)
def count_alive(state, side):
    k_units = state.meta[M_UNITS]
    alive = 0
    for u in range(k_units):
        alive += state.units[side, u, U_ALIVE]
    return alive


__all__ = ["ALIENS", "HUMANS"]
