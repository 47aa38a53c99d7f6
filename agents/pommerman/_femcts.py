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
    return the most visited root action

The tree policy, backup and recommendation are the shared MCTS ones
(:mod:`agents.search`, :mod:`agents.pommerman._mcts`); only the default policy
differs: D(W) = softmax over effective actions of W @ f(state), with f the
features of :mod:`agents.pommerman.features` (or the constant 1 when
unfeatured). Effective actions:

- ``n_effective = 6``: the six real actions;
- ``n_effective = 3``: move, stop, bomb; "move" counts for the four directions
  (its softmax term is multiplied by 4) and, when drawn, moves in a random safe
  direction;
- ``n_effective = 2``: movement (the four directions and stop, multiplied by 5;
  drawn as a random safe movement) and bomb.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games._rng import rng_integer
from games.pommerman._kernels import heuristic
from games.pommerman._layout import (
    A_COL, A_ROW, ACTION_DCOL, ACTION_DROW, BOARD_SIZE, FLAMES, LAY_BOMB, RIGID,
    STOP, WOOD, copy_into,
)

from ..evolution import evolve, normalise_rows, policy_probabilities, sample_index
from ..search.clock import budget_exhausted, deadline_ns, monotonic_ns
from ..search.tree import ROOT_INDEX, reset_tree
from ..search.uct import backup, most_visited_child
from ._common import advance, is_over, prepare_search
from ._mcts import tree_policy
from .features import N_FEATURES, state_features


@nb.njit(cache=True)
def safe_move(state, player, include_stop, rng):
    """A random direction (or stop, if ``include_stop``) whose target cell is on
    the board and not rigid, wood or flames; stop if none is."""
    row = state.agents[player, A_ROW]
    col = state.agents[player, A_COL]
    options = np.empty(5, dtype=np.int64)
    n = 0
    first = 0 if include_stop else 1
    for a in range(first, 5):
        r = row + ACTION_DROW[a]
        c = col + ACTION_DCOL[a]
        if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE:
            v = state.board[r * BOARD_SIZE + c]
            if v != RIGID and v != WOOD and v != FLAMES:
                options[n] = a
                n += 1
    if n == 0:
        return STOP
    return options[rng_integer(rng, n)]


@nb.njit(cache=True)
def policy_action(state, player, weights, feature_index, log_multiplier, n_effective,
                  all_features, features, probabilities, rng):
    """A real action drawn from the evolved policy of one individual.

    Args:
        weights: float64[A, F] (F = len(feature_index), or 1 when unfeatured).
        feature_index: int64[F] indices into the 8 state features; empty = unfeatured.
        log_multiplier: float64[A]; n_effective: 6, 3 or 2.
        all_features: float64[8], features: float64[F], probabilities: float64[A]: scratch.
    """
    if feature_index.shape[0] == 0:
        features[0] = 1.0
    else:
        state_features(state, player, all_features)
        for j in range(feature_index.shape[0]):
            features[j] = all_features[feature_index[j]]
    policy_probabilities(weights, features, log_multiplier, probabilities)
    e = sample_index(probabilities, rng)
    if n_effective == 6:
        return e
    if n_effective == 3:
        if e == 0:
            return safe_move(state, player, False, rng)
        return STOP if e == 1 else LAY_BOMB
    # n_effective == 2
    if e == 0:
        return safe_move(state, player, True, rng)
    return LAY_BOMB


@nb.njit(cache=True)
def evolved_rollout(state, player, depth, rollout_depth, weights, feature_index, log_multiplier,
                    n_effective, all_features, features, probabilities, joint, hidden, n_hidden, rng):
    """Play the evolved policy (opponents random) from ``depth`` to ``rollout_depth`` ticks."""
    while depth < rollout_depth and not is_over(state):
        action = policy_action(state, player, weights, feature_index, log_multiplier, n_effective,
                               all_features, features, probabilities, rng)
        advance(state, player, action, joint, hidden, n_hidden, rng)
        depth += 1
    return depth


@nb.njit(cache=True)
def femcts_decide(observation, player, tree, root, scratch, max_iterations, time_limit,
                  exploration, epsilon, rollout_depth,
                  population, fitness, population_scratch, feature_index, log_multiplier,
                  n_effective, rollouts_per_individual, elite_count, tournament_size,
                  mutation_probability, mutation_strength, positive_bias, mutation_variant,
                  keep_positive, normalise, discount, rng):
    """One FEMCTS decision; evolves ``population`` in place.

    Args:
        observation: PommermanState (unchanged); player: int.
        tree: Tree with 6 actions; root, scratch: preallocated PommermanStates.
        max_iterations: int (rollouts); time_limit: float seconds (0 = none).
        exploration, epsilon: UCT constants; rollout_depth: ticks from the root.
        population: float64[P, A, F]; fitness: float64[P] (written);
        population_scratch: float64[P, A, F].
        feature_index: int64[F] (empty: unfeatured, F = 1); log_multiplier: float64[A].
        n_effective: A (6, 3 or 2); rollouts_per_individual: L.
        elite_count: E; tournament_size; mutation_probability: mP;
        mutation_strength: mS; positive_bias: probability a mutation adds;
        mutation_variant: MUTATE_PER_ACTION / MUTATE_SHARED_FEATURES;
        keep_positive: clip weights at 0; normalise: rows to unit norm after evolving.
        discount: lambda; the backed-up value is heuristic * lambda**depth (1 = none).
        rng: uint64[2].
    Returns:
        (action, iterations, generations): int64 x 3.
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    hidden, joint, n_hidden, root_wood = prepare_search(root, observation)
    reset_tree(tree)
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
                                   joint, hidden, n_hidden, rng)
                depth = evolved_rollout(scratch, player, tree.depth[leaf], rollout_depth,
                                        population[p], feature_index, log_multiplier, n_effective,
                                        all_features, features, probabilities, joint, hidden,
                                        n_hidden, rng)
                value = heuristic(root, root_wood, scratch, player)
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
    action = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    return action, iterations, generations

