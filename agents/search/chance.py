"""Phases for stochastic games: decision nodes with per-iteration legal sets and chance nodes.

Decision and chance nodes share the :class:`~agents.search.tree.Tree` arrays
(``node_kind``); a chance node's children are indexed by *outcome* instead of
action (the tree's action axis is as wide as the larger of the two). Drivers
(``agents/birds/mcts.py``) write one traversal that looks at the node kind:

* at a DECISION node, :func:`select_ucb1_legal` picks among the actions legal in
  this iteration's determinization (information-set search: the legal set may
  differ between iterations), trying untried legal actions first;
* at a CHANCE node the driver computes the outcome weights (e.g. how many
  unseen cards of each class are left) and calls :func:`sample_outcome`
  (sampling by probability: the node's mean converges to the expectation, as in
  expectimax / rho-UCT), :func:`select_outcome_proportional` (visits allocated
  in proportion to the probabilities, value-free) or
  :func:`select_outcome_pw_ucb` (the outcome maximising probability x UCB
  value).

:func:`expand_as` creates a child of a given kind. Values are backed up with
:func:`~agents.search.uct.backup` from one player's perspective.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games._rng import rng_integer, rng_uniform

from .tree import UNVISITED
from .uct import expand, random_untried_legal


@nb.njit(cache=True)
def expand_as(tree, node, action, kind):
    """:func:`~agents.search.uct.expand` ``node`` by ``action`` (or outcome) and set
    the new node's kind (DECISION or CHANCE). Returns the child, or -1 if full."""
    child = expand(tree, node, action)
    if child >= 0:
        tree.node_kind[child] = kind
    return child


@nb.njit(cache=True)
def select_ucb1_legal(tree, node, legal, exploration, rng):
    """UCB1 at a decision node over the actions with ``legal[a]`` (bool[>= A_used]).

    If a legal action has no child yet, one of them is returned uniformly at
    random (the caller expands it). Otherwise the legal child maximising::

        Q(child) + exploration * sqrt(ln N(node) / N(child))

    (values in [0, 1], no normalisation; exact ties go to the lowest action
    after a random rotation). Returns -1 if nothing is legal.

    Args: tree; node (int); legal (bool[k], k <= A: actions >= k are never
        chosen); exploration (float, e.g. sqrt(2)); rng (uint64[2]).

    Not :func:`agents.search.multiplayer.select_ucb_legal` (Scotland Yard):
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
    log_n = np.log(max(tree.node_visits[node], 1))
    start = rng_integer(rng, k)
    best = -1
    best_value = -np.inf
    for i in range(k):
        a = (start + i) % k
        if not legal[a]:
            continue
        child = tree.children[node, a]
        n = tree.node_visits[child]
        value = tree.node_value_sum[child] / n + exploration * np.sqrt(log_n / n)
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
    for i in range(k_max):
        k = (start + i) % k_max
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
    for i in range(k_max):
        k = (start + i) % k_max
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
