"""Selection: the tree policies and the final choice at the root (Tree kernels).

At a decision node a search picks a child by one of the UCB rules:

==========================================  =====================================================
:func:`select_uct`                          UCT on values normalised to each node's observed
                                            range, Java-style tie noise (every action legal)
:func:`select_uct_bonus`                    the same plus ``bonus_weight * node_bonus[child]``
:func:`select_ucb1_untried_first`           UCB1 over a fixed legal set: untried legal actions
                                            first, ``N`` = the node's visits (birds)
:func:`select_ucb_among_legal_children`     UCB over the expanded children legal *now*
                                            (determinizations make actions come and go):
                                            ``N`` = their visits, ``2 ln N``, untried actions
                                            left to the caller (Scotland Yard)
==========================================  =====================================================

At a chance node the driver computes the outcome weights and calls
:func:`sample_outcome` (by probability), :func:`select_outcome_proportional`
(visits in proportion to the probabilities, value-free) or
:func:`select_outcome_pw_ucb` (probability x UCB). At the root the move is
:func:`most_visited_child` or :func:`best_mean_child`
(:func:`recommend_root_action` picks one of the two).

Tie noise follows the Java Pommerman framework (``Utils.noise``)::

    noisy(x) = (x + epsilon) * (1 + epsilon * (u - 0.5)),   u ~ U[0, 1)
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer, rng_uniform

from .expansion import random_untried_legal
from .tree import ROOT_INDEX, UNVISITED


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
def select_ucb1_untried_first(tree, node, legal, exploration, rng):
    """UCB1 at a decision node over the actions with ``legal[a]`` (bool[>= A_used]).

    If a legal action has no child yet, one of them is returned uniformly at
    random (the caller expands it). Otherwise the legal child maximising::

        Q(child) + exploration * sqrt(ln N(node) / N(child))

    (values in [0, 1], no normalisation; exact ties go to the lowest action
    after a random rotation). Returns -1 if nothing is legal.

    Args: tree; node (int); legal (bool[k], k <= A: actions >= k are never
        chosen); exploration (float, e.g. sqrt(2)); rng (uint64[2]).

    Not :func:`select_ucb_among_legal_children` (Scotland Yard):
    that one counts N over the children legal now (determinizations make
    actions come and go), scales by ``2 ln N`` and leaves untried actions to
    its caller. Here the legal set at a node is fixed by its decision state.
    """
    k = legal.shape[0]
    if not legal.any():
        return -1
    untried = random_untried_legal(tree, node, legal, rng)
    if untried >= 0:
        return untried
    visits, value_sum, children = tree.node_visits, tree.node_value_sum, tree.children
    log_n = np.log(max(visits[node], 1))
    start = rng_integer(rng, k)
    best = -1
    best_value = -np.inf
    a = start - 1
    for _ in range(k):
        a += 1  # start, start + 1, ... wrapping at k (no division in the loop)
        if a == k:
            a = 0
        if not legal[a]:
            continue
        child = children[node, a]
        n = visits[child]
        value = value_sum[child] / n + exploration * np.sqrt(log_n / n)
        if value > best_value:
            best_value = value
            best = a
    return best


@nb.njit(cache=True)
def select_ucb_among_legal_children(tree, node, legal, exploration, rng):
    """UCB1 over the expanded children of ``node`` whose action is legal now::

        ucb = mean(child) + exploration * sqrt(2 ln N / n(child))

    (values in [0, 1], not normalised; N = the visits of those children, so an
    action that is sometimes illegal is not penalised). Ties are broken at random.

    Args: tree; node (int); legal (bool[A]); exploration (float C); rng (uint64[2]).
    Returns: int action, or -1 when no legal child is expanded.

    Not :func:`select_ucb1_untried_first` (birds): that one takes
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
def sample_outcome(weights, total, rng):
    """An outcome ``k`` drawn with probability ``weights[k] / total`` (weights are
    non-negative counts or masses, ``total`` their positive sum). Returns -1 if
    ``total <= 0``."""
    if total <= 0:
        return -1
    x = rng_uniform(rng) * total
    last = -1
    for k in range(weights.shape[0]):
        w = weights[k]
        if w <= 0:
            continue
        last = k
        if x < w:
            return k
        x -= w
    return last


@nb.njit(cache=True)
def select_outcome_proportional(tree, node, weights, total, exploration, rng):
    """Proportional allocation at a chance node (value-free): the outcome maximising::

        p_k * (1 + exploration * sqrt(ln N(node) / (N(child_k) + 1)))  /  (N(child_k) + 1)

    i.e. the outcome whose share of visits lags furthest behind its probability
    ``p_k = weights[k] / total``, with an optimistic bonus for rarely visited
    ones. Visit frequencies then track the outcome probabilities without
    sampling noise (the node's mean stays an estimate of the expectation); the
    children's values play no part. (Called ``pw_ucb`` before the seed's rule,
    :func:`select_outcome_pw_ucb`, took that name.) Ties are broken at random.
    Returns -1 if ``total <= 0``.
    """
    if total <= 0:
        return -1
    log_n = np.log(tree.node_visits[node] + 1.0)
    k_max = weights.shape[0]
    start = rng_integer(rng, k_max)
    best = -1
    best_value = -np.inf
    k = start - 1
    for _ in range(k_max):
        k += 1  # start, start + 1, ... wrapping at k_max
        if k == k_max:
            k = 0
        w = weights[k]
        if w <= 0:
            continue
        child = tree.children[node, k]
        n = 0.0 if child == UNVISITED or child < 0 else float(tree.node_visits[child])
        p = w / total
        value = p * (1.0 + exploration * np.sqrt(log_n / (n + 1.0))) / (n + 1.0)
        if value > best_value:
            best_value = value
            best = k
    return best


@nb.njit(cache=True)
def select_outcome_pw_ucb(tree, node, weights, total, exploration, rng):
    """Probability-weighted UCB at a chance node, as the seed designs it: the
    outcome maximising::

        p_k * (Q(child_k) + exploration * sqrt(ln N(node) / N(child_k)))

    with ``p_k = weights[k] / total`` and the child's mean value ``Q`` (values
    in [0, 1], the searcher's view). An outcome with no visits yet has an
    infinite UCB value: those come first, the most probable of them first
    (exact ties at random). Unlike :func:`sample_outcome` the visits follow the
    values as well as the probabilities (outcomes that matter more for the
    searcher get more visits), so the node's mean is not an unbiased estimate
    of the expectation. Returns -1 if ``total <= 0``.

    Args: tree; node (int, a chance node); weights (non-negative counts or
        masses per outcome, [K <= A]); total (their positive sum); exploration
        (float); rng (uint64[2], advanced by one draw).
    """
    if total <= 0:
        return -1
    log_n = np.log(max(tree.node_visits[node], 1))
    k_max = weights.shape[0]
    start = rng_integer(rng, k_max)
    best = -1
    best_value = -np.inf
    best_untried = -1
    best_untried_p = -1.0
    k = start - 1
    for _ in range(k_max):
        k += 1  # start, start + 1, ... wrapping at k_max
        if k == k_max:
            k = 0
        w = weights[k]
        if w <= 0:
            continue
        p = w / total
        child = tree.children[node, k]
        n = 0 if child < 0 else tree.node_visits[child]
        if n == 0:
            if p > best_untried_p:
                best_untried_p = p
                best_untried = k
            continue
        value = p * (tree.node_value_sum[child] / n + exploration * np.sqrt(log_n / n))
        if value > best_value:
            best_value = value
            best = k
    if best_untried >= 0:
        return best_untried
    return best


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
