"""MCTS for the seekers: determinization per iteration, Location Categorization,
Coalition Reduction, one shared tree or one tree per detective.

The seekers never know where Mr X is: the search starts from their observation
(Mr X's station HIDDEN, the possible-locations set) and every iteration places
him on one possible location (*determinization*): uniformly, or by roulette
wheel over the *Location Categorization* weights (a location's category is its
distance to the nearest detective, 1..L, L a catch-all; the general table
weighs category c by a_c / n_c, the detailed table by the same ratio counted per
combination of categories present). The kernel overwrites Mr X's station in
its copy of the observation before anything reads it, so two observations that
differ only there give the same decision (tested).

The tree holds the detectives' moves only (Mr X moves inside the simulation by
his epsilon-greedy policy: his moves depend on the guessed location, so they
cannot be shared across iterations). With ``shared_tree`` every detective's
move is a tree node (max^n over detectives, each node from its own detective's
point of view); otherwise the tree holds the moves of the detective to move
only and the others move by the playout policy (one tree per detective).
Playouts: detectives epsilon-greedy toward the guessed location, Mr X
epsilon-greedy away from the nearest detective.

*Coalition Reduction*: a detective scores 1 when it catches Mr X itself,
1 - r when another detective does, 0 when Mr X escapes.

Learned state (Location Categorization tables): ``lc_general_n/_a`` (float64[L])
and ``lc_detailed_n/_a`` (float64[2**L, L]). Offline: load a table file (the
lineup's ``seed_population``, a path or an MLflow artifact URI; written by
``jobs/scotland_yard/lc_tables.py``) and keep it fixed (``lc_update = false``).
Online: start empty and update at the end of every game of a series
(``lc_update = true``; the cluster carries the tables from game to game). An
update counts, for every seeker decision of the game, each possible location
in its category (n) and Mr X's true location at that time (a), known once the
game is over.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from games.scotland_yard.kernels import (
    HIDDEN, MAX_DETECTIVES, MRX, M_CAPTURER, M_NUM_DETECTIVES, M_RESULT, M_ROUND, M_TO_MOVE,
    NUM_ACTIONS, RESULT_MRX_WINS, copy_dynamic_into, copy_into, is_terminal, legal_actions_into,
    step,
)

from ..registry import register
from ..search.clock import budget_exhausted, deadline_ns, monotonic_ns
from ..search.multiplayer import backup_by_player, select_ucb_legal
from ..search.tree import ROOT_INDEX, reset_tree
from ..search.uct import expand, random_untried_legal, recommend_root_action
from ._common import (
    categorize, check_param, location_weights, playout, playout_detective_action,
    playout_mrx_action, prepare_root, roulette,
)
from .mcts_mrx import ScotlandYardAgent

DETERMINIZATIONS = {"uniform": 0, "lc_general": 1, "lc_detailed": 2}


@nb.njit(cache=True)
def coalition_values(state, reduction, values):
    """Fill ``values`` (float64[MAX_DETECTIVES + 1]) for a finished simulation:
    ``values[0]`` Mr X's (1 on escape), ``values[d]`` detective d's: 1 if d caught
    him, ``1 - reduction`` if another detective did (or he could not move), 0 on escape."""
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
def seekers_decide(observation, tree, node_player, root, scratch, stations, cumulative,
                   max_iterations, time_limit, exploration, epsilon_mrx, epsilon_detectives,
                   reduction, shared_tree, determinization, num_categories, general_n,
                   general_a, detailed_n, detailed_a, best_mean, rng):
    """One decision of the detective to move.

    Args:
        observation: ScotlandYardState, the seekers' view (Mr X's station is never
            read: it is overwritten per iteration by a determinization).
        tree: Tree over NUM_ACTIONS actions; node_player: int8[capacity].
        root, scratch: preallocated states on the board (overwritten).
        stations: int32[S + 1], cumulative: float64[S + 1]: work buffers.
        max_iterations: int; time_limit: float seconds (0 = none).
        exploration: UCB C; epsilon_mrx, epsilon_detectives: playout randomness;
        reduction: Coalition Reduction r in [0, 1]; shared_tree: bool;
        determinization: 0 uniform, 1 LC general, 2 LC detailed; num_categories: L;
        general_n, general_a: float64[L]; detailed_n, detailed_a: float64[2**L, L];
        best_mean: bool (else most visited); rng: uint64[2] (advanced).
    Returns: (action, iterations).
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    prepare_root(root, observation)
    root.positions[MRX] = HIDDEN
    me = root.meta[M_TO_MOVE]
    m = location_weights(root, determinization, num_categories, general_n, general_a,
                         detailed_n, detailed_a, stations, cumulative)
    reset_tree(tree)
    node_player[ROOT_INDEX] = -1
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    values = np.zeros(MAX_DETECTIVES + 1, dtype=np.float64)
    iterations = 0
    copy_into(scratch, root)
    while m > 0 and not budget_exhausted(iterations, max_iterations, start, deadline):
        copy_dynamic_into(scratch, root)
        scratch.positions[MRX] = roulette(stations, cumulative, m, rng)
        node = ROOT_INDEX
        expanded = False
        while not is_terminal(scratch) and not expanded:
            p = scratch.meta[M_TO_MOVE]
            if p == MRX:
                step(scratch, playout_mrx_action(scratch, epsilon_mrx, mask, rng))
                continue
            if not shared_tree and p != me:
                step(scratch, playout_detective_action(scratch, p, scratch.positions[MRX],
                                                       epsilon_detectives, mask, rng))
                continue
            legal_actions_into(scratch, p, mask)
            a = random_untried_legal(tree, node, mask, rng)
            if a >= 0:
                child = expand(tree, node, a)
                if child >= 0:
                    node_player[child] = p
                    node = child
                expanded = True
            else:
                a = select_ucb_legal(tree, node, mask, exploration, rng)
                node = tree.children[node, a]
            step(scratch, a)
        playout(scratch, epsilon_mrx, epsilon_detectives, mask, rng)
        coalition_values(scratch, reduction, values)
        backup_by_player(tree, node, values, node_player)
        iterations += 1
    action = recommend_root_action(tree, best_mean, 1e-9, rng)
    if action < 0:
        legal_actions_into(root, me, mask)
        action = np.argmax(mask)
    return action, iterations


@dataclass(frozen=True)
class SeekersMCTSConfig:
    """MCTS for the seekers (defaults: the study's; the reference uses C = 2, r = 0.25)."""

    exploration: float = 2.0
    """UCB constant C in ``mean + C sqrt(2 ln N / n)``."""
    epsilon: float = 0.2
    """Playout randomness of the detectives' moves (greedy: toward the guessed location)."""
    epsilon_mrx: float = 0.2
    """Playout randomness of Mr X's moves (greedy: away from the nearest detective)."""
    coalition_reduction: float = 0.25
    """r: another detective's capture scores 1 - r (0: no reduction)."""
    shared_tree: bool = True
    """One tree over all detectives' moves; false: a tree over the moving detective's own moves."""
    determinization: str = "uniform"
    """How each iteration places Mr X: ``uniform``, ``lc_general`` or ``lc_detailed``."""
    categories: int = 5
    """L: Location Categorization categories (distances 1..L-1 and a catch-all L)."""
    lc_update: bool = False
    """Update the tables at the end of every game (online learning; the cluster
    carries them through a series). Offline tables are loaded through the
    lineup's ``seed_population`` and kept fixed (false)."""
    final_move: str = "best_mean"
    """``best_mean`` (the reference) or ``most_visited``."""
    max_nodes: int = 1 << 17
    """Tree capacity under a time budget (an iteration budget of n uses n + 1)."""

    def __post_init__(self):
        check_param(isinstance(self.exploration, (int, float)) and 0 <= self.exploration <= 100,
                    "exploration", f"must be a number in [0, 100], got {self.exploration!r}")
        for name in ("epsilon", "epsilon_mrx", "coalition_reduction"):
            v = getattr(self, name)
            check_param(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
                        name, f"must be in [0, 1], got {v!r}")
        for name in ("shared_tree", "lc_update"):
            check_param(isinstance(getattr(self, name), bool), name, "must be true or false")
        check_param(self.determinization in DETERMINIZATIONS, "determinization",
                    f"must be one of {sorted(DETERMINIZATIONS)}, got {self.determinization!r}")
        check_param(isinstance(self.categories, int) and 2 <= self.categories <= 10, "categories",
                    f"must be an int in [2, 10], got {self.categories!r}")
        check_param(self.final_move in ("best_mean", "most_visited"), "final_move",
                    f"must be 'best_mean' or 'most_visited', got {self.final_move!r}")
        check_param(isinstance(self.max_nodes, int) and 2 <= self.max_nodes <= 1 << 24,
                    "max_nodes", f"must be an int in [2, 2**24], got {self.max_nodes!r}")


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
    locations per category at decision i, ``combos[i]`` their category mask,
    ``truth_categories[i]`` Mr X's true category (1..L)."""
    for i in range(counts.shape[0]):
        c = truth_categories[i] - 1
        for k in range(counts.shape[1]):
            general_n[k] += counts[i, k]
            detailed_n[combos[i], k] += counts[i, k]
        general_a[c] += 1.0
        detailed_a[combos[i], c] += 1.0


@nb.njit(cache=True)
def true_categories(final, detective_positions, rounds, num_categories, out):
    """Mr X's category at each recorded decision, from the end-of-game observation
    ``final`` (his path shown) and the detectives' stations then."""
    for i in range(rounds.shape[0]):
        truth = final.mrx_path[rounds[i]]
        best = 1 << 20
        for d in range(detective_positions.shape[1]):
            v = detective_positions[i, d]
            if v > 0:
                dist = final.dist_detective[v, truth]
                if dist < best:
                    best = dist
        out[i] = min(max(best, 1), num_categories)


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
        self._mode = DETERMINIZATIONS[config.determinization]
        self.tables = empty_tables(config.categories)
        self._records: list[tuple] = []

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._records = []

    def decide(self, observation):
        c = self.config
        if c.lc_update:
            counts = np.zeros(c.categories)
            combo = categorize(observation, c.categories, counts)
            n = int(observation.meta[M_NUM_DETECTIVES])
            self._records.append((int(observation.meta[M_ROUND]), combo, counts,
                                  observation.positions[1:n + 1].copy()))
        max_iterations, seconds = self.budget.kernel_args()
        t = self.tables
        action, iterations = seekers_decide(
            observation, self._tree, self._node_player, self._root, self._scratch,
            self._stations, self._cumulative, max_iterations, seconds, float(c.exploration),
            float(c.epsilon_mrx), float(c.epsilon), float(c.coalition_reduction), c.shared_tree,
            self._mode, c.categories, t["lc_general_n"], t["lc_general_a"], t["lc_detailed_n"],
            t["lc_detailed_a"], c.final_move == "best_mean", self._rng)
        return int(action), int(iterations)

    def end_game(self, observation, returns):
        if not self.config.lc_update or not self._records:
            return
        if observation.positions[MRX] == HIDDEN:  # the path is shown only after the game
            return
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
        self._records = []

    def learned_state(self):
        if self.config.determinization == "uniform" and not self.config.lc_update:
            return None
        return {k: v.copy() for k, v in self.tables.items()}

    def load_learned_state(self, arrays):
        check_tables(self.config.categories, arrays)
        self.tables = {k: np.array(arrays[k], dtype=np.float64) for k in TABLE_KEYS}

    @classmethod
    def check_learned_state(cls, config, arrays):
        check_tables(config.categories, arrays)


__all__ = ["SeekersMCTSAgent", "SeekersMCTSConfig", "seekers_decide", "coalition_values",
           "empty_tables", "check_tables", "update_tables", "true_categories", "TABLE_KEYS"]
