"""Fast Evolutionary MCTS (FEMCTS) for Pommerman: MCTS whose rollout policy is
evolved online by a population of weight matrices.

Per decision, within the budget::

    while within budget:
        for individual in population:
            for i in 1..L:                      # L rollouts per fitness evaluation
                v_l = tree_policy(v_0)
                delta = default_policy(v_l, D(w_individual))
                backup(v_l, delta)
            fitness(individual) = mean delta
        evolve(population)                      # only after a complete generation
    return the most visited root action (``recommendation``: or the best mean)

The tree policy, backup and recommendation are the shared MCTS ones
(:mod:`agents.search`, :mod:`agents.pommerman.mcts`); only the default policy
differs: D(W) = softmax over effective actions of W @ f(state), with f the
features of :mod:`agents.pommerman.features` (or the constant 1 when
unfeatured). Effective actions:

- ``n_effective = 6``: the six real actions;
- ``n_effective = 3``: move, stop, bomb; "move" counts for the four directions
  and, when drawn, moves in a random safe direction;
- ``n_effective = 2``: movement (the four directions and stop; drawn as a
  random safe movement) and bomb.

A "safe" direction's target cell is on the board and not rigid, wood or
flames; under partial observability ``fog_moves`` says whether an unseen
(FOG) cell counts (``blocked``, the java profile's default: it does not, as
in the Java framework's passability test; ``open``: it does). See
jobs/femcts/FINDINGS.md, "FEMCTS under fog", for how each piece sees fog.

How "move" (4 directions) and "movement" (5) are weighted is
``move_weighting``: ``multiply`` (default, the paper's text: the action's
``W.f`` is multiplied by 4 or 5 before the softmax; at zero weights the three
nEA = 3 actions are equally likely, so rollouts bomb a third of the time) or
``log_count`` (Arena's earlier reading: log 4 or log 5 added to the logit,
i.e. the softmax term multiplied by the count; at zero weights a sixth).

Features come from a per-decision cache (:mod:`agents.pommerman.features`;
the same values as the full board scan), read in :func:`evolved_rollout`.

The pieces: the rollout policy in :mod:`agents.pommerman.femcts_rollout`
(:func:`policy_action`, :func:`evolved_rollout`, :func:`rollout_features`,
:func:`safe_move_on`), the search in :mod:`agents.pommerman.femcts_search`
(:func:`femcts_decide`), and here the config and the agent; this module
re-exports those names.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from games.validation import Real, config_class, one_of
from games.pommerman.kernels import N_ACTIONS, STOP

from ..api import Budget
from ..evolution import MUTATE_PER_ACTION, MUTATE_SHARED_FEATURES
from ..registry import register
from ..search import new_tree, root_child_value, SearchConfig
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import QUIRK_STOP_AT_OWN_END, QUIRK_TIE_DEATH_SCORED
from .features import ALL_FEATURES, SUBSET_NEA2, new_feature_cache
from .fog_memory import GHOST_KINDS, new_fog_memory, remember
from .femcts_rollout import (  # re-exported: the rollout policy's public names
    evolved_rollout, policy_action, rollout_features, RolloutPolicy, safe_move_on,
)
from .femcts_search import (  # re-exported: the search
    EvolutionParams, FEMCTS_DECIDE, femcts_decide, femcts_search, FemctsParams,
)


# --------------------------------------------------------------------- the agent
MUTATION_VARIANTS = {"per_action": MUTATE_PER_ACTION, "shared": MUTATE_SHARED_FEATURES}
#: How an effective action standing for k real actions is weighted in the softmax.
MOVE_WEIGHTINGS = ("multiply", "log_count")
#: Which of the java MCTS's search switches FEMCTS's own search takes (``FEMCTSConfig.mcts_switches``).
MCTS_SWITCHES = ("off", "java")
#: Which root child FEMCTS plays (``FEMCTSConfig.recommendation``).
RECOMMENDATIONS = ("most_visited", "best_mean")
#: How "move" / "movement" treats unseen (FOG) cells (``FEMCTSConfig.fog_moves``).
FOG_MOVES = ("auto", "blocked", "open")
#: What the rollout features see under fog (``FEMCTSConfig.features_from``).
FEATURE_SOURCES = ("observation", "memory")


def resolve_fog_moves(fog_moves: str, profile: str) -> str:
    """``blocked`` or ``open`` for a config's ``fog_moves`` and the agent's
    resolved profile: ``auto`` is ``blocked`` with the ``java`` profile (the
    framework's passability test, see jobs/femcts/FINDINGS.md, "FEMCTS under
    fog"), ``open`` with ``arena``."""
    if fog_moves == "auto":
        return "blocked" if profile == "java" else "open"
    return fog_moves


@config_class
class FEMCTSConfig(PommermanSearchConfig, SearchConfig):
    """Fast Evolutionary MCTS (defaults of the FEMCTS study)."""

    featured: bool = True
    """Weights over state features (a matrix per individual); False: one weight per action."""
    n_effective: Literal[6, 3, 2] = 6
    """Effective actions: 6 (all), 3 (move, stop, bomb) or 2 (movement, bomb). Unfeatured: 6."""
    population_size: Annotated[int, Field(ge=1, le=1000)] = 10
    """P: individuals in the population."""
    elite_count: Annotated[int, Field(ge=0)] = 4
    """E: best individuals kept unchanged each generation (E <= P)."""
    rollouts_per_individual: Annotated[int, Field(ge=1, le=1000)] = 4
    """L: rollouts per fitness evaluation of an individual."""
    mutation_probability: Annotated[Real, Field(ge=0, le=1)] = 0.2
    """mP: probability that a weight is mutated."""
    mutation_strength: Annotated[Real, Field(ge=0, le=100)] = 0.01
    """mS: a mutation moves a weight by up to this amount."""
    mutation_variant: Annotated[str, one_of(MUTATION_VARIANTS)] = "per_action"
    """``per_action`` (each action its own random set of features) or ``shared``
    (one random set of features for all actions; the study's final experiments)."""
    move_weighting: Annotated[str, one_of(MOVE_WEIGHTINGS)] = "multiply"
    """How "move" (nEA = 3, four directions) and "movement" (nEA = 2, five) are
    weighted: ``multiply`` (the paper: their W.f is multiplied by 4 / 5 before the
    softmax) or ``log_count`` (log 4 / log 5 added to their logit). nEA = 6: unused."""
    positive_bias: Annotated[Real, Field(ge=0, le=1)] | None = None
    """Probability that a mutation adds; default 0.6 for n_effective = 3, else 0.5."""
    keep_positive: bool | None = None
    """Clip weights at 0; default True for n_effective = 3 (weights must stay positive)."""
    tournament_size: Annotated[int, Field(ge=1, le=100)] = 2
    """Individuals drawn per selection tournament."""
    normalise_weights: bool = False
    """Extension: scale each action's weights to unit norm after each generation."""
    discount: Annotated[Real, Field(gt=0, le=1)] = 1.0
    """Extension: back up heuristic * discount ** depth (1 = no discount)."""
    rollout_depth: Annotated[int, Field(ge=1, le=1000)] = 12
    """Ticks per iteration counted from the root (the study's runner: 12)."""
    fog_moves: Annotated[str, one_of(FOG_MOVES)] = "auto"
    """How the random safe direction of "move" (nEA = 3) and "movement" (nEA = 2)
    treats unseen cells under partial observability: ``blocked`` (a FOG cell is
    not a safe target, as the Java framework's passability test
    ``Utils.positionIsPassable`` has it: at view range 0 "movement" is stop),
    ``open`` (a FOG cell is a target like a passage; Arena's rule before issue
    27, and the forward model's, where FOG does not block); ``auto``: ``blocked``
    with the ``java`` profile, ``open`` with ``arena``. No effect at full
    observability or with nEA = 6."""
    mcts_switches: Annotated[str, one_of(MCTS_SWITCHES)] = "off"
    """Whether FEMCTS's tree, rollouts and value take two switches of the java
    profile's MCTS (``agents/pommerman/_common.py``): ``java``: an iteration
    stops as soon as the searcher's own result is decided (the framework's
    ``GameState.isTerminal`` for an agent's copy) and a searcher dead in a tie is
    scored by the heuristic, not -1, as the framework's MCTS the study built
    FEMCTS on; ``off`` (default): an iteration runs to the depth limit or the
    game's end and every death scores -1, the reading under which Arena's
    FEMCTS reproduces the study's first table. The study's code is not
    published; jobs/femcts/FINDINGS.md measures both under fog."""
    absent_closeness: Annotated[Real, Field(ge=0, le=1)] = 0.0
    """The value of a closeness feature 1 / (d + 1) whose object is not on the
    searched board (none exists, or fog hides it): 0 (d infinite; default) or,
    e.g., 1 (a nearest-object search whose best distance starts at 0)."""
    recommendation: Annotated[str, one_of(RECOMMENDATIONS)] = "most_visited"
    """The root child played: ``most_visited`` (default; the framework's MCTS,
    ``mostVisitedAction``, which the study built FEMCTS on) or ``best_mean``
    (the child with the best mean backed-up value; ties broken by the same
    noise). The study does not say which its FEMCTS took; jobs/femcts/FINDINGS.md
    ("FEMCTS under fog, second round") measures both under fog."""

    features_from: Annotated[str, one_of(FEATURE_SOURCES)] = "observation"
    """Where the rollout features' objects come from under partial observability:
    ``observation`` (default: the searched state, i.e. what the decision's
    observation shows) or ``memory`` (also what the agent remembers out of view,
    :mod:`agents.pommerman.fog_memory`: rigid walls for good, wood and power-ups
    until seen gone, enemies and bombs for ``memory_ticks`` ticks). No effect at
    full observability."""
    memory_ticks: Annotated[int, Field(ge=1, le=1000)] = 10
    """With ``features_from = "memory"``: ticks an enemy or a bomb out of view is
    remembered (a bomb also only until its timer, as last seen, runs out).
    Default 10: a bomb's whole life (the java ruleset's ``BOMB_LIFE``), so a
    seen bomb is remembered until it must have exploded; an enemy is then at
    most 10 cells from where it was seen, under the rollout horizon (12)."""

    @model_validator(mode="after")
    def _cross_field_rules(self):
        if not self.featured and self.n_effective != 6:
            raise ValueError("n_effective: the unfeatured variant has one weight per real "
                             "action (n_effective = 6)")
        if self.elite_count > self.population_size:
            raise ValueError(f"elite_count: must be an int in [0, population_size="
                             f"{self.population_size}], got {self.elite_count!r}")
        return self

    @property
    def feature_index(self) -> np.ndarray:
        if not self.featured:
            return np.zeros(0, dtype=np.int64)
        return SUBSET_NEA2.copy() if self.n_effective == 2 else ALL_FEATURES.copy()

    @property
    def population_shape(self) -> tuple[int, int, int]:
        return (self.population_size, self.n_effective, max(len(self.feature_index), 1))

    @property
    def move_count(self) -> int:
        """Real actions the first effective action stands for (4, 5, or 1 at nEA = 6)."""
        return {3: 4, 2: 5}.get(self.n_effective, 1)

    @property
    def softmax_scale(self) -> np.ndarray:
        """float64[A]: multiplies each effective action's W.f (``multiply``: the count)."""
        m = np.ones(self.n_effective)
        if self.move_weighting == "multiply":
            m[0] = float(self.move_count)
        return m

    @property
    def softmax_offset(self) -> np.ndarray:
        """float64[A]: added to each logit (``log_count``: log of the count)."""
        m = np.zeros(self.n_effective)
        if self.move_weighting == "log_count":
            m[0] = math.log(self.move_count)
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


def rollout_policy(config: FEMCTSConfig, fog_moves: str) -> RolloutPolicy:
    """The :class:`RolloutPolicy` of ``config`` with the resolved ``fog_moves``
    (:func:`resolve_fog_moves`)."""
    return RolloutPolicy(config.feature_index, config.softmax_scale, config.softmax_offset,
                         int(config.n_effective), fog_moves == "blocked", float(config.absent_closeness))


def evolution_params(config: FEMCTSConfig) -> EvolutionParams:
    """The :class:`EvolutionParams` of ``config``."""
    c = config
    return EvolutionParams(
        int(c.rollouts_per_individual), int(c.elite_count), int(c.tournament_size),
        float(c.mutation_probability), float(c.mutation_strength), float(c.effective_positive_bias),
        int(MUTATION_VARIANTS[c.mutation_variant]), bool(c.effective_keep_positive),
        bool(c.normalise_weights))


@register
class FEMCTSAgent(PommermanSearchAgent):
    """MCTS whose rollout policy is evolved online (population carried across games)."""

    name = "femcts"
    compile_seconds = 16.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents femcts,femcts,femcts,femcts)
    exports_population = True

    @classmethod
    def learns(cls, config) -> bool:
        return True  # the population evolves from game to game
    param_aliases = {"mutation_probability": "mP", "mutation_strength": "mS", "elite_count": "E",
                     "population_size": "P", "rollouts_per_individual": "L"}
    Config = FEMCTSConfig

    def __init__(self, config: FEMCTSConfig, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        max_iterations, _ = budget.kernel_args()
        self._tree = new_tree(min(max_iterations + 1, config.max_nodes), N_ACTIONS)
        self.population = np.zeros(config.population_shape)
        self.fitness = np.zeros(config.population_size)
        self._pop_scratch = np.empty_like(self.population)
        self._feature_cache = new_feature_cache()
        self.fog_moves = resolve_fog_moves(config.fog_moves, self.profile)
        """``blocked`` or ``open``: the resolved ``fog_moves``."""
        self.search_quirks = ((QUIRK_STOP_AT_OWN_END | QUIRK_TIE_DEATH_SCORED)
                              if config.mcts_switches == "java" else 0)
        """The ``QUIRK_*`` bits FEMCTS's tree, rollouts and value take (``mcts_switches``)."""
        self.rollout_policy = rollout_policy(config, self.fog_moves)
        """The :class:`RolloutPolicy` (the evolved policy besides its weights)."""
        c = config
        max_iterations, seconds = budget.kernel_args()
        self._params = FemctsParams(
            int(max_iterations), float(seconds), float(c.exploration), float(c.epsilon),
            int(c.rollout_depth), float(c.discount), int(self.quirks), int(self.search_quirks),
            c.recommendation == "best_mean")
        self._evolution = evolution_params(c)
        self._remembers = config.features_from == "memory"
        self.memory = new_fog_memory()
        """This game's :class:`~agents.pommerman.fog_memory.FogMemory` (``features_from = "memory"``)."""
        self.remembered = np.zeros(len(GHOST_KINDS), dtype=np.int64)
        """Remembered objects out of view summed over this game's decisions, by kind (``GHOST_KINDS``)."""
        self.games_played = 0
        self.streak = 0
        self.best_streak = 0
        self.best_streak_population = self.population.copy()
        self.generations = 0
        self.ticks = 0
        """Forward-model ticks simulated in all decisions so far (budget calibration)."""

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.memory = new_fog_memory()
        self.remembered[:] = 0

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        if self._remembers:
            self.remembered += remember(self.memory, observation, self.seat, int(self.config.memory_ticks),
                                        self._feature_cache)
        action, iterations, generations, ticks = femcts_decide(
            observation, self.seat, self._tree, self._root, self._scratch, self._params, self._evolution,
            self.population, self.fitness, self._pop_scratch, self.rollout_policy, self._feature_cache,
            self._rng, self.model_max_wood(observation))
        self.generations += int(generations)
        self.ticks += int(ticks)
        self.last_value = root_child_value(self._tree, action)
        return int(action), int(iterations)

    @classmethod
    def resolved_params(cls, config, game_config) -> dict:
        """The profile and ``fog_moves`` as the agent uses them (``auto`` resolved)."""
        out = super().resolved_params(config, game_config)
        out["fog_moves"] = resolve_fog_moves(config.fog_moves, out.get("profile", ""))
        return out

    def game_metrics(self) -> dict[str, float]:
        """With ``features_from = "memory"``: the remembered objects out of view per
        decision, by kind (``remembered_bomb`` ... ``remembered_wood``); else none."""
        if not self._remembers:
            return {}
        decisions = max(self.decisions, 1)
        return {f"remembered_{kind}": float(n) / decisions for kind, n in zip(GHOST_KINDS, self.remembered)}

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

    @classmethod
    def population_to_export(cls, arrays, best_streak):
        """``population`` (or ``best_streak_population``) and the best streak, ``counters[2]``."""
        if "population" not in arrays:
            return None
        counters = arrays.get("counters", np.zeros(4, dtype=np.int64))
        streak = int(counters[2]) if np.shape(counters) == (4,) else 0
        population = arrays.get("best_streak_population", arrays["population"]) if best_streak \
            else arrays["population"]
        return population, streak

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
