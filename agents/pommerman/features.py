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

A feature whose object is absent (or hidden by fog) is 0 (the closeness of an
infinite distance; FEMCTS's ``absent_closeness`` gives another value). The FEMCTS variant
with two effective actions uses the subset ``SUBSET_NEA2`` (bombs, enemies,
power-ups, rigid walls, can kick).

:func:`state_features` scans the whole board (the reference). FEMCTS's
rollouts get the same values from a per-decision :class:`FeatureCache`
(filled here by :func:`prepare_feature_cache`, read at every rollout step by
:func:`agents.pommerman.femcts_rollout.evolved_rollout`; one state at a time:
:func:`agents.pommerman.femcts_rollout.rollout_features`).
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_VISIBLE, B_COL, B_ROW, BOARD_SIZE,
    COLLAPSE_START, COLLAPSE_STEP, EXTRA_BOMB, FLAME_MASK, INCR_RANGE, KICK, M_COLLAPSE, M_MODE, M_N_BOMBS,
    M_STEP, MODE_TEAM, N_AGENTS, N_CELLS, RIGID, WOOD, drop_lowest, first_cell,
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
def _closeness(best_sq, absent):
    return absent if best_sq < 0 else 1.0 / (np.sqrt(best_sq) + 1.0)


@nb.njit(cache=True)
def state_features(state, player, out, absent=0.0):
    """Write the eight features of ``state`` for ``player`` into ``out`` (float64[8]).

    ``absent``: the value of a closeness feature whose object is not on the
    board (none exists, or fog hides it); 0 by default."""
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
    for w in range(2):  # the cells holding flames (their marks)
        bits = state.flames[FLAME_MASK + w]
        while bits:
            fc = w * 64 + first_cell(bits)
            bits = drop_lowest(bits)
            dr = fc // BOARD_SIZE - pr
            dc = fc % BOARD_SIZE - pc
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
    out[F_NEAR_BOMB] = _closeness(best_bomb, absent)
    out[F_NEAR_POWERUP] = _closeness(best_power, absent)
    out[F_NEAR_ENEMY] = _closeness(best_enemy, absent)
    out[F_NEAR_RIGID] = _closeness(best_rigid, absent)
    out[F_NEAR_FLAME] = _closeness(best_flame, absent)
    out[F_NEAR_WOOD] = _closeness(best_wood, absent)


# --------------------------------------------------------------------------
# Fast features: the same values from what a decision's root fixes.
#
# Within one search decision the board never loses rigid walls and gains them
# only by the java collapse, loses wood (burnt) and never gains it, and shows a
# power-up only where one is at the root or where ``items`` holds one (under
# wood, or under the flames of burnt wood). So at the root we record the
# nearest rigid wall of every cell (a table), the wood cells and the cells
# where a power-up can be, and for every cell the nearest of those wood and
# power-up cells. A rollout step looks up the rigid feature; for wood (power-ups)
# it checks whether the cell's nearest root wood (candidate) cell still holds
# wood (a power-up): if so that is the nearest one now, since cells only drop
# out of those sets; otherwise it scans the short list.
# Features a policy does not use (``feature_index``) are not computed (left 0).
# When a board collapse tick falls within the search horizon the cache is off
# for that decision and every step scans the whole board (the reference path).

#: 1 / (sqrt(d2) + 1) for every squared distance d2 on the board (0 .. 200): the
#: closeness features without a square root and a division per step.
CLOSENESS = 1.0 / (np.sqrt(np.arange(2 * (BOARD_SIZE - 1) ** 2 + 1, dtype=np.float64)) + 1.0)


@nb.njit(cache=True, inline="always")
def closeness_or_none(best_sq, absent=0.0):
    """The closeness feature of a squared distance, ``absent`` for -1 (none)."""
    return absent if best_sq < 0 else CLOSENESS[best_sq]


#: "Nothing found" for the branch-free minimum of squared distances.
FAR_SQ = np.int64(1 << 30)


@nb.njit(cache=True, inline="always")
def closeness_or_far(best_sq, absent=0.0):
    """The closeness feature of a squared distance, ``absent`` for ``FAR_SQ`` (none)."""
    return absent if best_sq == FAR_SQ else CLOSENESS[best_sq]


#: ``FeatureCache.counts`` slots (``C_GHOSTS``: the decision's features also count
#: the remembered objects of ``ghost_sq``; 0 unless FEMCTS's ``features_from = "memory"``).
C_N_WOOD, C_N_POWER, C_FULL_SCAN, C_NEED_WOOD, C_NEED_FLAME, C_GHOSTS = range(6)

#: ``FeatureCache.ghost_sq`` rows: remembered objects out of view, by kind.
G_BOMB, G_POWER, G_ENEMY, G_RIGID, G_WOOD = range(5)
N_GHOST_KINDS = 5
#: The feature each ``G_*`` row stands in for.
GHOST_FEATURE = np.array([F_NEAR_BOMB, F_NEAR_POWERUP, F_NEAR_ENEMY, F_NEAR_RIGID, F_NEAR_WOOD],
                         dtype=np.int64)


class FeatureCache(NamedTuple):
    """Per-decision lookup data for :func:`cached_state_features`.

    nearest_rigid: int64[121] squared distance from each cell to the nearest
    rigid wall at the root (-1: none); wood: int64[121] the first
    ``counts[C_N_WOOD]`` entries are the root's wood cells; power: int64[121]
    the first ``counts[C_N_POWER]`` entries are the cells where a power-up can
    be during the decision; nearest_wood, nearest_power: int64[121] the nearest
    of those cells to each cell (-1: none); counts: int64[5] (``C_FULL_SCAN`` = 1: cache off;
    ``C_NEED_WOOD`` / ``C_NEED_FLAME``: whether those features are computed;
    ``C_GHOSTS`` = 1: ``ghost_sq`` is in use); ghost_sq: int64[5, 121], row
    ``G_*``: the squared distance from each cell to the nearest remembered object
    of that kind that the decision's observation does not show (-1: none; filled
    by :func:`agents.pommerman.fog_memory.remember`, which sets ``C_GHOSTS``).
    A remembered object is a fixed point for the whole decision: a closeness
    feature is that of the nearer of the searched state's nearest object and
    the nearest remembered one.
    """

    nearest_rigid: np.ndarray
    wood: np.ndarray
    power: np.ndarray
    counts: np.ndarray
    nearest_wood: np.ndarray
    nearest_power: np.ndarray
    ghost_sq: np.ndarray


def new_feature_cache() -> FeatureCache:
    """An empty cache (its ``C_FULL_SCAN`` is set until :func:`prepare_feature_cache`; no ghosts)."""
    counts = np.zeros(6, dtype=np.int64)
    counts[C_FULL_SCAN] = 1
    return FeatureCache(np.full(N_CELLS, -1, dtype=np.int64), np.zeros(N_CELLS, dtype=np.int64),
                        np.zeros(N_CELLS, dtype=np.int64), counts,
                        np.full(N_CELLS, -1, dtype=np.int64), np.full(N_CELLS, -1, dtype=np.int64),
                        np.full((N_GHOST_KINDS, N_CELLS), -1, dtype=np.int64))


@nb.njit(cache=True)
def merge_ghosts(features, ghost_sq, here, absent):
    """Fold the remembered objects into ``features`` (float64[8]) computed for the
    cell ``here`` with an absent value of 0 (so 0 means "none"): each ``G_*``
    feature becomes the closeness of the nearer of the two; then 0 becomes
    ``absent``. The full-scan path of a decision with ghosts."""
    for k in range(N_GHOST_KINDS):
        g = ghost_sq[k, here]
        if g >= 0:
            f = GHOST_FEATURE[k]
            features[f] = max(features[f], CLOSENESS[g])
    for f in range(F_NEAR_BOMB, N_FEATURES):
        if features[f] == 0.0:
            features[f] = absent


@nb.njit(cache=True)
def collapse_within(root, horizon):
    """Whether a board collapse tick (java: 500, 575, 650, 725) falls among the
    ``horizon`` ticks simulated from ``root`` (ticks step .. step + horizon - 1)."""
    if root.meta[M_COLLAPSE] == 0:
        return False
    step = root.meta[M_STEP]
    for k in range(4):
        tick = COLLAPSE_START + k * COLLAPSE_STEP
        if step <= tick < step + horizon:
            return True
    return False


@nb.njit(cache=True)
def prepare_feature_cache(cache, root, horizon, feature_index):
    """Fill ``cache`` from the search root ``root`` (a PommermanState) for
    rollouts reaching ``horizon`` ticks past it (the rollout depth), computing
    the features in ``feature_index`` (int64[F]; ``ALL_FEATURES`` for all)."""
    counts = cache.counts
    counts[C_NEED_WOOD] = 0
    counts[C_NEED_FLAME] = 0
    for j in range(feature_index.shape[0]):
        if feature_index[j] == F_NEAR_WOOD:
            counts[C_NEED_WOOD] = 1
        elif feature_index[j] == F_NEAR_FLAME:
            counts[C_NEED_FLAME] = 1
    counts[C_FULL_SCAN] = 1 if collapse_within(root, horizon) else 0
    n_wood = 0
    n_power = 0
    for c in range(N_CELLS):
        v = root.board[c]
        if v == WOOD:
            cache.wood[n_wood] = c
            n_wood += 1
        if v == EXTRA_BOMB or v == INCR_RANGE or v == KICK or root.items[c] != 0:
            cache.power[n_power] = c
            n_power += 1
    counts[C_N_WOOD] = n_wood
    counts[C_N_POWER] = n_power
    rigid = np.empty(N_CELLS, dtype=np.int64)
    n_rigid = 0
    for c in range(N_CELLS):
        if root.board[c] == RIGID:
            rigid[n_rigid] = c
            n_rigid += 1
    for c in range(N_CELLS):
        r0 = c // BOARD_SIZE
        c0 = c % BOARD_SIZE
        best = -1
        for k in range(n_rigid):
            dr = rigid[k] // BOARD_SIZE - r0
            dc = rigid[k] % BOARD_SIZE - c0
            d2 = dr * dr + dc * dc
            if best < 0 or d2 < best:
                best = d2
        cache.nearest_rigid[c] = best
    # np.int64(): the counts start as the literal 0, and numba would compile _nearest_cells
    # for Literal[int](0) as well as for int64
    _nearest_cells(cache.wood, np.int64(n_wood), cache.nearest_wood)
    _nearest_cells(cache.power, np.int64(n_power), cache.nearest_power)


@nb.njit(cache=True)
def _nearest_cells(cells, n, nearest):
    """For every board cell, the entry of ``cells[:n]`` nearest to it (first on ties), or -1."""
    for c in range(N_CELLS):
        r0 = c // BOARD_SIZE
        c0 = c % BOARD_SIZE
        best, best_cell = -1, -1
        for k in range(n):
            dr = cells[k] // BOARD_SIZE - r0
            dc = cells[k] % BOARD_SIZE - c0
            d2 = dr * dr + dc * dc
            if best < 0 or d2 < best:
                best, best_cell = d2, cells[k]
        nearest[c] = best_cell
