"""FEMCTS's search: one decision's loop of :mod:`agents.pommerman.femcts`.

The shared MCTS tree policy and backup (:mod:`agents.search`,
:func:`agents.pommerman.mcts.tree_policy`) with the evolved rollout policy of
:mod:`agents.pommerman.femcts_rollout`; the population is evaluated individual by
individual (L rollouts each) and evolved after each complete generation
(:mod:`agents.evolution`). One decision kernel per ruleset
(:data:`FEMCTS_DECIDE`), each compiling only its own rules.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.pommerman.kernels import M_RULESET, M_STEP, STOP, copy_into

from ..evolution import evolve, normalise_rows
from ..search import backup, borrowed_tree, budget_exhausted, recommend_root_action, reset_tree
from ._common import KERNEL_RULESETS, begin_search, search_value
from .mcts import tree_policy
from .features import N_FEATURES, prepare_feature_cache
from .femcts_rollout import evolved_rollout


class FemctsParams(NamedTuple):
    """A FEMCTS agent's search settings (built once per agent by
    :class:`~agents.pommerman.femcts.FEMCTSAgent`).

    Fields:
        max_iterations: int (rollouts); time_limit: float seconds (0 = none): the budget.
        exploration, epsilon: float, the UCT constant and the tie-breaking noise.
        rollout_depth: int, ticks simulated per iteration counted from the root.
        discount: float, lambda: the backed-up value is heuristic * lambda**depth (1 = none).
        quirks: int, the profile's ``QUIRK_*`` switches (``_common.prepare_search``).
        search_quirks: int, ``QUIRK_STOP_AT_OWN_END`` / ``QUIRK_TIE_DEATH_SCORED`` bits
            taken in the tree, the rollouts and the value (``mcts_switches``).
        best_mean: bool, play the root child with the best mean value instead of the
            most visited one (``recommendation``).
    """

    max_iterations: int
    time_limit: float
    exploration: float
    epsilon: float
    rollout_depth: int
    discount: float
    quirks: int
    search_quirks: int
    best_mean: bool


class EvolutionParams(NamedTuple):
    """How FEMCTS evaluates and evolves its population of rollout policies (built once
    per agent; the last seven are :func:`agents.evolution.evolve`'s settings).

    Fields:
        rollouts_per_individual: int, L, the rollouts whose mean value is an
            individual's fitness.
        elite_count: int, E; tournament_size: int.
        mutation_probability: float, mP; mutation_strength: float, mS;
        positive_bias: float, the probability that a mutation adds.
        mutation_variant: int, MUTATE_PER_ACTION / MUTATE_SHARED_FEATURES.
        keep_positive: bool, clip the weights at 0.
        normalise: bool, scale the weights' rows to unit norm after evolving.
    """

    rollouts_per_individual: int
    elite_count: int
    tournament_size: int
    mutation_probability: float
    mutation_strength: float
    positive_bias: float
    mutation_variant: int
    keep_positive: bool
    normalise: bool


@nb.njit(cache=True, inline="always")
def femcts_search(observation, player, tree, root, scratch, params, evolution, population, fitness,
                  population_scratch, policy, feature_cache, rng, max_wood, ruleset):
    """One FEMCTS decision; evolves ``population`` in place.

    Args:
        observation: PommermanState (unchanged); player: int.
        tree: Tree with 6 actions; root, scratch: preallocated PommermanStates.
        params: :class:`FemctsParams`, the budget and the search's settings.
        evolution: :class:`EvolutionParams`.
        population: float64[P, A, F]; fitness: float64[P] (written);
        population_scratch: float64[P, A, F].
        policy: :class:`~agents.pommerman.femcts_rollout.RolloutPolicy`, the rollout
            policy besides the individuals' weights (A = ``policy.n_effective``; F =
            len(``policy.feature_index``), or 1 when unfeatured).
        feature_cache: FeatureCache (refilled here).
        rng: uint64[2].
        max_wood: int, see ``_common.prepare_search``.
        ruleset: RULESET_CANONICAL or RULESET_JAVA, the observation's (a constant in
            each decision kernel of :data:`FEMCTS_DECIDE`, which inline this: each
            compiles only its own rules; :func:`femcts_decide` picks one by the
            observation).
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
    max_iterations, rollout_depth, discount = params.max_iterations, params.rollout_depth, params.discount
    exploration, epsilon, search_quirks = params.exploration, params.epsilon, params.search_quirks
    feature_index = policy.feature_index
    root, scratch, hidden, joint, n_hidden, root_wood, rng, start, deadline = begin_search(
        observation, root, scratch, rng, params.quirks, max_wood, params.time_limit)
    tree = borrowed_tree(tree)  # a borrowed view (no reference counts) for the loop
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
                                        population[p], policy, feature_cache, all_features, features,
                                        probabilities, joint, hidden, n_hidden, rng, False,
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
    action = recommend_root_action(tree, params.best_mean, epsilon, rng)
    if action < 0:  # no expanded child (best_mean only; most visited returns 0 then)
        action = STOP
    return action, iterations, generations, ticks


def _femcts_decide_for(ruleset):
    """The decision kernel: :func:`femcts_search` with ``ruleset`` a constant of the kernel
    (a closure value), so it compiles only its own rules (as
    :func:`agents.pommerman.mcts._mcts_decide_for`)."""

    @nb.njit(cache=True)
    def femcts_decide(observation, player, tree, root, scratch, params, evolution, population, fitness,
                      population_scratch, policy, feature_cache, rng, max_wood=0):
        return femcts_search(observation, player, tree, root, scratch, params, evolution, population,
                             fitness, population_scratch, policy, feature_cache, rng, max_wood, ruleset)

    return femcts_decide


#: The decision kernel by the observation's ruleset (``meta[M_RULESET]``): each compiles
#: only its own rules (seconds on a fresh numba cache; before the split FEMCTS compiled both).
FEMCTS_DECIDE = {ruleset: _femcts_decide_for(ruleset) for ruleset in KERNEL_RULESETS}


def femcts_decide(observation, *args, **kwargs):
    """One FEMCTS decision (:func:`femcts_search`) by the kernel of the observation's
    ruleset (:data:`FEMCTS_DECIDE`); arguments and result those of :func:`femcts_search`."""
    return FEMCTS_DECIDE[int(observation.meta[M_RULESET])](observation, *args, **kwargs)
