"""FEMCTS's rollout policy: the evolved default policy D(W) of
:mod:`agents.pommerman.femcts` played from a tree leaf.

D(W) is a softmax over effective actions of W @ f(state) (the features of
:mod:`agents.pommerman.features`, or the constant 1 when unfeatured); an
effective action that stands for several real ones ("move", "movement") is
played as a random safe move (:func:`safe_move_on`). :func:`policy_action` draws
one action, :func:`evolved_rollout` plays a whole rollout (the features and the
softmax written out in its loop, for speed), :func:`rollout_features` computes
the features as the rollouts see them.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.rng import rng_integer, rng_uniform
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_VISIBLE, ACTION_DCOL, ACTION_DROW, B_COL,
    B_ROW, BOARD_SIZE, EXTRA_BOMB, FLAME_MASK, FLAMES, FOG, INCR_RANGE, KICK, LAY_BOMB, M_MODE,
    M_N_BOMBS, MODE_TEAM, N_AGENTS, RIGID, STATE_RULESET, STOP, WOOD, drop_lowest, first_cell,
)

from ..evolution import policy_probabilities, sample_index
from ._common import advance, search_over
from .features import (
    ALL_FEATURES, C_FULL_SCAN, C_GHOSTS, C_N_POWER, C_N_WOOD, C_NEED_FLAME, C_NEED_WOOD,
    F_BOMB_STRENGTH, F_CAN_KICK, F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_FLAME, F_NEAR_POWERUP,
    F_NEAR_RIGID, F_NEAR_WOOD, FAR_SQ, G_BOMB, G_ENEMY, G_POWER, G_RIGID, G_WOOD, MAX_BLAST,
    closeness_or_far, closeness_or_none, merge_ghosts, state_features,
)


class RolloutPolicy(NamedTuple):
    """What the evolved policy D(W) is besides an individual's weights W (fixed per agent:
    built once by :class:`~agents.pommerman.femcts.FEMCTSAgent`).

    Fields:
        feature_index: int64[F] indices into the 8 state features; empty = unfeatured (F = 1,
            the constant feature 1).
        scale, offset: float64[A], the softmax's weighting of the effective actions (see
            :func:`agents.evolution.policy_probabilities` and ``move_weighting``).
        n_effective: int, A: 6, 3 or 2 effective actions.
        fog_blocks: bool, unseen cells are not safe moves (``fog_moves``; see :func:`safe_move_on`).
        absent: float, the closeness feature of an object not on the searched board
            (``absent_closeness``).
    """

    feature_index: np.ndarray
    scale: np.ndarray
    offset: np.ndarray
    n_effective: int
    fog_blocks: bool
    absent: float


@nb.njit(cache=True, inline="always")
def _open_for_move(board, row, col, a, fog_blocks):
    """Whether action ``a``'s target cell from (row, col) is on the board and not
    rigid, wood or flames (nor fog, if ``fog_blocks``). Stop's target is the
    agent's own cell, which is never fog."""
    r = row + ACTION_DROW[a]
    c = col + ACTION_DCOL[a]
    if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE:
        v = board[r * BOARD_SIZE + c]
        return v != RIGID and v != WOOD and v != FLAMES and not (fog_blocks and v == FOG)
    return False


@nb.njit(cache=True)
def safe_move_on(board, row, col, include_stop, rng, fog_blocks=False):
    """A random direction (or stop, if ``include_stop``) from (row, col) whose
    target cell is on the board and not rigid, wood or flames, nor an unseen
    (FOG) cell if ``fog_blocks``; stop if none is.

    Args: board: int8[121]; row, col: int; include_stop: bool; rng: uint64[2];
    fog_blocks: bool (``FEMCTSConfig.fog_moves == "blocked"``; on a board
    without fog it changes nothing).
    Uniform over the open options in action order: one draw of
    ``rng_integer(rng, n)``, none when no option is open. No allocation: this
    runs at most rollout steps of FEMCTS with three or two effective actions.
    """
    first = 0 if include_stop else 1
    n = 0
    for a in range(first, 5):
        if _open_for_move(board, row, col, a, fog_blocks):
            n += 1
    if n == 0:
        return STOP
    k = rng_integer(rng, n)
    for a in range(first, 5):
        if _open_for_move(board, row, col, a, fog_blocks):
            if k == 0:
                return a
            k -= 1
    return STOP


@nb.njit(cache=True, inline="always")
def _draw_effective(weights, features, scale, offset, probabilities, rng):
    """An effective action drawn from softmax(scale * W f + offset)."""
    policy_probabilities(weights, features, scale, offset, probabilities)
    return sample_index(probabilities, rng)


@nb.njit(cache=True, inline="always")
def _effective_to_real(state, player, n_effective, e, rng, fog_blocks):
    """The real action for effective action ``e`` (a random safe move for "move" / "movement")."""
    if n_effective == 6:
        return e
    if e == 0:  # "move" (nEA = 3, four directions) or "movement" (nEA = 2, and stop)
        return safe_move_on(state.board, state.agents[player, A_ROW], state.agents[player, A_COL],
                            n_effective == 2, rng, fog_blocks)
    if n_effective == 3:
        return STOP if e == 1 else LAY_BOMB
    return LAY_BOMB


@nb.njit(cache=True)
def policy_action(state, player, weights, policy, feature_cache, all_features, features, probabilities,
                  rng):
    """A real action drawn from the evolved policy of one individual in ``state``
    (what :func:`evolved_rollout` plays at each step).

    Args:
        weights: float64[A, F] (F = len(policy.feature_index), or 1 when unfeatured).
        policy: :class:`RolloutPolicy`, the rest of the policy.
        feature_cache: FeatureCache prepared from the decision's root.
        all_features: float64[8], features: float64[F], probabilities: float64[A]: scratch.
    """
    feature_index, n_effective, absent = policy.feature_index, policy.n_effective, policy.absent
    if feature_index.shape[0] > 0:
        rollout_features(state, player, feature_cache, all_features, absent)
        for j in range(feature_index.shape[0]):
            features[j] = all_features[feature_index[j]]
    else:
        features[0] = 1.0
    e = _draw_effective(weights, features, policy.scale, policy.offset, probabilities, rng)
    return _effective_to_real(state, player, n_effective, e, rng, policy.fog_blocks)


@nb.njit(cache=True, inline="always")
def evolved_rollout(state, player, depth, rollout_depth, weights, policy, feature_cache, all_features,
                    features, probabilities, joint, hidden, n_hidden, rng, features_only=False,
                    quirks=0, ruleset=STATE_RULESET):
    """Play the evolved policy (opponents random) from ``depth`` to ``rollout_depth`` ticks.

    Args: those of :func:`policy_action`, plus
    ``joint``, ``hidden``, ``n_hidden`` of :func:`~agents.pommerman._common.advance`;
    ``quirks``: ``QUIRK_STOP_AT_OWN_END`` stops the rollout when ``player``'s
    result is decided (``_common.search_over``; FEMCTS's ``mcts_switches``);
    ``ruleset``: as for :func:`~agents.pommerman._common.advance` (a constant in
    the decision kernels, so each compiles only its own rules).
    Returns: the depth reached (int).

    ``features_only``: compute the features of ``state`` into ``all_features``
    and return without playing (:func:`rollout_features`).

    The features come from the decision's ``feature_cache`` (see
    :mod:`agents.pommerman.features`; the same values as
    :func:`~agents.pommerman.features.state_features`, which runs instead when
    the cache is off), and from the remembered objects of the cache's
    ``ghost_sq`` when its ``C_GHOSTS`` is set (FEMCTS's ``features_from =
    "memory"``: each closeness feature is that of the nearer of the state's
    object and the remembered one). Their code is written out in the loop, over arrays taken
    out of ``state`` and the cache once per rollout: Numba updates an array's
    reference count whenever one is bound to a (even inlined) function's
    argument, and at eleven arrays per step that cost more than the features.
    """
    feature_index, scale, offset = policy.feature_index, policy.scale, policy.offset
    n_effective, fog_blocks, absent = policy.n_effective, policy.fog_blocks, policy.absent
    n_features = feature_index.shape[0]
    cached = n_features > 0 and feature_cache.counts[C_FULL_SCAN] == 0
    agents, board, bombs, flames, meta = state.agents, state.board, state.bombs, state.flames, state.meta
    counts, nearest_rigid = feature_cache.counts, feature_cache.nearest_rigid
    wood_cells, power_cells = feature_cache.wood, feature_cache.power
    nearest_wood, nearest_power = feature_cache.nearest_wood, feature_cache.nearest_power
    need_wood = counts[C_NEED_WOOD] != 0
    need_flame = counts[C_NEED_FLAME] != 0
    ghosts = counts[C_GHOSTS] != 0
    ghost_sq = feature_cache.ghost_sq
    team = meta[M_MODE] == MODE_TEAM
    mate = (player + 2) % 4 if team else -1
    n_actions, features_per_action = weights.shape
    while features_only or (depth < rollout_depth and not search_over(state, player, quirks)):
        if cached:
            pr = np.int64(agents[player, A_ROW])
            pc = np.int64(agents[player, A_COL])
            here = pr * BOARD_SIZE + pc
            strength = agents[player, A_BLAST] * agents[player, A_AMMO] / (2.0 * MAX_BLAST)
            all_features[F_BOMB_STRENGTH] = min(strength, 1.0)
            all_features[F_CAN_KICK] = 1.0 if agents[player, A_KICK] else 0.0
            # wood and power-ups only disappear during a decision (power-ups also
            # appear, but only on the cache's candidate cells): the root's nearest
            # one, if still there, is still the nearest
            best_wood = FAR_SQ
            if need_wood:
                c = nearest_wood[here]
                if c >= 0 and board[c] == WOOD:
                    dr, dc = c // BOARD_SIZE - pr, c % BOARD_SIZE - pc
                    best_wood = dr * dr + dc * dc
                else:
                    for k in range(counts[C_N_WOOD]):
                        c = wood_cells[k]
                        if board[c] == WOOD:
                            dr, dc = c // BOARD_SIZE - pr, c % BOARD_SIZE - pc
                            best_wood = min(best_wood, dr * dr + dc * dc)
            best_power = FAR_SQ
            c = nearest_power[here]
            if c >= 0 and (board[c] == EXTRA_BOMB or board[c] == INCR_RANGE or board[c] == KICK):
                dr, dc = c // BOARD_SIZE - pr, c % BOARD_SIZE - pc
                best_power = dr * dr + dc * dc
            else:
                for k in range(counts[C_N_POWER]):
                    c = power_cells[k]
                    v = board[c]
                    if v == EXTRA_BOMB or v == INCR_RANGE or v == KICK:
                        dr, dc = c // BOARD_SIZE - pr, c % BOARD_SIZE - pc
                        best_power = min(best_power, dr * dr + dc * dc)
            best_bomb = FAR_SQ
            for b in range(meta[M_N_BOMBS]):
                dr, dc = np.int64(bombs[b, B_ROW]) - pr, np.int64(bombs[b, B_COL]) - pc
                best_bomb = min(best_bomb, dr * dr + dc * dc)
            best_flame = FAR_SQ
            if need_flame:
                for w in range(2):  # the cells holding flames (their marks)
                    bits = flames[FLAME_MASK + w]
                    while bits:
                        fc = w * 64 + first_cell(bits)
                        bits = drop_lowest(bits)
                        dr, dc = fc // BOARD_SIZE - pr, fc % BOARD_SIZE - pc
                        best_flame = min(best_flame, dr * dr + dc * dc)
            best_enemy = FAR_SQ
            for i in range(N_AGENTS):
                if i != player and i != mate and agents[i, A_ALIVE] and agents[i, A_VISIBLE]:
                    dr, dc = np.int64(agents[i, A_ROW]) - pr, np.int64(agents[i, A_COL]) - pc
                    best_enemy = min(best_enemy, dr * dr + dc * dc)
            best_rigid = nearest_rigid[here]
            if ghosts:  # remembered objects out of view (-1: none of that kind)
                g = ghost_sq[G_BOMB, here]
                if g >= 0:
                    best_bomb = min(best_bomb, g)
                g = ghost_sq[G_POWER, here]
                if g >= 0:
                    best_power = min(best_power, g)
                g = ghost_sq[G_ENEMY, here]
                if g >= 0:
                    best_enemy = min(best_enemy, g)
                g = ghost_sq[G_WOOD, here]
                if g >= 0 and need_wood:
                    best_wood = min(best_wood, g)
                g = ghost_sq[G_RIGID, here]
                if g >= 0 and (best_rigid < 0 or g < best_rigid):
                    best_rigid = g
            all_features[F_NEAR_BOMB] = closeness_or_far(best_bomb, absent)
            all_features[F_NEAR_POWERUP] = closeness_or_far(best_power, absent)
            all_features[F_NEAR_ENEMY] = closeness_or_far(best_enemy, absent)
            all_features[F_NEAR_RIGID] = closeness_or_none(best_rigid, absent)
            all_features[F_NEAR_FLAME] = closeness_or_far(best_flame, absent)
            all_features[F_NEAR_WOOD] = closeness_or_far(best_wood, absent)
        elif n_features > 0:
            if ghosts:
                state_features(state, player, all_features, 0.0)
                merge_ghosts(all_features, ghost_sq,
                             np.int64(agents[player, A_ROW]) * BOARD_SIZE + np.int64(agents[player, A_COL]),
                             absent)
            else:
                state_features(state, player, all_features, absent)
        if features_only:
            return depth
        # the policy: softmax over effective actions of scale * W f + offset, then
        # one draw (the arithmetic of evolution.policy_probabilities and
        # sample_index, written out for the reason above)
        if n_features == 0:
            features[0] = 1.0
        else:
            for j in range(n_features):
                features[j] = all_features[feature_index[j]]
        for a in range(n_actions):
            z = 0.0
            for j in range(features_per_action):
                z += weights[a, j] * features[j]
            probabilities[a] = z
        top = -1e300
        for a in range(n_actions):
            z = scale[a] * probabilities[a] + offset[a]
            probabilities[a] = z
            if z > top:
                top = z
        total = 0.0
        for a in range(n_actions):
            probabilities[a] = np.exp(probabilities[a] - top)
            total += probabilities[a]
        for a in range(n_actions):
            probabilities[a] /= total
        u = rng_uniform(rng)
        e = n_actions - 1
        acc = 0.0
        for a in range(n_actions):
            acc += probabilities[a]
            if u < acc:
                e = a
                break
        if n_effective == 6:
            action = e
        elif e == 0:  # "move" (nEA = 3) or "movement" (nEA = 2)
            action = safe_move_on(board, agents[player, A_ROW], agents[player, A_COL],
                                  n_effective == 2, rng, fog_blocks)
        elif n_effective == 3:
            action = STOP if e == 1 else LAY_BOMB
        else:
            action = LAY_BOMB
        advance(state, player, action, joint, hidden, n_hidden, rng, ruleset)
        depth += 1
    return depth


@nb.njit(cache=True)
def rollout_features(state, player, feature_cache, out, absent=0.0):
    """The eight features of ``state`` for ``player`` (float64[8] ``out``) as
    FEMCTS's rollouts compute them: from ``feature_cache``, prepared by
    :func:`~agents.pommerman.features.prepare_feature_cache` from the root
    ``state`` descends from, for the features it was prepared for (the others
    0); the full board scan when the cache is off. Equal to
    :func:`~agents.pommerman.features.state_features` (tested). ``absent``:
    the closeness of an object not on the board (``absent_closeness``)."""
    no_hidden = np.zeros(N_AGENTS, dtype=np.bool_)
    policy = RolloutPolicy(ALL_FEATURES, np.ones(1), np.zeros(1), np.int64(6), False, np.float64(absent))
    evolved_rollout(state, player, 0, 0, np.zeros((1, 1)), policy, feature_cache, out, np.zeros(1),
                    np.zeros(1), np.zeros(N_AGENTS, dtype=np.int64), no_hidden, 0,
                    np.zeros(2, dtype=np.uint64), True)
