"""``simple``: the Java framework's ``SimplePlayer``, rule by rule.

A reimplementation from reading the framework (GAIGResearch/java-pommerman,
``players/SimplePlayer.java``), with its slips kept, so that it takes the same
decisions in the same situations (up to the random draws). Arena's own design
is :mod:`agents.pommerman.rule_based`.

Cells are scanned column by column (column outer, row inner), as the framework
does; "passable" means an agent tile that is not an enemy, a power-up or a
passage. An "enemy" is a living visible opponent that does not stand on a bomb
(the framework's scan files such a cell as a bomb only, so that opponent is
walked through by the search and ignored by rules 3 and 4).

1. **Distances.** A breadth-first search from the own cell over the cells
   within Manhattan distance 10 (and, a slip, columns < ``col + 10`` and rows
   < ``row + 10``, which leaves out column / row 10 from column / row 0).
   FOG, rigid and flame cells are left out. Only passable cells are expanded,
   so wood, bombs and enemies get a distance but lead nowhere. On a tie the
   predecessor is replaced with probability 1/2.
2. **Flee.** A direction is unsafe if a bomb within path distance <= its blast
   lies that way in the same row or column (all four if standing on it; walls
   do not shield; an unreachable bomb is ignored). If any is unsafe, move at
   random among the safe directions (on board, not unsafe, passable or FOG;
   if none, the unsafe ones on board), or, when all four are unsafe, take the
   first direction (in the game's hash order) whose neighbour is passable and
   not a dead end (every cell reachable from it stays in its row or column
   within the blast); else stop.
3. **Bomb an adjacent enemy** if "maybe bomb": ammo left and some listed
   passage is off the own row and column or farther than the own blast
   (unreachable passages count: their distance is infinite).
4. **Chase** an enemy at distance exactly 3: first step of the path (no
   safety check).
5. **Power-up** nearest within 2 (ties: by type in the game's hash order,
   then scan order): first step (no safety check).
6. **Wood.** Adjacent wood and maybe bomb: bomb. Else, with ammo, the first
   wood (scan order) within 2 whose first step is not in any bomb's row or
   column within its blast: that step.
7. **Random move** among the passable neighbours (order up, down, left,
   right) outside every bomb's row/column reach. The framework's "recently
   visited" filter is inverted by a slip: if some candidate is not among the
   last 6 cells where this rule was reached, every candidate stays; if all
   are, none does (stop). The own cell is then added to that list.

Where the framework iterates a Java ``HashMap`` keyed by an enum (the unsafe
directions of rule 2 when all four are unsafe, the power-up types of rule 5)
the order follows identity hash codes: fixed within a JVM run, arbitrary
between runs. This port draws such an order per game from the agent's
generator (the orders named above are only the docstring's shorthand).

Replaying the framework's recorded ``simple`` games (the golden trajectories),
the recorded action is one this kernel can take in 99.9% of the decisions
(``tests/agents/test_simple_player.py``).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer, rng_uniform
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_ROW, A_VISIBLE, AGENT0, B_BLAST, B_COL,
    B_ROW, BOARD_SIZE, BOMB, DOWN, EXTRA_BOMB, FLAMES, FOG, INCR_RANGE, KICK, LAY_BOMB,
    LEFT, M_N_BOMBS, N_AGENTS, N_CELLS, PASSAGE, RIGHT, RIGID, STOP,
    UP, WOOD, teammate_of,
)

from ..registry import register
from ._agent import PommermanAgent, can_act

INFINITE = np.int64(2**31 - 1)  # the framework's Integer.MAX_VALUE
"""Distance of a listed cell the search did not reach."""
NO_CELL = -1
SEARCH_DEPTH = 10
"""Manhattan radius of the distance search."""
RECENT_LENGTH = 6
"""Cells remembered by the random-move rule."""
NEIGHBOUR_ORDER = np.array([LEFT, RIGHT, UP, DOWN], dtype=np.int64)
"""The framework's neighbour order (search, flee rule, dead-end test)."""
RANDOM_ORDER = np.array([UP, DOWN, LEFT, RIGHT], dtype=np.int64)
"""Candidate order of the random-move rule."""
POWER_UPS = np.array([EXTRA_BOMB, INCR_RANGE, KICK], dtype=np.int64)
DIRECTIONS = np.array([UP, DOWN, LEFT, RIGHT], dtype=np.int64)

_DROW = np.array([0, -1, 1, 0, 0, 0], dtype=np.int64)
_DCOL = np.array([0, 0, 0, -1, 1, 0], dtype=np.int64)


@nb.njit(cache=True, inline="always")
def _scan_cell(k):
    """The k-th cell in the framework's scan order (column outer, row inner)."""
    return (k % BOARD_SIZE) * BOARD_SIZE + k // BOARD_SIZE


@nb.njit(cache=True, inline="always")
def _passable(board, c, enemy_code):
    """Agent tile that is not an enemy, power-up or passage."""
    v = board[c]
    if v == PASSAGE or EXTRA_BOMB <= v <= KICK:
        return True
    if AGENT0 <= v < AGENT0 + N_AGENTS:
        return not enemy_code[v - AGENT0]
    return False


@nb.njit(cache=True, inline="always")
def _neighbour(c, direction):
    """Cell next to ``c`` in ``direction`` (1..4), or NO_CELL off the board."""
    r = c // BOARD_SIZE + _DROW[direction]
    k = c % BOARD_SIZE + _DCOL[direction]
    if 0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE:
        return r * BOARD_SIZE + k
    return NO_CELL


@nb.njit(cache=True)
def distances(board, here, enemy_code, listed, dist, prev, queue, rng):
    """Rule 1: the framework's breadth-first distances (see the module doc).

    Out: listed bool[121] (cell in the search window and not FOG / rigid /
    flames), dist int64[121] (INFINITE if listed and unreached), prev int64[121]
    (predecessor on a path, NO_CELL for none); queue int64[...] scratch.
    """
    row = here // BOARD_SIZE
    col = here % BOARD_SIZE
    listed[:] = False
    dist[:] = INFINITE
    prev[:] = NO_CELL
    for k in range(max(0, col - SEARCH_DEPTH), min(BOARD_SIZE, col + SEARCH_DEPTH)):
        for r in range(max(0, row - SEARCH_DEPTH), min(BOARD_SIZE, row + SEARCH_DEPTH)):
            if abs(r - row) + abs(k - col) > SEARCH_DEPTH:
                continue
            v = board[r * BOARD_SIZE + k]
            if v == FOG or v == RIGID or v == FLAMES:
                continue
            listed[r * BOARD_SIZE + k] = True
    if not listed[here]:  # own cell outside the window or unlisted: nothing reachable
        return
    dist[here] = 0
    head = 0
    tail = 0
    queue[tail] = here
    tail += 1
    while head < tail:
        c = queue[head]
        head += 1
        if not _passable(board, c, enemy_code):
            continue
        val = dist[c] + 1
        for j in range(4):
            n = _neighbour(c, NEIGHBOUR_ORDER[j])
            if n == NO_CELL or not listed[n]:
                continue
            if val < dist[n]:
                dist[n] = val
                prev[n] = c
                queue[tail] = n
                tail += 1
            elif val == dist[n] and rng_uniform(rng) < 0.5:
                prev[n] = c


@nb.njit(cache=True)
def _first_step(here, target, prev):
    """The direction of the first step of the predecessor chain to ``target``."""
    node = target
    while prev[node] != here:
        node = prev[node]
    return _direction(here, node)


@nb.njit(cache=True, inline="always")
def _direction(here, to):
    dr = to // BOARD_SIZE - here // BOARD_SIZE
    dc = to % BOARD_SIZE - here % BOARD_SIZE
    if dc == 0:
        if dr > 0:
            return DOWN
        if dr < 0:
            return UP
        return STOP
    if dc > 0:
        return RIGHT
    return LEFT


@nb.njit(cache=True)
def _in_bomb_line(state, c):
    """Whether cell ``c`` is in a visible bomb's row or column within its blast
    (the framework's ``filterUnsafeDirections``: no walls, any bomb)."""
    row = c // BOARD_SIZE
    col = c % BOARD_SIZE
    for b in range(state.meta[M_N_BOMBS]):
        br = state.bombs[b, B_ROW]
        bc = state.bombs[b, B_COL]
        blast = state.bombs[b, B_BLAST]
        if (col == bc and abs(br - row) <= blast) or (row == br and abs(bc - col) <= blast):
            return True
    return False


@nb.njit(cache=True)
def _maybe_bomb(board, here, ammo, blast, listed, dist):
    """Rule 3's test: ammo, and a listed passage off-axis or beyond ``blast``."""
    if ammo < 1:
        return False
    row = here // BOARD_SIZE
    col = here % BOARD_SIZE
    for k in range(N_CELLS):
        c = _scan_cell(k)
        if not listed[c] or board[c] != PASSAGE:
            continue
        if dist[c] > blast:
            return True
        if c // BOARD_SIZE != row and c % BOARD_SIZE != col:
            return True
    return False


@nb.njit(cache=True)
def _is_stuck(start, blast, board, enemy_code, queue, seen):
    """Whether every passable cell reachable from ``start`` stays in its row or
    column within Manhattan distance ``blast`` (the framework's dead-end test)."""
    seen[:] = False
    seen[start] = True
    head = 0
    tail = 0
    queue[tail] = start
    tail += 1
    srow = start // BOARD_SIZE
    scol = start % BOARD_SIZE
    while head < tail:
        c = queue[head]
        head += 1
        r = c // BOARD_SIZE
        k = c % BOARD_SIZE
        if r != srow and k != scol:
            return False
        if abs(r - srow) + abs(k - scol) > blast:
            return False
        for j in range(4):
            n = _neighbour(c, NEIGHBOUR_ORDER[j])
            if n == NO_CELL or seen[n] or not _passable(board, n, enemy_code):
                continue
            seen[n] = True
            queue[tail] = n
            tail += 1
    return True


@nb.njit(cache=True)
def _flee(state, here, unsafe, enemy_code, dir_order, queue, rng):
    """Rule 2's move given ``unsafe`` (int64[6], blast per direction, 0 = safe)
    and ``dir_order`` (the order in which unsafe directions are tried)."""
    board = state.board
    n_unsafe = 0
    for d in range(1, 5):
        if unsafe[d] > 0:
            n_unsafe += 1
    if n_unsafe == 4:
        next_board = board.copy()
        next_board[here] = BOMB
        seen = np.zeros(N_CELLS, dtype=np.bool_)
        for j in range(4):
            d = dir_order[j]
            n = _neighbour(here, d)
            if n == NO_CELL or not _passable(next_board, n, enemy_code):
                continue
            if not _is_stuck(n, unsafe[d], next_board, enemy_code, queue, seen):
                return np.int64(d)
        return np.int64(STOP)
    safe = np.empty(4, dtype=np.int64)
    n_safe = 0
    for j in range(4):
        d = NEIGHBOUR_ORDER[j]
        n = _neighbour(here, d)
        if n == NO_CELL or unsafe[d] > 0:
            continue
        if _passable(board, n, enemy_code) or board[n] == FOG:
            safe[n_safe] = d
            n_safe += 1
    if n_safe == 0:
        for j in range(4):
            d = dir_order[j]
            if unsafe[d] > 0 and _neighbour(here, d) != NO_CELL:
                safe[n_safe] = d
                n_safe += 1
    if n_safe == 0:
        return np.int64(STOP)
    return safe[rng_integer(rng, n_safe)]


@nb.njit(cache=True)
def simple_decide(state, player, recent, dir_order, item_order, rng):
    """One decision of the framework's SimplePlayer (see the module doc).

    Args:
        state: PommermanState, the observation.
        player: int.
        recent: int64[RECENT_LENGTH + 1]: ``recent[0]`` the number of cells
            remembered, then the cells, oldest first (updated in place).
        dir_order: int64[4], a permutation of UP, DOWN, LEFT, RIGHT: the order
            of the framework's HashMap of unsafe directions (rule 2).
        item_order: int64[3], a permutation of the power-up codes: the order of
            its HashMap of tile types (rule 5 ties).
        rng: uint64[2] (advanced).
    Returns: int64 action.
    """
    board = state.board
    here = state.agents[player, A_ROW] * BOARD_SIZE + state.agents[player, A_COL]
    ammo = state.agents[player, A_AMMO]
    blast = state.agents[player, A_BLAST]
    mate = teammate_of(state, player)
    # by agent id: a living visible enemy, unless it stands on a bomb (the
    # framework's scan records such a cell as a bomb only, so that enemy is
    # passable and ignored by rules 3 and 4)
    bomb_at = np.zeros(N_CELLS, dtype=np.bool_)
    for b in range(state.meta[M_N_BOMBS]):
        bomb_at[state.bombs[b, B_ROW] * BOARD_SIZE + state.bombs[b, B_COL]] = True
    enemy_code = np.zeros(N_AGENTS, dtype=np.bool_)
    for i in range(N_AGENTS):
        if i != player and i != mate and state.agents[i, A_ALIVE] and state.agents[i, A_VISIBLE]:
            enemy_code[i] = not bomb_at[state.agents[i, A_ROW] * BOARD_SIZE + state.agents[i, A_COL]]
    listed = np.zeros(N_CELLS, dtype=np.bool_)
    dist = np.empty(N_CELLS, dtype=np.int64)
    prev = np.empty(N_CELLS, dtype=np.int64)
    queue = np.empty(4 * N_CELLS, dtype=np.int64)
    distances(board, here, enemy_code, listed, dist, prev, queue, rng)

    # 2. flee
    unsafe = np.zeros(6, dtype=np.int64)
    any_unsafe = False
    for b in range(state.meta[M_N_BOMBS]):
        c = state.bombs[b, B_ROW] * BOARD_SIZE + state.bombs[b, B_COL]
        strength = state.bombs[b, B_BLAST]
        if not listed[c] or dist[c] > strength:
            continue
        if c == here:
            for d in range(1, 5):
                unsafe[d] = max(unsafe[d], strength)
            any_unsafe = True
        elif c % BOARD_SIZE == here % BOARD_SIZE:
            d = DOWN if here // BOARD_SIZE < c // BOARD_SIZE else UP
            unsafe[d] = max(unsafe[d], strength)
            any_unsafe = True
        elif c // BOARD_SIZE == here // BOARD_SIZE:
            d = RIGHT if here % BOARD_SIZE < c % BOARD_SIZE else LEFT
            unsafe[d] = max(unsafe[d], strength)
            any_unsafe = True
    if any_unsafe:
        return _flee(state, here, unsafe, enemy_code, dir_order, queue, rng)

    # 3. bomb an adjacent enemy
    adjacent = False
    for c in range(N_CELLS):
        v = board[c]
        if AGENT0 <= v < AGENT0 + N_AGENTS and enemy_code[v - AGENT0] and listed[c] and dist[c] == 1:
            adjacent = True
    if adjacent and _maybe_bomb(board, here, ammo, blast, listed, dist):
        return np.int64(LAY_BOMB)

    # 4. chase an enemy exactly 3 steps away (enemies in scan order)
    for k in range(N_CELLS):
        c = _scan_cell(k)
        v = board[c]
        if AGENT0 <= v < AGENT0 + N_AGENTS and enemy_code[v - AGENT0] and listed[c] and dist[c] == 3:
            return np.int64(_first_step(here, c, prev))

    # 5. nearest power-up within 2
    best = NO_CELL
    best_dist = INFINITE
    for t in range(item_order.shape[0]):
        for k in range(N_CELLS):
            c = _scan_cell(k)
            if listed[c] and board[c] == item_order[t] and dist[c] < best_dist:
                best_dist = dist[c]
                best = c
    if best != NO_CELL and best_dist <= 2:
        return np.int64(_first_step(here, best, prev))

    # 6. wood: bomb next to it, or step toward it
    for k in range(N_CELLS):
        c = _scan_cell(k)
        if listed[c] and board[c] == WOOD and dist[c] == 1:
            if _maybe_bomb(board, here, ammo, blast, listed, dist):
                return np.int64(LAY_BOMB)
    if ammo >= 1:
        for k in range(N_CELLS):
            c = _scan_cell(k)
            if listed[c] and board[c] == WOOD and dist[c] <= 2:
                d = _first_step(here, c, prev)
                if d != STOP and not _in_bomb_line(state, _neighbour(here, d)):
                    return np.int64(d)

    # 7. random move
    moves = np.empty(4, dtype=np.int64)
    n_moves = 0
    fresh = False
    for j in range(4):
        d = RANDOM_ORDER[j]
        n = _neighbour(here, d)
        if n == NO_CELL or not _passable(board, n, enemy_code) or _in_bomb_line(state, n):
            continue
        moves[n_moves] = d
        n_moves += 1
        seen = False
        for m in range(recent[0]):
            if recent[1 + m] == n:
                seen = True
        if not seen:
            fresh = True
    # remember this cell (only when this rule is reached)
    if recent[0] < RECENT_LENGTH:
        recent[1 + recent[0]] = here
        recent[0] += 1
    else:
        for m in range(RECENT_LENGTH - 1):
            recent[1 + m] = recent[2 + m]
        recent[RECENT_LENGTH] = here
    if not fresh or n_moves == 0:
        return np.int64(STOP)
    return moves[rng_integer(rng, n_moves)]


@nb.njit(cache=True)
def hash_order(values, rng):
    """A random permutation of ``values`` (int64[n], new array): the order in
    which the framework's JVM happened to iterate an enum-keyed HashMap."""
    out = values.copy()
    for i in range(out.shape[0] - 1, 0, -1):
        j = rng_integer(rng, i + 1)
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp
    return out


# --------------------------------------------------------------------- the agent
@register
class SimpleAgent(PommermanAgent):
    """The Java framework's SimplePlayer, rule by rule (see the kernel above);
    no search, 0 iterations per decision. Arena's own design is ``rule_based``."""

    name = "simple"

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._recent = np.zeros(RECENT_LENGTH + 1, dtype=np.int64)
        self._dir_order = hash_order(DIRECTIONS, self._rng)
        self._item_order = hash_order(POWER_UPS, self._rng)

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        action = simple_decide(observation, self.seat, self._recent, self._dir_order,
                               self._item_order, self._rng)
        return int(action), 0
