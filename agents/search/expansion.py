"""Expansion: untried actions, new children, illegal actions (Tree kernels).

A node's children start UNVISITED; :func:`expand` creates one (or returns -1
when the tree is full), :func:`expand_as` one of a given kind (DECISION or
CHANCE: a chance node's children are indexed by outcome), and
:func:`mark_illegal` marks the actions a node's state forbids as ILLEGAL so no
phase ever picks them. Open-loop searches whose legal set changes between
iterations pick untried actions among those legal now
(:func:`random_untried_legal`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer

from .tree import DECISION, ILLEGAL, UNVISITED


@nb.njit(cache=True, inline="always")
def untried_count(tree, node):
    """Number of actions of ``node`` not expanded yet (children == UNVISITED)."""
    n = 0
    for a in range(tree.children.shape[1]):
        if tree.children[node, a] == UNVISITED:
            n += 1
    return n


@nb.njit(cache=True, inline="always")
def random_untried_action(tree, node, rng):
    """A uniformly random action of ``node`` whose child is UNVISITED, or -1 if none
    (no draw then).

    Args: tree; node (int); rng (uint64[2], advanced).
    Returns: int action in ``[0, A)`` or -1.

    Inlined: searches call it once per tree level, and as a call it passed the
    whole Tree (some 80 machine words) to count six entries.
    """
    n = untried_count(tree, node)
    if n == 0:
        return -1
    k = rng_integer(rng, n)
    children = tree.children
    for a in range(children.shape[1]):
        if children[node, a] == UNVISITED:
            if k == 0:
                return a
            k -= 1
    return -1


@nb.njit(cache=True)
def random_untried_legal(tree, node, legal, rng):
    """A uniformly random action with ``legal[a]`` whose child is UNVISITED, or -1.

    Args: tree; node (int); legal (bool[k], k <= A: actions >= k are never
        chosen); rng (uint64[2], advanced by one draw when an action qualifies).
    """
    children = tree.children
    k = min(legal.shape[0], children.shape[1])
    n = 0
    for a in range(k):
        if legal[a] and children[node, a] == UNVISITED:
            n += 1
    if n == 0:
        return -1
    r = rng_integer(rng, n)
    for a in range(k):
        if legal[a] and children[node, a] == UNVISITED:
            if r == 0:
                return a
            r -= 1
    return -1


@nb.njit(cache=True)
def expand(tree, node, action):
    """Create the child of ``node`` reached by ``action`` at the next free index.

    Args: tree; node (int); action (int).
    Returns: int, the new node's index, or -1 when the tree is full (nothing
        changed then).
    """
    child = tree.num_nodes[0]
    if child >= tree.node_visits.shape[0]:
        return -1
    tree.num_nodes[0] = child + 1
    tree.node_visits[child] = 0
    tree.node_value_sum[child] = 0.0
    tree.node_min_value[child] = np.inf
    tree.node_max_value[child] = -np.inf
    tree.parents[child] = node
    tree.action_from_parent[child] = action
    children = tree.children
    for a in range(children.shape[1]):  # an element loop: a slice assignment costs a call
        children[child, a] = UNVISITED
    tree.depth[child] = tree.depth[node] + 1
    tree.node_kind[child] = DECISION  # drivers of stochastic games set CHANCE
    tree.node_bonus[child] = 0.0
    children[node, action] = child
    return child


@nb.njit(cache=True)
def expand_as(tree, node, action, kind):
    """:func:`expand` ``node`` by ``action`` (or outcome) and set
    the new node's kind (DECISION or CHANCE). Returns the child, or -1 if full."""
    child = expand(tree, node, action)
    if child >= 0:
        tree.node_kind[child] = kind
    return child


@nb.njit(cache=True)
def mark_illegal(tree, node, legal):
    """Set ``children[node, a] = ILLEGAL`` where ``legal[a]`` is False (bool[A])."""
    for a in range(tree.children.shape[1]):
        if not legal[a] and tree.children[node, a] == UNVISITED:
            tree.children[node, a] = ILLEGAL
