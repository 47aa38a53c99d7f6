"""Game-independent search core: a struct-of-arrays tree and the phases of a search.

    >>> from agents.search import new_tree, ROOT_INDEX
    >>> tree = new_tree(capacity=1000, num_actions=6)

The public face: drivers import from here, never from the modules, which are
grouped by concept:

==============  ==============================================================
``tree``        the :class:`Tree` arrays, node kinds, capacity, depth summary
``expansion``   untried actions, :func:`expand` / :func:`expand_as`, illegal marks
``selection``   the UCB rules at decision nodes, outcome rules at chance nodes,
                the final choice at the root, tie noise
``backup``      values from the leaf to the root (one player, alternating, by player)
``clock``       iteration and wall-clock budgets inside kernels
``config``      :class:`SearchConfig`, the parameters every search shares
``decoupled``   decoupled UCT at simultaneous-move nodes: per-player statistics,
                children by joint action
``generic``     the UCT search over any game's declared kernels (chance nodes,
                simultaneous moves, determinizations)
``per_game``    that search compiled for one game, cached on disk
==============  ==============================================================

Drivers (``agents/pommerman/mcts.py`` is the reference) preallocate one
:class:`Tree` per agent, call :func:`reset_tree` per decision and run their
whole search in one ``@njit`` kernel that calls :func:`select_uct`,
:func:`expand`, :func:`backup` and :func:`most_visited_child` directly, and
stop on :func:`budget_exhausted`. Stochastic games (``agents/birds/mcts.py``)
add chance nodes (:func:`expand_as`, :func:`sample_outcome`, ...); multi-player
open-loop searches (``agents/scotland_yard``) keep a player per node and back
up value vectors (:func:`select_ucb_among_legal_children`, :func:`backup_by_player`).
"""
from .backup import backup, backup_alternating, backup_by_player, record_visit
from .clock import budget_exhausted, deadline_ns, monotonic_ns
from .config import Epsilon, Exploration, MaxNodes, SearchConfig
from .decoupled import DecoupledStats, new_decoupled_stats
from .expansion import (
    expand, expand_as, mark_illegal, random_untried_action, random_untried_legal, untried_count,
)
from .selection import (
    best_mean_child, most_visited_child, normalise, recommend_root_action, sample_outcome,
    select_outcome_proportional, select_outcome_pw_ucb, select_ucb1_untried_first,
    select_ucb_among_legal_children, select_uct, select_uct_bonus, tie_noise,
)
from .tree import (
    CHANCE, DECISION, ILLEGAL, NO_ACTION, NO_PARENT, ROOT_INDEX, UNVISITED, Tree,
    borrowed_tree, capacity, clear_node, depth_summary, is_full, mean_value, new_tree, reset_tree, root_child_value,
)
from .generic import ROLLOUT_GREEDY, ROLLOUT_RANDOM, GenericArrays, GenericParams  # noqa: E402
from .per_game import search_kernel  # noqa: E402

__all__ = [
    "CHANCE", "DECISION", "ILLEGAL", "NO_ACTION", "NO_PARENT", "ROOT_INDEX", "UNVISITED",
    "DecoupledStats", "Epsilon", "Exploration", "GenericArrays", "GenericParams", "MaxNodes",
    "ROLLOUT_GREEDY", "ROLLOUT_RANDOM", "SearchConfig", "Tree",
    "backup", "backup_alternating", "backup_by_player", "best_mean_child", "borrowed_tree", "budget_exhausted",
    "capacity", "clear_node", "deadline_ns", "depth_summary", "expand", "expand_as", "is_full",
    "mark_illegal", "mean_value", "monotonic_ns", "most_visited_child", "new_decoupled_stats", "new_tree",
    "normalise",
    "random_untried_action", "random_untried_legal", "recommend_root_action", "record_visit",
    "reset_tree",
    "root_child_value", "sample_outcome", "search_kernel", "select_outcome_proportional", "select_outcome_pw_ucb",
    "select_ucb1_untried_first", "select_ucb_among_legal_children", "select_uct",
    "select_uct_bonus", "tie_noise", "untried_count",
]
