"""A searcher's memory of the board under fog: what it has seen and no longer sees.

FEMCTS's ``features_from = "memory"`` (issue 38) computes its rollout features
from the board as the agent remembers it, not only from its current
observation. The memory is per game (new in ``begin_game``) and updated from
every observation by :func:`remember`, one numba call over flat arrays:

* a **rigid wall** once seen is remembered for good (walls never go; the
  collapse's new walls are seen like any other);
* **wood** and **power-ups** are remembered until their cell is seen again
  without them (burnt, picked up);
* an **enemy** (not the teammate) is remembered at the cell it was last seen on
  for ``memory_ticks`` ticks, and forgotten earlier once that cell is seen
  without it or the observation reports it dead;
* a **bomb** is remembered at its cell for ``memory_ticks`` ticks, and
  forgotten earlier once its cell is seen without it or its timer (as last
  seen) has run out (it has exploded).

Flames are not remembered (they live a few ticks). What the observation shows
always wins: only objects on cells it hides (FOG), and enemies it does not
show, come from memory. For a decision, :func:`remember` writes the remembered
objects the observation does not show into the feature cache's ``ghost_sq``
(:class:`agents.pommerman.features.FeatureCache`): per kind, the squared
distance from every cell to the nearest such object. The rollouts then take,
for every closeness feature, the nearer of the searched state's object and
the remembered one (a fixed point for the whole decision: the memory does not
simulate what it cannot see).

At view range 0 the agent sees only its own cell, so the memory holds at most
the bombs it laid and walked off and an enemy it saw on its own cell (the
java rules let two agents share a cell for a tick); never a wall or wood (never
on its cell) nor a power-up (picked up on entering). With ``memory_ticks = 1``
a bomb or enemy is remembered only while in view, so a blind agent remembers
nothing and plays as with ``features_from = "observation"``. At full
observability nothing is ever hidden and the memory adds nothing.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.pommerman.kernels import (
    A_ALIVE, A_COL, A_ROW, A_VISIBLE, B_COL, B_LIFE, B_ROW, BOARD_SIZE, EXTRA_BOMB, FOG, INCR_RANGE,
    KICK, M_MODE, M_N_BOMBS, M_STEP, MODE_TEAM, N_AGENTS, N_CELLS, PASSAGE, RIGID, WOOD,
)

from .features import C_GHOSTS, G_BOMB, G_ENEMY, G_POWER, G_RIGID, G_WOOD, N_GHOST_KINDS

#: The ``G_*`` kinds by name (FEMCTS's ``remembered_<kind>`` game metrics).
GHOST_KINDS = ("bomb", "powerup", "enemy", "rigid", "wood")
#: ``FogMemory.board`` for a cell never seen.
UNSEEN = FOG


class FogMemory(NamedTuple):
    """One game's memory (flat arrays; :func:`new_fog_memory`).

    board: int8[121] per cell the last seen RIGID, WOOD, EXTRA_BOMB, INCR_RANGE
    or KICK, PASSAGE for anything else seen, ``UNSEEN`` if never seen;
    bomb_seen: int64[121] the tick a bomb was last seen on the cell (-1: none);
    bomb_life: int64[121] its timer then; enemy_cell: int64[4] the cell agent i
    was last seen on (-1: none, or forgotten); enemy_seen: int64[4] the tick then.
    """

    board: np.ndarray
    bomb_seen: np.ndarray
    bomb_life: np.ndarray
    enemy_cell: np.ndarray
    enemy_seen: np.ndarray


def new_fog_memory() -> FogMemory:
    """An empty memory (nothing seen yet)."""
    return FogMemory(np.full(N_CELLS, UNSEEN, dtype=np.int8), np.full(N_CELLS, -1, dtype=np.int64),
                     np.zeros(N_CELLS, dtype=np.int64), np.full(N_AGENTS, -1, dtype=np.int64),
                     np.zeros(N_AGENTS, dtype=np.int64))


@nb.njit(cache=True, inline="always")
def _remembered_kind(v):
    """The ``G_*`` kind of a remembered board value, -1 for none."""
    if v == RIGID:
        return G_RIGID
    if v == WOOD:
        return G_WOOD
    if v == EXTRA_BOMB or v == INCR_RANGE or v == KICK:
        return G_POWER
    return -1


@nb.njit(cache=True)
def remember(memory, observation, player, memory_ticks, feature_cache):
    """Update ``memory`` from ``observation`` (``player``'s, a PommermanState) and
    write the remembered objects the observation does not show into
    ``feature_cache.ghost_sq`` (``counts[C_GHOSTS]`` = 1 if there is any).
    ``memory_ticks``: how many ticks an enemy or a bomb out of view is
    remembered (int >= 1). Returns the number of such objects, by kind
    (int64[5], ``G_*`` order)."""
    board = observation.board
    step = observation.meta[M_STEP]
    mem_board = memory.board
    for c in range(N_CELLS):
        v = board[c]
        if v != FOG:
            mem_board[c] = v if _remembered_kind(v) >= 0 else PASSAGE
            memory.bomb_seen[c] = -1
    for b in range(observation.meta[M_N_BOMBS]):
        c = observation.bombs[b, B_ROW] * BOARD_SIZE + observation.bombs[b, B_COL]
        memory.bomb_seen[c] = step
        memory.bomb_life[c] = observation.bombs[b, B_LIFE]
    team = observation.meta[M_MODE] == MODE_TEAM
    for i in range(N_AGENTS):
        if i == player or (team and i == (player + 2) % 4):
            continue
        if not observation.agents[i, A_ALIVE]:
            memory.enemy_cell[i] = -1
        elif observation.agents[i, A_VISIBLE]:
            memory.enemy_cell[i] = observation.agents[i, A_ROW] * BOARD_SIZE + observation.agents[i, A_COL]
            memory.enemy_seen[i] = step
        elif memory.enemy_cell[i] >= 0 and board[memory.enemy_cell[i]] != FOG:
            memory.enemy_cell[i] = -1  # its cell is in view, and it is not there
    # the ghosts: remembered objects on hidden cells (enemies: not shown)
    cells = np.empty((N_GHOST_KINDS, N_CELLS), dtype=np.int64)
    n = np.zeros(N_GHOST_KINDS, dtype=np.int64)
    for c in range(N_CELLS):
        if board[c] != FOG:
            continue
        k = _remembered_kind(mem_board[c])
        if k >= 0:
            cells[k, n[k]] = c
            n[k] += 1
        seen = memory.bomb_seen[c]
        if seen >= 0:
            age = step - seen
            if age < memory_ticks and age < memory.bomb_life[c]:
                cells[G_BOMB, n[G_BOMB]] = c
                n[G_BOMB] += 1
            else:
                memory.bomb_seen[c] = -1
    for i in range(N_AGENTS):
        c = memory.enemy_cell[i]
        if c < 0 or observation.agents[i, A_VISIBLE]:
            continue
        if step - memory.enemy_seen[i] < memory_ticks:
            cells[G_ENEMY, n[G_ENEMY]] = c
            n[G_ENEMY] += 1
        else:
            memory.enemy_cell[i] = -1
    ghost_sq = feature_cache.ghost_sq
    any_ghost = False
    for k in range(N_GHOST_KINDS):
        any_ghost = any_ghost or n[k] > 0
        for c in range(N_CELLS):
            r0 = c // BOARD_SIZE
            c0 = c % BOARD_SIZE
            best = -1
            for j in range(n[k]):
                dr = cells[k, j] // BOARD_SIZE - r0
                dc = cells[k, j] % BOARD_SIZE - c0
                d2 = dr * dr + dc * dc
                if best < 0 or d2 < best:
                    best = d2
            ghost_sq[k, c] = best
    feature_cache.counts[C_GHOSTS] = 1 if any_ghost else 0
    return n
