"""Decoupled UCT at simultaneous-move nodes (Tree kernels and their side arrays).

Where several players choose at once, each player picks its own action by UCB1
over its own statistics at the node, as if the others were part of the
environment (Lanctot et al., "Monte Carlo Tree Search in Simultaneous Move Games",
2013: decoupled UCT); the joint action leads to the child. A node's children are
then indexed by joint action, too many for the tree's ``children[N, A]``: they
hang in a list instead, its head in ``children[node, 0]`` and its links in
``next_sibling``, each child keyed by the ``joint_code`` of the joint action that
made it. A simultaneous node owns a *slot* of per-player statistics::

    node_slot       int32[N]         the node's slot, NO_SLOT if not simultaneous
    next_sibling    int32[N]         the next child of the same simultaneous parent
                                     (UNVISITED ends the list)
    joint_code      int64[N]         the joint action into the node (see encode)
    slot_visits     int32[S, P, W]   per slot, player and action: visits
    slot_value_sum  float64[S, P, W] ... and the sum of that player's values
    num_slots       int64[1]         slots in use

A joint action is coded with one base ``W + 1`` digit per player, 0 for a player
who does not act and ``a + 1`` for action ``a``; ``(W + 1) ** P`` must stay
below 2**62 (the caller checks).
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.rng import rng_integer

from .expansion import expand
from .tree import UNVISITED

#: ``node_slot`` of a node that is not a simultaneous-move node.
NO_SLOT = -1


class DecoupledStats(NamedTuple):
    """The side arrays of decoupled UCT (see the module docstring for the layout)."""

    node_slot: np.ndarray       # int32[N]
    next_sibling: np.ndarray    # int32[N]
    joint_code: np.ndarray      # int64[N]
    slot_visits: np.ndarray     # int32[S, P, W]
    slot_value_sum: np.ndarray  # float64[S, P, W]
    num_slots: np.ndarray       # int64[1]


def new_decoupled_stats(capacity: int, slots: int, num_players: int, width: int) -> DecoupledStats:
    """Side arrays for a tree of ``capacity`` nodes with at most ``slots`` simultaneous
    nodes (1 for a game without simultaneous moves: nothing is then allocated beyond it)."""
    if (width + 1) ** num_players >= 2 ** 62:
        raise ValueError(f"a simultaneous joint action of {num_players} players over {width} actions "
                         f"does not fit a 62-bit code")
    return DecoupledStats(
        node_slot=np.full(capacity, NO_SLOT, dtype=np.int32),
        next_sibling=np.full(capacity, UNVISITED, dtype=np.int32),
        joint_code=np.zeros(capacity, dtype=np.int64),
        slot_visits=np.zeros((slots, num_players, width), dtype=np.int32),
        slot_value_sum=np.zeros((slots, num_players, width), dtype=np.float64),
        num_slots=np.zeros(1, dtype=np.int64),
    )


@nb.njit(cache=True)
def reset_decoupled(stats):
    """Empty the slots a search used (in place): O(slots used), like ``reset_tree``."""
    for s in range(stats.num_slots[0]):
        stats.slot_visits[s, :, :] = 0
        stats.slot_value_sum[s, :, :] = 0.0
    stats.num_slots[0] = 0
    stats.node_slot[0] = NO_SLOT


@nb.njit(cache=True)
def claim_slot(stats, node):
    """Make ``node`` a simultaneous node with the next free slot; returns the slot, or
    NO_SLOT when every slot is taken (the node then gets no statistics)."""
    s = stats.num_slots[0]
    if s >= stats.slot_visits.shape[0]:
        return NO_SLOT
    stats.num_slots[0] = s + 1
    stats.node_slot[node] = s
    return s


@nb.njit(cache=True)
def encode_joint(joint, acting, width):
    """The code of joint action ``joint`` (int64[P]) where ``acting[p]`` (bool[P])."""
    code = 0
    base = 1
    for p in range(joint.shape[0]):
        if acting[p]:
            code += (joint[p] + 1) * base
        base *= width + 1
    return code


@nb.njit(cache=True)
def find_joint_child(tree, stats, node, code):
    """The child of simultaneous ``node`` reached by joint ``code``, or UNVISITED."""
    child = tree.children[node, 0]
    while child >= 0:
        if stats.joint_code[child] == code:
            return child
        child = stats.next_sibling[child]
    return UNVISITED


@nb.njit(cache=True)
def expand_joint(tree, stats, node, code):
    """Create the child of simultaneous ``node`` for joint ``code`` (at the head of its
    list); returns it, or -1 when the tree is full."""
    head = tree.children[node, 0]
    child = expand(tree, node, 0)
    if child < 0:
        return -1
    tree.children[node, 0] = child
    stats.next_sibling[child] = head
    stats.joint_code[child] = code
    stats.node_slot[child] = NO_SLOT
    return child


@nb.njit(cache=True)
def select_decoupled(stats, slot, player, legal, node_visits, exploration, rng):
    """``player``'s action at a simultaneous node (slot ``slot``) by UCB1 over its own
    statistics: a legal action it never tried there first (uniformly at random), else
    the legal action maximising ``mean + exploration * sqrt(ln N / n)`` (N: the node's
    visits; exact ties to the first after a random rotation, as
    ``select_ucb1_untried_first``). Returns -1 if nothing is legal."""
    visits = stats.slot_visits
    k = legal.shape[0]
    untried = 0
    for a in range(k):
        if legal[a] and visits[slot, player, a] == 0:
            untried += 1
    if untried > 0:
        r = rng_integer(rng, untried)
        for a in range(k):
            if legal[a] and visits[slot, player, a] == 0:
                if r == 0:
                    return a
                r -= 1
    log_n = np.log(max(node_visits, 1))
    start = rng_integer(rng, k)
    best = -1
    best_value = -np.inf
    a = start - 1
    for _ in range(k):
        a += 1
        if a == k:
            a = 0
        if not legal[a]:
            continue
        n = visits[slot, player, a]
        value = stats.slot_value_sum[slot, player, a] / n + exploration * np.sqrt(log_n / n)
        if value > best_value:
            best_value = value
            best = a
    return best


@nb.njit(cache=True)
def record_joint(stats, slot, code, values, width):
    """Add one visit and each acting player's value (``values[p]``) to the statistics of
    the actions of joint ``code`` at slot ``slot`` (a backup through the node)."""
    p = 0
    while code > 0:
        digit = code % (width + 1)
        code //= width + 1
        if digit > 0:
            stats.slot_visits[slot, p, digit - 1] += 1
            stats.slot_value_sum[slot, p, digit - 1] += values[p]
        p += 1
