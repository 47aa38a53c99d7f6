"""The search tree as a struct of preallocated arrays (game-independent).

One :class:`Tree` holds every node of one search. Node ``i`` is row ``i`` of
each per-node array; the node created by the ``k``-th expansion of a search
has index ``k`` (the root is :data:`ROOT_INDEX` = 0), so after ``n``
expansions the live nodes are ``0 .. n`` and ``num_nodes[0] == n + 1``.

Layout (``N`` = capacity, ``A`` = number of actions)::

    node_visits         int32[N]       visits (backups through the node)
    node_value_sum      float64[N]     sum of backed-up values
    node_min_value      float64[N]     smallest value backed up (+inf if none)
    node_max_value      float64[N]     largest value backed up (-inf if none)
    parents             int32[N]       parent index, NO_PARENT at the root
    action_from_parent  int16[N]       action leading here, NO_ACTION at the root
    children            int32[N, A]    child index per action, UNVISITED if not
                                       expanded yet, ILLEGAL if never to be tried
    depth               int16[N]       plies from the root
    node_kind           int8[N]        DECISION or CHANCE (chance nodes are
                                       reserved for stochastic games)
    node_bonus          float64[N]     a value term added to the node's UCT score
                                       when its parent selects (0 unless a driver
                                       sets it, e.g. a learned V(s); see
                                       ``uct.select_uct_bonus``)
    num_nodes           int64[1]       live nodes (the next free index)

The min / max values are what the Java Pommerman framework calls a node's
``bounds``: its UCT normalises the children's mean values to the parent's
observed range.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.lowlevel import borrow

ROOT_INDEX = 0
NO_PARENT = -1
UNVISITED = -1
ILLEGAL = -2
NO_ACTION = -1

DECISION = 0
CHANCE = 1


class Tree(NamedTuple):
    """A preallocated search tree (see the module docstring for the layout)."""

    node_visits: np.ndarray         # int32[N]
    node_value_sum: np.ndarray      # float64[N]
    node_min_value: np.ndarray      # float64[N]
    node_max_value: np.ndarray      # float64[N]
    parents: np.ndarray             # int32[N]
    action_from_parent: np.ndarray  # int16[N]
    children: np.ndarray            # int32[N, A]
    depth: np.ndarray               # int16[N]
    node_kind: np.ndarray           # int8[N]
    node_bonus: np.ndarray          # float64[N]
    num_nodes: np.ndarray           # int64[1]


def new_tree(capacity: int, num_actions: int) -> Tree:
    """A tree for at most ``capacity`` nodes over ``num_actions`` actions, holding
    only a fresh root (a DECISION node)."""
    if capacity < 1:
        raise ValueError(f"capacity: must be >= 1, got {capacity}")
    if num_actions < 1:
        raise ValueError(f"num_actions: must be >= 1, got {num_actions}")
    tree = Tree(
        node_visits=np.zeros(capacity, dtype=np.int32),
        node_value_sum=np.zeros(capacity, dtype=np.float64),
        node_min_value=np.full(capacity, np.inf),
        node_max_value=np.full(capacity, -np.inf),
        parents=np.full(capacity, NO_PARENT, dtype=np.int32),
        action_from_parent=np.full(capacity, NO_ACTION, dtype=np.int16),
        children=np.full((capacity, num_actions), UNVISITED, dtype=np.int32),
        depth=np.zeros(capacity, dtype=np.int16),
        node_kind=np.zeros(capacity, dtype=np.int8),
        node_bonus=np.zeros(capacity, dtype=np.float64),
        num_nodes=np.ones(1, dtype=np.int64),
    )
    return tree


@nb.njit(cache=True)
def clear_node(tree, node):
    """Reset row ``node`` to an unvisited, childless DECISION node (in place)."""
    tree.node_visits[node] = 0
    tree.node_value_sum[node] = 0.0
    tree.node_min_value[node] = np.inf
    tree.node_max_value[node] = -np.inf
    tree.parents[node] = NO_PARENT
    tree.action_from_parent[node] = NO_ACTION
    tree.children[node, :] = UNVISITED
    tree.depth[node] = 0
    tree.node_kind[node] = DECISION
    tree.node_bonus[node] = 0.0


@nb.njit(cache=True)
def reset_tree(tree):
    """Empty ``tree`` in place down to a fresh root; only the rows used by the
    last search are touched, so this costs O(nodes used), not O(capacity)."""
    n = tree.num_nodes[0]
    for node in range(n):
        clear_node(tree, node)
    tree.num_nodes[0] = 1


@nb.njit(cache=True)
def capacity(tree):
    """Maximum number of nodes ``tree`` can hold."""
    return tree.node_visits.shape[0]


@nb.njit(cache=True)
def is_full(tree):
    """True when no further node can be expanded."""
    return tree.num_nodes[0] >= tree.node_visits.shape[0]


def root_child_value(tree, action: int) -> float:
    """Mean value of the root's child for ``action`` (NaN if it was never
    expanded): what a search thought of the action it chose. Python-side, once
    per decision."""
    child = int(tree.children[ROOT_INDEX, int(action)])
    if child < 0 or tree.node_visits[child] == 0:
        return float("nan")
    return float(tree.node_value_sum[child] / tree.node_visits[child])


def depth_summary(tree) -> tuple[float, int]:
    """(mean, max) depth in plies of the non-root nodes of ``tree`` after a search;
    (0.0, 0) when only the root exists. A search that expands one node per
    iteration has its mean tree depth per iteration here. Python-side, once per
    decision (for benchmarks)."""
    n = int(tree.num_nodes[0])
    if n <= 1:
        return 0.0, 0
    depth = tree.depth[1:n]
    return float(depth.mean()), int(depth.max())


@nb.njit(cache=True)
def mean_value(tree, node):
    """Mean backed-up value of ``node`` (0.0 when unvisited)."""
    v = tree.node_visits[node]
    if v == 0:
        return 0.0
    return tree.node_value_sum[node] / v


@nb.njit(cache=True, inline="always")
def borrowed_tree(t):
    """``t`` with every array a borrowed view (``games.lowlevel.borrow``: no
    reference counts, which numba otherwise takes each time a kernel reads an
    array out of the tree, dozens of times per iteration). For a search kernel's
    own use while ``t`` itself is alive: never store or return it."""
    return Tree(borrow(t.node_visits), borrow(t.node_value_sum), borrow(t.node_min_value),
                borrow(t.node_max_value), borrow(t.parents), borrow(t.action_from_parent),
                borrow(t.children), borrow(t.depth), borrow(t.node_kind), borrow(t.node_bonus),
                borrow(t.num_nodes))
