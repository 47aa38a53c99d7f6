"""Arena's own rule-based Pommerman player, in the spirit of the reference
``SimplePlayer`` but not a port of it (shortest-path escapes, a 9-step escape
check, blast-aware threats, chasing within 3 steps). The port, with the
framework's decisions and slips, is ``simple`` (``simple_player.py``).

Rules, in order (first that applies):

1. on a threatened cell (flames, or in the blast cross of any bomb): take the
   first step of a shortest path to the nearest reachable unthreatened cell;
2. a visible living enemy is adjacent, ammo left and a bomb here leaves an
   escape: lay a bomb;
3. an enemy within 3 reachable steps: step toward it;
4. a power-up within 2 reachable steps: step toward it;
5. wood adjacent, ammo left and a bomb here leaves an escape: lay a bomb;
6. ammo left and a cell next to wood within 2 reachable steps: step toward it;
7. a random move to a free unthreatened neighbour not visited recently (any
   free unthreatened neighbour if all were; stop if none).

Paths in rules 3-7 avoid threatened cells. An escape (rules 2 and 5) is a
cell reachable within the bomb's life (9 steps) outside every blast including
the new bomb's.
"""
from __future__ import annotations

from collections import deque

import numba as nb
import numpy as np

from games.rng import rng_integer
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_ROW, A_VISIBLE, ACTION_DCOL, ACTION_DROW, AGENT0,
    B_BLAST, B_COL, B_ROW, BOARD_SIZE, EXTRA_BOMB, FLAMES, KICK, LAY_BOMB, M_N_BOMBS,
    N_AGENTS, N_CELLS, PASSAGE, RIGID, STOP, WOOD, teammate_of,
)

from ..registry import register
from ._agent import PommermanAgent, can_act

UNREACHED = -1
BOMB_LIFE = 9
ENEMY_RADIUS = 3
POWERUP_RADIUS = 2
WOOD_RADIUS = 2
RECENT_CELLS = 5


@nb.njit(cache=True, inline="always")
def _free(board, c):
    """Cells an agent can step on: passage and power-ups."""
    v = board[c]
    return v == PASSAGE or (EXTRA_BOMB <= v <= KICK)


@nb.njit(cache=True)
def _mark_blast(board, row, col, strength, threat):
    """Mark the blast cross of a bomb at (row, col) in ``threat`` (bool[121])."""
    threat[row * BOARD_SIZE + col] = True
    for d in range(1, 5):
        for k in range(1, strength):
            r = row + ACTION_DROW[d] * k
            c = col + ACTION_DCOL[d] * k
            if not (0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE):
                break
            v = board[r * BOARD_SIZE + c]
            if v == RIGID:
                break
            threat[r * BOARD_SIZE + c] = True
            if v == WOOD:
                break


@nb.njit(cache=True)
def threat_map(state, threat):
    """``threat[c]``: flames at c or c in any bomb's blast cross (bool[121], overwritten)."""
    threat[:] = False
    for c in range(N_CELLS):
        if state.board[c] == FLAMES:
            threat[c] = True
    for b in range(state.meta[M_N_BOMBS]):
        _mark_blast(state.board, state.bombs[b, B_ROW], state.bombs[b, B_COL],
                    state.bombs[b, B_BLAST], threat)


@nb.njit(cache=True)
def bfs(board, start, avoid, dist, first, queue):
    """Breadth-first distances from ``start`` over free cells.

    Cells with ``avoid[c]`` are not entered. Occupied target cells (agents,
    wood) get a distance but are not expanded, so rules can aim at them.
    Args/out: dist int64[121] (UNREACHED if not reached), first int64[121]
    (first action of a shortest path), queue int64[121] scratch.
    """
    dist[:] = UNREACHED
    first[:] = STOP
    dist[start] = 0
    head = 0
    tail = 0
    queue[tail] = start
    tail += 1
    while head < tail:
        c = queue[head]
        head += 1
        if c != start and not _free(board, c):
            continue
        row = c // BOARD_SIZE
        col = c % BOARD_SIZE
        for a in range(1, 5):
            r = row + ACTION_DROW[a]
            k = col + ACTION_DCOL[a]
            if not (0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE):
                continue
            n = r * BOARD_SIZE + k
            if dist[n] != UNREACHED or avoid[n]:
                continue
            v = board[n]
            if not (_free(board, n) or v >= AGENT0 or v == WOOD):
                continue
            dist[n] = dist[c] + 1
            first[n] = a if c == start else first[c]
            queue[tail] = n
            tail += 1


@nb.njit(cache=True)
def _has_escape(state, player, threat, dist, first, queue):
    """Whether a bomb laid here leaves a reachable unthreatened cell in time."""
    row = state.agents[player, A_ROW]
    col = state.agents[player, A_COL]
    start = row * BOARD_SIZE + col
    with_bomb = threat.copy()
    _mark_blast(state.board, row, col, state.agents[player, A_BLAST], with_bomb)
    no_avoid = np.zeros(N_CELLS, dtype=np.bool_)
    for c in range(N_CELLS):
        no_avoid[c] = state.board[c] == FLAMES
    bfs(state.board, start, no_avoid, dist, first, queue)
    for c in range(N_CELLS):
        if 0 < dist[c] <= BOMB_LIFE - 1 and not with_bomb[c] and _free(state.board, c):
            return True
    return False


@nb.njit(cache=True)
def _is_enemy(state, player, i):
    if i == player or not state.agents[i, A_ALIVE] or not state.agents[i, A_VISIBLE]:
        return False
    return i != teammate_of(state, player)


@nb.njit(cache=True)
def rule_based_decide(state, player, recent, rng):
    """One decision of the rule-based player.

    Args:
        state: PommermanState, the observation.
        player: int.
        recent: int64[k], recently visited cells (-1 for none).
        rng: uint64[2].
    Returns: int64 action.
    """
    if not state.agents[player, A_ALIVE]:
        return np.int64(STOP)
    board = state.board
    row = state.agents[player, A_ROW]
    col = state.agents[player, A_COL]
    here = row * BOARD_SIZE + col
    ammo = state.agents[player, A_AMMO]
    threat = np.zeros(N_CELLS, dtype=np.bool_)
    threat_map(state, threat)
    dist = np.empty(N_CELLS, dtype=np.int64)
    first = np.empty(N_CELLS, dtype=np.int64)
    queue = np.empty(N_CELLS, dtype=np.int64)

    # 1. flee
    if threat[here]:
        flames = np.zeros(N_CELLS, dtype=np.bool_)
        for c in range(N_CELLS):
            flames[c] = board[c] == FLAMES
        bfs(board, here, flames, dist, first, queue)
        best = -1
        for c in range(N_CELLS):
            if dist[c] > 0 and not threat[c] and _free(board, c):
                if best < 0 or dist[c] < dist[best]:
                    best = c
        if best >= 0:
            return np.int64(first[best])
        # no way out: any free neighbour (the bomb may still be far from exploding)
        n = 0
        moves = np.empty(4, dtype=np.int64)
        for a in range(1, 5):
            r = row + ACTION_DROW[a]
            k = col + ACTION_DCOL[a]
            if 0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE and _free(board, r * BOARD_SIZE + k):
                moves[n] = a
                n += 1
        if n == 0:
            return np.int64(STOP)
        return moves[rng_integer(rng, n)]

    # 2. bomb an adjacent enemy
    if ammo > 0:
        for i in range(N_AGENTS):
            if _is_enemy(state, player, i):
                if abs(state.agents[i, A_ROW] - row) + abs(state.agents[i, A_COL] - col) == 1:
                    if _has_escape(state, player, threat, dist, first, queue):
                        return np.int64(LAY_BOMB)
                    break

    bfs(board, here, threat, dist, first, queue)
    # 3. approach an enemy within 3 steps
    best = -1
    for i in range(N_AGENTS):
        if _is_enemy(state, player, i):
            c = state.agents[i, A_ROW] * BOARD_SIZE + state.agents[i, A_COL]
            if 0 < dist[c] <= ENEMY_RADIUS and (best < 0 or dist[c] < dist[best]):
                best = c
    if best >= 0 and dist[best] > 1:
        return np.int64(first[best])
    # 4. power-up within 2
    best = -1
    for c in range(N_CELLS):
        if EXTRA_BOMB <= board[c] <= KICK and 0 < dist[c] <= POWERUP_RADIUS:
            if best < 0 or dist[c] < dist[best]:
                best = c
    if best >= 0:
        return np.int64(first[best])
    # 5. bomb next to wood
    if ammo > 0:
        for a in range(1, 5):
            r = row + ACTION_DROW[a]
            k = col + ACTION_DCOL[a]
            if 0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE and board[r * BOARD_SIZE + k] == WOOD:
                if _has_escape(state, player, threat, dist, first, queue):
                    return np.int64(LAY_BOMB)
                bfs(board, here, threat, dist, first, queue)
                break
    # 6. approach wood within 2
    if ammo > 0:
        best = -1
        for c in range(N_CELLS):
            if 0 < dist[c] <= WOOD_RADIUS and _free(board, c):
                r0 = c // BOARD_SIZE
                k0 = c % BOARD_SIZE
                near_wood = False
                for a in range(1, 5):
                    r = r0 + ACTION_DROW[a]
                    k = k0 + ACTION_DCOL[a]
                    if 0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE and board[r * BOARD_SIZE + k] == WOOD:
                        near_wood = True
                if near_wood and (best < 0 or dist[c] < dist[best]):
                    best = c
        if best >= 0:
            return np.int64(first[best])
    # 7. random free, unthreatened move, preferring cells not visited recently
    moves = np.empty(4, dtype=np.int64)
    fresh = np.empty(4, dtype=np.int64)
    n = 0
    n_fresh = 0
    for a in range(1, 5):
        r = row + ACTION_DROW[a]
        k = col + ACTION_DCOL[a]
        if not (0 <= r < BOARD_SIZE and 0 <= k < BOARD_SIZE):
            continue
        c = r * BOARD_SIZE + k
        if not _free(board, c) or threat[c]:
            continue
        moves[n] = a
        n += 1
        seen = False
        for j in range(recent.shape[0]):
            if recent[j] == c:
                seen = True
        if not seen:
            fresh[n_fresh] = a
            n_fresh += 1
    if n_fresh > 0:
        return fresh[rng_integer(rng, n_fresh)]
    if n > 0:
        return moves[rng_integer(rng, n)]
    return np.int64(STOP)


# --------------------------------------------------------------------- the agent
@register
class RuleBasedAgent(PommermanAgent):
    """Hand-written rules in the spirit of the reference SimplePlayer (see
    the kernel above); no search, 0 iterations per decision."""

    name = "rule_based"
    compile_seconds = 3.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents rule_based,rule_based,rule_based,rule_based)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._recent = deque(maxlen=RECENT_CELLS)

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        recent = np.full(RECENT_CELLS, -1, dtype=np.int64)
        recent[: len(self._recent)] = list(self._recent)
        action = int(rule_based_decide(observation, self.seat, recent, self._rng))
        cell = int(observation.agents[self.seat, A_ROW]) * BOARD_SIZE + int(observation.agents[self.seat, A_COL])
        self._recent.append(cell)
        return action, 0
