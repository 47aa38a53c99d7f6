"""UCT phases over a :class:`~agents.search.tree.Tree` (game-independent kernels).

Each function is one phase of a search iteration (select, expand, back up,
final choice). Game drivers call them directly from their own ``@njit``
search loop and simulate the game themselves (open or closed loop), so no
game is imported here and no jitted function is passed around (which would
break numba's on-disk cache).

Tie noise follows the Java Pommerman framework (``Utils.noise``)::

    noisy(x) = (x + epsilon) * (1 + epsilon * (u - 0.5)),   u ~ U[0, 1)
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games._rng import rng_integer, rng_uniform

from .tree import DECISION, ILLEGAL, NO_PARENT, ROOT_INDEX, UNVISITED


@nb.njit(cache=True, inline="always")
def tie_noise(x, epsilon, rng):
    """``x`` perturbed by a tiny multiplicative noise that breaks ties at random."""
    return (x + epsilon) * (1.0 + epsilon * (rng_uniform(rng) - 0.5))


@nb.njit(cache=True, inline="always")
def normalise(x, lo, hi):
    """``(x - lo) / (hi - lo)`` when ``lo < hi``, else ``x`` (the Java ``Utils.normalise``)."""
    if lo < hi:
        return (x - lo) / (hi - lo)
    return x


@nb.njit(cache=True)
def untried_count(tree, node):
    """Number of actions of ``node`` not expanded yet (children == UNVISITED)."""
    n = 0
    for a in range(tree.children.shape[1]):
        if tree.children[node, a] == UNVISITED:
            n += 1
    return n


@nb.njit(cache=True)
def random_untried_action(tree, node, rng):
    """A uniformly random action of ``node`` whose child is UNVISITED, or -1 if none.

    Args: tree; node (int); rng (uint64[2], advanced).
    Returns: int action in ``[0, A)`` or -1.
    """
    n = untried_count(tree, node)
    if n == 0:
        return -1
    k = rng_integer(rng, n)
    for a in range(tree.children.shape[1]):
        if tree.children[node, a] == UNVISITED:
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
    k = min(legal.shape[0], tree.children.shape[1])
    n = 0
    for a in range(k):
        if legal[a] and tree.children[node, a] == UNVISITED:
            n += 1
    if n == 0:
        return -1
    r = rng_integer(rng, n)
    for a in range(k):
        if legal[a] and tree.children[node, a] == UNVISITED:
            if r == 0:
                return a
            r -= 1
    return -1


@nb.njit(cache=True)
def select_uct(tree, node, exploration, epsilon, rng):
    """The UCB1 choice among the expanded children of ``node``.

    Each child's mean value is normalised to ``node``'s observed
    ``[min, max]`` value range, then::

        uct = q_norm + exploration * sqrt(log(N(node) + 1) / (N(child) + epsilon))

    with random tie noise, exactly as the Java framework's ``SingleTreeNode.uct``.
    Unexpanded (UNVISITED) and ILLEGAL children are skipped; callers select
    only at fully expanded nodes.

    Args: tree; node (int); exploration (float, the K constant); epsilon
        (float, tie noise and division guard); rng (uint64[2], advanced).
    Returns: int, the chosen action (its child is ``tree.children[node, a]``),
        or -1 when ``node`` has no expanded child.
    """
    return _select_uct(tree, node, exploration, epsilon, 0.0, False, rng)


@nb.njit(cache=True)
def select_uct_bonus(tree, node, exploration, epsilon, bonus_weight, rng):
    """:func:`select_uct` plus a value term: each child scores
    ``uct + bonus_weight * node_bonus[child]``.

    ``node_bonus`` is set by the driver when it expands a child, e.g. a learned
    state value V(s') of the child's state (the TD agents of XCOM); with
    ``bonus_weight == 0`` it chooses as :func:`select_uct`.

    Args: as :func:`select_uct`, plus bonus_weight (float).
    Returns: int, the chosen action, or -1 when ``node`` has no expanded child.
    """
    return _select_uct(tree, node, exploration, epsilon, bonus_weight, True, rng)


@nb.njit(cache=True, inline="always")
def _select_uct(tree, node, exploration, epsilon, bonus_weight, with_bonus, rng):
    """The one UCT loop of :func:`select_uct` and :func:`select_uct_bonus`.

    Inlined into both with ``with_bonus`` a constant, so :func:`select_uct`
    compiles without the bonus term (a ``0.0 * node_bonus[child]`` cannot be
    folded away in floating point: it read one more array per child and cost
    the Pommerman MCTS a few per cent, issue 22).
    """
    lo = tree.node_min_value[node]
    hi = tree.node_max_value[node]
    log_n = np.log(tree.node_visits[node] + 1.0)
    best = -1
    best_value = -np.inf
    for a in range(tree.children.shape[1]):
        child = tree.children[node, a]
        if child < 0:
            continue
        visits = tree.node_visits[child] + epsilon
        q = normalise(tree.node_value_sum[child] / visits, lo, hi)
        value = q + exploration * np.sqrt(log_n / visits)
        if with_bonus:
            value += bonus_weight * tree.node_bonus[child]
        value = tie_noise(value, epsilon, rng)
        if value > best_value:
            best_value = value
            best = a
    return best


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
    tree.children[child, :] = UNVISITED
    tree.depth[child] = tree.depth[node] + 1
    tree.node_kind[child] = DECISION  # drivers of stochastic games set CHANCE
    tree.node_bonus[child] = 0.0
    tree.children[node, action] = child
    return child


@nb.njit(cache=True)
def backup(tree, leaf, value):
    """Add ``value`` to ``leaf`` and every ancestor up to the root (visits,
    value sum, observed min / max). Single perspective: drivers of alternating
    zero-sum games negate ``value`` themselves where they need to."""
    node = leaf
    while node != NO_PARENT:
        record_visit(tree, node, value, value)
        node = tree.parents[node]


@nb.njit(cache=True, inline="always")
def record_visit(tree, node, stored, seen):
    """One node of a two-player backup: a visit, ``stored`` added to its value sum (the
    perspective of the player who chose the edge into it) and ``seen`` to its observed
    min / max (the perspective of the player to move at it)."""
    tree.node_visits[node] += 1
    tree.node_value_sum[node] += stored
    if seen < tree.node_min_value[node]:
        tree.node_min_value[node] = seen
    if seen > tree.node_max_value[node]:
        tree.node_max_value[node] = seen


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
    node = leaf
    while node != NO_PARENT:
        odd = tree.depth[node] % 2 == 1
        stored = value if odd else -value
        record_visit(tree, node, stored, -stored)  # -stored: the player to move at this node
        node = tree.parents[node]


@nb.njit(cache=True)
def best_mean_child(tree, node, epsilon, rng):
    """The action of ``node``'s expanded child with the highest mean value
    (``sum / (visits + epsilon)``, tie noise), or -1 if none."""
    best = -1
    best_value = -np.inf
    for a in range(tree.children.shape[1]):
        child = tree.children[node, a]
        if child < 0:
            continue
        q = tree.node_value_sum[child] / (tree.node_visits[child] + epsilon)
        q = tie_noise(q, epsilon, rng)
        if q > best_value:
            best_value = q
            best = a
    return best


@nb.njit(cache=True)
def most_visited_child(tree, root, epsilon, rng):
    """The action of ``root``'s most visited child (Java ``mostVisitedAction``).

    Ties are broken by tie noise; when every expanded child has the same visit
    count the best mean value decides. Returns 0 when ``root`` has no child.
    """
    best = -1
    best_value = -np.inf
    first = -1
    all_equal = True
    for a in range(tree.children.shape[1]):
        child = tree.children[root, a]
        if child < 0:
            continue
        visits = tree.node_visits[child]
        if first == -1:
            first = visits
        elif visits != first:
            all_equal = False
        value = tie_noise(float(visits), epsilon, rng)
        if value > best_value:
            best_value = value
            best = a
    if best == -1:
        return 0
    if all_equal:
        return best_mean_child(tree, root, epsilon, rng)
    return best


@nb.njit(cache=True)
def recommend_root_action(tree, best_mean, epsilon, rng):
    """The action a search plays: the root child with the best mean value
    (:func:`best_mean_child`) if ``best_mean``, else the most visited
    (:func:`most_visited_child`); -1 if the root has no expanded child and
    ``best_mean`` (the most visited rule returns 0 then)."""
    if best_mean:
        return best_mean_child(tree, ROOT_INDEX, epsilon, rng)
    return most_visited_child(tree, ROOT_INDEX, epsilon, rng)


@nb.njit(cache=True)
def mark_illegal(tree, node, legal):
    """Set ``children[node, a] = ILLEGAL`` where ``legal[a]`` is False (bool[A])."""
    for a in range(tree.children.shape[1]):
        if not legal[a] and tree.children[node, a] == UNVISITED:
            tree.children[node, a] = ILLEGAL
