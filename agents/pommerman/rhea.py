"""Rolling horizon evolution for Pommerman (the Java framework's ``players.rhea``).

The population (``int8[P, L]`` action sequences with ``float64[P]`` values)
lives in the agent between decisions of one game (the shift buffer). One
decision is one call of :func:`rhea_search` (in a kernel per ruleset); one iteration (generation) is::

    offspring: copy a random parent (P <= 2) or one-point crossover of two
               tournament-selected parents; uniform mutation decided per gene
               (rate ``mutation_rate``) and applied while rolling, as the
               framework does
    evaluate offspring, re-evaluate every parent
    keep the best P of parents + offspring (stable: a parent keeps its place
    on a tie)

Evaluating an individual plays its actions from the root (opponents random)
and takes the heuristic of the last state (``EVALUATE_ACT_LAST``) or the
discounted sum of every state's value (``EVALUATE_ACT_DISCOUNT``, factor
``discount``); optional Monte Carlo rollouts continue randomly from the end
and normalise the value from [-1, 1] to [0, 1] (``combineAndNormalize``). The
new fitness is the average of the old fitness and this value
(``EVALUATE_UPDATE_AVERAGE``). The first gene of the best individual is played.
"""
from __future__ import annotations

from typing import Annotated, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field

from games.rng import rng_integer, rng_uniform
from games.pommerman.kernels import (
    M_RULESET, N_ACTIONS, STATE_RULESET, STOP, borrowed_state, copy_into, require_layout_shapes,
)
from games.validation import Real, config_class, one_of

from ..registry import register

from ..search import budget_exhausted, normalise
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act, scratch_state
from ._common import KERNEL_RULESETS, advance, begin_search, search_over, search_value

EVALUATE_LAST = 0
EVALUATE_DISCOUNT = 1


class RheaParams(NamedTuple):
    """A RHEA agent's search settings (built once per agent: :meth:`RHEAAgent.__init__`).

    Fields:
        max_iterations: int (generations); time_limit: float seconds (0 = none): the budget.
        mutation_rate: float, the per-gene mutation probability.
        tournament_size: int, parents picked per tournament.
        shift_buffer: bool, keep the population between decisions, shifted by one action.
        evaluate_act: EVALUATE_LAST / EVALUATE_DISCOUNT; discount: float, the factor of
            EVALUATE_DISCOUNT.
        mc_length, mc_repeat: int, ticks per Monte Carlo rollout and rollouts per
            evaluation (unused with Monte Carlo rollouts off: whether they are on is a
            constant of the decision kernel, see :data:`RHEA_DECIDE`).
        quirks: int, ``QUIRK_*`` bits of the profile (see ``_common.prepare_search``).
    """

    max_iterations: int
    time_limit: float
    mutation_rate: float
    tournament_size: int
    shift_buffer: bool
    evaluate_act: int
    discount: float
    mc_length: int
    mc_repeat: int
    quirks: int


class RheaPopulation(NamedTuple):
    """The arrays a RHEA agent evolves (allocated once per agent, written by each decision).

    Fields:
        population: int8[P, L], the individuals' actions; values: float64[P], their
            fitness (in/out: the shift buffer between the decisions of a game).
        offspring: int8[O, L], off_values: float64[O]: the generation's offspring (scratch).
    """

    population: np.ndarray
    values: np.ndarray
    offspring: np.ndarray
    off_values: np.ndarray


@nb.njit(cache=True, inline="always")
def _mc_rollout_value(state, player, root, root_wood, params, partial, n_values, joint, hidden,
                      n_hidden, rng, ruleset):
    """Random continuation from ``state`` (in place) for up to ``mc_length`` ticks; the
    normalised value: the last state's (``EVALUATE_LAST``), or ``partial`` plus the
    discounted values of every state from ``state`` on, the first at power ``n_values``
    (the individual's values followed by the rollout's: its first value is the end
    state again, as the framework concatenates them). ``params``: :class:`RheaParams`
    (``evaluate_act``, ``discount``, ``mc_length``, ``quirks``).

    One call site each of ``advance`` and ``search_value`` (both inlined): every
    inlined copy costs compile time on a fresh cache, none of them speed. Inlined (into
    :func:`evaluate`), so that it compiles with the kernel's one ruleset.
    """
    evaluate_act, discount = params.evaluate_act, params.discount
    mc_length, quirks = params.mc_length, params.quirks
    acc = partial
    k = n_values
    ticks = 0
    value = 0.0
    while True:
        at_end = ticks >= mc_length or search_over(state, player, quirks)
        if evaluate_act == EVALUATE_DISCOUNT or at_end:
            value = search_value(root, root_wood, state, player, quirks)
            if evaluate_act == EVALUATE_DISCOUNT:
                acc += discount ** k * value
                k += 1
            if at_end:
                break
        advance(state, player, rng_integer(rng, N_ACTIONS), joint, hidden, n_hidden, rng, ruleset)
        ticks += 1
    return normalise(value if evaluate_act == EVALUATE_LAST else acc, -1.0, 1.0)


@nb.njit(cache=True, inline="always")
def evaluate(genes, old_value, mutate, root, root_wood, scratch, mc_state, player, params, mc_rollouts,
             joint, hidden, n_hidden, rng, ruleset=STATE_RULESET):
    """Roll ``genes`` (int8[L], mutated in place where ``mutate[i]``) from the root.

    ``params``: :class:`RheaParams` (``evaluate_act``, ``discount``, ``mc_repeat`` and those
    of :func:`_mc_rollout_value`); ``mc_rollouts``: bool, a constant of the calling kernel.

    Returns: float64, the new fitness ``(old_value + value) / 2``.

    Inlined into :func:`rhea_search` (one call site): as a call it passed three states by
    value per evaluation. It plays the genes with one call site each of ``advance`` and
    ``search_value`` (inlined too): every inlined copy costs compile time on a fresh
    cache (seconds each), none of them speed.
    """
    evaluate_act, discount, quirks = params.evaluate_act, params.discount, params.quirks
    copy_into(scratch, root)
    length = genes.shape[0]
    acc = 0.0
    value = 0.0
    played = 0  # actions played so far
    while True:  # one call site each of search_value and advance (both inlined)
        at_end = played >= length or search_over(scratch, player, quirks)
        if evaluate_act == EVALUATE_DISCOUNT or at_end:
            value = search_value(root, root_wood, scratch, player, quirks)
            if evaluate_act == EVALUATE_DISCOUNT:
                acc = value if played == 0 else acc + discount ** played * value
            if at_end:
                break
        if mutate[played]:  # a new value, different from the current one
            a = rng_integer(rng, N_ACTIONS - 1)
            if a >= genes[played]:
                a += 1
            genes[played] = a
        advance(scratch, player, genes[played], joint, hidden, n_hidden, rng, ruleset)
        played += 1
    n_values = played + 1  # values taken with evaluate_act = EVALUATE_DISCOUNT
    if evaluate_act == EVALUATE_DISCOUNT:
        value = acc
    if mc_rollouts and not search_over(scratch, player, quirks):
        total = 0.0
        for _ in range(params.mc_repeat):
            copy_into(mc_state, scratch)
            total += _mc_rollout_value(mc_state, player, root, root_wood, params, acc, n_values,
                                       joint, hidden, n_hidden, rng, ruleset)
        value = total / params.mc_repeat
    return (old_value + value) / 2.0


@nb.njit(cache=True)
def _draw_mutation(mutate, mutation_rate, rng):
    for i in range(mutate.shape[0]):
        mutate[i] = rng_uniform(rng) < mutation_rate


@nb.njit(cache=True)
def _tournament(values, count, tournament_size, rng):
    """Index of the best of ``tournament_size`` random picks among the first ``count``."""
    best = rng_integer(rng, count)
    for _ in range(1, tournament_size):
        k = rng_integer(rng, count)
        if values[k] > values[best]:
            best = k
    return best


@nb.njit(cache=True)
def _make_offspring(population, values, child, tournament_size, rng):
    """Fill ``child`` (int8[L]) from the population; returns the inherited value."""
    p = population.shape[0]
    length = population.shape[1]
    if p <= 2:
        k = rng_integer(rng, p)
        for j in range(length):
            child[j] = population[k, j]
        return values[k]
    first = _tournament(values, p, tournament_size, rng)
    # the second parent is chosen among the others
    second = _tournament(values, p - 1, tournament_size, rng)
    if second >= first:
        second += 1
    point = rng_integer(rng, length)
    for j in range(point):
        child[j] = population[first, j]
    for j in range(point, length):
        child[j] = population[second, j]
    return 0.0  # the framework's crossover builds a fresh individual (value 0)


@nb.njit(cache=True)
def _keep_best(population, values, offspring, off_values, pool, pool_values, order):
    """The best P of parents (first) + offspring, stable on ties, into population."""
    p = population.shape[0]
    o = offspring.shape[0]
    n = p + o
    length = population.shape[1]
    for i in range(p):
        for g in range(length):
            pool[i, g] = population[i, g]
        pool_values[i] = values[i]
    for j in range(o):
        for g in range(length):
            pool[p + j, g] = offspring[j, g]
        pool_values[p + j] = off_values[j]
    for i in range(n):
        order[i] = i
    for i in range(1, n):  # insertion sort, descending, stable
        k = order[i]
        j = i - 1
        while j >= 0 and pool_values[order[j]] < pool_values[k]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    for i in range(p):
        for g in range(length):
            population[i, g] = pool[order[i], g]
        values[i] = pool_values[order[i]]


@nb.njit(cache=True, inline="always")
def rhea_search(observation, player, root, scratch, mc_state, evolved, has_population, params,
                mc_rollouts, rng, max_wood, ruleset):
    """One RHEA decision (inlined into the decision kernels of :data:`RHEA_DECIDE`, each
    compiled for one ruleset and Monte Carlo rollouts on or off).

    Args:
        observation: PommermanState; player: int.
        root, scratch, mc_state: preallocated PommermanStates (overwritten).
        evolved: :class:`RheaPopulation` (the population in/out, the offspring scratch).
        has_population: bool, False on the first decision of a game (random init).
        params: :class:`RheaParams`, the budget and the search's settings.
        mc_rollouts: bool, a constant of the calling kernel (see :data:`RHEA_DECIDE`).
        rng: uint64[2].
        max_wood: int, see ``_common.prepare_search``.
        ruleset: RULESET_CANONICAL or RULESET_JAVA, the observation's (a constant).
    Returns:
        (action, iterations): int64, int64.
    """
    population, values = evolved.population, evolved.values
    offspring, off_values = evolved.offspring, evolved.off_values
    max_iterations, tournament_size = params.max_iterations, params.tournament_size
    mutation_rate = params.mutation_rate
    root, scratch, hidden, joint, n_hidden, root_wood, rng, start, deadline = begin_search(
        observation, root, scratch, rng, params.quirks, max_wood, params.time_limit)
    mc_state = borrowed_state(mc_state)  # a borrowed view (no reference counts) for the loop
    if mc_rollouts:
        require_layout_shapes(mc_state)  # once per decision: advance steps it unchecked
    p = population.shape[0]
    o = offspring.shape[0]
    length = population.shape[1]
    no_mutation = np.zeros(length, dtype=np.bool_)
    mutate = np.zeros(length, dtype=np.bool_)
    pool = np.empty((p + o, length), dtype=np.int8)
    pool_values = np.empty(p + o, dtype=np.float64)
    order = np.empty(p + o, dtype=np.int64)

    shift = has_population and params.shift_buffer
    iterations = 0
    initial = True  # first the (shifted or random) population is evaluated, then the generations
    while initial or not budget_exhausted(iterations, max_iterations, start, deadline):
        # one evaluate call site (it is inlined: one copy of the rollout loop here): in the
        # initial pass the population; in a generation the offspring (made and mutated in
        # turn), then the parents re-evaluated
        for k in range(p if initial else o + p):
            if initial:
                if shift:
                    for j in range(1, length):
                        population[k, j - 1] = population[k, j]
                    population[k, length - 1] = rng_integer(rng, N_ACTIONS)
                    old_value = values[k]
                else:
                    for j in range(length):
                        population[k, j] = rng_integer(rng, N_ACTIONS)
                    old_value = 0.0
                genes, mutated = population[k], no_mutation
            elif k < o:
                old_value = _make_offspring(population, values, offspring[k], tournament_size, rng)
                _draw_mutation(mutate, mutation_rate, rng)
                genes, mutated = offspring[k], mutate
            else:
                old_value = values[k - o]
                genes, mutated = population[k - o], no_mutation
            value = evaluate(genes, old_value, mutated, root, root_wood, scratch, mc_state, player,
                             params, mc_rollouts, joint, hidden, n_hidden, rng, ruleset)
            if initial:
                values[k] = value
            elif k < o:
                off_values[k] = value
            else:
                values[k - o] = value
        if initial:
            initial = False
            continue
        _keep_best(population, values, offspring, off_values, pool, pool_values, order)
        iterations += 1
    return np.int64(population[0, 0]), iterations


def _rhea_decide_for(ruleset, mc_rollouts):
    """The decision kernel: :func:`rhea_search` with ``ruleset`` (RULESET_CANONICAL /
    RULESET_JAVA) and ``mc_rollouts`` (bool) as constants of the kernel (closure values,
    which numba folds as it does globals), so it compiles only its own rules and, with
    Monte Carlo rollouts off, leaves out the rollout's inlined tick and evaluation
    (``params.mc_length`` and ``params.mc_repeat`` are then unused). numba caches each
    closure under its own key (the closure values are part of it)."""

    @nb.njit(cache=True)
    def rhea_decide(observation, player, root, scratch, mc_state, evolved, has_population, params,
                    rng, max_wood=0):
        return rhea_search(observation, player, root, scratch, mc_state, evolved, has_population, params,
                           mc_rollouts, rng, max_wood, ruleset)

    return rhea_decide


#: The decision kernel by (the observation's ruleset, Monte Carlo rollouts on), see
#: :func:`_rhea_decide_for`: a fresh cache compiles only the kernel a lineup uses.
RHEA_DECIDE = {(ruleset, mc): _rhea_decide_for(ruleset, mc)
               for ruleset in KERNEL_RULESETS for mc in (False, True)}


# --------------------------------------------------------------------- the agent
_EVALUATE = {"last": EVALUATE_LAST, "discount": EVALUATE_DISCOUNT}


@config_class
class RHEAConfig(PommermanSearchConfig):
    """Rolling horizon evolution (the Java framework's RHEAParams defaults)."""

    population_size: Annotated[int, Field(ge=1, le=1000)] = 1
    """Individuals kept from generation to generation."""
    offspring_count: Annotated[int, Field(ge=1, le=1000)] = 1
    """Offspring evaluated per generation (iteration)."""
    individual_length: Annotated[int, Field(ge=1, le=500)] = 12
    """Actions per individual (the planning horizon in ticks)."""
    mutation_rate: Annotated[Real, Field(ge=0, le=1)] = 0.3
    """Per-gene probability of a uniform mutation (the study's runner uses 0.5)."""
    tournament_fraction: Annotated[Real, Field(gt=0, le=1)] = 0.4
    """Tournament size = max(1, min(2, int(population_size * fraction)));
    selection and one-point crossover only act when population_size > 2."""
    shift_buffer: bool = True
    """Keep the population between decisions, shifted by one action."""
    evaluate_act: Annotated[str, one_of(_EVALUATE)] = "last"
    """Value of a rollout: ``last`` state's heuristic (framework default) or the
    ``discount``-ed sum of every state's value."""
    discount: Annotated[Real, Field(gt=0, le=1)] = 0.99
    """Discount factor of ``evaluate_act = "discount"``."""
    mc_rollouts: bool = False
    """Continue each evaluation with random Monte Carlo rollouts."""
    mc_rollouts_length: Annotated[int, Field(ge=1, le=500)] = 6
    """Ticks per Monte Carlo rollout (framework: half the individual length)."""
    mc_rollouts_repeat: Annotated[int, Field(ge=1, le=100)] = 1
    """Monte Carlo rollouts per evaluation (values averaged)."""

    @property
    def tournament_size(self) -> int:
        return max(1, min(2, int(self.population_size * self.tournament_fraction)))


@register
class RHEAAgent(PommermanSearchAgent):
    """Rolling horizon evolution; one iteration = one generation (offspring
    evaluated, parents re-evaluated). The population persists between the
    decisions of a game (shift buffer)."""

    name = "rhea"
    compile_seconds = 8.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents rhea,rhea,rhea,rhea)
    Config = RHEAConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        c = config
        self._mc_state = scratch_state()
        self._population = np.zeros((c.population_size, c.individual_length), dtype=np.int8)
        self._values = np.zeros(c.population_size, dtype=np.float64)
        self._offspring = np.zeros((c.offspring_count, c.individual_length), dtype=np.int8)
        self._off_values = np.zeros(c.offspring_count, dtype=np.float64)
        self._evolved = RheaPopulation(self._population, self._values, self._offspring, self._off_values)
        max_iterations, seconds = budget.kernel_args()
        self._params = RheaParams(
            int(max_iterations), float(seconds), float(c.mutation_rate), int(c.tournament_size),
            bool(c.shift_buffer), _EVALUATE[c.evaluate_act], float(c.discount),
            int(c.mc_rollouts_length), int(c.mc_rollouts_repeat), int(self.quirks))
        self._has_population = False

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._has_population = False
        self._population[:] = 0
        self._values[:] = 0.0

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        action, iterations = RHEA_DECIDE[int(observation.meta[M_RULESET]), bool(self.config.mc_rollouts)](
            observation, self.seat, self._root, self._scratch, self._mc_state, self._evolved,
            self._has_population, self._params, self._rng, self.model_max_wood(observation))
        self._has_population = True
        self.last_value = float(self._values[0])  # the fitness of the individual played
        return int(action), int(iterations)
