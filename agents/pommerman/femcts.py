"""Fast Evolutionary MCTS (FEMCTS) for Pommerman: MCTS whose rollout policy is
evolved online by a population of weight matrices.

Per decision, within the budget::

    while within budget:
        for individual in population:
            for i in 1..L:                      # L rollouts per fitness evaluation
                v_l = tree_policy(v_0)
                delta = default_policy(v_l, D(w_individual))
                backup(v_l, delta)
            fitness(individual) = mean delta
        evolve(population)                      # only after a complete generation
    return the most visited root action (``recommendation``: or the best mean)

The tree policy, backup and recommendation are the shared MCTS ones
(:mod:`agents.search`, :mod:`agents.pommerman.mcts`); only the default policy
differs: D(W) = softmax over effective actions of W @ f(state), with f the
features of :mod:`agents.pommerman.features` (or the constant 1 when
unfeatured). Effective actions:

- ``n_effective = 6``: the six real actions;
- ``n_effective = 3``: move, stop, bomb; "move" counts for the four directions
  and, when drawn, moves in a random safe direction;
- ``n_effective = 2``: movement (the four directions and stop; drawn as a
  random safe movement) and bomb.

A "safe" direction's target cell is on the board and not rigid, wood or
flames; under partial observability ``fog_moves`` says whether an unseen
(FOG) cell counts (``blocked``, the java profile's default: it does not, as
in the Java framework's passability test; ``open``: it does). See
jobs/femcts/FINDINGS.md, "FEMCTS under fog", for how each piece sees fog.

How "move" (4 directions) and "movement" (5) are weighted is
``move_weighting``: ``multiply`` (default, the paper's text: the action's
``W.f`` is multiplied by 4 or 5 before the softmax; at zero weights the three
nEA = 3 actions are equally likely, so rollouts bomb a third of the time) or
``log_count`` (Arena's earlier reading: log 4 or log 5 added to the logit,
i.e. the softmax term multiplied by the count; at zero weights a sixth).

Features come from a per-decision cache (:mod:`agents.pommerman.features`;
the same values as the full board scan), read in :func:`evolved_rollout`.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

import numba as nb
import numpy as np
from pydantic import Field, model_validator

from games.rng import rng_integer, rng_uniform
from games.validation import Real, config_class, one_of
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_VISIBLE, ACTION_DCOL, ACTION_DROW, B_COL,
    B_ROW, BOARD_SIZE, EXTRA_BOMB, FLAME_MASK, FLAMES, FOG, INCR_RANGE, KICK, LAY_BOMB, M_MODE,
    M_N_BOMBS, M_RULESET, M_STEP, MODE_TEAM, N_ACTIONS, N_AGENTS, RIGID, RULESET_CANONICAL,
    RULESET_JAVA, STATE_RULESET, STOP, WOOD, borrowed_state, copy_into, drop_lowest, first_cell,
    require_layout_shapes,
)

from ..api import Budget
from ..evolution import (
    MUTATE_PER_ACTION, MUTATE_SHARED_FEATURES, evolve, normalise_rows, policy_probabilities,
    sample_index,
)
from ..registry import register
from ..search import (
    ROOT_INDEX, backup, borrowed_tree, budget_exhausted, deadline_ns, monotonic_ns,
    new_tree, recommend_root_action, reset_tree, root_child_value, SearchConfig,
)
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import (
    QUIRK_STOP_AT_OWN_END, QUIRK_TIE_DEATH_SCORED, advance, prepare_search_in_frame, search_over,
    search_value,
)
from .mcts import tree_policy
from .features import (
    ALL_FEATURES, C_FULL_SCAN, C_GHOSTS, C_N_POWER, C_N_WOOD, C_NEED_FLAME, C_NEED_WOOD,
    F_BOMB_STRENGTH, F_CAN_KICK, F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_FLAME, F_NEAR_POWERUP,
    F_NEAR_RIGID, F_NEAR_WOOD, FAR_SQ, G_BOMB, G_ENEMY, G_POWER, G_RIGID, G_WOOD, MAX_BLAST,
    N_FEATURES, SUBSET_NEA2, closeness_or_far, closeness_or_none, merge_ghosts, new_feature_cache,
    prepare_feature_cache, state_features,
)
from .fog_memory import GHOST_KINDS, new_fog_memory, remember


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
def policy_action(state, player, weights, feature_index, scale, offset, n_effective,
                  feature_cache, all_features, features, probabilities, rng, fog_blocks=False,
                  absent=0.0):
    """A real action drawn from the evolved policy of one individual in ``state``
    (what :func:`evolved_rollout` plays at each step).

    Args:
        weights: float64[A, F] (F = len(feature_index), or 1 when unfeatured).
        feature_index: int64[F] indices into the 8 state features; empty = unfeatured.
        scale, offset: float64[A] (see :func:`agents.evolution.policy_probabilities`);
        n_effective: 6, 3 or 2.
        feature_cache: FeatureCache prepared from the decision's root.
        all_features: float64[8], features: float64[F], probabilities: float64[A]: scratch.
        fog_blocks: bool, unseen cells are not safe moves (``fog_moves``).
        absent: float, the closeness feature of an object not on the searched
            board (``absent_closeness``).
    """
    if feature_index.shape[0] > 0:
        rollout_features(state, player, feature_cache, all_features, absent)
        for j in range(feature_index.shape[0]):
            features[j] = all_features[feature_index[j]]
    else:
        features[0] = 1.0
    e = _draw_effective(weights, features, scale, offset, probabilities, rng)
    return _effective_to_real(state, player, n_effective, e, rng, fog_blocks)


@nb.njit(cache=True, inline="always")
def evolved_rollout(state, player, depth, rollout_depth, weights, feature_index, scale, offset,
                    n_effective, feature_cache, all_features, features, probabilities, joint,
                    hidden, n_hidden, rng, features_only=False, fog_blocks=False, absent=0.0,
                    quirks=0, ruleset=STATE_RULESET):
    """Play the evolved policy (opponents random) from ``depth`` to ``rollout_depth`` ticks.

    Args: those of :func:`policy_action` (``fog_blocks``, ``absent`` too), plus
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
    evolved_rollout(state, player, 0, 0, np.zeros((1, 1)), ALL_FEATURES, np.ones(1), np.zeros(1),
                    6, feature_cache, out, np.zeros(1), np.zeros(1),
                    np.zeros(N_AGENTS, dtype=np.int64), no_hidden, 0, np.zeros(2, dtype=np.uint64),
                    True, False, absent)


@nb.njit(cache=True, inline="always")
def femcts_search(observation, player, tree, root, scratch, max_iterations, time_limit,
                  exploration, epsilon, rollout_depth,
                  population, fitness, population_scratch, feature_index, scale, offset,
                  n_effective, feature_cache, evolution, discount, rng, quirks, max_wood, fog_blocks,
                  absent, search_quirks, best_mean, ruleset):
    """One FEMCTS decision; evolves ``population`` in place.

    Args:
        observation: PommermanState (unchanged); player: int.
        tree: Tree with 6 actions; root, scratch: preallocated PommermanStates.
        max_iterations: int (rollouts); time_limit: float seconds (0 = none).
        exploration, epsilon: UCT constants; rollout_depth: ticks from the root.
        population: float64[P, A, F]; fitness: float64[P] (written);
        population_scratch: float64[P, A, F].
        feature_index: int64[F] (empty: unfeatured, F = 1); scale, offset: float64[A]
        (the softmax's weighting of effective actions, see ``move_weighting``).
        n_effective: A (6, 3 or 2); feature_cache: FeatureCache (refilled here);
        evolution: the tuple (rollouts_per_individual: L, elite_count: E, tournament_size,
        mutation_probability: mP, mutation_strength: mS, positive_bias: probability a
        mutation adds, mutation_variant: MUTATE_PER_ACTION / MUTATE_SHARED_FEATURES,
        keep_positive: clip weights at 0, normalise: rows to unit norm after evolving)
        (a tuple: CPython passes a call of more than 30 arguments as ``*args``, which
        numba's inliner refuses; :func:`femcts_decide_canonical` and
        :func:`femcts_decide_java` take them one by one).
        discount: lambda; the backed-up value is heuristic * lambda**depth (1 = none).
        rng: uint64[2].
        quirks, max_wood: the profile's switches (``_common.prepare_search``).
        fog_blocks: bool, unseen cells are not safe moves (``fog_moves``);
        absent: float, closeness of an object not on the board (``absent_closeness``).
        search_quirks: ``QUIRK_STOP_AT_OWN_END`` / ``QUIRK_TIE_DEATH_SCORED`` bits
            taken in the tree, the rollouts and the value (``mcts_switches``).
        best_mean: play the root child with the best mean value instead of the
            most visited one (``recommendation``).
        ruleset: RULESET_CANONICAL or RULESET_JAVA, the observation's (a constant in
            :func:`femcts_decide_canonical` and :func:`femcts_decide_java`, which
            inline this: each compiles only its own rules; :func:`femcts_decide`
            picks one by the observation).
    Returns:
        (action, iterations, generations, ticks): int64 x 4; ``ticks`` is the
        forward-model ticks simulated (tree descent and rollouts), which is what
        the budget calibration compares with MCTS.

    A generation is P x L iterations (each individual's L rollouts, its fitness
    the mean of their L backed-up values); the population evolves only after a
    complete generation, so an iteration budget of N gives N // (P L) generations.
    """
    (rollouts_per_individual, elite_count, tournament_size, mutation_probability, mutation_strength,
     positive_bias, mutation_variant, keep_positive, normalise) = evolution
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    # borrowed views (no reference counts) of the agent's tree and states for the loop
    tree = borrowed_tree(tree)
    root = borrowed_state(root)
    scratch = borrowed_state(scratch)
    require_layout_shapes(scratch)  # once per decision: advance steps it unchecked
    hidden, joint, n_hidden, root_wood, rng = prepare_search_in_frame(root, observation, rng, quirks,
                                                                      max_wood)
    if feature_index.shape[0] > 0:
        prepare_feature_cache(feature_cache, root, rollout_depth, feature_index)
    reset_tree(tree)
    root_step = root.meta[M_STEP]
    ticks = 0
    P = population.shape[0]
    all_features = np.zeros(N_FEATURES, dtype=np.float64)
    features = np.zeros(population.shape[2], dtype=np.float64)
    probabilities = np.zeros(population.shape[1], dtype=np.float64)
    iterations = 0
    generations = 0
    out_of_budget = False
    while not out_of_budget:
        for p in range(P):
            total = 0.0
            for _ in range(rollouts_per_individual):
                out_of_budget = budget_exhausted(iterations, max_iterations, start, deadline)
                if out_of_budget:
                    break
                copy_into(scratch, root)
                leaf = tree_policy(tree, scratch, player, rollout_depth, exploration, epsilon,
                                   joint, hidden, n_hidden, rng, search_quirks, ruleset)
                depth = evolved_rollout(scratch, player, tree.depth[leaf], rollout_depth,
                                        population[p], feature_index, scale, offset, n_effective,
                                        feature_cache, all_features, features, probabilities,
                                        joint, hidden, n_hidden, rng, False, fog_blocks, absent,
                                        search_quirks, ruleset)
                ticks += scratch.meta[M_STEP] - root_step
                value = search_value(root, root_wood, scratch, player, search_quirks)
                if discount != 1.0:
                    value *= discount ** depth
                backup(tree, leaf, value)
                total += value
                iterations += 1
            if out_of_budget:
                break
            fitness[p] = total / rollouts_per_individual
        if out_of_budget:
            break
        evolve(population, fitness, elite_count, tournament_size, mutation_probability,
               mutation_strength, positive_bias, mutation_variant, keep_positive,
               population_scratch, rng)
        if normalise:
            for p in range(P):
                normalise_rows(population[p])
        generations += 1
    action = recommend_root_action(tree, best_mean, epsilon, rng)
    if action < 0:  # no expanded child (best_mean only; most visited returns 0 then)
        action = STOP
    return action, iterations, generations, ticks


@nb.njit(cache=True)
def femcts_decide_canonical(observation, player, tree, root, scratch, max_iterations, time_limit,
                            exploration, epsilon, rollout_depth,
                            population, fitness, population_scratch, feature_index, scale, offset,
                            n_effective, feature_cache, rollouts_per_individual, elite_count, tournament_size,
                            mutation_probability, mutation_strength, positive_bias, mutation_variant,
                            keep_positive, normalise, discount, rng, quirks=0, max_wood=0, fog_blocks=False,
                            absent=0.0, search_quirks=0, best_mean=False):
    """:func:`femcts_search` for an observation of the canonical ruleset."""
    return femcts_search(observation, player, tree, root, scratch, max_iterations, time_limit,
                         exploration, epsilon, rollout_depth,
                         population, fitness, population_scratch, feature_index, scale, offset,
                         n_effective, feature_cache,
                         (rollouts_per_individual, elite_count, tournament_size, mutation_probability,
                          mutation_strength, positive_bias, mutation_variant, keep_positive, normalise),
                         discount, rng, quirks, max_wood, fog_blocks, absent, search_quirks, best_mean,
                         RULESET_CANONICAL)


@nb.njit(cache=True)
def femcts_decide_java(observation, player, tree, root, scratch, max_iterations, time_limit,
                       exploration, epsilon, rollout_depth,
                       population, fitness, population_scratch, feature_index, scale, offset,
                       n_effective, feature_cache, rollouts_per_individual, elite_count, tournament_size,
                       mutation_probability, mutation_strength, positive_bias, mutation_variant,
                       keep_positive, normalise, discount, rng, quirks=0, max_wood=0, fog_blocks=False,
                       absent=0.0, search_quirks=0, best_mean=False):
    """:func:`femcts_search` for an observation of the java ruleset."""
    return femcts_search(observation, player, tree, root, scratch, max_iterations, time_limit,
                         exploration, epsilon, rollout_depth,
                         population, fitness, population_scratch, feature_index, scale, offset,
                         n_effective, feature_cache,
                         (rollouts_per_individual, elite_count, tournament_size, mutation_probability,
                          mutation_strength, positive_bias, mutation_variant, keep_positive, normalise),
                         discount, rng, quirks, max_wood, fog_blocks, absent, search_quirks, best_mean,
                         RULESET_JAVA)


#: The decision kernel by the observation's ruleset (``meta[M_RULESET]``): each compiles
#: only its own rules (seconds on a fresh numba cache; before the split FEMCTS compiled both).
FEMCTS_DECIDE = {RULESET_CANONICAL: femcts_decide_canonical, RULESET_JAVA: femcts_decide_java}


def femcts_decide(observation, *args, **kwargs):
    """One FEMCTS decision (:func:`femcts_search`) by the kernel of the observation's
    ruleset (:data:`FEMCTS_DECIDE`); arguments and result those of :func:`femcts_search`."""
    return FEMCTS_DECIDE[int(observation.meta[M_RULESET])](observation, *args, **kwargs)


# --------------------------------------------------------------------- the agent
MUTATION_VARIANTS = {"per_action": MUTATE_PER_ACTION, "shared": MUTATE_SHARED_FEATURES}
#: How an effective action standing for k real actions is weighted in the softmax.
MOVE_WEIGHTINGS = ("multiply", "log_count")
#: Which of the java MCTS's search switches FEMCTS's own search takes (``FEMCTSConfig.mcts_switches``).
MCTS_SWITCHES = ("off", "java")
#: Which root child FEMCTS plays (``FEMCTSConfig.recommendation``).
RECOMMENDATIONS = ("most_visited", "best_mean")
#: How "move" / "movement" treats unseen (FOG) cells (``FEMCTSConfig.fog_moves``).
FOG_MOVES = ("auto", "blocked", "open")
#: What the rollout features see under fog (``FEMCTSConfig.features_from``).
FEATURE_SOURCES = ("observation", "memory")


def resolve_fog_moves(fog_moves: str, profile: str) -> str:
    """``blocked`` or ``open`` for a config's ``fog_moves`` and the agent's
    resolved profile: ``auto`` is ``blocked`` with the ``java`` profile (the
    framework's passability test, see jobs/femcts/FINDINGS.md, "FEMCTS under
    fog"), ``open`` with ``arena``."""
    if fog_moves == "auto":
        return "blocked" if profile == "java" else "open"
    return fog_moves


@config_class
class FEMCTSConfig(PommermanSearchConfig, SearchConfig):
    """Fast Evolutionary MCTS (defaults of the FEMCTS study)."""

    featured: bool = True
    """Weights over state features (a matrix per individual); False: one weight per action."""
    n_effective: Literal[6, 3, 2] = 6
    """Effective actions: 6 (all), 3 (move, stop, bomb) or 2 (movement, bomb). Unfeatured: 6."""
    population_size: Annotated[int, Field(ge=1, le=1000)] = 10
    """P: individuals in the population."""
    elite_count: Annotated[int, Field(ge=0)] = 4
    """E: best individuals kept unchanged each generation (E <= P)."""
    rollouts_per_individual: Annotated[int, Field(ge=1, le=1000)] = 4
    """L: rollouts per fitness evaluation of an individual."""
    mutation_probability: Annotated[Real, Field(ge=0, le=1)] = 0.2
    """mP: probability that a weight is mutated."""
    mutation_strength: Annotated[Real, Field(ge=0, le=100)] = 0.01
    """mS: a mutation moves a weight by up to this amount."""
    mutation_variant: Annotated[str, one_of(MUTATION_VARIANTS)] = "per_action"
    """``per_action`` (each action its own random set of features) or ``shared``
    (one random set of features for all actions; the study's final experiments)."""
    move_weighting: Annotated[str, one_of(MOVE_WEIGHTINGS)] = "multiply"
    """How "move" (nEA = 3, four directions) and "movement" (nEA = 2, five) are
    weighted: ``multiply`` (the paper: their W.f is multiplied by 4 / 5 before the
    softmax) or ``log_count`` (log 4 / log 5 added to their logit). nEA = 6: unused."""
    positive_bias: Annotated[Real, Field(ge=0, le=1)] | None = None
    """Probability that a mutation adds; default 0.6 for n_effective = 3, else 0.5."""
    keep_positive: bool | None = None
    """Clip weights at 0; default True for n_effective = 3 (weights must stay positive)."""
    tournament_size: Annotated[int, Field(ge=1, le=100)] = 2
    """Individuals drawn per selection tournament."""
    normalise_weights: bool = False
    """Extension: scale each action's weights to unit norm after each generation."""
    discount: Annotated[Real, Field(gt=0, le=1)] = 1.0
    """Extension: back up heuristic * discount ** depth (1 = no discount)."""
    rollout_depth: Annotated[int, Field(ge=1, le=1000)] = 12
    """Ticks per iteration counted from the root (the study's runner: 12)."""
    fog_moves: Annotated[str, one_of(FOG_MOVES)] = "auto"
    """How the random safe direction of "move" (nEA = 3) and "movement" (nEA = 2)
    treats unseen cells under partial observability: ``blocked`` (a FOG cell is
    not a safe target, as the Java framework's passability test
    ``Utils.positionIsPassable`` has it: at view range 0 "movement" is stop),
    ``open`` (a FOG cell is a target like a passage; Arena's rule before issue
    27, and the forward model's, where FOG does not block); ``auto``: ``blocked``
    with the ``java`` profile, ``open`` with ``arena``. No effect at full
    observability or with nEA = 6."""
    mcts_switches: Annotated[str, one_of(MCTS_SWITCHES)] = "off"
    """Whether FEMCTS's tree, rollouts and value take two switches of the java
    profile's MCTS (``agents/pommerman/_common.py``): ``java``: an iteration
    stops as soon as the searcher's own result is decided (the framework's
    ``GameState.isTerminal`` for an agent's copy) and a searcher dead in a tie is
    scored by the heuristic, not -1, as the framework's MCTS the study built
    FEMCTS on; ``off`` (default): an iteration runs to the depth limit or the
    game's end and every death scores -1, the reading under which Arena's
    FEMCTS reproduces the study's first table. The study's code is not
    published; jobs/femcts/FINDINGS.md measures both under fog."""
    absent_closeness: Annotated[Real, Field(ge=0, le=1)] = 0.0
    """The value of a closeness feature 1 / (d + 1) whose object is not on the
    searched board (none exists, or fog hides it): 0 (d infinite; default) or,
    e.g., 1 (a nearest-object search whose best distance starts at 0)."""
    recommendation: Annotated[str, one_of(RECOMMENDATIONS)] = "most_visited"
    """The root child played: ``most_visited`` (default; the framework's MCTS,
    ``mostVisitedAction``, which the study built FEMCTS on) or ``best_mean``
    (the child with the best mean backed-up value; ties broken by the same
    noise). The study does not say which its FEMCTS took; jobs/femcts/FINDINGS.md
    ("FEMCTS under fog, second round") measures both under fog."""

    features_from: Annotated[str, one_of(FEATURE_SOURCES)] = "observation"
    """Where the rollout features' objects come from under partial observability:
    ``observation`` (default: the searched state, i.e. what the decision's
    observation shows) or ``memory`` (also what the agent remembers out of view,
    :mod:`agents.pommerman.fog_memory`: rigid walls for good, wood and power-ups
    until seen gone, enemies and bombs for ``memory_ticks`` ticks). No effect at
    full observability."""
    memory_ticks: Annotated[int, Field(ge=1, le=1000)] = 10
    """With ``features_from = "memory"``: ticks an enemy or a bomb out of view is
    remembered (a bomb also only until its timer, as last seen, runs out).
    Default 10: a bomb's whole life (the java ruleset's ``BOMB_LIFE``), so a
    seen bomb is remembered until it must have exploded; an enemy is then at
    most 10 cells from where it was seen, under the rollout horizon (12)."""

    @model_validator(mode="after")
    def _cross_field_rules(self):
        if not self.featured and self.n_effective != 6:
            raise ValueError("n_effective: the unfeatured variant has one weight per real "
                             "action (n_effective = 6)")
        if self.elite_count > self.population_size:
            raise ValueError(f"elite_count: must be an int in [0, population_size="
                             f"{self.population_size}], got {self.elite_count!r}")
        return self

    @property
    def feature_index(self) -> np.ndarray:
        if not self.featured:
            return np.zeros(0, dtype=np.int64)
        return SUBSET_NEA2.copy() if self.n_effective == 2 else ALL_FEATURES.copy()

    @property
    def population_shape(self) -> tuple[int, int, int]:
        return (self.population_size, self.n_effective, max(len(self.feature_index), 1))

    @property
    def move_count(self) -> int:
        """Real actions the first effective action stands for (4, 5, or 1 at nEA = 6)."""
        return {3: 4, 2: 5}.get(self.n_effective, 1)

    @property
    def softmax_scale(self) -> np.ndarray:
        """float64[A]: multiplies each effective action's W.f (``multiply``: the count)."""
        m = np.ones(self.n_effective)
        if self.move_weighting == "multiply":
            m[0] = float(self.move_count)
        return m

    @property
    def softmax_offset(self) -> np.ndarray:
        """float64[A]: added to each logit (``log_count``: log of the count)."""
        m = np.zeros(self.n_effective)
        if self.move_weighting == "log_count":
            m[0] = math.log(self.move_count)
        return m

    @property
    def effective_positive_bias(self) -> float:
        if self.positive_bias is not None:
            return float(self.positive_bias)
        return 0.6 if self.n_effective == 3 else 0.5

    @property
    def effective_keep_positive(self) -> bool:
        return self.keep_positive if self.keep_positive is not None else self.n_effective == 3


def validate_population(arrays: dict, config: FEMCTSConfig, source: str = "seed_population") -> np.ndarray:
    """The ``population`` array of a learned-state dict, checked against ``config``."""
    if "population" not in arrays:
        raise ValueError(f"{source}: no array named 'population' (found {sorted(arrays)})")
    pop = np.asarray(arrays["population"])
    if pop.dtype.kind != "f" or pop.shape != config.population_shape:
        raise ValueError(f"{source}: population has shape {pop.shape} and dtype {pop.dtype}; "
                         f"this FEMCTS config needs float weights of shape {config.population_shape} "
                         f"(population_size, n_effective, features)")
    if not np.isfinite(pop).all():
        raise ValueError(f"{source}: population holds NaN or infinite weights")
    return pop.astype(np.float64)


@register
class FEMCTSAgent(PommermanSearchAgent):
    """MCTS whose rollout policy is evolved online (population carried across games)."""

    name = "femcts"
    compile_seconds = 16.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents femcts,femcts,femcts,femcts)
    exports_population = True

    @classmethod
    def learns(cls, config) -> bool:
        return True  # the population evolves from game to game
    param_aliases = {"mutation_probability": "mP", "mutation_strength": "mS", "elite_count": "E",
                     "population_size": "P", "rollouts_per_individual": "L"}
    Config = FEMCTSConfig

    def __init__(self, config: FEMCTSConfig, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        self._tree = new_tree(min(max_iterations + 1, config.max_nodes), N_ACTIONS)
        self.population = np.zeros(config.population_shape)
        self.fitness = np.zeros(config.population_size)
        self._pop_scratch = np.empty_like(self.population)
        self._feature_index = config.feature_index
        self._scale = config.softmax_scale
        self._offset = config.softmax_offset
        self._feature_cache = new_feature_cache()
        self._variant = MUTATION_VARIANTS[config.mutation_variant]
        self.fog_moves = resolve_fog_moves(config.fog_moves, self.profile)
        """``blocked`` or ``open``: the resolved ``fog_moves``."""
        self._fog_blocks = self.fog_moves == "blocked"
        self.search_quirks = ((QUIRK_STOP_AT_OWN_END | QUIRK_TIE_DEATH_SCORED)
                              if config.mcts_switches == "java" else 0)
        """The ``QUIRK_*`` bits FEMCTS's tree, rollouts and value take (``mcts_switches``)."""
        self._remembers = config.features_from == "memory"
        self.memory = new_fog_memory()
        """This game's :class:`~agents.pommerman.fog_memory.FogMemory` (``features_from = "memory"``)."""
        self.remembered = np.zeros(len(GHOST_KINDS), dtype=np.int64)
        """Remembered objects out of view summed over this game's decisions, by kind (``GHOST_KINDS``)."""
        self.games_played = 0
        self.streak = 0
        self.best_streak = 0
        self.best_streak_population = self.population.copy()
        self.generations = 0
        self.ticks = 0
        """Forward-model ticks simulated in all decisions so far (budget calibration)."""

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.memory = new_fog_memory()
        self.remembered[:] = 0

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        if self._remembers:
            self.remembered += remember(self.memory, observation, self.seat, int(c.memory_ticks),
                                        self._feature_cache)
        action, iterations, generations, ticks = femcts_decide(
            observation, self.seat, self._tree, self._root, self._scratch, max_iterations, seconds,
            float(c.exploration), float(c.epsilon), int(c.rollout_depth),
            self.population, self.fitness, self._pop_scratch, self._feature_index,
            self._scale, self._offset, int(c.n_effective), self._feature_cache,
            int(c.rollouts_per_individual),
            int(c.elite_count), int(c.tournament_size), float(c.mutation_probability),
            float(c.mutation_strength), c.effective_positive_bias, self._variant,
            bool(c.effective_keep_positive), bool(c.normalise_weights), float(c.discount), self._rng,
            self.quirks, self.model_max_wood(observation), self._fog_blocks,
            float(c.absent_closeness), self.search_quirks, c.recommendation == "best_mean")
        self.generations += int(generations)
        self.ticks += int(ticks)
        self.last_value = root_child_value(self._tree, action)
        return int(action), int(iterations)

    @classmethod
    def resolved_params(cls, config, game_config) -> dict:
        """The profile and ``fog_moves`` as the agent uses them (``auto`` resolved)."""
        out = super().resolved_params(config, game_config)
        out["fog_moves"] = resolve_fog_moves(config.fog_moves, out.get("profile", ""))
        return out

    def game_metrics(self) -> dict[str, float]:
        """With ``features_from = "memory"``: the remembered objects out of view per
        decision, by kind (``remembered_bomb`` ... ``remembered_wood``); else none."""
        if not self._remembers:
            return {}
        decisions = max(self.decisions, 1)
        return {f"remembered_{kind}": float(n) / decisions for kind, n in zip(GHOST_KINDS, self.remembered)}

    def end_game(self, observation, returns):
        """Count the game; on a win that makes the current streak the longest so
        far, keep the population as it stands after that win (what the agent
        learned while winning)."""
        self.games_played += 1
        if float(returns[self.seat]) > 0:
            self.streak += 1
            if self.streak >= self.best_streak:
                self.best_streak = self.streak
                self.best_streak_population = self.population.copy()
        else:
            self.streak = 0

    def learned_state(self):
        return {
            "population": self.population.copy(),
            "fitness": self.fitness.copy(),
            "best_streak_population": self.best_streak_population.copy(),
            "counters": np.array([self.games_played, self.streak, self.best_streak, self.generations],
                                 dtype=np.int64),
        }

    @classmethod
    def check_learned_state(cls, config, arrays):
        validate_population(arrays, config, "population")

    @classmethod
    def population_to_export(cls, arrays, best_streak):
        """``population`` (or ``best_streak_population``) and the best streak, ``counters[2]``."""
        if "population" not in arrays:
            return None
        counters = arrays.get("counters", np.zeros(4, dtype=np.int64))
        streak = int(counters[2]) if np.shape(counters) == (4,) else 0
        population = arrays.get("best_streak_population", arrays["population"]) if best_streak \
            else arrays["population"]
        return population, streak

    def load_learned_state(self, arrays):
        self.population = validate_population(arrays, self.config)
        self._pop_scratch = np.empty_like(self.population)
        if "fitness" in arrays and np.shape(arrays["fitness"]) == (self.config.population_size,):
            self.fitness = np.asarray(arrays["fitness"], dtype=np.float64).copy()
        if "best_streak_population" in arrays:
            self.best_streak_population = validate_population(
                {"population": arrays["best_streak_population"]}, self.config, "best_streak_population")
        else:
            self.best_streak_population = self.population.copy()
        counters = arrays.get("counters")
        if counters is not None and np.shape(counters) == (4,):
            self.games_played, self.streak, self.best_streak, self.generations = (int(v) for v in counters)
