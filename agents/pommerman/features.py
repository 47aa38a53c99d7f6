"""State features for evolved rollout policies (FEMCTS).

Eight features of a state for one player, each normalised to at most 1:

====  ==========================================================
0     bomb strength: blast strength x ammo / (2 x MAX_BLAST), capped at 1
1     can kick (0 / 1)
2     1 / (d + 1), d the Euclidean distance to the nearest bomb
3     ... nearest visible power-up
4     ... nearest living, visible enemy
5     ... nearest rigid wall
6     ... nearest flame
7     ... nearest wood
====  ==========================================================

A feature whose object is absent (or hidden by fog) is 0. The FEMCTS variant
with two effective actions uses the subset ``SUBSET_NEA2`` (bombs, enemies,
power-ups, rigid walls, can kick).

:func:`state_features` scans the whole board (the reference);
:func:`cached_state_features` gives the same values from a per-decision
:class:`FeatureCache` (see below), which is what FEMCTS's rollouts use.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.pommerman.kernels import (
    AGENT_DUMMY, A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_VISIBLE, BOMB, B_COL, B_ROW,
    BOARD_SIZE, COLLAPSE_START, EXTRA_BOMB, FLAMES, F_COL, F_ROW, INCR_RANGE, KICK, M_COLLAPSE, M_MODE,
    M_N_BOMBS, M_N_FLAMES, M_STEP, MODE_TEAM, N_AGENTS, N_CELLS, RIGID, WOOD,
)


N_FEATURES = 8
(F_BOMB_STRENGTH, F_CAN_KICK, F_NEAR_BOMB, F_NEAR_POWERUP, F_NEAR_ENEMY, F_NEAR_RIGID,
 F_NEAR_FLAME, F_NEAR_WOOD) = range(8)
FEATURE_NAMES = ("bomb_strength", "can_kick", "near_bomb", "near_powerup", "near_enemy",
                 "near_rigid", "near_flame", "near_wood")
SUBSET_NEA2 = np.array([F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_POWERUP, F_NEAR_RIGID, F_CAN_KICK],
                       dtype=np.int64)
ALL_FEATURES = np.arange(N_FEATURES, dtype=np.int64)
#: Normaliser of the bomb-strength feature (the canonical FFA blast cap).
MAX_BLAST = 10


@nb.njit(cache=True, inline="always")
def _closeness(best_sq):
    return 0.0 if best_sq < 0 else 1.0 / (np.sqrt(best_sq) + 1.0)


@nb.njit(cache=True)
def state_features(state, player, out):
    """Write the eight features of ``state`` for ``player`` into ``out`` (float64[8])."""
    pr = state.agents[player, A_ROW]
    pc = state.agents[player, A_COL]
    strength = state.agents[player, A_BLAST] * state.agents[player, A_AMMO] / (2.0 * MAX_BLAST)
    out[F_BOMB_STRENGTH] = min(strength, 1.0)
    out[F_CAN_KICK] = 1.0 if state.agents[player, A_KICK] else 0.0
    best_power = -1
    best_rigid = -1
    best_wood = -1
    for c in range(N_CELLS):
        v = state.board[c]
        if v == RIGID or v == WOOD or v == EXTRA_BOMB or v == INCR_RANGE or v == KICK:
            dr = c // BOARD_SIZE - pr
            dc = c % BOARD_SIZE - pc
            d2 = dr * dr + dc * dc
            if v == RIGID:
                if best_rigid < 0 or d2 < best_rigid:
                    best_rigid = d2
            elif v == WOOD:
                if best_wood < 0 or d2 < best_wood:
                    best_wood = d2
            elif best_power < 0 or d2 < best_power:
                best_power = d2
    best_bomb = -1
    for b in range(state.meta[M_N_BOMBS]):
        dr = state.bombs[b, B_ROW] - pr
        dc = state.bombs[b, B_COL] - pc
        d2 = dr * dr + dc * dc
        if best_bomb < 0 or d2 < best_bomb:
            best_bomb = d2
    best_flame = -1
    for f in range(state.meta[M_N_FLAMES]):
        dr = state.flames[f, F_ROW] - pr
        dc = state.flames[f, F_COL] - pc
        d2 = dr * dr + dc * dc
        if best_flame < 0 or d2 < best_flame:
            best_flame = d2
    best_enemy = -1
    team = state.meta[M_MODE] == MODE_TEAM
    for i in range(N_AGENTS):
        if i == player or (team and i == (player + 2) % 4):
            continue
        if not state.agents[i, A_ALIVE] or not state.agents[i, A_VISIBLE]:
            continue
        dr = state.agents[i, A_ROW] - pr
        dc = state.agents[i, A_COL] - pc
        d2 = dr * dr + dc * dc
        if best_enemy < 0 or d2 < best_enemy:
            best_enemy = d2
    out[F_NEAR_BOMB] = _closeness(best_bomb)
    out[F_NEAR_POWERUP] = _closeness(best_power)
    out[F_NEAR_ENEMY] = _closeness(best_enemy)
    out[F_NEAR_RIGID] = _closeness(best_rigid)
    out[F_NEAR_FLAME] = _closeness(best_flame)
    out[F_NEAR_WOOD] = _closeness(best_wood)


# --------------------------------------------------------------------------
# Fast features: the same values from what a decision's root fixes.
#
# Within one search decision the board only loses rigid walls never, gains them
# only by the java collapse, loses wood (burnt) and never gains it, and gains
# power-ups only at cells that hold wood, flames or an item at the root. So at
# the root we record the nearest rigid wall of every cell (a table), the wood
# cells and the cells where a power-up can be; each rollout step then looks up
# the rigid feature and scans only those short lists (still checking the cell's
# current code). When a board collapse can happen within the search horizon
# the cache is off and every step scans the whole board (the exact old path).

#: ``FeatureCache.counts`` slots.
C_N_WOOD, C_N_POWER, C_FULL_SCAN = range(3)


class FeatureCache(NamedTuple):
    """Per-decision lookup data for :func:`cached_state_features`.

    nearest_rigid: int64[121] squared distance from each cell to the nearest
    rigid wall at the root (-1: none); wood: int64[121] the first
    ``counts[C_N_WOOD]`` entries are the root's wood cells; power: int64[121]
    the first ``counts[C_N_POWER]`` entries are the cells where a power-up can
    be during the decision; counts: int64[3] (``C_FULL_SCAN`` = 1: cache off).
    """

    nearest_rigid: np.ndarray
    wood: np.ndarray
    power: np.ndarray
    counts: np.ndarray


def new_feature_cache() -> FeatureCache:
    """An empty cache (its ``C_FULL_SCAN`` is set until :func:`prepare_feature_cache`)."""
    counts = np.zeros(3, dtype=np.int64)
    counts[C_FULL_SCAN] = 1
    return FeatureCache(np.full(N_CELLS, -1, dtype=np.int64), np.zeros(N_CELLS, dtype=np.int64),
                        np.zeros(N_CELLS, dtype=np.int64), counts)


@nb.njit(cache=True)
def prepare_feature_cache(cache, root, horizon):
    """Fill ``cache`` from the search root ``root`` (a PommermanState) for
    rollouts reaching ``horizon`` ticks past it (the rollout depth)."""
    counts = cache.counts
    step = root.meta[M_STEP]
    collapse_ahead = root.meta[M_COLLAPSE] != 0 and step + horizon >= COLLAPSE_START
    counts[C_FULL_SCAN] = 1 if collapse_ahead else 0
    n_wood = 0
    n_power = 0
    for c in range(N_CELLS):
        v = root.board[c]
        if v == WOOD:
            cache.wood[n_wood] = c
            n_wood += 1
        if (v == WOOD or v == FLAMES or v == EXTRA_BOMB or v == INCR_RANGE or v == KICK
                or root.items[c] != 0 or v >= AGENT_DUMMY or v == BOMB):
            cache.power[n_power] = c
            n_power += 1
    counts[C_N_WOOD] = n_wood
    counts[C_N_POWER] = n_power
    for c in range(N_CELLS):
        r0 = c // BOARD_SIZE
        c0 = c % BOARD_SIZE
        best = -1
        for k in range(N_CELLS):
            if root.board[k] == RIGID:
                dr = k // BOARD_SIZE - r0
                dc = k % BOARD_SIZE - c0
                d2 = dr * dr + dc * dc
                if best < 0 or d2 < best:
                    best = d2
        cache.nearest_rigid[c] = best


@nb.njit(cache=True)
def cached_state_features(state, player, cache, out):
    """:func:`state_features` (the same values) using ``cache``, prepared by
    :func:`prepare_feature_cache` from the root ``state`` descends from."""
    if cache.counts[C_FULL_SCAN]:
        state_features(state, player, out)
        return
    pr = state.agents[player, A_ROW]
    pc = state.agents[player, A_COL]
    strength = state.agents[player, A_BLAST] * state.agents[player, A_AMMO] / (2.0 * MAX_BLAST)
    out[F_BOMB_STRENGTH] = min(strength, 1.0)
    out[F_CAN_KICK] = 1.0 if state.agents[player, A_KICK] else 0.0
    best_wood = -1
    for k in range(cache.counts[C_N_WOOD]):
        c = cache.wood[k]
        if state.board[c] == WOOD:
            dr = c // BOARD_SIZE - pr
            dc = c % BOARD_SIZE - pc
            d2 = dr * dr + dc * dc
            if best_wood < 0 or d2 < best_wood:
                best_wood = d2
    best_power = -1
    for k in range(cache.counts[C_N_POWER]):
        c = cache.power[k]
        v = state.board[c]
        if v == EXTRA_BOMB or v == INCR_RANGE or v == KICK:
            dr = c // BOARD_SIZE - pr
            dc = c % BOARD_SIZE - pc
            d2 = dr * dr + dc * dc
            if best_power < 0 or d2 < best_power:
                best_power = d2
    best_bomb = -1
    for b in range(state.meta[M_N_BOMBS]):
        dr = state.bombs[b, B_ROW] - pr
        dc = state.bombs[b, B_COL] - pc
        d2 = dr * dr + dc * dc
        if best_bomb < 0 or d2 < best_bomb:
            best_bomb = d2
    best_flame = -1
    for f in range(state.meta[M_N_FLAMES]):
        dr = state.flames[f, F_ROW] - pr
        dc = state.flames[f, F_COL] - pc
        d2 = dr * dr + dc * dc
        if best_flame < 0 or d2 < best_flame:
            best_flame = d2
    best_enemy = -1
    team = state.meta[M_MODE] == MODE_TEAM
    for i in range(N_AGENTS):
        if i == player or (team and i == (player + 2) % 4):
            continue
        if not state.agents[i, A_ALIVE] or not state.agents[i, A_VISIBLE]:
            continue
        dr = state.agents[i, A_ROW] - pr
        dc = state.agents[i, A_COL] - pc
        d2 = dr * dr + dc * dc
        if best_enemy < 0 or d2 < best_enemy:
            best_enemy = d2
    out[F_NEAR_BOMB] = _closeness(best_bomb)
    out[F_NEAR_POWERUP] = _closeness(best_power)
    out[F_NEAR_ENEMY] = _closeness(best_enemy)
    out[F_NEAR_RIGID] = _closeness(cache.nearest_rigid[pr * BOARD_SIZE + pc])
    out[F_NEAR_FLAME] = _closeness(best_flame)
    out[F_NEAR_WOOD] = _closeness(best_wood)
