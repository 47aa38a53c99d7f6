"""The game-independent search core: tree layout, phases, UCT on known problems."""
from __future__ import annotations

import time

import numba as nb
import numpy as np
import pytest

from agents.search import (
    DECISION, ILLEGAL, NO_ACTION, NO_PARENT, ROOT_INDEX, UNVISITED, backup, expand,
    mark_illegal, monotonic_ns, most_visited_child, new_tree, random_untried_action,
    reset_tree, select_uct,
)
from games.rng import make_rng, rng_uniform


def test_new_tree_layout():
    tree = new_tree(10, 6)
    assert tree.node_visits.dtype == np.int32 and tree.node_visits.shape == (10,)
    assert tree.node_value_sum.dtype == np.float64
    assert tree.parents.dtype == np.int32 and tree.parents[ROOT_INDEX] == NO_PARENT
    assert tree.action_from_parent.dtype == np.int16 and tree.action_from_parent[0] == NO_ACTION
    assert tree.children.shape == (10, 6) and tree.children.dtype == np.int32
    assert (tree.children == UNVISITED).all()
    assert tree.depth.dtype == np.int16 and tree.node_kind.dtype == np.int8
    assert tree.node_kind[0] == DECISION and tree.num_nodes[0] == 1
    with pytest.raises(ValueError, match="capacity"):
        new_tree(0, 6)


def test_expand_and_backup_bookkeeping():
    tree = new_tree(4, 3)
    a = expand(tree, ROOT_INDEX, 2)
    b = expand(tree, a, 0)
    c = expand(tree, a, 1)
    assert (a, b, c) == (1, 2, 3)  # the k-th expansion gets index k
    assert expand(tree, c, 0) == -1  # full: nothing changes
    assert tree.num_nodes[0] == 4
    assert tree.children[ROOT_INDEX, 2] == a and tree.children[a, 0] == b and tree.children[a, 1] == c
    assert tree.parents[b] == a and tree.action_from_parent[b] == 0 and tree.depth[b] == 2
    backup(tree, b, 0.5)
    backup(tree, c, -1.0)
    assert list(tree.node_visits) == [2, 2, 1, 1]
    assert tree.node_value_sum[a] == pytest.approx(-0.5)
    assert tree.node_min_value[a] == -1.0 and tree.node_max_value[a] == 0.5
    assert tree.node_min_value[b] == 0.5 and tree.node_max_value[b] == 0.5
    reset_tree(tree)
    assert tree.num_nodes[0] == 1 and (tree.children == UNVISITED).all()
    assert (tree.node_visits == 0).all() and np.isinf(tree.node_min_value).all()


def test_untried_and_illegal_actions():
    tree = new_tree(8, 4)
    mark_illegal(tree, ROOT_INDEX, np.array([True, False, True, True]))
    assert tree.children[ROOT_INDEX, 1] == ILLEGAL
    rng = make_rng(3)
    seen = set()
    for _ in range(3):
        a = random_untried_action(tree, ROOT_INDEX, rng)
        seen.add(a)
        child = expand(tree, ROOT_INDEX, a)
        backup(tree, child, float(a))
    assert seen == {0, 2, 3}
    assert random_untried_action(tree, ROOT_INDEX, rng) == -1
    for _ in range(20):
        assert select_uct(tree, ROOT_INDEX, 1.4, 1e-6, rng) in (0, 2, 3)


def _run_bandit(means, iterations, seed):
    tree = new_tree(iterations + 1, len(means))
    rng = make_rng(seed)
    _bandit_kernel(tree, np.asarray(means, dtype=np.float64), iterations, rng)
    return tree, most_visited_child(tree, ROOT_INDEX, 1e-6, rng)


@nb.njit
def _bandit_kernel(tree, means, iterations, rng):
    for _ in range(iterations):
        a = random_untried_action(tree, ROOT_INDEX, rng)
        if a >= 0:
            node = expand(tree, ROOT_INDEX, a)
        else:
            a = select_uct(tree, ROOT_INDEX, np.sqrt(2.0), 1e-6, rng)
            node = tree.children[ROOT_INDEX, a]
        value = 1.0 if rng_uniform(rng) < means[a] else 0.0
        backup(tree, node, value)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_uct_finds_the_best_arm(seed):
    means = [0.2, 0.35, 0.8, 0.5, 0.1, 0.3]
    tree, best = _run_bandit(means, 3000, seed)
    assert best == 2
    visits = [tree.node_visits[tree.children[0, a]] for a in range(6)]
    assert visits[2] > 0.5 * sum(visits)


@nb.njit
def _two_ply_kernel(tree, table, iterations, rng):
    """Deterministic two-step problem: value = table[a1, a2]."""
    for _ in range(iterations):
        node = ROOT_INDEX
        path0 = -1
        while tree.depth[node] < 2:
            a = random_untried_action(tree, node, rng)
            if a >= 0:
                child = expand(tree, node, a)
                if node == ROOT_INDEX:  # a new first move: also expand one reply
                    path0 = a
                    node = child
                    continue
                node = child
                break
            a = select_uct(tree, node, 1.0, 1e-6, rng)
            if node == ROOT_INDEX:
                path0 = a
            node = tree.children[node, a]
        if tree.depth[node] == 2:
            value = table[path0, tree.action_from_parent[node]]
        else:
            value = table[path0, np.int64(rng_uniform(rng) * table.shape[1])]
        backup(tree, node, value)


def test_uct_on_a_known_two_ply_position():
    # action 1 has the single best continuation; action 0 the best average
    table = np.array([[0.6, 0.6, 0.6], [0.0, 1.0, 0.0], [0.2, 0.1, 0.3]])
    tree = new_tree(5000, 3)
    rng = make_rng(7)
    _two_ply_kernel(tree, table, 3000, rng)
    assert most_visited_child(tree, ROOT_INDEX, 1e-6, rng) == 1


def test_clock_matches_python():
    before = time.monotonic_ns()
    now = monotonic_ns()
    after = time.monotonic_ns()
    assert before <= now <= after
