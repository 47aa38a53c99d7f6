"""``mcts_generic``: UCT for any game that declares the generic kernels or the Python
members searches need (``games/CONTRACT.md``), with no agent code of the game's own.

The search (:mod:`agents.search.generic`) runs in numba over the game's
``generic_kernels`` (one kernel per game, compiled once and cached on disk:
:mod:`agents.search.per_game`), or, for a game that implements only the Python
:class:`games.api.Game` API (``searchable``), the same algorithm through Python calls
(:mod:`agents.generic.python_search`): slower, the same moves from the same seed where
both paths exist (the tests diff them on connect four).
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np
from pydantic import Field

from games.generic import SIMULTANEOUS
from games.rng import make_rng
from games.validation import Real, config_class, one_of

from ..api import Agent
from ..registry import register
from ..search import (
    ROLLOUT_GREEDY, ROLLOUT_RANDOM, Epsilon, Exploration, GenericArrays, GenericParams, MaxNodes, SearchConfig,
    new_decoupled_stats, new_tree, root_child_value, search_kernel,
)

ROLLOUTS = {"random": ROLLOUT_RANDOM, "greedy": ROLLOUT_GREEDY}
PATHS = ("auto", "kernels", "python")


@config_class
class GenericMCTSConfig(SearchConfig):
    """UCT for any game (OpenSpiel's MCTSBot defaults: c = 2, random rollouts to the end)."""

    exploration: Exploration = 2.0
    """UCB1 constant c: ``mean + c * sqrt(ln N / n)`` over the game's returns as they are
    (not normalised: c = 2 suits returns in [-1, 1]; scale it with the returns)."""
    epsilon: Epsilon = 1e-6
    """Tie noise of the final choice among equally visited root moves."""
    max_nodes: MaxNodes = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1). When the
    tree is full, iterations go on without expanding."""
    rollout: Annotated[str, one_of(ROLLOUTS)] = "random"
    """Rollout policy: ``random`` (uniform legal moves) or ``greedy`` (epsilon-greedy on
    the game's ``heuristic`` kernel, one step ahead; random where the game has none,
    and on the Python path)."""
    greedy_epsilon: Annotated[Real, Field(ge=0, le=1)] = 0.1
    """Probability of a random move in a greedy rollout."""
    max_rollout_depth: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    """Moves of a rollout at most (0: to the end of the game). A cut rollout is worth
    the game's heuristic where it declares one, else its returns then (zeros)."""
    determinizations: Annotated[int, Field(ge=0, le=100_000)] = 0
    """Hidden information (a game with a ``determinize`` kernel or method): 0 samples a
    fresh world from the observation every iteration (one tree over the searcher's
    information sets); k > 0 cycles through k fixed samples. Unused where nothing is hidden."""
    path: Annotated[str, one_of(PATHS)] = "auto"
    """``kernels`` (numba over the game's generic kernels), ``python`` (the game's Python
    members: for games without kernels, and to compare) or ``auto`` (kernels where the
    game declares them)."""


def search_path(game_cls, path: str) -> str:
    """``kernels`` or ``python``: how ``path`` searches a game of class ``game_cls``;
    ValueError naming ``params.path`` if the game offers neither or not the one asked."""
    has_kernels = game_cls.generic_kernels is not None
    if path == "kernels" or (path == "auto" and has_kernels):
        if not has_kernels:
            raise ValueError(f"params.path: {game_cls.__name__} declares no generic_kernels "
                             f"(games/CONTRACT.md); path = 'python' searches through its Python members")
        return "kernels"
    if not game_cls.searchable:
        raise ValueError(f"{game_cls.__name__} declares neither generic_kernels nor searchable = True: "
                         f"mcts_generic cannot plan on it (games/CONTRACT.md)")
    return "python"


@register
class GenericMCTSAgent(Agent):
    """UCT with random or heuristic rollouts, chance nodes, decoupled UCT at
    simultaneous moves and determinization for hidden information, on any game that
    declares them (``games/CONTRACT.md``)."""

    name = "mcts_generic"
    Config = GenericMCTSConfig
    plays_any_description = "any game declaring generic kernels or searchable (games/CONTRACT.md)"
    compile_seconds = 10.0  # CPU s of a first decision on a fresh cache: connect four 11.5 (its kernels included), Pommerman ~40, 2026-12-07

    @classmethod
    def plays_game(cls, game_name: str) -> bool:
        from games.registry import game_class

        game_cls = game_class(game_name)
        return game_cls is not None and (game_cls.generic_kernels is not None or game_cls.searchable)

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        from games.registry import make_game_for

        search_path(type(make_game_for(game_config)), config.path)

    @classmethod
    def resolved_params(cls, config, game_config):
        from games.registry import make_game_for

        return {"path": search_path(type(make_game_for(game_config)), config.path)}

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._search = None  # built at the first game: a plugin game registers when it is loaded

    def _build(self) -> None:
        from games.registry import make_game_for

        game = make_game_for(self.game_config)
        game_cls = type(game)
        self.path = search_path(game_cls, self.config.path)
        c = self.config
        self._params = GenericParams(float(c.exploration), float(c.epsilon), ROLLOUTS[c.rollout],
                                     float(c.greedy_epsilon), int(c.max_rollout_depth),
                                     int(c.determinizations))
        iterations = self.budget.iterations
        capacity = iterations + 1 if iterations is not None else int(c.max_nodes)
        if self.path == "python":
            from .python_search import PythonSearch

            self._search = PythonSearch(game, self._params, capacity)
            return
        kernels = game_cls.generic_kernels
        self._search = search_kernel(kernels, f"{game_cls.__name__}.generic_kernels")
        players, actions = int(game.num_players), int(game.num_actions)
        width = max(actions, int(kernels.max_chance_outcomes))
        self._tree = new_tree(capacity, width)
        self._stats = new_decoupled_stats(capacity, capacity if kernels.simultaneous else 1, players, width)
        self._arrays = GenericArrays(
            node_player=np.full(capacity, -1, dtype=np.int8),
            joint=np.zeros(players, dtype=np.int64),
            acting=np.zeros(players, dtype=np.bool_),
            world_rngs=np.zeros((max(1, c.determinizations), 2), dtype=np.uint64),
            world_rng=np.zeros(2, dtype=np.uint64),
        )
        self._simultaneous = bool(kernels.simultaneous)
        self._current_player = kernels.current_player

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        if self._search is None:
            self._build()
        self._rng = make_rng(seed)

    def decide(self, observation):
        max_iterations, seconds = self.budget.kernel_args()
        if self.path == "python":
            action, iterations, value = self._search.decide(observation, self.seat, max_iterations,
                                                           seconds, self._rng)
            self.last_value = value
            return action, iterations
        action, iterations = self._search(self._tree, self._stats, self._arrays, observation, self.seat,
                                          self._params, max_iterations, seconds, self._rng)
        if self._simultaneous and self._current_player(observation) == SIMULTANEOUS:
            slot = int(self._stats.node_slot[0])
            n = self._stats.slot_visits[slot, self.seat, int(action)] if slot >= 0 else 0
            self.last_value = float(self._stats.slot_value_sum[slot, self.seat, int(action)] / n) if n else math.nan
        else:
            self.last_value = root_child_value(self._tree, int(action))
        return int(action), int(iterations)
