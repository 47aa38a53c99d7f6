"""Game-independent search core: a struct-of-arrays tree and the UCT phases.

    >>> from agents.search import new_tree, ROOT_INDEX
    >>> tree = new_tree(capacity=1000, num_actions=6)

Drivers (``agents/pommerman/mcts.py`` is the reference) preallocate one
:class:`Tree` per agent, call :func:`reset_tree` per decision and run their
whole search in one ``@njit`` kernel that calls :func:`select_uct`,
:func:`expand`, :func:`backup` and :func:`most_visited_child` directly.
Stochastic games (``agents/birds/mcts.py``) add chance nodes with the phases
of :mod:`agents.search.chance` (:func:`select_ucb1_legal`, :func:`sample_outcome`,
:func:`select_outcome_proportional`, :func:`select_outcome_pw_ucb`, :func:`expand_as`).
Multi-player and open-loop drivers (``agents/scotland_yard``) use the phases of
``multiplayer.py``: per-node players, value vectors, legal masks.
"""
from .chance import (
    expand_as, sample_outcome, select_outcome_proportional, select_outcome_pw_ucb, select_ucb1_legal,
)
from .clock import deadline_ns, monotonic_ns
from .tree import (
    CHANCE, DECISION, ILLEGAL, NO_ACTION, NO_PARENT, ROOT_INDEX, UNVISITED, Tree,
    capacity, clear_node, is_full, mean_value, new_tree, reset_tree, root_child_value,
)
from .multiplayer import backup_by_player, select_ucb_legal
from .uct import (
    backup, backup_alternating, best_mean_child, expand, mark_illegal, most_visited_child, normalise,
    random_untried_action, random_untried_legal, recommend_root_action, record_visit, select_uct, select_uct_bonus, tie_noise, untried_count,
)

__all__ = [
    "CHANCE", "DECISION", "ILLEGAL", "NO_ACTION", "NO_PARENT", "ROOT_INDEX", "UNVISITED",
    "Tree", "backup", "backup_alternating", "backup_by_player", "best_mean_child", "capacity",
    "clear_node", "deadline_ns", "expand", "expand_as", "is_full", "mark_illegal", "mean_value",
    "monotonic_ns", "most_visited_child", "new_tree", "normalise", "random_untried_action",
    "random_untried_legal", "recommend_root_action", "record_visit", "reset_tree", "root_child_value", "sample_outcome", "select_outcome_proportional", "select_outcome_pw_ucb",
    "select_ucb1_legal", "select_ucb_legal", "select_uct", "select_uct_bonus", "tie_noise", "untried_count",
]
