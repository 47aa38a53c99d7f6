"""The FEMCTS agent: MCTS with an online-evolved rollout policy (see ``_femcts.py``).

The population is carried from game to game (the agent remembers it), can start
from a seed population (``.npz`` with an array ``population`` of shape
``[P, n_effective, n_features]``), and is exported as learned state after every
game together with the population as it stood after the last win of the
longest winning streak so far (the latest such streak on ties).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from games.pommerman._layout import N_ACTIONS, STOP

from ..api import Budget
from ..evolution import MUTATE_PER_ACTION, MUTATE_SHARED_FEATURES
from ..registry import register
from ..search.tree import new_tree
from ._femcts import femcts_decide
from .features import ALL_FEATURES, SUBSET_NEA2
from .players import _can_act, _check, _PommermanAgent

MUTATION_VARIANTS = {"per_action": MUTATE_PER_ACTION, "shared": MUTATE_SHARED_FEATURES}


@dataclass(frozen=True)
class FEMCTSConfig:
    """Fast Evolutionary MCTS (defaults of the FEMCTS study)."""

    featured: bool = True
    """Weights over state features (a matrix per individual); False: one weight per action."""
    n_effective: int = 6
    """Effective actions: 6 (all), 3 (move, stop, bomb) or 2 (movement, bomb). Unfeatured: 6."""
    population_size: int = 10
    """P: individuals in the population."""
    elite_count: int = 4
    """E: best individuals kept unchanged each generation (E <= P)."""
    rollouts_per_individual: int = 4
    """L: rollouts per fitness evaluation of an individual."""
    mutation_probability: float = 0.2
    """mP: probability that a weight is mutated."""
    mutation_strength: float = 0.01
    """mS: a mutation moves a weight by up to this amount."""
    mutation_variant: str = "per_action"
    """``per_action`` (each action its own random set of features) or ``shared``
    (one random set of features for all actions)."""
    positive_bias: float | None = None
    """Probability that a mutation adds; default 0.6 for n_effective = 3, else 0.5."""
    keep_positive: bool | None = None
    """Clip weights at 0; default True for n_effective = 3 (weights must stay positive)."""
    tournament_size: int = 2
    """Individuals drawn per selection tournament."""
    normalise_weights: bool = False
    """Extension: scale each action's weights to unit norm after each generation."""
    discount: float = 1.0
    """Extension: back up heuristic * discount ** depth (1 = no discount)."""
    exploration: float = math.sqrt(2)
    """UCB1 constant of the tree policy."""
    rollout_depth: int = 12
    """Ticks per iteration counted from the root (the study's runner: 12)."""
    epsilon: float = 1e-6
    """Tie-breaking noise."""
    max_nodes: int = 1 << 17
    """Tree capacity under a time budget."""

    def __post_init__(self):
        _check(self.n_effective in (6, 3, 2), "n_effective", f"must be 6, 3 or 2, got {self.n_effective!r}")
        _check(self.featured or self.n_effective == 6, "n_effective",
               "the unfeatured variant has one weight per real action (n_effective = 6)")
        _check(isinstance(self.population_size, int) and 1 <= self.population_size <= 1000,
               "population_size", f"must be an int in [1, 1000], got {self.population_size!r}")
        _check(isinstance(self.elite_count, int) and 0 <= self.elite_count <= self.population_size,
               "elite_count", f"must be an int in [0, population_size={self.population_size}], "
               f"got {self.elite_count!r}")
        _check(isinstance(self.rollouts_per_individual, int) and 1 <= self.rollouts_per_individual <= 1000,
               "rollouts_per_individual", f"must be an int in [1, 1000], got {self.rollouts_per_individual!r}")
        _check(isinstance(self.mutation_probability, (int, float)) and 0 <= self.mutation_probability <= 1,
               "mutation_probability", f"must be in [0, 1], got {self.mutation_probability!r}")
        _check(isinstance(self.mutation_strength, (int, float)) and 0 <= self.mutation_strength <= 100,
               "mutation_strength", f"must be in [0, 100], got {self.mutation_strength!r}")
        _check(self.mutation_variant in MUTATION_VARIANTS, "mutation_variant",
               f"must be one of {sorted(MUTATION_VARIANTS)}, got {self.mutation_variant!r}")
        _check(self.positive_bias is None or 0 <= self.positive_bias <= 1, "positive_bias",
               f"must be in [0, 1], got {self.positive_bias!r}")
        _check(isinstance(self.tournament_size, int) and 1 <= self.tournament_size <= 100,
               "tournament_size", f"must be an int in [1, 100], got {self.tournament_size!r}")
        _check(isinstance(self.discount, (int, float)) and 0 < self.discount <= 1,
               "discount", f"must be in (0, 1], got {self.discount!r}")
        _check(isinstance(self.exploration, (int, float)) and 0 <= self.exploration <= 100,
               "exploration", f"must be in [0, 100], got {self.exploration!r}")
        _check(isinstance(self.rollout_depth, int) and 1 <= self.rollout_depth <= 1000,
               "rollout_depth", f"must be an int in [1, 1000], got {self.rollout_depth!r}")
        _check(isinstance(self.max_nodes, int) and 2 <= self.max_nodes <= 1 << 24,
               "max_nodes", f"must be an int in [2, 2**24], got {self.max_nodes!r}")

    @property
    def feature_index(self) -> np.ndarray:
        if not self.featured:
            return np.zeros(0, dtype=np.int64)
        return SUBSET_NEA2.copy() if self.n_effective == 2 else ALL_FEATURES.copy()

    @property
    def population_shape(self) -> tuple[int, int, int]:
        return (self.population_size, self.n_effective, max(len(self.feature_index), 1))

    @property
    def log_multiplier(self) -> np.ndarray:
        m = np.zeros(self.n_effective)
        if self.n_effective == 3:
            m[0] = math.log(4)  # "move" stands for the four directions
        elif self.n_effective == 2:
            m[0] = math.log(5)  # "movement" stands for four directions and stop
        return m

    @property
    def effective_positive_bias(self) -> float:
        if self.positive_bias is not None:
            return float(self.positive_bias)
        return 0.6 if self.n_effective == 3 else 0.5

    @property
    def effective_keep_positive(self) -> bool:
        return self.keep_positive if self.keep_positive is not None else self.n_effective == 3


def validate_population(arrays: dict, config: FEMCTSConfig, source: str = "seed_population") -> np.ndarray:
    """The ``population`` array of a learned-state dict, checked against ``config``."""
    if "population" not in arrays:
        raise ValueError(f"{source}: no array named 'population' (found {sorted(arrays)})")
    pop = np.asarray(arrays["population"])
    if pop.dtype.kind != "f" or pop.shape != config.population_shape:
        raise ValueError(f"{source}: population has shape {pop.shape} and dtype {pop.dtype}; "
                         f"this FEMCTS config needs float weights of shape {config.population_shape} "
                         f"(population_size, n_effective, features)")
    if not np.isfinite(pop).all():
        raise ValueError(f"{source}: population holds NaN or infinite weights")
    return pop.astype(np.float64)


@register
class FEMCTSAgent(_PommermanAgent):
    """MCTS whose rollout policy is evolved online (population carried across games)."""

    name = "femcts"
    Config = FEMCTSConfig

    def __init__(self, config: FEMCTSConfig, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        self._tree = new_tree(min(max_iterations + 1, config.max_nodes), N_ACTIONS)
        self.population = np.zeros(config.population_shape)
        self.fitness = np.zeros(config.population_size)
        self._pop_scratch = np.empty_like(self.population)
        self._feature_index = config.feature_index
        self._log_multiplier = config.log_multiplier
        self._variant = MUTATION_VARIANTS[config.mutation_variant]
        self.games_played = 0
        self.streak = 0
        self.best_streak = 0
        self.best_streak_population = self.population.copy()
        self.generations = 0

    def decide(self, observation):
        if not _can_act(observation, self.seat):
            return STOP, 0
        max_iterations, seconds = self.budget.kernel_args()
        c = self.config
        action, iterations, generations = femcts_decide(
            observation, self.seat, self._tree, self._root, self._scratch, max_iterations, seconds,
            float(c.exploration), float(c.epsilon), int(c.rollout_depth),
            self.population, self.fitness, self._pop_scratch, self._feature_index,
            self._log_multiplier, int(c.n_effective), int(c.rollouts_per_individual),
            int(c.elite_count), int(c.tournament_size), float(c.mutation_probability),
            float(c.mutation_strength), c.effective_positive_bias, self._variant,
            bool(c.effective_keep_positive), bool(c.normalise_weights), float(c.discount), self._rng)
        self.generations += int(generations)
        return int(action), int(iterations)

    def end_game(self, observation, returns):
        """Count the game; on a win that makes the current streak the longest so
        far, keep the population as it stands after that win (what the agent
        learned while winning)."""
        self.games_played += 1
        if float(returns[self.seat]) > 0:
            self.streak += 1
            if self.streak >= self.best_streak:
                self.best_streak = self.streak
                self.best_streak_population = self.population.copy()
        else:
            self.streak = 0

    def learned_state(self):
        return {
            "population": self.population.copy(),
            "fitness": self.fitness.copy(),
            "best_streak_population": self.best_streak_population.copy(),
            "counters": np.array([self.games_played, self.streak, self.best_streak, self.generations],
                                 dtype=np.int64),
        }

    @classmethod
    def check_learned_state(cls, config, arrays):
        validate_population(arrays, config, "population")

    def load_learned_state(self, arrays):
        self.population = validate_population(arrays, self.config)
        self._pop_scratch = np.empty_like(self.population)
        if "fitness" in arrays and np.shape(arrays["fitness"]) == (self.config.population_size,):
            self.fitness = np.asarray(arrays["fitness"], dtype=np.float64).copy()
        if "best_streak_population" in arrays:
            self.best_streak_population = validate_population(
                {"population": arrays["best_streak_population"]}, self.config, "best_streak_population")
        else:
            self.best_streak_population = self.population.copy()
        counters = arrays.get("counters")
        if counters is not None and np.shape(counters) == (4,):
            self.games_played, self.streak, self.best_streak, self.generations = (int(v) for v in counters)
