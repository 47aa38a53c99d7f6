"""MCTS for the seekers: determinization, Location Categorization, Coalition
Reduction, and three tree layouts.

The seekers never know where Mr X is: the search starts from their observation
(Mr X's station HIDDEN, the possible-locations set) and places him on one
possible location (*determinization*): uniformly, or by roulette wheel over the
*Location Categorization* weights (a location's category is its distance to the
nearest detective, 1..L, L a catch-all; every possible location weighs its
category's weight). The kernel overwrites Mr X's station in its copy of the
observation before anything reads it, so two observations that differ only there
give the same decision (tested).

Location Categorization (the paper's definitions are the defaults; Arena's first
rules are named options, see ``_common``):

* general table (``determinization = "lc_general"``): category c weighs a_c / n_c,
  a_c the number of records in which Mr X's true location was in c, n_c
  (``lc_general_n = "presence"``) the number of records in which c held at least
  one possible location; ``"locations"``: n_c = the possible locations c held, summed;
* detailed table (``"lc_detailed"``): for the combination of categories present, the
  stored vector of Mr X's categories is the weight vector itself
  (``lc_detailed = "counts"``); ``"ratio"``: that vector divided by the location counts;
* empty categories (``lc_prior``): ``"add_one"`` counts, (a + 1) / (n + 2) for a ratio
  and a + 1 for a count vector, so no possible location ever has weight 0;
  ``"mean_floor"``: the mean of the other categories, floored at 1e-6;
* records (``lc_record``): one per hider move (``"hider_move"``: at the seekers' first
  decision after Mr X moved, a double move being one record since the seekers see
  only its end) or one per detective decision (``"every_decision"``, five a round).

Tree layouts (``trees``):

* ``"single"``: one tree shared by all determinizations, every detective's move a
  node; each iteration draws a new determinization (open loop: the legal moves are
  those of the iteration's state);
* ``"per_determinization"``: ``determinizations`` = K locations drawn at the root, one
  tree per location (each gets 1/K of the budget, Mr X fixed there), the root
  decision combined across trees (``combine = "visits"``: the move with the most
  visits summed over the trees; ``"vote"``: the move most trees recommend by
  ``final_move``, ties by summed visits);
* ``"per_detective"``: one tree over the moves of the detective to move (the others
  and Mr X move by the playout policy), a new determinization per iteration.

Mr X moves inside the simulation by his epsilon-greedy playout policy, or, with
``mrx_in_tree`` (the Java reference's choice), as tree nodes (his legal moves with the
study's filters, valued by his escape) in every layout.

*Coalition Reduction* (``coalition_reduction`` r): the seekers are one player; a
capture scores 1 when the root player (the detective to move) makes it, 1 - r when
another detective does, 0 when Mr X escapes, for every detective's node
(``coalition_view = "root"``, the paper); ``"own"``: each detective's node scores from
its own detective's point of view (1 for its own capture, 1 - r for another's).

Learned state (Location Categorization tables): ``lc_general_n/_a`` (float64[L])
and ``lc_detailed_n/_a`` (float64[2**L, L]): per record, n adds the possible
locations per category, a adds 1 at Mr X's true category (so the paper's presence
counts are the detailed table's record counts, ``_common.presence_counts``, and one
table file serves every definition). Offline: load a table file (the lineup's
``seed_population``, a path or an MLflow artifact URI; written by
``jobs/scotland_yard/lc_tables.py``) and keep it fixed (``lc_update = false``).
Online: start empty and update at the end of every game of a series (``lc_update =
true``; the cluster carries the tables from game to game); Mr X's true locations
are known once the game is over.

Diagnostic (``game_metrics``): at every seeker decision, the probability the
determinization gives Mr X's true station (known at the end of the game), averaged
over the game's decisions (``p_true_location``), beside the uniform sampler's
1 / |possible locations| at the same decisions (``p_true_uniform``), the share of
decisions that in effect ruled the truth out (``p_true_ruled_out``: under 1/1000 of
the uniform probability) and the number of decisions scored (``p_true_decisions``).
"""
from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field, model_validator

from games.lowlevel import keep_alive
from games.rng import rng_uniform
from games.validation import config_class, one_of
from games.scotland_yard.kernels import (
    HIDDEN, MAX_DETECTIVES, MRX, M_CAPTURER, M_NUM_DETECTIVES, M_RESULT, M_ROUND, M_TO_MOVE,
    NUM_ACTIONS, RESULT_MRX_WINS, copy_dynamic_into, copy_into, is_terminal,
    legal_actions_into, step,
)

from ..registry import register
from ..search import (
    ROOT_INDEX, backup_by_player, budget_exhausted, deadline_ns, expand, Exploration, MaxNodes,
    monotonic_ns, random_untried_legal, recommend_root_action, reset_tree,
    select_ucb_among_legal_children,
)
from ._common import (
    Determinization, LC_DETAILED_COUNTS, LC_DETAILED_RATIO, LC_N_LOCATIONS, LC_N_PRESENCE, LcTables,
    PRIOR_ADD_ONE, PRIOR_MEAN_FLOOR, borrowed_search_arguments, categorize, filter_mrx_moves, location_weights,
    playout, playout_detective_action, playout_mrx_action, prepare_root, roulette,
    search_work_buffers,
)
from .mcts_mrx import Probability, ScotlandYardAgent

DETERMINIZATIONS = {"uniform": 0, "lc_general": 1, "lc_detailed": 2}
LC_GENERAL_N = {"presence": LC_N_PRESENCE, "locations": LC_N_LOCATIONS}
LC_DETAILED = {"counts": LC_DETAILED_COUNTS, "ratio": LC_DETAILED_RATIO}
LC_PRIORS = {"add_one": PRIOR_ADD_ONE, "mean_floor": PRIOR_MEAN_FLOOR}
LC_RECORDS = ("hider_move", "every_decision")
COALITION_VIEWS = {"root": True, "own": False}
#: Tree layouts (see the module docstring).
TREES_SINGLE = 0
TREES_PER_DETERMINIZATION = 1
TREES_PER_DETECTIVE = 2
TREES = {"single": TREES_SINGLE, "per_determinization": TREES_PER_DETERMINIZATION,
         "per_detective": TREES_PER_DETECTIVE}
COMBINE = {"visits": 0, "vote": 1}
#: Mr X's moves as tree nodes are his legal moves with the study's filters
#: (``sy_mcts_mrx``'s defaults: black tickets filtered, the double move only
#: within this mean distance of the detectives).
MRX_TREE_DOUBLE_DISTANCE = 3.0


class SeekersParams(NamedTuple):
    """A seekers' MCTS agent's search settings (built once per agent: :class:`SeekersMCTSAgent`).

    Fields:
        max_iterations: int; time_limit: float seconds (0 = none): the budget.
        exploration: float, UCB C.
        epsilon_mrx, epsilon_detectives: float, the playout randomness of Mr X's and
            the detectives' moves.
        reduction: float, Coalition Reduction r in [0, 1].
        root_view: bool, the root player's point of view for every detective (else
            each its own).
        trees: int, TREES_SINGLE, TREES_PER_DETERMINIZATION or TREES_PER_DETECTIVE.
        num_trees: int, K (per determinization).
        combine: int, 0 summed visits, 1 votes.
        mrx_in_tree: bool, Mr X's moves as tree nodes.
        best_mean: bool, play the best mean root child (else the most visited).
    """

    max_iterations: int
    time_limit: float
    exploration: float
    epsilon_mrx: float
    epsilon_detectives: float
    reduction: float
    root_view: bool
    trees: int
    num_trees: int
    combine: int
    mrx_in_tree: bool
    best_mean: bool


@nb.njit(cache=True)
def coalition_values(state, reduction, values):
    """Fill ``values`` (float64[MAX_DETECTIVES + 1]) for a finished simulation:
    ``values[0]`` Mr X's (1 on escape), ``values[d]`` detective d's own view: 1 if d
    caught him, ``1 - reduction`` if another detective did (or he could not move),
    0 on escape."""
    if state.meta[M_RESULT] == RESULT_MRX_WINS:
        values[0] = 1.0
        for d in range(1, MAX_DETECTIVES + 1):
            values[d] = 0.0
        return
    values[0] = 0.0
    capturer = state.meta[M_CAPTURER]
    for d in range(1, MAX_DETECTIVES + 1):
        values[d] = 1.0 if d == capturer else 1.0 - reduction


@nb.njit(cache=True)
def coalition_values_root(state, reduction, root_player, values):
    """:func:`coalition_values` with the seekers as one player seen from
    ``root_player`` (the detective deciding): every ``values[d]`` is 1 if the root
    player caught Mr X, ``1 - reduction`` if another detective did (or he could not
    move), 0 on escape; ``values[0]`` is Mr X's."""
    coalition_values(state, reduction, values)
    v = values[root_player]
    for d in range(1, MAX_DETECTIVES + 1):
        values[d] = v


@nb.njit(cache=True)
def seekers_iteration(scratch, tree, node_player, me, mask, occupied, moves, values, params,
                      all_detectives, rng):
    """One iteration from ``scratch`` (the root with Mr X placed; played out in
    place): descend by UCB over the legal moves of the tree's players (every
    detective's if ``all_detectives``, else only ``me``'s), expand one untried move,
    play out, back up the Coalition Reduction values. ``params``: :class:`SeekersParams`.
    Work buffers: ``mask`` bool[NUM_ACTIONS], ``occupied`` and ``moves`` (``_common.playout``)."""
    exploration, epsilon_mrx = params.exploration, params.epsilon_mrx
    epsilon_detectives = params.epsilon_detectives
    reduction, root_view, mrx_in_tree = params.reduction, params.root_view, params.mrx_in_tree
    node = ROOT_INDEX
    expanded = False
    while not is_terminal(scratch) and not expanded:
        p = scratch.meta[M_TO_MOVE]
        if p == MRX:
            if not mrx_in_tree:
                step(scratch, playout_mrx_action(scratch, epsilon_mrx, mask, rng))
                continue
            legal_actions_into(scratch, p, mask)
            filter_mrx_moves(scratch, mask, True, True, MRX_TREE_DOUBLE_DISTANCE)
        elif not all_detectives and p != me:
            step(scratch, playout_detective_action(scratch, p, scratch.positions[MRX],
                                                   epsilon_detectives, mask, rng))
            continue
        else:
            legal_actions_into(scratch, p, mask)
        a = random_untried_legal(tree, node, mask, rng)
        if a >= 0:
            child = expand(tree, node, a)
            if child >= 0:
                node_player[child] = p
                node = child
            expanded = True
        else:
            a = select_ucb_among_legal_children(tree, node, mask, exploration, rng)
            node = tree.children[node, a]
        step(scratch, a)
    playout(scratch, epsilon_mrx, epsilon_detectives, mask, occupied, moves, rng)
    if root_view:
        coalition_values_root(scratch, reduction, me, values)
    else:
        coalition_values(scratch, reduction, values)
    backup_by_player(tree, node, values, node_player)


@nb.njit(cache=True)
def combined_root_action(visits, value_sums, votes, combine, rng):
    """The move of a per-determinization search: ``combine`` 0, the most summed
    visits (ties: the higher summed mean, then at random); 1, the most votes
    (ties: the most summed visits, then at random). -1 if no move was visited."""
    total = 0.0
    for a in range(visits.shape[0]):
        total += visits[a]
    best = -1
    best_score = -np.inf
    for a in range(visits.shape[0]):
        if visits[a] <= 0 and votes[a] <= 0:
            continue
        mean = value_sums[a] / visits[a] if visits[a] > 0 else 0.0
        if combine == 0:
            score = visits[a] + 1e-3 * mean
        else:
            score = votes[a] + 0.5 * visits[a] / max(total, 1.0)
        score += 1e-9 * rng_uniform(rng)
        if score > best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True)
def seekers_decide(observation, tree, node_player, root, scratch, stations, cumulative, weights,
                   params, determinization, tables, rng):
    """One decision of the detective to move.

    Args:
        observation: ScotlandYardState, the seekers' view (Mr X's station is never
            read: it is overwritten by a determinization).
        tree: Tree over NUM_ACTIONS actions; node_player: int8[capacity].
        root, scratch: preallocated states on the board (overwritten).
        stations: int32[S + 1], cumulative: float64[S + 1]: work buffers (out: the
            possible locations and their cumulative weights); weights: float64[L]
            (out: the category weights used).
        params: :class:`SeekersParams`, the budget and the search's settings.
        determinization: :class:`~._common.Determinization`, how Mr X is placed;
        tables: :class:`~._common.LcTables`, the Location Categorization tables.
        rng: uint64[2] (advanced).
    Returns: (action, iterations, possible locations m).
    """
    max_iterations, trees = params.max_iterations, params.trees
    num_trees, best_mean = params.num_trees, params.best_mean
    deadline = deadline_ns(params.time_limit)
    start = monotonic_ns()
    prepare_root(root, observation)
    root.positions[MRX] = HIDDEN
    me = root.meta[M_TO_MOVE]
    m = location_weights(root, determinization, tables, stations, cumulative, weights)
    reset_tree(tree)
    node_player[ROOT_INDEX] = -1
    root, scratch, tree, node_player, rng = borrowed_search_arguments(root, scratch, tree,
                                                                     node_player, rng)
    buffers, (mask, values, occupied, moves) = search_work_buffers(root)
    all_detectives = trees != TREES_PER_DETECTIVE
    iterations = 0
    copy_into(scratch, root)
    if trees != TREES_PER_DETERMINIZATION:
        while m > 0 and not budget_exhausted(iterations, max_iterations, start, deadline):
            copy_dynamic_into(scratch, root)
            scratch.positions[MRX] = roulette(stations, cumulative, m, rng)
            seekers_iteration(scratch, tree, node_player, me, mask, occupied, moves, values, params,
                              all_detectives, rng)
            iterations += 1
        action = recommend_root_action(tree, best_mean, 1e-9, rng)
    else:
        visits = np.zeros(NUM_ACTIONS, dtype=np.float64)
        value_sums = np.zeros(NUM_ACTIONS, dtype=np.float64)
        votes = np.zeros(NUM_ACTIONS, dtype=np.float64)
        share = max_iterations // num_trees
        extra = max_iterations % num_trees
        for k in range(num_trees if m > 0 else 0):
            limit = share * (k + 1) + min(k + 1, extra)  # iterations done after tree k
            tree_deadline = deadline
            if deadline >= 0:
                tree_deadline = start + (deadline - start) * (k + 1) // num_trees
            if iterations >= limit or (deadline >= 0 and monotonic_ns() >= tree_deadline):
                continue
            guess = roulette(stations, cumulative, m, rng)
            reset_tree(tree)
            node_player[ROOT_INDEX] = -1
            done = 0
            tree_iterations = limit - iterations
            tree_start = monotonic_ns()
            while not budget_exhausted(done, tree_iterations, tree_start, tree_deadline):
                copy_dynamic_into(scratch, root)
                scratch.positions[MRX] = guess
                seekers_iteration(scratch, tree, node_player, me, mask, occupied, moves, values, params,
                                  True, rng)
                done += 1
            iterations += done
            for a in range(NUM_ACTIONS):
                child = tree.children[ROOT_INDEX, a]
                if child >= 0:
                    visits[a] += tree.node_visits[child]
                    value_sums[a] += tree.node_value_sum[child]
            vote = recommend_root_action(tree, best_mean, 1e-9, rng)
            if vote >= 0:
                votes[vote] += 1.0
        action = combined_root_action(visits, value_sums, votes, params.combine, rng)
    if action < 0:
        legal_actions_into(root, me, mask)
        action = np.argmax(mask)
    keep_alive(buffers)
    return action, iterations, m


@config_class
class SeekersMCTSConfig:
    """MCTS for the seekers (defaults: the study's and the paper's definitions;
    the reference uses C = 2, r = 0.25)."""

    exploration: Exploration = 2.0
    """UCB constant C in ``mean + C sqrt(2 ln N / n)``."""
    epsilon: Probability = 0.2
    """Playout randomness of the detectives' moves (greedy: toward the guessed location)."""
    epsilon_mrx: Probability = 0.2
    """Playout randomness of Mr X's moves (greedy: away from the nearest detective)."""
    coalition_reduction: Probability = 0.25
    """r: another detective's capture scores 1 - r (0: no reduction)."""
    coalition_view: Annotated[str, one_of(COALITION_VIEWS)] = "root"
    """``root`` (the paper: the seekers are one player, every detective's node scores
    from the root player's point of view) or ``own`` (each detective's node from its
    own detective's, Arena's first rule)."""
    trees: Annotated[str, one_of(TREES)] = "single"
    """``single`` (one tree shared by all determinizations), ``per_determinization``
    (one tree per determinization, root decision combined by ``combine``) or
    ``per_detective`` (a tree over the moving detective's own moves)."""
    shared_tree: bool | None = None
    """Legacy alias of ``trees``: true is ``single``, false ``per_detective`` (None: not given)."""
    determinizations: Annotated[int, Field(ge=1, le=10_000)] = 10
    """K, the trees of ``trees = "per_determinization"`` (each gets 1/K of the budget)."""
    combine: Annotated[str, one_of(COMBINE)] = "visits"
    """How ``per_determinization`` picks the move: ``visits`` (summed over the trees)
    or ``vote`` (each tree's ``final_move`` choice one vote; ties by summed visits)."""
    mrx_in_tree: bool = False
    """Mr X's moves as tree nodes (the Java reference); false: by his playout policy."""
    determinization: Annotated[str, one_of(DETERMINIZATIONS)] = "uniform"
    """How Mr X is placed: ``uniform``, ``lc_general`` or ``lc_detailed``."""
    categories: Annotated[int, Field(ge=2, le=10)] = 5
    """L: Location Categorization categories (distances 1..L-1 and a catch-all L)."""
    lc_general_n: Annotated[str, one_of(LC_GENERAL_N)] = "presence"
    """General table n: ``presence`` (the paper: records in which the category held a
    possible location) or ``locations`` (the possible locations it held, summed)."""
    lc_detailed: Annotated[str, one_of(LC_DETAILED)] = "counts"
    """Detailed table weights: ``counts`` (the paper: the stored vector itself) or
    ``ratio`` (divided by the location counts)."""
    lc_prior: Annotated[str, one_of(LC_PRIORS)] = "add_one"
    """Empty categories: ``add_one`` counts (no location ever weighs 0) or
    ``mean_floor`` (the mean of the others, floored at 1e-6)."""
    lc_record: Annotated[str, one_of(LC_RECORDS)] = "hider_move"
    """Table records: one per hider move (the paper) or ``every_decision``."""
    lc_update: bool = False
    """Update the tables at the end of every game (online learning; the cluster
    carries them through a series). Offline tables are loaded through the
    lineup's ``seed_population`` and kept fixed (false)."""
    final_move: Literal["best_mean", "most_visited"] = "best_mean"
    """``best_mean`` (the reference) or ``most_visited``."""
    max_nodes: MaxNodes = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1)."""

    @model_validator(mode="after")
    def _legacy_shared_tree(self):
        if self.shared_tree is not None:
            implied = "single" if self.shared_tree else "per_detective"
            if self.trees not in ("single", implied):
                raise ValueError(f"shared_tree: = {str(self.shared_tree).lower()} contradicts "
                                 f"trees = {self.trees!r}")
            object.__setattr__(self, "trees", implied)
        return self


TABLE_KEYS = ("lc_general_n", "lc_general_a", "lc_detailed_n", "lc_detailed_a")


def empty_tables(categories: int) -> dict[str, np.ndarray]:
    """Zeroed Location Categorization tables for L = ``categories``."""
    return {"lc_general_n": np.zeros(categories), "lc_general_a": np.zeros(categories),
            "lc_detailed_n": np.zeros((1 << categories, categories)),
            "lc_detailed_a": np.zeros((1 << categories, categories))}


def check_tables(categories: int, arrays: dict) -> None:
    """Raise ValueError unless ``arrays`` are LC tables for L = ``categories``."""
    expected = {k: v.shape for k, v in empty_tables(categories).items()}
    for key, shape in expected.items():
        if key not in arrays:
            raise ValueError(f"{key}: missing from the Location Categorization tables "
                             f"(expected {sorted(expected)})")
        arr = np.asarray(arrays[key])
        if arr.shape != shape:
            raise ValueError(f"{key}: shape {arr.shape}, expected {shape} for categories = {categories}")
        if not np.isfinite(arr).all() or (arr < 0).any():
            raise ValueError(f"{key}: counts must be finite and >= 0")


@nb.njit(cache=True)
def update_tables(general_n, general_a, detailed_n, detailed_a, counts, combos, truth_categories):
    """Add the records of one game: ``counts[i]`` (float64[L]) the possible
    locations per category at record i (one per hider move, or per detective
    decision with ``lc_record = "every_decision"``), ``combos[i]`` their category
    mask, ``truth_categories[i]`` Mr X's true category (1..L)."""
    for i in range(counts.shape[0]):
        c = truth_categories[i] - 1
        for k in range(counts.shape[1]):
            general_n[k] += counts[i, k]
            detailed_n[combos[i], k] += counts[i, k]
        general_a[c] += 1.0
        detailed_a[combos[i], c] += 1.0


@nb.njit(cache=True, inline="always")
def _recorded_category(dist_detective, detective_stations, station, num_categories):
    """Category 1..L of ``station`` against the detectives' recorded stations
    (``detective_stations``: int64[MAX_DETECTIVES], 0 = none): the distance to the nearest,
    L a catch-all (as :func:`category_of` on a state)."""
    best = 1 << 20
    for d in range(detective_stations.shape[0]):
        v = detective_stations[d]
        if v > 0:
            dist = dist_detective[v, station]
            if dist < best:
                best = dist
    return min(max(best, 1), num_categories)


@nb.njit(cache=True)
def true_categories(final, detective_positions, rounds, num_categories, out):
    """Mr X's category at each recorded decision, from the end-of-game observation
    ``final`` (his path shown) and the detectives' stations then."""
    for i in range(rounds.shape[0]):
        out[i] = _recorded_category(final.dist_detective, detective_positions[i],
                                    final.mrx_path[rounds[i]], num_categories)


#: The diagnostic ``p_true_ruled_out`` counts the decisions whose sampler gave Mr X's
#: true station less than this fraction of the uniform sampler's probability.
RULED_OUT = 1e-3


@nb.njit(cache=True)
def true_location_probabilities(final, rounds, detective_positions, possible, weights, totals,
                                num_categories, out):
    """The probability each recorded decision's sampler gave Mr X's true station.

    Args: final (the end-of-game observation: his path shown); rounds: int64[D]
        (the round of each decision); detective_positions: int64[D, MAX_DETECTIVES];
        possible: bool[D, S + 1] (the possible locations then); weights: float64[D, L]
        (the category weights used); totals: float64[D] (their sum over the possible
        locations); num_categories: L; out: float64[D] (0 where the truth was not
        possible: the rules never allow it).
    """
    for i in range(rounds.shape[0]):
        truth = final.mrx_path[rounds[i]]
        if truth <= 0 or not possible[i, truth] or totals[i] <= 0:
            out[i] = 0.0
            continue
        c = _recorded_category(final.dist_detective, detective_positions[i], truth, num_categories)
        out[i] = weights[i, c - 1] / totals[i]


@register
class SeekersMCTSAgent(ScotlandYardAgent):
    """MCTS for the detectives with determinization, LC and Coalition Reduction."""

    name = "sy_mcts_seekers"
    Config = SeekersMCTSConfig
    side = 1

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._preallocate_search(budget, config.max_nodes)
        s = self._root.possible.shape[0]
        self._stations = np.zeros(s, dtype=np.int32)
        self._cumulative = np.zeros(s, dtype=np.float64)
        self._weights = np.zeros(config.categories, dtype=np.float64)
        c = config
        self._determinization = Determinization(
            DETERMINIZATIONS[c.determinization], int(c.categories), LC_GENERAL_N[c.lc_general_n],
            LC_DETAILED[c.lc_detailed], LC_PRIORS[c.lc_prior])
        max_iterations, seconds = budget.kernel_args()
        self._params = SeekersParams(
            int(max_iterations), float(seconds), float(c.exploration), float(c.epsilon_mrx), float(c.epsilon),
            float(c.coalition_reduction), COALITION_VIEWS[c.coalition_view], TREES[c.trees],
            int(c.determinizations), COMBINE[c.combine], bool(c.mrx_in_tree), c.final_move == "best_mean")
        self.tables = empty_tables(config.categories)
        self._records: list[tuple] = []
        self._decisions: list[tuple] = []
        self._metrics: dict[str, float] = {}

    @property
    def tables(self) -> dict[str, np.ndarray]:
        """The Location Categorization tables by name (``TABLE_KEYS``); assigning a new dict
        rebuilds the :class:`~._common.LcTables` the kernel reads (their arrays are shared)."""
        return self._tables

    @tables.setter
    def tables(self, tables: dict[str, np.ndarray]) -> None:
        self._tables = tables
        self._lc_tables = LcTables(*(tables[k] for k in TABLE_KEYS))

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._records = []
        self._decisions = []
        self._metrics = {}

    def decide(self, observation):
        c = self.config
        n = int(observation.meta[M_NUM_DETECTIVES])
        detectives = observation.positions[1:n + 1].copy()
        rnd = int(observation.meta[M_ROUND])
        if c.lc_update and (c.lc_record == "every_decision" or not self._records
                            or self._records[-1][0] != rnd):
            counts = np.zeros(c.categories)
            combo = categorize(observation, c.categories, counts)
            self._records.append((rnd, combo, counts, detectives))
        action, iterations, m = seekers_decide(
            observation, self._tree, self._node_player, self._root, self._scratch,
            self._stations, self._cumulative, self._weights, self._params, self._determinization,
            self._lc_tables, self._rng)
        if m > 0:
            self._decisions.append((rnd, detectives, observation.possible.copy(),
                                    self._weights.copy(), float(self._cumulative[m - 1]), int(m)))
        return int(action), int(iterations)

    def end_game(self, observation, returns):
        self._metrics = {}
        if observation.positions[MRX] == HIDDEN:  # the path is shown only after the game
            self._records = []
            return
        self._score_decisions(observation)
        if self.config.lc_update and self._records:
            self._update_tables(observation)
        self._records = []

    def _score_decisions(self, observation):
        """The diagnostic of the module docstring, from the game's decisions."""
        if not self._decisions:
            return
        d = self._decisions
        rounds = np.array([r[0] for r in d], dtype=np.int64)
        positions = np.zeros((len(d), MAX_DETECTIVES), dtype=np.int64)
        for i, r in enumerate(d):
            positions[i, :len(r[1])] = r[1]
        possible = np.stack([r[2] for r in d])
        weights = np.stack([r[3] for r in d])
        totals = np.array([r[4] for r in d])
        sizes = np.array([r[5] for r in d], dtype=np.float64)
        p = np.zeros(len(d))
        true_location_probabilities(observation, rounds, positions, possible, weights, totals,
                                    self.config.categories, p)
        self._metrics = {"p_true_location": float(p.mean()),
                         "p_true_uniform": float((1.0 / sizes).mean()),
                         "p_true_ruled_out": float((p * sizes < RULED_OUT).mean()),
                         "p_true_decisions": float(len(d))}
        self._decisions = []

    def _update_tables(self, observation):
        L = self.config.categories
        rounds = np.array([r[0] for r in self._records], dtype=np.int64)
        combos = np.array([r[1] for r in self._records], dtype=np.int64)
        counts = np.stack([r[2] for r in self._records])
        positions = np.zeros((len(self._records), MAX_DETECTIVES), dtype=np.int64)
        for i, r in enumerate(self._records):
            positions[i, :len(r[3])] = r[3]
        truth = np.zeros(len(rounds), dtype=np.int64)
        true_categories(observation, positions, rounds, L, truth)
        t = self.tables
        update_tables(t["lc_general_n"], t["lc_general_a"], t["lc_detailed_n"],
                      t["lc_detailed_a"], counts, combos, truth)

    def game_metrics(self):
        return dict(self._metrics)

    @classmethod
    def learns(cls, config) -> bool:
        """The LC tables are learned state unless neither the determinization
        nor ``lc_update`` uses them."""
        return not (config.determinization == "uniform" and not config.lc_update)

    def learned_state(self):
        if not self.learns(self.config):
            return None
        return {k: v.copy() for k, v in self.tables.items()}

    def load_learned_state(self, arrays):
        check_tables(self.config.categories, arrays)
        self.tables = {k: np.array(arrays[k], dtype=np.float64) for k in TABLE_KEYS}

    @classmethod
    def check_learned_state(cls, config, arrays):
        check_tables(config.categories, arrays)


__all__ = ["SeekersMCTSAgent", "SeekersMCTSConfig", "seekers_decide", "coalition_values",
           "coalition_values_root", "combined_root_action", "seekers_iteration",
           "true_location_probabilities", "TREES",
           "empty_tables", "check_tables", "update_tables", "true_categories", "TABLE_KEYS"]
