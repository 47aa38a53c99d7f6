"""The agent interface: a named, configurable player with a per-decision budget.

An agent is a class registered in :mod:`agents.registry` under a name (or a
plugin: an installed entry point or an import path, :mod:`agents.plugins`), with a
frozen ``Config`` dataclass declared with :func:`games.validation.config_class`
(one docstring per field, its rule declared; errors name the field). Search
agents' configs inherit :class:`agents.search.config.SearchConfig`. The cluster builds
agents only through the registry::

    agent = make_agent("mcts", {"exploration": 1.4}, Budget(iterations=200), game_config)
    agent.begin_game(seat=0, seed=np.random.SeedSequence(42))
    action = agent.act(observation)

Search happens inside numba kernels; ``act`` is the only Python call per
decision. Agents that learn across games (FEMCTS populations, TD weights)
expose that state as a dict of numpy arrays (``learned_state`` /
``load_learned_state``), which the cluster saves after every game of a series
(as ``.npz``) so a series can restart from its last finished game.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from games.validation import config_class


@dataclass(frozen=True)
class Budget:
    """Per-decision search budget: exactly one of ``ms`` or ``iterations``.

    Iteration budgets make games reproducible; millisecond budgets are what the
    studies report (40 ms per decision by default).
    """

    ms: float | None = 40.0
    """Wall-clock milliseconds per decision (checked inside the search kernel)."""
    iterations: int | None = None
    """Search iterations per decision (overrides ``ms``)."""

    def __post_init__(self):
        if self.iterations is not None:
            if not isinstance(self.iterations, int) or self.iterations < 1:
                raise ValueError(f"budget.iterations: must be a positive int, got {self.iterations!r}")
            object.__setattr__(self, "ms", None)
        elif self.ms is None or not (0 < float(self.ms) <= 600_000):
            raise ValueError(f"budget.ms: must be in (0, 600000], got {self.ms!r}")

    @property
    def deterministic(self) -> bool:
        return self.iterations is not None

    def kernel_args(self) -> tuple[int, float]:
        """(max_iterations, time limit in seconds) for search kernels; a
        kernel stops at whichever comes first (0 s = no time limit)."""
        if self.iterations is not None:
            return int(self.iterations), 0.0
        return 2**62, float(self.ms) / 1000.0

    def describe(self) -> str:
        return f"{self.iterations} it" if self.iterations is not None else f"{self.ms:g} ms"


@config_class
class NoConfig:
    """An agent without parameters."""


class Agent(ABC):
    """Base class of every agent."""

    name: ClassVar[str] = "agent"
    Config: ClassVar[type] = NoConfig
    #: Short names of well-known parameters (parameter -> alias, e.g. FEMCTS's
    #: ``mutation_probability`` -> ``mP``), shown beside the full names in sweeps and
    #: MLflow. Default: none.
    param_aliases: ClassVar[dict[str, str]] = {}
    #: After a study, the cluster exports this seat's learned population from its
    #: longest winning streak as a ``seed_population`` file
    #: (``cluster/results/populations.py``), asking :meth:`population_to_export` for it
    #: in each saved learned state. Default: no export.
    exports_population: ClassVar[bool] = False
    #: Part of the agent's config hash (:func:`agents.registry.config_hash`) when not 0.
    #: The hash leaves out parameters at their defaults (a release that adds an option
    #: keeps every hash), so a release that changes a *default* bumps this number to
    #: keep the games of the old default and the new apart. Default: 0.
    config_version: ClassVar[int] = 0
    #: Registry names of the games this agent plays (the agent contract,
    #: :mod:`agents.contract`, plays it on each). Empty: any game :meth:`plays_game`
    #: accepts (by default those whose kernels offer ``legal_actions(observation,
    #: player)``, e.g. for ``random``).
    games: ClassVar[tuple[str, ...]] = ()
    #: The seats this agent can take (e.g. Scotland Yard's Mr X agents: seat 0 only).
    #: Empty: every seat.
    plays_seats: ClassVar[tuple[int, ...]] = ()
    #: Whether the agent honours an iteration budget (``Budget.iterations``: a fixed
    #: amount of work per decision, so that a game is a pure function of its seeds).
    #: An agent that can only stop on the clock (e.g. an anytime solver outside
    #: Arena) sets False: a study giving it an iteration budget is refused, naming
    #: the lineup entry. Agents that do not search honour any budget. Default: True.
    supports_iteration_budget: ClassVar[bool] = True
    #: About how many CPU seconds compiling this agent's kernels takes on a fresh numba
    #: cache, beyond the game's own kernels (``jobs/bench/probes/pommerman_compile_profile.py``
    #: measures it per agent). The parallel warm-up's groups take the lineup's agents
    #: costliest first (:func:`cluster.run.warm.warm_queue`), so that a costly agent does
    #: not start last. Only the order matters, and 0: the agent has no kernels of its own
    #: (a lineup of such agents that do not use the forward model, OpenSpiel's bots, needs
    #: no parallel warm-up). Default: 1.
    compile_seconds: ClassVar[float] = 1.0
    #: Whether the agent's kernels call the game's forward model
    #: (:meth:`games.api.Game.forward_model_kernels`; a search does). The parallel warm-up
    #: compiles the agents that do not first, while the game's forward model compiles in
    #: another group (:func:`cluster.run.warm.warm_queue`). Default: True.
    uses_forward_model: ClassVar[bool] = True

    @classmethod
    def learns(cls, config) -> bool:
        """Whether an agent with ``config`` carries learned state from game to game
        (``learned_state`` not None), so a series restarts from its last saved
        state. A classmethod over the config rather than a class attribute because
        for some agents learning is a parameter (Scotland Yard seekers learn their
        location-categorization tables only with ``lc_update`` or a non-uniform
        ``determinization``). Default: False."""
        return False

    #: What :meth:`plays_game` accepts, in words (``arena agents``). Default: any game
    #: with kernels.
    plays_any_description: ClassVar[str] = "any game with kernels"

    @classmethod
    def plays_game(cls, game_name: str) -> bool:
        """Whether an agent that declares no games (empty :attr:`games`) plays the
        registered game ``game_name`` (what the agent contract plays it on). Default:
        the game registered a kernels module (``legal_actions(observation, player)``)."""
        from games.registry import has_kernels

        return has_kernels(game_name)

    @classmethod
    def plays(cls, game_name: str) -> bool:
        """Whether the agent plays the game ``game_name`` (a spec seating it elsewhere is
        refused before any game): one of :attr:`games`, or, when it declares none, what
        :meth:`plays_game` accepts. An agent whose :attr:`games` are only the contract's
        sample of a family (OpenSpiel's bots) overrides this."""
        return game_name in cls.games if cls.games else cls.plays_game(game_name)

    @classmethod
    def resolved_params(cls, config, game_config) -> dict[str, Any]:
        """Parameters whose effective value depends on the game (e.g. a Pommerman
        search agent's ``profile = "auto"`` becomes ``java`` or ``arena``), as the
        agent will use them (logged beside the given ones). Default: none."""
        return {}

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        """Raise ValueError if ``config`` (or the seed state ``arrays``) cannot play
        ``game_config`` (e.g. an encoder trained on another board size), before any
        game. Messages start with ``params.<field>`` or name the arrays. Default: fits."""

    def row_fields(self) -> dict[str, Any]:
        """Extra columns of this seat's result rows (name -> str / number / None),
        e.g. a Pommerman search agent's resolved ``profile``. Default: none."""
        return {}

    #: Whether the cluster shows this agent the game's true state (hidden things
    #: included, ``Game.true_state_view``) instead of its observation: only an upper
    #: bound reads it (e.g. the bird MCTS with ``true_state = true``). Default: no.
    reads_true_state: bool = False

    def __init__(self, config: Any, budget: Budget, game_config: Any):
        self.config = config
        self.budget = budget
        self.game_config = game_config
        self.seat = 0
        self.decisions = 0
        self.total_iterations = 0
        self.total_seconds = 0.0
        self.last_iterations = 0
        self.last_value = math.nan

    def begin_game(self, seat: int, seed: np.random.SeedSequence) -> None:
        """Called before each game with the seat and this seat's seed."""
        self.seat = seat
        self.decisions = 0
        self.total_iterations = 0
        self.total_seconds = 0.0

    def act(self, observation) -> int:
        """Choose an action from ``observation`` (timed and counted)."""
        self.last_value = math.nan  # ``decide`` sets it when the agent values its choice
        t0 = time.perf_counter()
        action, iterations = self.decide(observation)
        self.total_seconds += time.perf_counter() - t0
        self.last_iterations = int(iterations)
        self.total_iterations += int(iterations)
        self.decisions += 1
        return int(action)

    @abstractmethod
    def decide(self, observation) -> tuple[int, int]:
        """Return (action, search iterations used). A searching agent may also set
        ``self.last_value``: the value of the chosen action as it estimated it
        (recorded for replays; NaN when it has none)."""

    def end_game(self, observation, returns: np.ndarray) -> None:
        """Called after each game with the final observation (learning hook)."""

    def game_metrics(self) -> dict[str, float]:
        """Figures the agent measured about its own play in the last game (name ->
        float, read after ``end_game``), e.g. a diagnostic of its search. The
        cluster writes each into the seat's result row as ``metric.<name>`` and
        reports their means per player. Default: none."""
        return {}

    def learned_state(self) -> dict[str, np.ndarray] | None:
        """Arrays this agent carries from game to game (None if it learns nothing)."""
        return None

    def load_learned_state(self, arrays: dict[str, np.ndarray]) -> None:
        """Restore what ``learned_state`` returned (validating shapes)."""

    @classmethod
    def population_to_export(cls, arrays: dict[str, np.ndarray],
                             best_streak: bool) -> tuple[np.ndarray, int] | None:
        """From one saved learned state (what ``learned_state`` returned): the population
        to export as a seed population, and the longest winning streak reached by then
        (the cluster keeps the state with the longest). ``best_streak``: the population
        in force during that streak, else the current one. Only the agent reads its
        layout. Default: None (nothing to export)."""
        return None

    @classmethod
    def check_learned_state(cls, config, arrays: dict[str, np.ndarray]) -> None:
        """Raise ValueError if ``arrays`` (e.g. a seed population file) cannot be
        loaded into an agent with ``config``. Agents that learn nothing refuse any."""
        raise ValueError(f"agent {cls.name!r} learns nothing across games; it takes no seed state")

    @property
    def search_tree(self):
        """The search tree of the last decision (the struct of arrays of
        :mod:`agents.search.tree`), read by analysis and benchmarks (e.g. its depths,
        ``agents.search.depth_summary``) between decisions; it is overwritten by the next
        decision. Default: None (the agent keeps no tree)."""
        return None

    @property
    def mean_iterations(self) -> float:
        return self.total_iterations / self.decisions if self.decisions else 0.0

    @property
    def mean_ms(self) -> float:
        return 1000.0 * self.total_seconds / self.decisions if self.decisions else 0.0
