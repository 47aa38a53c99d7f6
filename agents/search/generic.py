"""A UCT search for any game that declares the generic kernels (``games.generic``).

One decision is one call of a per-game kernel (:mod:`agents.search.per_game` builds
and caches it) whose body is :func:`generic_search`. An iteration::

    world      the root state copied (or, for hidden information, a determinization
               of the observation: a fresh one per iteration, or one of
               ``determinizations`` fixed samples in turn)
    select     from the root while the node's children are known: a decision node
               picks by UCB1 (untried legal actions first, uniformly), a chance node
               samples an outcome by its probability, a simultaneous node lets every
               acting player pick by UCB1 over its own statistics (decoupled UCT)
    expand     the first child not in the tree yet (one node per iteration)
    roll out   from there: random (or epsilon-greedy on the game's heuristic) moves,
               chance sampled, until the end or ``max_rollout_depth`` moves
    back up    the returns vector: every node adds the value of the player who chose
               the move into it; simultaneous nodes add each acting player's value to
               that player's action

Values are the game's ``returns`` unscaled, so ``exploration`` is on their scale
(OpenSpiel's convention: ``c = 2`` over returns in [-1, 1] is its MCTSBot default).
The tree is one closed-loop tree over the moves from the root; with hidden
information it is a tree of information sets of the searcher (the same move
sequence from different samples meets in one node) and a decision node's UCB1
counts only the children legal in the current sample (availability).

:func:`generic_search` takes the game's kernels as its first arguments and is
inlined (with every phase that calls a kernel) into a kernel that names them as
globals: a function that takes a jitted function as an argument is compiled per
process and never served from numba's cache, one that calls it as a global is.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.generic import CHANCE_PLAYER, SIMULTANEOUS
from games.rng import rng_integer, rng_split, rng_uniform

from .backup import record_visit
from .clock import budget_exhausted, deadline_ns, monotonic_ns
from .decoupled import (
    NO_SLOT, claim_slot, encode_joint, expand_joint, find_joint_child, record_joint, reset_decoupled,
    select_decoupled,
)
from .expansion import expand, random_untried_legal
from .selection import (
    most_visited_child, sample_outcome, select_ucb1_untried_first, select_ucb_among_legal_children, tie_noise,
)
from .tree import NO_PARENT, ROOT_INDEX, reset_tree

#: Rollout policies (``GenericParams.rollout_policy``).
ROLLOUT_RANDOM = 0
ROLLOUT_GREEDY = 1
#: ``node_player`` of the root and of a chance node's children (no player chose the move).
NO_PLAYER = -1


class GenericParams(NamedTuple):
    """The settings of one generic search (built once from the agent's config)."""

    exploration: float
    """UCB1 constant c, on the scale of the game's returns."""
    epsilon: float
    """Tie noise of the final choice at the root."""
    rollout_policy: int
    """ROLLOUT_RANDOM or ROLLOUT_GREEDY."""
    greedy_epsilon: float
    """Probability of a random move in a greedy rollout."""
    max_rollout_depth: int
    """Moves of a rollout at most (0: to the end)."""
    determinizations: int
    """0: a fresh determinization per iteration; k > 0: k fixed samples in turn."""


class GenericArrays(NamedTuple):
    """The per-agent arrays of a generic search besides the Tree (allocated once)."""

    node_player: np.ndarray     # int8[N]: whose value a node's value sum holds
    joint: np.ndarray           # int64[P]: scratch joint action
    acting: np.ndarray          # bool[P]: scratch, who acts at a simultaneous node
    world_rngs: np.ndarray      # uint64[max(1, D), 2]: the fixed determinizations' seeds
    world_rng: np.ndarray       # uint64[2]: scratch


# --------------------------------------------------------------- stand-ins
# What a game without chance, hidden information or a heuristic is compiled with:
# never called (the flags fold their branches away), but typed like the real ones.
@nb.njit(cache=True)
def no_chance_outcomes(state):
    return np.ones(1, dtype=np.float64)


@nb.njit(cache=True)
def no_apply_chance(state, outcome):
    pass


@nb.njit(cache=True)
def no_determinize(out, observation, player, rng):
    pass


@nb.njit(cache=True)
def no_heuristic(root, state, player):
    return 0.0


# --------------------------------------------------------------- phases
@nb.njit(cache=True, inline="always")
def random_legal(legal, rng):
    """A uniformly random action with ``legal[a]``, or -1 if none (one draw if any)."""
    n = 0
    for a in range(legal.shape[0]):
        if legal[a]:
            n += 1
    if n == 0:
        return -1
    k = rng_integer(rng, n)
    for a in range(legal.shape[0]):
        if legal[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@nb.njit(cache=True, inline="always")
def widened(legal, width):
    """``legal`` (bool[A]) itself, or padded with False to ``width`` entries when the
    tree is wider (chance nodes with more outcomes than the game has actions)."""
    if legal.shape[0] >= width:
        return legal
    out = np.zeros(width, dtype=np.bool_)
    out[:legal.shape[0]] = legal
    return out


@nb.njit(cache=True, inline="always")
def chance_step(chance_outcomes, apply_chance, state, rng):
    """Sample a chance outcome by its probability and play it; returns it."""
    probs = chance_outcomes(state)
    total = 0.0
    for k in range(probs.shape[0]):
        total += probs[k]
    outcome = sample_outcome(probs, total, rng)
    apply_chance(state, outcome)
    return outcome


@nb.njit(cache=True, inline="always")
def greedy_action(copy_into, legal_actions, step, heuristic, root, state, scratch, player, joint,
                  greedy_epsilon, rng):
    """The rollout move of ``player`` (alone to move): with probability
    ``greedy_epsilon`` a random legal one, else the legal one whose next state the
    game's heuristic values most for ``player`` (ties to the first)."""
    legal = legal_actions(state, player)
    if rng_uniform(rng) < greedy_epsilon:
        return random_legal(legal, rng)
    best = -1
    best_value = -np.inf
    for a in range(legal.shape[0]):
        if not legal[a]:
            continue
        copy_into(scratch, state)
        joint[:] = 0
        joint[player] = a
        step(scratch, joint)
        value = heuristic(root, scratch, player)
        if value > best_value:
            best_value = value
            best = a
    return best


@nb.njit(cache=True, inline="always")
def rollout(copy_into, current_player, legal_actions, step, is_terminal, returns, chance_outcomes,
            apply_chance, heuristic, has_chance, has_heuristic, root, state, scratch, joint, params, rng):
    """Play ``state`` on (in place) by the rollout policy; returns float64[P], the
    returns at the end, or the heuristic values (else the returns) where the depth
    limit cut the rollout."""
    depth = 0
    num_players = joint.shape[0]
    while not is_terminal(state) and (params.max_rollout_depth == 0 or depth < params.max_rollout_depth):
        mover = current_player(state)
        if has_chance and mover == CHANCE_PLAYER:
            chance_step(chance_outcomes, apply_chance, state, rng)
        elif mover == SIMULTANEOUS:
            for p in range(num_players):
                a = random_legal(legal_actions(state, p), rng)
                joint[p] = a if a >= 0 else 0
            step(state, joint)
        else:
            if has_heuristic and params.rollout_policy == ROLLOUT_GREEDY:
                a = greedy_action(copy_into, legal_actions, step, heuristic, root, state, scratch, mover,
                                  joint, params.greedy_epsilon, rng)
            else:
                a = random_legal(legal_actions(state, mover), rng)
            joint[:] = 0
            joint[mover] = a if a >= 0 else 0
            step(state, joint)
        depth += 1
    if has_heuristic and not is_terminal(state):
        values = np.empty(num_players, dtype=np.float64)
        for p in range(num_players):
            values[p] = heuristic(root, state, p)
        return values
    return returns(state)


@nb.njit(cache=True)
def backup_generic(tree, stats, node_player, leaf, values, width):
    """Add ``values`` (float64[P]) from ``leaf`` to the root: each node one visit and the
    value of the player who chose the move into it (nothing for the root and a chance
    node's children); where the parent is a simultaneous node, each acting player's
    value to its action's statistics there."""
    parents = tree.parents
    node = leaf
    while node != NO_PARENT:
        p = node_player[node]
        value = values[p] if p >= 0 else 0.0
        record_visit(tree, node, value, value)
        parent = parents[node]
        if parent != NO_PARENT:
            slot = stats.node_slot[parent]
            if slot != NO_SLOT:
                record_joint(stats, slot, stats.joint_code[node], values, width)
        node = parent


@nb.njit(cache=True)
def root_simultaneous_action(tree, stats, legal, player, epsilon, rng):
    """``player``'s most visited action at a simultaneous root (tie noise), else its
    first legal action when the root has no statistics."""
    slot = stats.node_slot[ROOT_INDEX]
    best = -1
    best_value = -np.inf
    for a in range(legal.shape[0]):
        if not legal[a]:
            continue
        visits = 0.0 if slot == NO_SLOT else float(stats.slot_visits[slot, player, a])
        value = tie_noise(visits, epsilon, rng)
        if value > best_value:
            best_value = value
            best = a
    return best


# --------------------------------------------------------------- the search
@nb.njit(cache=True, inline="always")
def generic_search(copy_state, copy_into, current_player, legal_actions, step, is_terminal, returns,
                   chance_outcomes, apply_chance, determinize, heuristic,
                   has_chance, has_determinize, has_heuristic, simultaneous_moves,
                   tree, stats, arrays, observation, player, params, max_iterations, time_limit, rng):
    """One decision of ``player`` from ``observation``: (action, iterations).

    Args:
        copy_state .. heuristic: the game's kernels (games.generic.GenericKernels;
            stand-ins where it declares none).
        has_chance, has_determinize, has_heuristic, simultaneous_moves: bool
            constants of the calling kernel (what the game declares).
        tree: Tree of capacity N and width W (>= num_actions, >= max_chance_outcomes).
        stats: DecoupledStats (one slot suffices without simultaneous moves).
        arrays: GenericArrays.
        observation: the game's state as ``player`` sees it.
        params: GenericParams; max_iterations: int; time_limit: float seconds (0: none).
        rng: uint64[2], advanced.
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    reset_tree(tree)
    reset_decoupled(stats)
    node_player = arrays.node_player
    node_player[ROOT_INDEX] = NO_PLAYER
    joint = arrays.joint
    acting = arrays.acting
    num_players = joint.shape[0]
    width = tree.children.shape[1]
    root = copy_state(observation)
    sim = copy_state(observation)
    scratch = copy_state(observation)
    worlds = params.determinizations
    if has_determinize and worlds > 0:
        for w in range(worlds):  # the fixed samples' generators, split off the search's
            arrays.world_rngs[w, :] = rng_split(rng)
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        # the world of this iteration
        if has_determinize:
            if worlds > 0:
                arrays.world_rng[:] = arrays.world_rngs[iterations % worlds]
                determinize(sim, observation, player, arrays.world_rng)
            else:
                determinize(sim, observation, player, rng)
        else:
            copy_into(sim, root)
        # selection and expansion: down the known part of the tree, one node added
        node = ROOT_INDEX
        while not is_terminal(sim):
            mover = current_player(sim)
            if has_chance and mover == CHANCE_PLAYER:
                outcome = chance_step(chance_outcomes, apply_chance, sim, rng)
                child = tree.children[node, outcome]
                if child < 0:
                    child = expand(tree, node, outcome)
                    if child >= 0:
                        node_player[child] = NO_PLAYER
                        stats.node_slot[child] = NO_SLOT
                        node = child
                    break
                node = child
            elif simultaneous_moves and mover == SIMULTANEOUS:
                slot = stats.node_slot[node]
                if slot == NO_SLOT:
                    slot = claim_slot(stats, node)
                visits = tree.node_visits[node]
                for p in range(num_players):
                    legal = legal_actions(sim, p)
                    acting[p] = legal.any()
                    if not acting[p]:
                        joint[p] = 0
                    elif slot == NO_SLOT:
                        joint[p] = random_legal(legal, rng)
                    else:
                        joint[p] = select_decoupled(stats, slot, p, legal, visits, params.exploration, rng)
                step(sim, joint)
                if slot == NO_SLOT:  # no statistics left: roll out from here
                    break
                code = encode_joint(joint, acting, width)
                child = find_joint_child(tree, stats, node, code)
                if child < 0:
                    child = expand_joint(tree, stats, node, code)
                    if child >= 0:
                        node_player[child] = NO_PLAYER
                        node = child
                    break
                node = child
            else:
                legal = legal_actions(sim, mover)
                if has_determinize:  # the legal set depends on the sample: availability counts
                    action = random_untried_legal(tree, node, legal, rng)
                    if action < 0:
                        action = select_ucb_among_legal_children(tree, node, widened(legal, width),
                                                                 params.exploration / np.sqrt(2.0), rng)
                else:
                    action = select_ucb1_untried_first(tree, node, legal, params.exploration, rng)
                if action < 0:  # nobody to move has a move: the game breaks its contract
                    break
                joint[:] = 0
                joint[mover] = action
                step(sim, joint)
                child = tree.children[node, action]
                if child < 0:
                    child = expand(tree, node, action)
                    if child >= 0:
                        node_player[child] = mover
                        stats.node_slot[child] = NO_SLOT
                        node = child
                    break
                node = child
        values = rollout(copy_into, current_player, legal_actions, step, is_terminal, returns,
                         chance_outcomes, apply_chance, heuristic, has_chance, has_heuristic,
                         root, sim, scratch, joint, params, rng)
        backup_generic(tree, stats, node_player, node, values, width)
        iterations += 1
    # the move: the most visited (decision root) or this player's most visited (simultaneous root)
    if simultaneous_moves and current_player(root) == SIMULTANEOUS:
        action = root_simultaneous_action(tree, stats, legal_actions(root, player), player,
                                          params.epsilon, rng)
    else:
        action = most_visited_child(tree, ROOT_INDEX, params.epsilon, rng)
    return np.int64(action), iterations
