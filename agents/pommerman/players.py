"""The Pommerman agents: rule-based, OSLA, MCTS and RHEA (registered by name).

Each agent plans from its observation only (``observe`` output: fog, no hidden
power-ups, bombs without owner). All randomness comes from one ``uint64[2]``
generator seeded in ``begin_game`` from the seat's SeedSequence, so with an
iteration budget a game is a pure function of its seeds. Each decision is one
numba call.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from games._rng import make_rng
from games.pommerman._layout import (
    A_ALIVE, A_COL, A_ROW, BOARD_SIZE, DEFAULT_MAX_STEPS, M_DONE, N_ACTIONS, STOP, empty_state,
)

from ..api import Agent, Budget
from ..registry import register
from ..search.tree import new_tree
from ._mcts import mcts_decide
from ._osla import osla_decide
from ._rhea import EVALUATE_DISCOUNT, EVALUATE_LAST, rhea_decide
from ._rule_based import RECENT_CELLS, rule_based_decide


def _scratch_state():
    return empty_state(0, 0, 0, DEFAULT_MAX_STEPS)


def _can_act(observation, seat) -> bool:
    return bool(observation.agents[seat, A_ALIVE]) and not observation.meta[M_DONE]


def _check(cond: bool, field: str, message: str) -> None:
    if not cond:
        raise ValueError(f"{field}: {message}")


class _PommermanAgent(Agent):
    """Shared glue: the seeded generator and the preallocated model states."""

    def __init__(self, config, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        self._root = _scratch_state()
        self._scratch = _scratch_state()
        self._rng = make_rng(0)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)


# --------------------------------------------------------------------- rule-based
@register
class RuleBasedAgent(_PommermanAgent):
    """Hand-written rules in the spirit of the reference SimplePlayer (see
    ``_rule_based.py``); no search, 0 iterations per decision."""

    name = "rule_based"

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._recent = deque(maxlen=RECENT_CELLS)

    def decide(self, observation):
        if not _can_act(observation, self.seat):
            return STOP, 0
        recent = np.full(RECENT_CELLS, -1, dtype=np.int64)
        recent[: len(self._recent)] = list(self._recent)
        action = int(rule_based_decide(observation, self.seat, recent, self._rng))
        cell = int(observation.agents[self.seat, A_ROW]) * BOARD_SIZE + int(observation.agents[self.seat, A_COL])
        self._recent.append(cell)
        return action, 0


# --------------------------------------------------------------------- OSLA
@dataclass(frozen=True)
class OSLAConfig:
    """One-step look-ahead (the Java framework's OSLAPlayer)."""

    epsilon: float = 1e-6
    """Tie-breaking noise on the heuristic values."""

    def __post_init__(self):
        _check(0 <= self.epsilon < 0.01, "epsilon", f"must be in [0, 0.01), got {self.epsilon!r}")


@register
class OSLAAgent(_PommermanAgent):
    """Each action one tick ahead with random opponents; best heuristic value.
    Always six simulations, whatever the budget."""

    name = "osla"
    Config = OSLAConfig

    def decide(self, observation):
        if not _can_act(observation, self.seat):
            return STOP, 0
        action, n = osla_decide(observation, self.seat, self._root, self._scratch,
                                float(self.config.epsilon), self._rng)
        return int(action), int(n)


# --------------------------------------------------------------------- MCTS
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
        _check(isinstance(self.exploration, (int, float)) and 0 <= self.exploration <= 100,
               "exploration", f"must be a number in [0, 100], got {self.exploration!r}")
        _check(isinstance(self.rollout_depth, int) and 1 <= self.rollout_depth <= 1000,
               "rollout_depth", f"must be an int in [1, 1000], got {self.rollout_depth!r}")
        _check(isinstance(self.epsilon, (int, float)) and 0 < self.epsilon < 0.01,
               "epsilon", f"must be in (0, 0.01), got {self.epsilon!r}")
        _check(isinstance(self.max_nodes, int) and 2 <= self.max_nodes <= 1 << 24,
               "max_nodes", f"must be an int in [2, 2**24], got {self.max_nodes!r}")


@register
class MCTSAgent(_PommermanAgent):
    """Open-loop UCT from the agent's observation; most visited root action."""

    name = "mcts"
    Config = MCTSConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        capacity = min(max_iterations + 1, config.max_nodes)
        self._tree = new_tree(capacity, N_ACTIONS)

    def decide(self, observation):
        if not _can_act(observation, self.seat):
            return STOP, 0
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        action, iterations = mcts_decide(
            observation, self.seat, self._tree, self._root, self._scratch, max_iterations, seconds,
            float(c.exploration), float(c.epsilon), int(c.rollout_depth), self._rng)
        return int(action), int(iterations)


# --------------------------------------------------------------------- RHEA
_EVALUATE = {"last": EVALUATE_LAST, "discount": EVALUATE_DISCOUNT}


@dataclass(frozen=True)
class RHEAConfig:
    """Rolling horizon evolution (the Java framework's RHEAParams defaults)."""

    population_size: int = 1
    """Individuals kept from generation to generation."""
    offspring_count: int = 1
    """Offspring evaluated per generation (iteration)."""
    individual_length: int = 12
    """Actions per individual (the planning horizon in ticks)."""
    mutation_rate: float = 0.3
    """Per-gene probability of a uniform mutation (the study's runner uses 0.5)."""
    tournament_fraction: float = 0.4
    """Tournament size = max(1, min(2, int(population_size * fraction)));
    selection and one-point crossover only act when population_size > 2."""
    shift_buffer: bool = True
    """Keep the population between decisions, shifted by one action."""
    evaluate_act: str = "last"
    """Value of a rollout: ``last`` state's heuristic (framework default) or the
    ``discount``-ed sum of every state's value."""
    discount: float = 0.99
    """Discount factor of ``evaluate_act = "discount"``."""
    mc_rollouts: bool = False
    """Continue each evaluation with random Monte Carlo rollouts."""
    mc_rollouts_length: int = 6
    """Ticks per Monte Carlo rollout (framework: half the individual length)."""
    mc_rollouts_repeat: int = 1
    """Monte Carlo rollouts per evaluation (values averaged)."""

    def __post_init__(self):
        _check(isinstance(self.population_size, int) and 1 <= self.population_size <= 1000,
               "population_size", f"must be an int in [1, 1000], got {self.population_size!r}")
        _check(isinstance(self.offspring_count, int) and 1 <= self.offspring_count <= 1000,
               "offspring_count", f"must be an int in [1, 1000], got {self.offspring_count!r}")
        _check(isinstance(self.individual_length, int) and 1 <= self.individual_length <= 500,
               "individual_length", f"must be an int in [1, 500], got {self.individual_length!r}")
        _check(isinstance(self.mutation_rate, (int, float)) and 0 <= self.mutation_rate <= 1,
               "mutation_rate", f"must be in [0, 1], got {self.mutation_rate!r}")
        _check(isinstance(self.tournament_fraction, (int, float)) and 0 < self.tournament_fraction <= 1,
               "tournament_fraction", f"must be in (0, 1], got {self.tournament_fraction!r}")
        _check(isinstance(self.shift_buffer, bool), "shift_buffer", "must be a bool")
        _check(self.evaluate_act in _EVALUATE, "evaluate_act",
               f"must be one of {sorted(_EVALUATE)}, got {self.evaluate_act!r}")
        _check(isinstance(self.discount, (int, float)) and 0 < self.discount <= 1,
               "discount", f"must be in (0, 1], got {self.discount!r}")
        _check(isinstance(self.mc_rollouts, bool), "mc_rollouts", "must be a bool")
        _check(isinstance(self.mc_rollouts_length, int) and 1 <= self.mc_rollouts_length <= 500,
               "mc_rollouts_length", f"must be an int in [1, 500], got {self.mc_rollouts_length!r}")
        _check(isinstance(self.mc_rollouts_repeat, int) and 1 <= self.mc_rollouts_repeat <= 100,
               "mc_rollouts_repeat", f"must be an int in [1, 100], got {self.mc_rollouts_repeat!r}")

    @property
    def tournament_size(self) -> int:
        return max(1, min(2, int(self.population_size * self.tournament_fraction)))


@register
class RHEAAgent(_PommermanAgent):
    """Rolling horizon evolution; one iteration = one generation (offspring
    evaluated, parents re-evaluated). The population persists between the
    decisions of a game (shift buffer)."""

    name = "rhea"
    Config = RHEAConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        c = config
        self._mc_state = _scratch_state()
        self._population = np.zeros((c.population_size, c.individual_length), dtype=np.int8)
        self._values = np.zeros(c.population_size, dtype=np.float64)
        self._offspring = np.zeros((c.offspring_count, c.individual_length), dtype=np.int8)
        self._off_values = np.zeros(c.offspring_count, dtype=np.float64)
        self._has_population = False

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._has_population = False
        self._population[:] = 0
        self._values[:] = 0.0

    def decide(self, observation):
        if not _can_act(observation, self.seat):
            return STOP, 0
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        action, iterations = rhea_decide(
            observation, self.seat, self._root, self._scratch, self._mc_state,
            self._population, self._values, self._has_population, self._offspring, self._off_values,
            max_iterations, seconds, float(c.mutation_rate), int(c.tournament_size),
            bool(c.shift_buffer), _EVALUATE[c.evaluate_act], float(c.discount),
            bool(c.mc_rollouts), int(c.mc_rollouts_length), int(c.mc_rollouts_repeat), self._rng)
        self._has_population = True
        return int(action), int(iterations)
