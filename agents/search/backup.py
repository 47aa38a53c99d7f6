"""Back-up: a playout's value from the leaf to the root (Tree kernels).

:func:`backup` adds one value from one player's perspective to every node on
the path; :func:`backup_alternating` flips its sign at every level (two-player
zero-sum); :func:`backup_by_player` adds, at each node, the entry of a value
vector that belongs to the node's player (``node_player``, an ``int8[N]``
array beside the :class:`~agents.search.tree.Tree`, owned by the driver: max^n
for multi-player and imperfect-information searches such as Scotland Yard's).
:func:`record_visit` is the one node update they share. Every node also tracks the smallest and largest value backed up through it
(what :func:`~agents.search.selection.select_uct` normalises by).
"""
from __future__ import annotations

import numba as nb

from .tree import NO_PARENT


@nb.njit(cache=True, inline="always")
def record_visit(tree, node, stored, seen):
    """One node of a backup: a visit, ``stored`` added to its value sum (the
    perspective of the player who chose the edge into it) and ``seen`` to its
    observed min / max (the perspective of the player to move at it). Every backup
    rule here, and drivers with a rule of their own (XCOM's two-level moves), update
    a node through it."""
    _record(tree.node_visits, tree.node_value_sum, tree.node_min_value, tree.node_max_value,
            node, stored, seen)


@nb.njit(cache=True, inline="always")
def _record(visits, value_sum, lo, hi, node, stored, seen):
    """:func:`record_visit` on the tree's arrays (backups that walk a path read them
    out of the tree once)."""
    visits[node] += 1
    value_sum[node] += stored
    if seen < lo[node]:
        lo[node] = seen
    if seen > hi[node]:
        hi[node] = seen


@nb.njit(cache=True)
def backup(tree, leaf, value):
    """Add ``value`` to ``leaf`` and every ancestor up to the root (visits,
    value sum, observed min / max). Single perspective: drivers of alternating
    zero-sum games negate ``value`` themselves where they need to."""
    # the arrays are read out of the tree once: an attribute read inside the loop
    # costs a reference count per node
    visits, value_sum, lo, hi, parents = (tree.node_visits, tree.node_value_sum,
                                          tree.node_min_value, tree.node_max_value, tree.parents)
    node = leaf
    while node != NO_PARENT:
        _record(visits, value_sum, lo, hi, node, value, value)
        node = parents[node]


@nb.njit(cache=True)
def backup_alternating(tree, leaf, value):
    """Back up ``value`` in a two-player game whose players alternate every ply.

    ``value`` is from the perspective of the player to move at the root. Each
    node's value sum is stored from the perspective of the player who chose the
    action into it (the player to move at its parent): ``+value`` at odd
    depths, ``-value`` at even ones, so :func:`select_uct` maximises for whoever
    moves. A node's observed min / max are kept in its children's perspective
    (the player to move at the node), which is the range :func:`select_uct`
    normalises them to.
    """
    visits, value_sum, lo, hi, parents = (tree.node_visits, tree.node_value_sum,
                                          tree.node_min_value, tree.node_max_value, tree.parents)
    depth = tree.depth
    node = leaf
    while node != NO_PARENT:
        odd = depth[node] % 2 == 1
        stored = value if odd else -value
        _record(visits, value_sum, lo, hi, node, stored, -stored)  # -stored: the player to move at this node
        node = parents[node]


@nb.njit(cache=True)
def backup_by_player(tree, leaf, values, node_player):
    """Back up a value vector: every node from ``leaf`` to the root gains one visit
    and ``values[node_player[node]]`` (the root, whose player is negative, adds
    ``values[0]``).

    Args: tree; leaf (int); values (float64[P]); node_player (int8[N]).
    """
    visits, value_sum, lo, hi, parents = (tree.node_visits, tree.node_value_sum,
                                          tree.node_min_value, tree.node_max_value, tree.parents)
    node = leaf
    while node != NO_PARENT:
        p = node_player[node]
        value = values[p] if p >= 0 else values[0]
        _record(visits, value_sum, lo, hi, node, value, value)
        node = parents[node]
