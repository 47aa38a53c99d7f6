"""Evolution operators: selection, crossover, mutation, softmax policy."""
from __future__ import annotations

import numpy as np
import pytest

from agents.evolution import (
    MUTATE_PER_ACTION, MUTATE_SHARED_FEATURES, evolve, mutate, policy_probabilities, rank_by_fitness,
    sample_index, tournament_select, uniform_crossover,
)
from games.rng import make_rng


def test_softmax_policy_matches_closed_form_scale_and_offset():
    w = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    f = np.array([1.0, 0.5])
    out = np.empty(3)
    policy_probabilities(w, f, np.ones(3), np.zeros(3), out)
    logits = w @ f
    expected = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(out, expected)
    # the paper's reading: the move action's W.f multiplied by 4 before the softmax
    policy_probabilities(w, f, np.array([4.0, 1.0, 1.0]), np.zeros(3), out)
    scaled = np.exp(np.array([4, 1, 1]) * logits)
    np.testing.assert_allclose(out, scaled / scaled.sum())
    # the other reading: log 4 added to the logit (its softmax term times 4)
    policy_probabilities(w, f, np.ones(3), np.log(np.array([4.0, 1.0, 1.0])), out)
    weighted = np.array([4, 1, 1]) * np.exp(logits)
    np.testing.assert_allclose(out, weighted / weighted.sum())


def test_sampling_follows_the_probabilities():
    rng = make_rng(1)
    p = np.array([0.1, 0.6, 0.3])
    counts = np.bincount([sample_index(p, rng) for _ in range(20000)], minlength=3) / 20000
    np.testing.assert_allclose(counts, p, atol=0.015)


def test_tournament_picks_the_fittest_sampled():
    rng = make_rng(2)
    fitness = np.array([0.1, 0.9, 0.5, 0.3])
    picks = [tournament_select(fitness, 4, rng) for _ in range(2000)]
    # with 4 draws with replacement the best is missed with probability (3/4)^4
    assert np.mean(np.array(picks) == 1) == pytest.approx(1 - 0.75**4, abs=0.03)
    assert all(tournament_select(fitness, 1, rng) in range(4) for _ in range(10))


def test_crossover_is_uniform_gene_by_gene_within_rows():
    rng = make_rng(3)
    a, b = np.zeros((6, 8)), np.ones((6, 8))
    child = np.empty((6, 8))
    mixed_rows = 0
    from_b = 0.0
    for _ in range(200):
        uniform_crossover(a, b, child, rng)
        assert set(np.unique(child)) <= {0.0, 1.0}
        mixed_rows += sum(0 < row.sum() < 8 for row in child)
        from_b += child.mean()
    # a row comes whole from one parent with probability 2 / 2**8: nearly every row mixes
    assert mixed_rows > 0.95 * 200 * 6
    assert from_b / 200 == pytest.approx(0.5, abs=0.02)
    # each gene keeps its position: a parent's weight (i, j) lands at (i, j)
    pa = np.arange(48.0).reshape(6, 8)
    uniform_crossover(pa, -pa, child, rng)
    np.testing.assert_array_equal(np.abs(child), pa)


def test_mutation_respects_probability_strength_and_bias():
    rng = make_rng(4)
    ind = np.zeros((6, 8))
    changed = sum(mutate(ind.copy(), 0.2, 0.01, 0.5, MUTATE_PER_ACTION, False, rng) for _ in range(500))
    assert changed / (500 * 48) == pytest.approx(0.2, abs=0.02)
    ind = np.zeros((3, 8))
    mutate(ind, 1.0, 0.001, 0.6, MUTATE_PER_ACTION, False, rng)
    assert np.abs(ind).max() <= 0.001 + 1e-15
    ups = 0
    for _ in range(300):
        ind = np.zeros((3, 8))
        mutate(ind, 1.0, 0.01, 0.6, MUTATE_PER_ACTION, False, rng)
        ups += (ind > 0).sum()
    assert ups / (300 * 24) == pytest.approx(0.6, abs=0.02)
    ind = np.zeros((3, 8))
    for _ in range(50):
        mutate(ind, 0.5, 0.01, 0.6, MUTATE_PER_ACTION, True, rng)
    assert (ind >= 0).all(), "positive weights stay positive"


def test_shared_feature_mutation_hits_the_same_features_for_every_action():
    rng = make_rng(5)
    for _ in range(50):
        ind = np.zeros((6, 8))
        mutate(ind, 0.3, 0.01, 0.5, MUTATE_SHARED_FEATURES, False, rng)
        columns = (ind != 0).any(axis=0)
        assert ((ind != 0) == columns[None, :]).all()


def test_evolve_keeps_elites_and_is_deterministic():
    def run(seed):
        rng = make_rng(seed)
        pop = np.arange(10 * 6 * 8, dtype=float).reshape(10, 6, 8) / 100
        fitness = np.linspace(0, 1, 10)
        evolve(pop, fitness, 4, 2, 0.2, 0.01, 0.5, MUTATE_PER_ACTION, False, np.empty_like(pop), rng)
        return pop
    before = np.arange(10 * 6 * 8, dtype=float).reshape(10, 6, 8) / 100
    after = run(7)
    for k, src in enumerate([9, 8, 7, 6]):
        np.testing.assert_array_equal(after[k], before[src])
    np.testing.assert_array_equal(after, run(7))


def test_rank_by_fitness_is_a_stable_descending_argsort():
    """The insertion sort ranks as ``np.argsort(-fitness, kind="mergesort")``: best first,
    ties (0.0 and -0.0 too) in index order, NaNs last."""
    rng = np.random.default_rng(3)
    for trial in range(400):
        n = int(rng.integers(0, 25))
        if trial % 2:
            fitness = rng.choice([0.0, -0.0, 1.0, 0.5, -1.0, np.nan, 2.0], size=n)
        else:
            fitness = rng.normal(size=n)
        np.testing.assert_array_equal(rank_by_fitness(fitness), np.argsort(-fitness, kind="mergesort"))
    assert list(rank_by_fitness(np.array([1.0, np.nan, 3.0, 1.0]))) == [2, 0, 3, 1]
