"""Open-loop UCT for Pommerman, as the Java framework's ``SingleTreeNode``.

One decision is one call of :func:`mcts_decide`. Each iteration::

    copy the search root into the scratch state
    descend: at a fully expanded node pick a child by UCT and re-simulate its
             action (opponents random: open loop, the tree stores actions,
             not states); at a node with untried actions expand a random one
    roll out: own moves random but not into flames, opponents random, until
              ``rollout_depth`` ticks from the root or the end of the game
    evaluate the final state with the framework's heuristic (no discount)
    back the value up to the root

and the most visited root action is played. No tree reuse between decisions.

Deviations from the Java framework (all deliberate):

- time budget: the kernel reads a monotonic clock every iteration and does not
  start an iteration it expects (from the mean so far) to overrun the
  deadline; Java stops when the time left is under twice the mean iteration
  time or under 5 ms, so it uses about 35 of 40 ms;
- own rollout moves are uniform over the actions not stepping into flames
  (Java's ``safeRandomAction`` returns an index into a shrinking list, which
  skews the draw);
- no random action is drawn for dead opponents (only the random stream
  differs);
- fogged agents are absent from the model (see ``_common.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb

from games.pommerman.kernels import N_ACTIONS, STOP, copy_into, heuristic

from ..registry import register

from ..search.clock import budget_exhausted, deadline_ns, monotonic_ns
from ..search.tree import ROOT_INDEX, new_tree, reset_tree, root_child_value
from ..search.uct import backup, expand, most_visited_child, random_untried_action, select_uct
from ._agent import PommermanAgent, can_act, check_param
from ._common import advance, is_over, prepare_search, safe_random_action


@nb.njit(cache=True)
def tree_policy(tree, state, player, rollout_depth, exploration, epsilon, joint, hidden, n_hidden, rng):
    """Descend from the root re-simulating actions in ``state``; expand one node.

    Returns: int, the node the rollout starts from (a new leaf, or a node at
    the depth limit / end of game / full tree).
    """
    node = ROOT_INDEX
    while not is_over(state) and tree.depth[node] < rollout_depth:
        action = random_untried_action(tree, node, rng)
        if action >= 0:
            child = expand(tree, node, action)
            if child < 0:  # tree full: roll out from here
                return node
            advance(state, player, action, joint, hidden, n_hidden, rng)
            return child
        action = select_uct(tree, node, exploration, epsilon, rng)
        advance(state, player, action, joint, hidden, n_hidden, rng)
        node = tree.children[node, action]
    return node


@nb.njit(cache=True)
def rollout(state, player, depth, rollout_depth, joint, hidden, n_hidden, rng):
    """Random play (own moves avoid flames) from ``depth`` to ``rollout_depth`` ticks."""
    while depth < rollout_depth and not is_over(state):
        action = safe_random_action(state, player, rng)
        advance(state, player, action, joint, hidden, n_hidden, rng)
        depth += 1


@nb.njit(cache=True)
def mcts_decide(observation, player, tree, root, scratch, max_iterations, time_limit,
                exploration, epsilon, rollout_depth, rng):
    """One MCTS decision.

    Args:
        observation: PommermanState, the agent's observation (unchanged).
        player: int, the searching agent's id.
        tree: Tree with 6 actions (reset here).
        root, scratch: preallocated PommermanStates (overwritten).
        max_iterations: int; time_limit: float seconds (0 = none); the search
            stops at whichever comes first, after at least one iteration. With a
            time limit it does not start an iteration it expects to overrun.
        exploration (K), epsilon: floats; rollout_depth: int ticks from the root.
        rng: uint64[2] (advanced).
    Returns:
        (action, iterations): int64, int64.
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    hidden, joint, n_hidden, root_wood = prepare_search(root, observation)
    reset_tree(tree)
    iterations = 0
    while not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_into(scratch, root)
        leaf = tree_policy(tree, scratch, player, rollout_depth, exploration, epsilon,
                           joint, hidden, n_hidden, rng)
        rollout(scratch, player, tree.depth[leaf], rollout_depth, joint, hidden, n_hidden, rng)
        value = heuristic(root, root_wood, scratch, player)
        backup(tree, leaf, value)
        iterations += 1
    action = most_visited_child(tree, ROOT_INDEX, epsilon, rng)
    return action, iterations


# --------------------------------------------------------------------- the agent
@dataclass(frozen=True)
class MCTSConfig:
    """Open-loop UCT (the Java framework's MCTSPlayer defaults)."""

    exploration: float = math.sqrt(2)
    """UCB1 constant K (on values normalised to each node's observed range)."""
    rollout_depth: int = 8
    """Ticks simulated per iteration, counted from the root (tree + rollout);
    the FEMCTS study's runner uses 12."""
    epsilon: float = 1e-6
    """Tie-breaking noise and the guard added to visit counts."""
    max_nodes: int = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1).
    When the tree is full, iterations go on without expanding."""

    def __post_init__(self):
        check_param(isinstance(self.exploration, (int, float)) and 0 <= self.exploration <= 100,
               "exploration", f"must be a number in [0, 100], got {self.exploration!r}")
        check_param(isinstance(self.rollout_depth, int) and 1 <= self.rollout_depth <= 1000,
               "rollout_depth", f"must be an int in [1, 1000], got {self.rollout_depth!r}")
        check_param(isinstance(self.epsilon, (int, float)) and 0 < self.epsilon < 0.01,
               "epsilon", f"must be in (0, 0.01), got {self.epsilon!r}")
        check_param(isinstance(self.max_nodes, int) and 2 <= self.max_nodes <= 1 << 24,
               "max_nodes", f"must be an int in [2, 2**24], got {self.max_nodes!r}")


@register
class MCTSAgent(PommermanAgent):
    """Open-loop UCT from the agent's observation; most visited root action."""

    name = "mcts"
    Config = MCTSConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        capacity = min(max_iterations + 1, config.max_nodes)
        self._tree = new_tree(capacity, N_ACTIONS)

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        action, iterations = mcts_decide(
            observation, self.seat, self._tree, self._root, self._scratch, max_iterations, seconds,
            float(c.exploration), float(c.epsilon), int(c.rollout_depth), self._rng)
        self.last_value = root_child_value(self._tree, action)
        return int(action), int(iterations)
