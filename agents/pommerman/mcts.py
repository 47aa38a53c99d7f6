"""Open-loop UCT for Pommerman, as the Java framework's ``SingleTreeNode``.

One decision is one call of :func:`mcts_search` (in a kernel per ruleset). Each iteration::

    copy the search root into the scratch state
    descend: at a fully expanded node pick a child by UCT and re-simulate its
             action (opponents random: open loop, the tree stores actions,
             not states); at a node with untried actions expand a random one
    roll out: own moves random but not into flames, opponents random, until
              ``rollout_depth`` ticks from the root or the end of the game
    evaluate the final state with the framework's heuristic (no discount)
    back the value up to the root

and the most visited root action is played. No tree reuse between decisions.

With ``profile = "java"`` (the default in the java ruleset) the framework's
own behaviour is reproduced, slips included (see ``_common``: the safe-action
index slip, the first root's wood as the heuristic's divisor, hidden power-ups
in the model at full observability, iterations that stop when the searcher's
result is decided, a searcher dying in a tie scored by the heuristic).

Remaining deviations from the Java framework (all deliberate):

- time budget: the kernel reads a monotonic clock every iteration and does not
  start an iteration it expects (from the mean so far) to overrun the
  deadline; Java stops when the time left is under twice the mean iteration
  time or under 5 ms, so it uses about 35 of 40 ms;
- profile ``arena``: own rollout moves are uniform over the actions not
  stepping into flames (Java's ``safeRandomAction`` returns an index into a
  shrinking list, which skews the draw), and the other switches are off;
- no random action is drawn for dead opponents (only the random stream
  differs);
- fogged agents are absent from the model (see ``_common.py``).
"""
from __future__ import annotations

from typing import Annotated, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field

from games.pommerman.kernels import M_RULESET, N_ACTIONS, STATE_RULESET, STOP, copy_into
from games.validation import config_class

from ..registry import register

from ..search import (
    ROOT_INDEX, backup, borrowed_tree, budget_exhausted, expand, most_visited_child, new_tree,
    random_untried_action, reset_tree, root_child_value, SearchConfig, select_uct,
)
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import (
    KERNEL_RULESETS, advance, begin_search, safe_random_action, search_over, search_value,
)


@nb.njit(cache=True, inline="always")
def tree_policy(tree, state, player, rollout_depth, exploration, epsilon, joint, hidden, n_hidden, rng,
                quirks=0, ruleset=STATE_RULESET):
    """Descend from the root re-simulating actions in ``state``; expand one node (the
    tree policy of :func:`simulate`, for searches with rollouts of their own: FEMCTS).

    Returns: int, the node the rollout starts from (a new leaf, or a node at
    the depth limit / end of game / full tree; with ``QUIRK_STOP_AT_OWN_END``
    also where the searcher's result got decided).

    One tick site (:func:`~._common.advance`) for both kinds of step down. Inlined into
    the decision kernels that call it: as a call it passed the tree and the state by
    value (~130 machine words) every iteration.
    """
    node = np.int64(ROOT_INDEX)  # not a literal: numba would compile the callees for Literal[int](0) too
    while not search_over(state, player, quirks) and tree.depth[node] < rollout_depth:
        action = random_untried_action(tree, node, rng)
        expanded = action >= 0
        if expanded:
            child = expand(tree, node, action)
            if child < 0:  # tree full: roll out from here
                return node
        else:
            action = select_uct(tree, node, exploration, epsilon, rng)
            child = tree.children[node, action]
        advance(state, player, action, joint, hidden, n_hidden, rng, ruleset)
        if expanded:
            return child
        node = child
    return node


@nb.njit(cache=True, inline="always")
def simulate(tree, state, player, rollout_depth, exploration, epsilon, joint, hidden, n_hidden, rng,
             quirks=0, ruleset=STATE_RULESET):
    """One iteration's ticks in ``state``: the tree policy, then the rollout.

    Tree policy: descend from the root re-simulating actions (at a fully expanded node
    the UCT child's action, at a node with untried actions a random one, expanded, which
    ends the descent; a full tree ends it without a tick). Rollout: from the leaf's depth,
    own moves random but not into flames (:func:`~._common.safe_random_action`), until
    ``rollout_depth`` ticks from the root. Either stops at the end of the game (with
    ``QUIRK_STOP_AT_OWN_END`` also where the searcher's result got decided).

    Returns: int, the leaf (the node the rollout started from), for the backup.

    One loop with one tick site (:func:`~._common.advance`) and one end test for both
    phases: each inlined copy of the tick is compiled on a fresh cache, and the two
    phases as separate loops had three. The draws and ticks are the same as the phases
    as two loops. Inlined into the decision kernels: as a call it passed the tree and
    the state by value (~130 machine words) every iteration.
    """
    node = np.int64(ROOT_INDEX)  # not a literal: numba would compile the callees for Literal[int](0) too
    leaf = -1  # -1 while descending the tree
    depth = 0  # the rollout's ticks from the root
    while not search_over(state, player, quirks):
        if leaf < 0:
            if tree.depth[node] >= rollout_depth:
                break
            action = random_untried_action(tree, node, rng)
            if action >= 0:
                child = expand(tree, node, action)
                if child < 0:  # tree full: roll out from here, no tick
                    leaf = node
                    depth = tree.depth[node]
                    continue
                leaf = child
                depth = tree.depth[child]
            else:
                action = select_uct(tree, node, exploration, epsilon, rng)
                node = tree.children[node, action]
        else:
            if depth >= rollout_depth:
                break
            action = safe_random_action(state, player, rng, quirks)
            depth += 1
        advance(state, player, action, joint, hidden, n_hidden, rng, ruleset)
    return node if leaf < 0 else leaf


class MctsParams(NamedTuple):
    """An MCTS agent's search settings (built once per agent: :meth:`MCTSAgent.__init__`).

    Fields:
        max_iterations: int; time_limit: float seconds (0 = none): the budget
            (``Budget.kernel_args``); the search stops at whichever comes first, after at
            least one iteration. With a time limit it does not start an iteration it
            expects to overrun.
        exploration: float, the UCT constant K; epsilon: float, the tie-breaking noise.
        rollout_depth: int, ticks simulated per iteration counted from the root.
        quirks: int, ``QUIRK_*`` bits of the profile (see ``_common.prepare_search``).
    """

    max_iterations: int
    time_limit: float
    exploration: float
    epsilon: float
    rollout_depth: int
    quirks: int


@nb.njit(cache=True, inline="always")
def mcts_search(observation, player, tree, root, scratch, params, rng, max_wood, ruleset):
    """One MCTS decision (inlined into the decision kernel of each ruleset,
    :data:`MCTS_DECIDE`).

    Args:
        observation: PommermanState, the agent's observation (unchanged).
        player: int, the searching agent's id.
        tree: Tree with 6 actions (reset here).
        root, scratch: preallocated PommermanStates (overwritten).
        params: :class:`MctsParams`, the budget and the search's settings.
        rng: uint64[2] (advanced).
        max_wood: int, see ``_common.prepare_search``.
        ruleset: RULESET_CANONICAL or RULESET_JAVA, the observation's (a constant).
    Returns:
        (action, iterations): int64, int64.
    """
    quirks, rollout_depth = params.quirks, params.rollout_depth
    exploration, epsilon = params.exploration, params.epsilon
    root, scratch, hidden, joint, n_hidden, root_wood, rng, start, deadline = begin_search(
        observation, root, scratch, rng, quirks, max_wood, params.time_limit)
    tree = borrowed_tree(tree)  # a borrowed view (no reference counts) for the loop
    reset_tree(tree)
    iterations = 0
    while not budget_exhausted(iterations, params.max_iterations, start, deadline):
        copy_into(scratch, root)
        leaf = simulate(tree, scratch, player, rollout_depth, exploration, epsilon, joint, hidden, n_hidden,
                        rng, quirks, ruleset)
        value = search_value(root, root_wood, scratch, player, quirks)
        backup(tree, leaf, value)
        iterations += 1
    action = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    return action, iterations


def _mcts_decide_for(ruleset):
    """The decision kernel: :func:`mcts_search` with ``ruleset`` (RULESET_CANONICAL /
    RULESET_JAVA) a constant of the kernel (a closure value, which numba folds as it does
    globals), so it compiles only its own rules; numba caches each closure under its own
    key (the closure values are part of it)."""

    @nb.njit(cache=True)
    def mcts_decide(observation, player, tree, root, scratch, params, rng, max_wood=0):
        return mcts_search(observation, player, tree, root, scratch, params, rng, max_wood, ruleset)

    return mcts_decide


#: The decision kernel by the observation's ruleset (``meta[M_RULESET]``): each compiles
#: only its own rules (seconds on a fresh numba cache).
MCTS_DECIDE = {ruleset: _mcts_decide_for(ruleset) for ruleset in KERNEL_RULESETS}


# --------------------------------------------------------------------- the agent
@config_class
class MCTSConfig(PommermanSearchConfig, SearchConfig):
    """Open-loop UCT (the Java framework's MCTSPlayer defaults)."""

    rollout_depth: Annotated[int, Field(ge=1, le=1000)] = 8
    """Ticks simulated per iteration, counted from the root (tree + rollout);
    the FEMCTS study's runner uses 12."""


def mcts_params(config: MCTSConfig, budget, quirks: int) -> MctsParams:
    """The :class:`MctsParams` of an agent with ``config``, ``budget`` (:class:`~agents.api.Budget`)
    and the profile's ``quirks`` (each field of the type its kernel is compiled for)."""
    max_iterations, seconds = budget.kernel_args()
    return MctsParams(int(max_iterations), float(seconds), float(config.exploration),
                      float(config.epsilon), int(config.rollout_depth), int(quirks))


@register
class MCTSAgent(PommermanSearchAgent):
    """Open-loop UCT from the agent's observation; most visited root action."""

    name = "mcts"
    compile_seconds = 11.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents mcts,mcts,mcts,mcts)
    Config = MCTSConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        capacity = min(max_iterations + 1, config.max_nodes)
        self._tree = new_tree(capacity, N_ACTIONS)
        self._params = mcts_params(config, budget, self.quirks)

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        action, iterations = MCTS_DECIDE[int(observation.meta[M_RULESET])](
            observation, self.seat, self._tree, self._root, self._scratch, self._params, self._rng,
            self.model_max_wood(observation))
        self.last_value = root_child_value(self._tree, action)
        return int(action), int(iterations)
