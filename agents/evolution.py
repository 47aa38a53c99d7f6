"""Evolution operators over populations of weight matrices (numba kernels).

Game-independent: a population is ``float64[P, A, F]`` (P individuals, A
effective actions, F features; an unfeatured individual has F = 1), fitness
is ``float64[P]``. Every kernel draws from an explicit ``uint64[2]`` generator
(:mod:`games.rng`). FEMCTS (:mod:`agents.pommerman.femcts`) evolves its
rollout policies with them.

The softmax policy of an individual ``W`` in a state with features ``f`` is
``D(W)_i = exp(scale[i] * sum_j W[i, j] f[j] + offset[i]) / Z``. An effective
action that stands for several real actions (FEMCTS's "move", standing for
four directions) is weighted by its count ``k`` in one of two ways: the FEMCTS
paper's, ``scale = k, offset = 0`` (its ``W.f`` is multiplied by ``k`` before
the softmax; at zero weights every effective action is equally likely), or
``scale = 1, offset = log(k)`` (its softmax term is multiplied by ``k``, as if
each of the ``k`` real actions had the weight ``W.f``).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer, rng_uniform

#: Mutation variants: (a) each action draws its own set of mutated features;
#: (b) one set of features is drawn and mutated for every action.
MUTATE_PER_ACTION = 0
MUTATE_SHARED_FEATURES = 1


@nb.njit(cache=True)
def policy_probabilities(weights, features, scale, offset, out):
    """Softmax over effective actions: logit_i = scale[i] * (W[i] . f) + offset[i].

    Args:
        weights: float64[A, F] one individual.
        features: float64[F] features of the current state.
        scale: float64[A] multiplies each action's ``W[i] . f`` (1 = plain softmax).
        offset: float64[A] added to each logit (0 = plain softmax).
        out: float64[A] written with the probabilities.
    """
    A, F = weights.shape
    top = -1e300
    for i in range(A):
        z = 0.0
        for j in range(F):
            z += weights[i, j] * features[j]
        z = scale[i] * z + offset[i]
        out[i] = z
        if z > top:
            top = z
    total = 0.0
    for i in range(A):
        out[i] = np.exp(out[i] - top)
        total += out[i]
    for i in range(A):
        out[i] /= total


@nb.njit(cache=True)
def sample_index(probabilities, rng):
    """An index drawn from ``probabilities`` (float64[A], summing to 1)."""
    u = rng_uniform(rng)
    acc = 0.0
    n = probabilities.shape[0]
    for i in range(n):
        acc += probabilities[i]
        if u < acc:
            return i
    return n - 1


@nb.njit(cache=True)
def rank_by_fitness(fitness):
    """int64[P]: indices of ``fitness`` (float64[P]) from best to worst, stable (ties and
    NaNs keep their order; NaNs last): ``np.argsort(-fitness, kind="mergesort")``,
    written as an insertion sort (P is a population's size, and numba's mergesort
    compiled for a second on a fresh cache)."""
    n = fitness.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        key = i
        f = fitness[i]
        j = i - 1
        # move key before every earlier entry it ranks strictly above
        while j >= 0 and _ranks_above(f, fitness[order[j]]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = key
    return order


@nb.njit(cache=True, inline="always")
def _ranks_above(a, b):
    """Fitness ``a`` ranks strictly above ``b``: larger, or a number against a NaN."""
    if np.isnan(a):
        return False
    return np.isnan(b) or a > b


@nb.njit(cache=True)
def tournament_select(fitness, tournament_size, rng):
    """Index of the fittest of ``tournament_size`` individuals drawn with replacement."""
    best = rng_integer(rng, fitness.shape[0])
    for _ in range(tournament_size - 1):
        k = rng_integer(rng, fitness.shape[0])
        if fitness[k] > fitness[best]:
            best = k
    return best


@nb.njit(cache=True)
def uniform_crossover(parent_a, parent_b, child, rng):
    """Uniform crossover gene by gene within each row (the FEMCTS paper's): every
    weight ``child[i, j]`` (float64[A, F]) comes from ``parent_a`` or ``parent_b``
    with probability 1/2 each, independently of the others in its row."""
    for i in range(child.shape[0]):
        for j in range(child.shape[1]):
            if rng_uniform(rng) < 0.5:
                child[i, j] = parent_a[i, j]
            else:
                child[i, j] = parent_b[i, j]


@nb.njit(cache=True)
def mutate(individual, probability, strength, positive_bias, variant, keep_positive, rng):
    """Mutate ``individual`` (float64[A, F]) in place.

    Each chosen weight moves by ``u * strength`` with ``u ~ U(0, 1]``, upward
    with probability ``positive_bias`` (0.5: unbiased) and downward otherwise.
    Weights are chosen with ``probability`` (mP): per action and feature
    (variant MUTATE_PER_ACTION) or one feature set for all actions
    (MUTATE_SHARED_FEATURES). With ``keep_positive`` weights are clipped at 0.
    Returns the number of weights changed.
    """
    A, F = individual.shape
    shared = np.zeros(F, dtype=np.bool_)
    if variant == MUTATE_SHARED_FEATURES:
        for j in range(F):
            shared[j] = rng_uniform(rng) < probability
    changed = 0
    for i in range(A):
        for j in range(F):
            chosen = shared[j] if variant == MUTATE_SHARED_FEATURES else rng_uniform(rng) < probability
            if not chosen:
                continue
            amount = (1.0 - rng_uniform(rng)) * strength
            if rng_uniform(rng) >= positive_bias:
                amount = -amount
            individual[i, j] += amount
            if keep_positive and individual[i, j] < 0.0:
                individual[i, j] = 0.0
            changed += 1
    return changed


@nb.njit(cache=True)
def evolve(population, fitness, elite_count, tournament_size, probability, strength,
           positive_bias, variant, keep_positive, scratch, rng):
    """One generation in place: keep the ``elite_count`` best, breed the rest.

    Args:
        population: float64[P, A, F], replaced by the next generation.
        fitness: float64[P] of the current generation.
        elite_count: E, kept unchanged (best first).
        tournament_size: individuals per selection tournament.
        probability, strength, positive_bias, variant, keep_positive: see :func:`mutate`.
        scratch: float64[P, A, F] work space.
        rng: uint64[2].
    """
    P, A, F = population.shape
    order = rank_by_fitness(fitness)
    for k in range(min(elite_count, P)):
        _copy_individual(population[order[k]], scratch[k])
    for k in range(min(elite_count, P), P):
        a = tournament_select(fitness, tournament_size, rng)
        b = tournament_select(fitness, tournament_size, rng)
        uniform_crossover(population[a], population[b], scratch[k], rng)
        mutate(scratch[k], probability, strength, positive_bias, variant, keep_positive, rng)
    for k in range(P):
        _copy_individual(scratch[k], population[k])


@nb.njit(cache=True, inline="always")
def _copy_individual(src, dst):
    """``dst[:] = src`` for two float64[A, F] individuals of one shape, written as loops:
    numba's array-to-array assignment checks the shapes with an error message that
    compiles string formatting (about a second on a fresh cache)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@nb.njit(cache=True)
def normalise_rows(individual):
    """Scale each action's weights (float64[A, F]) to unit L2 norm (zero rows stay)."""
    for i in range(individual.shape[0]):
        norm = 0.0
        for j in range(individual.shape[1]):
            norm += individual[i, j] ** 2
        if norm > 0.0:
            norm = np.sqrt(norm)
            for j in range(individual.shape[1]):
                individual[i, j] /= norm
