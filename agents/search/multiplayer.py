"""Search-core phases for games where the player to move changes from node to node.

Imperfect-information and multi-player searches (Scotland Yard: Mr X and the
detectives in one tree) store, per node, the player who chose the action
leading to it (``node_player``, an ``int8[N]`` array beside the :class:`Tree`,
owned by the driver) and back up a *vector* of values, one per player: each node
adds the value of its own player, so UCB at a node compares its children from
the point of view of the player who moves there (max^n).

Open-loop searches (the tree stores actions, the state is re-simulated and may
differ from one iteration to the next, e.g. under determinization) pass the
legal mask of the current state: selection and expansion consider only the
actions legal now.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games._rng import rng_uniform

from .tree import NO_PARENT
from .uct import record_visit


@nb.njit(cache=True)
def select_ucb_legal(tree, node, legal, exploration, rng):
    """UCB1 over the expanded children of ``node`` whose action is legal now::

        ucb = mean(child) + exploration * sqrt(2 ln N / n(child))

    (values in [0, 1], not normalised; N = the visits of those children, so an
    action that is sometimes illegal is not penalised). Ties are broken at random.

    Args: tree; node (int); legal (bool[A]); exploration (float C); rng (uint64[2]).
    Returns: int action, or -1 when no legal child is expanded.

    Not :func:`agents.search.chance.select_ucb1_legal` (birds): that one takes
    N from the node's own visits and picks untried legal actions first, since
    a decision node there always has the same legal actions.
    """
    total = 0
    for a in range(tree.children.shape[1]):
        child = tree.children[node, a]
        if legal[a] and child >= 0:
            total += tree.node_visits[child]
    log_n = np.log(max(total, 1))
    best = -1
    best_value = -np.inf
    for a in range(tree.children.shape[1]):
        child = tree.children[node, a]
        if not legal[a] or child < 0:
            continue
        n = tree.node_visits[child]
        if n == 0:
            value = np.inf
        else:
            value = tree.node_value_sum[child] / n + exploration * np.sqrt(2.0 * log_n / n)
        value += 1e-9 * rng_uniform(rng)
        if value > best_value:
            best_value = value
            best = a
    return best


@nb.njit(cache=True)
def backup_by_player(tree, leaf, values, node_player):
    """Back up a value vector: every node from ``leaf`` to the root gains one visit
    and ``values[node_player[node]]`` (the root, whose player is negative, adds
    ``values[0]``).

    Args: tree; leaf (int); values (float64[P]); node_player (int8[N]).
    """
    node = leaf
    while node != NO_PARENT:
        p = node_player[node]
        value = values[p] if p >= 0 else values[0]
        record_visit(tree, node, value, value)
        node = tree.parents[node]
