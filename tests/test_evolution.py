"""Evolution operators: selection, crossover, mutation, softmax policy."""
from __future__ import annotations

import numpy as np
import pytest

from agents.evolution import (
    MUTATE_PER_ACTION, MUTATE_SHARED_FEATURES, evolve, mutate, policy_probabilities,
    sample_index, tournament_select, uniform_crossover,
)
from games._rng import make_rng


def test_softmax_policy_matches_closed_form_and_multiplier():
    w = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5]])
    f = np.array([1.0, 0.5])
    out = np.empty(3)
    policy_probabilities(w, f, np.zeros(3), out)
    logits = w @ f
    expected = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(out, expected)
    policy_probabilities(w, f, np.log(np.array([4.0, 1.0, 1.0])), out)
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


def test_crossover_takes_each_row_from_a_parent():
    rng = make_rng(3)
    a, b = np.zeros((6, 8)), np.ones((6, 8))
    child = np.empty((6, 8))
    seen = set()
    for _ in range(50):
        uniform_crossover(a, b, child, rng)
        for row in child:
            assert (row == 0).all() or (row == 1).all()
        seen.add(tuple(child[:, 0]))
    assert len(seen) > 10


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
