"""Kernels shared by the Scotland Yard agents: distances, move policies, playouts,
Mr X's move filters and the search-state set-up.

Distances come from the board's precomputed all-pairs tables (carried by every
state): ``dist_detective`` (taxi, bus, underground) measures how far a detective
is from a station. Policies choose among the legal moves of the player to move:

* Mr X, greedy: the destination farthest from the nearest detective; in
  playouts he uses no double-move card and a black ticket only when no other
  ticket moves him (``playout_mrx_action``).
* A detective, greedy: the destination nearest to a target station (the
  guessed location of Mr X in a seeker's search, his true one in Mr X's).
* Epsilon-greedy: a uniformly random legal move with probability epsilon,
  else the greedy one; ties are broken at random.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from games.lowlevel import borrow
from games.rng import rng_integer, rng_uniform
from games.scotland_yard.kernels import (
    DOUBLE_MOVE, MAX_DETECTIVES, MRX, M_NUM_DETECTIVES, M_ROUND, M_TO_MOVE, M_TRACK_POSSIBLE,
    NUM_ACTIONS, TAXI, borrowed_state, copy_into, is_terminal, legal_actions_into, step,
)

from ..search import borrowed_tree
from ._playout import detective_move_score, mrx_move_score, nearest_detective_distance, playout_flat

#: Rounds whose move a filtered Mr X never makes with a black ticket: the first
#: two (everybody knows roughly where he is) and the reveal rounds (he is shown
#: anyway). Index = the round of the move.
BLACK_WASTED_ROUNDS = (1, 2, 3, 8, 13, 18, 24)


@nb.njit(cache=True)
def mean_detective_distance(state, station):
    """Mean distance from ``station`` to the detectives."""
    total = 0.0
    n = state.meta[M_NUM_DETECTIVES]
    for d in range(1, n + 1):
        total += state.dist_detective[state.positions[d], station]
    return total / n


@nb.njit(cache=True)
def _pick(mask, n, rng):
    k = rng_integer(rng, n)
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@nb.njit(cache=True)
def greedy_mrx_action(state, mask, rng):
    """Among the actions in ``mask`` (DOUBLE_MOVE ignored), one whose destination is
    farthest from the nearest detective; a normal ticket is preferred to a black
    one to the same distance. Returns -1 if ``mask`` holds no move."""
    u = state.positions[MRX]
    best = -1
    best_score = -1.0
    for a in range(2 * state.degree[u]):
        if not mask[a]:
            continue
        v = state.neighbours[u, a >> 1]
        score = mrx_move_score(state, a, v, rng)
        if score > best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True)
def greedy_detective_action(state, player, target, mask, rng):
    """Among the actions in ``mask``, one whose destination is nearest to ``target``
    (random tie-break). Returns -1 if ``mask`` is empty."""
    u = state.positions[player]
    best = -1
    best_score = 1e18
    for a in range(2 * state.degree[u]):
        if not mask[a]:
            continue
        v = state.neighbours[u, a >> 1]
        score = detective_move_score(state, v, target, rng)
        if score < best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True)
def playout_mrx_action(state, epsilon, mask, rng):
    """Mr X's playout move: epsilon-greedy over his single moves, no double-move
    card, black tickets only when no other ticket moves him."""
    n = legal_actions_into(state, MRX, mask)
    if n == 0:
        return -1
    if mask[DOUBLE_MOVE]:
        mask[DOUBLE_MOVE] = False
        n -= 1
    plain = 0
    for a in range(0, DOUBLE_MOVE, 2):
        if mask[a]:
            plain += 1
    if plain > 0 and plain < n:
        for a in range(1, DOUBLE_MOVE, 2):
            mask[a] = False
        n = plain
    if rng_uniform(rng) < epsilon:
        return _pick(mask, n, rng)
    return greedy_mrx_action(state, mask, rng)


@nb.njit(cache=True)
def playout_detective_action(state, player, target, epsilon, mask, rng):
    """A detective's playout move: epsilon-greedy toward ``target``."""
    n = legal_actions_into(state, player, mask)
    if n == 0:
        return -1
    if rng_uniform(rng) < epsilon:
        return _pick(mask, n, rng)
    return greedy_detective_action(state, player, target, mask, rng)


@nb.njit(cache=True)
def playout(state, epsilon_mrx, epsilon_detectives, mask, occupied, moves, rng):
    """Play ``state`` to the end (in place): Mr X and the detectives epsilon-greedy,
    the detectives toward Mr X's station in ``state`` (true or guessed).

    The searches' playout: :func:`~agents.scotland_yard._playout.playout_flat`
    (the same game as :func:`playout_by_steps`, faster) when ``M_TRACK_POSSIBLE``
    is off, else :func:`playout_by_steps`. Work buffers: ``mask`` bool[NUM_ACTIONS];
    ``occupied`` bool[S + 1], all False (restored); ``moves`` int64[2 * MAX_DEGREE].
    """
    if state.meta[M_TRACK_POSSIBLE]:
        playout_by_steps(state, epsilon_mrx, epsilon_detectives, mask, rng)
    else:
        playout_flat(state, epsilon_mrx, epsilon_detectives, occupied, moves, rng)


@nb.njit(cache=True)
def playout_by_steps(state, epsilon_mrx, epsilon_detectives, mask, rng):
    """:func:`playout` one rules step at a time: each move chosen by
    :func:`playout_mrx_action` or :func:`playout_detective_action` and played by
    ``kernels.step`` (the definition the flat playout is tested against)."""
    while not is_terminal(state):
        p = state.meta[M_TO_MOVE]
        if p == MRX:
            a = playout_mrx_action(state, epsilon_mrx, mask, rng)
        else:
            a = playout_detective_action(state, p, state.positions[MRX], epsilon_detectives, mask, rng)
        step(state, a)


@nb.njit(cache=True)
def filter_mrx_moves(state, mask, filter_black, filter_double, double_distance):
    """Drop Mr X's wasted moves from his legal ``mask`` (in place); returns the count.

    * ``filter_black``: no black ticket for a move in a round of
      :data:`BLACK_WASTED_ROUNDS`, nor from a station whose connections are all
      taxi (his black move then tells nothing a taxi ticket would not);
    * ``filter_double``: the double-move card only when his mean distance to the
      detectives is at most ``double_distance``.

    A filter that would leave no move is not applied.
    """
    u = state.positions[MRX]
    n = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            n += 1
    if filter_double and mask[DOUBLE_MOVE] and n > 1:
        if mean_detective_distance(state, u) > double_distance:
            mask[DOUBLE_MOVE] = False
            n -= 1
    if filter_black:
        next_round = state.meta[M_ROUND] + 1
        wasted = False
        for r in BLACK_WASTED_ROUNDS:
            if r == next_round:
                wasted = True
        if not wasted:
            wasted = True
            for k in range(state.degree[u]):
                if state.transport[u, k] != TAXI:
                    wasted = False
        if wasted:
            black = 0
            for a in range(1, DOUBLE_MOVE, 2):
                if mask[a]:
                    black += 1
            if 0 < black < n:
                for a in range(1, DOUBLE_MOVE, 2):
                    mask[a] = False
                n -= black
    return n


@nb.njit(cache=True)
def prepare_root(root, observation):
    """Copy ``observation`` into the search root; searches do not maintain the
    possible-locations set in their simulations."""
    copy_into(root, observation)
    root.meta[M_TRACK_POSSIBLE] = 0


# --- Location Categorization ----------------------------------------------------
@nb.njit(cache=True)
def category_of(state, station, num_categories):
    """Category 1..L of ``station``: its distance to the nearest detective, L a catch-all."""
    d = nearest_detective_distance(state, station)
    if d < 1:
        d = 1
    if d > num_categories:
        d = num_categories
    return d


@nb.njit(cache=True)
def categorize(state, num_categories, counts):
    """Count the possible locations per category (``counts``: float64[L], index c - 1,
    overwritten). Returns the bit mask of the categories present (bit c - 1)."""
    for c in range(num_categories):
        counts[c] = 0.0
    mask = 0
    for v in range(1, state.possible.shape[0]):
        if state.possible[v]:
            c = category_of(state, v, num_categories)
            counts[c - 1] += 1.0
            mask |= 1 << (c - 1)
    return mask


#: How the general table's n counts (``lc_general_n``): the paper's n, the number of
#: records in which the category held at least one possible location (``presence``),
#: or the number of possible locations it held, summed (``locations``, Arena's first rule).
LC_N_PRESENCE = 0
LC_N_LOCATIONS = 1
#: The detailed table's weights (``lc_detailed``): the paper's stored vector of Mr X's
#: categories itself (``counts``), or the same counts divided by the location counts
#: (``ratio``, Arena's first rule).
LC_DETAILED_COUNTS = 0
LC_DETAILED_RATIO = 1
#: What an empty category weighs (``lc_prior``): add-one counts (``add_one``: a
#: ratio a / n becomes (a + 1) / (n + 2), Laplace's rule of succession; a count
#: vector a becomes a + 1), so every category and every possible location keeps a
#: positive weight; or Arena's first rule (``mean_floor``): the mean of the
#: categories with data, every weight floored at 1e-6.
PRIOR_ADD_ONE = 0
PRIOR_MEAN_FLOOR = 1


@nb.njit(cache=True)
def category_weights(n, a, out):
    """Arena's first rule (``lc_prior = "mean_floor"``): ``out[c] = a[c] / n[c]``;
    categories without data get the mean of the others (1 when no category has
    data). Every weight is at least 1e-6 (in effect, a = 0 rules a category out)."""
    total = 0.0
    seen = 0
    for c in range(n.shape[0]):
        if n[c] > 0:
            out[c] = a[c] / n[c]
            total += out[c]
            seen += 1
    fill = total / seen if seen > 0 else 1.0
    for c in range(n.shape[0]):
        if n[c] <= 0:
            out[c] = fill
        if out[c] < 1e-6:
            out[c] = 1e-6


@nb.njit(cache=True)
def ratio_weights(n, a, prior, out):
    """Category weights ``a / n`` under ``prior``: PRIOR_ADD_ONE gives
    ``(a[c] + 1) / (n[c] + 2)`` (> 0 for any counts), PRIOR_MEAN_FLOOR
    :func:`category_weights`."""
    if prior == PRIOR_ADD_ONE:
        for c in range(n.shape[0]):
            out[c] = (a[c] + 1.0) / (n[c] + 2.0)
    else:
        category_weights(n, a, out)


@nb.njit(cache=True)
def count_weights(a, prior, out):
    """Category weights from a count vector used directly (the paper's detailed
    table): PRIOR_ADD_ONE gives ``a[c] + 1``; PRIOR_MEAN_FLOOR gives ``a[c]``
    floored at 1e-6, all 1 when the vector is empty."""
    total = 0.0
    for c in range(a.shape[0]):
        total += a[c]
    for c in range(a.shape[0]):
        if prior == PRIOR_ADD_ONE:
            out[c] = a[c] + 1.0
        elif total <= 0:
            out[c] = 1.0
        else:
            out[c] = max(a[c], 1e-6)


@nb.njit(cache=True)
def presence_counts(detailed_a, out):
    """The paper's general-table n from the detailed table: ``out[c]`` = the number
    of records in which category c held a possible location. Every record adds 1 to
    ``detailed_a[combo, truth]`` for the combination ``combo`` of categories present,
    so that is the sum of ``detailed_a[combo]`` over the combinations with bit c."""
    for c in range(out.shape[0]):
        out[c] = 0.0
    for combo in range(detailed_a.shape[0]):
        records = 0.0
        for k in range(detailed_a.shape[1]):
            records += detailed_a[combo, k]
        if records > 0:
            for c in range(out.shape[0]):
                if combo >> c & 1:
                    out[c] += records


class LcTables(NamedTuple):
    """The Location Categorization tables (L categories; one record per update, see
    ``mcts_seekers``).

    Fields:
        general_n, general_a: float64[L], the general table;
        detailed_n, detailed_a: float64[2**L, L], the detailed table, by the combination
            of categories present.
        (n: possible locations counted per category, a: Mr X's category counted.)
    """

    general_n: np.ndarray
    general_a: np.ndarray
    detailed_n: np.ndarray
    detailed_a: np.ndarray


class Determinization(NamedTuple):
    """How the seekers place Mr X (:func:`location_weights`; fixed per agent).

    Fields:
        mode: int, 0 uniform, 1 LC general table, 2 LC detailed table.
        num_categories: int, L.
        general_count: int, LC_N_PRESENCE (the paper: n = records with the category
            present, from :func:`presence_counts`) or LC_N_LOCATIONS (``general_n``).
        detailed_rule: int, LC_DETAILED_COUNTS (the paper: ``detailed_a[combo]``) or
            LC_DETAILED_RATIO (``detailed_a[combo] / detailed_n[combo]``).
        prior: int, PRIOR_ADD_ONE or PRIOR_MEAN_FLOOR (see the constants).
    """

    mode: int
    num_categories: int
    general_count: int
    detailed_rule: int
    prior: int


@nb.njit(cache=True)
def location_weights(state, determinization, tables, stations, cumulative, weights):
    """The determinization distribution over the possible locations: each possible
    location weighs its category's weight (roulette wheel).

    Args:
        state: the seekers' observation;
        determinization: :class:`Determinization`, the rule;
        tables: :class:`LcTables` (read by the LC modes only);
        stations: int32[S + 1] (out: the possible locations);
        cumulative: float64[S + 1] (out: their cumulative weights);
        weights: float64[L] (out: the category weights used; 1 when uniform).
    Returns: int, the number of possible locations (0 if the set is empty).
    """
    mode, num_categories, prior = determinization.mode, determinization.num_categories, determinization.prior
    general_count, detailed_rule = determinization.general_count, determinization.detailed_rule
    general_n, general_a, detailed_n, detailed_a = tables
    if mode == 1:
        if general_count == LC_N_PRESENCE:
            n = np.empty(num_categories, dtype=np.float64)
            presence_counts(detailed_a, n)
            ratio_weights(n, general_a, prior, weights)
        else:
            ratio_weights(general_n, general_a, prior, weights)
    elif mode == 2:
        counts = np.empty(num_categories, dtype=np.float64)
        combo = categorize(state, num_categories, counts)
        if detailed_rule == LC_DETAILED_COUNTS:
            count_weights(detailed_a[combo], prior, weights)
        else:
            ratio_weights(detailed_n[combo], detailed_a[combo], prior, weights)
    else:
        for c in range(num_categories):
            weights[c] = 1.0
    total = 0.0
    m = 0
    for v in range(1, state.possible.shape[0]):
        if state.possible[v]:
            total += weights[category_of(state, v, num_categories) - 1]
            stations[m] = v
            cumulative[m] = total
            m += 1
    return m


@nb.njit(cache=True)
def roulette(stations, cumulative, m, rng):
    """A station drawn with probability proportional to its weight (roulette wheel)."""
    x = rng_uniform(rng) * cumulative[m - 1]
    lo = 0
    hi = m - 1
    while lo < hi:  # the first index with cumulative > x
        mid = (lo + hi) // 2
        if cumulative[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return stations[lo]


def check_seat(agent_name: str, seat: int, expected: int) -> None:
    if seat != expected:
        side = "Mr X (seat 0)" if expected == 0 else "the seekers (seat 1)"
        raise ValueError(f"agent {agent_name!r} plays {side}, but was given seat {seat}; "
                         f"use design.rotate_seats = false with Mr X first in the lineup")


__all__ = [
    "BLACK_WASTED_ROUNDS", "categorize", "category_of", "category_weights",
    "check_seat", "Determinization", "filter_mrx_moves", "LcTables", "greedy_detective_action",
    "greedy_mrx_action",
    "location_weights", "mean_detective_distance", "count_weights", "ratio_weights",
    "presence_counts", "LC_N_PRESENCE", "LC_N_LOCATIONS", "LC_DETAILED_COUNTS",
    "LC_DETAILED_RATIO", "PRIOR_ADD_ONE", "PRIOR_MEAN_FLOOR", "nearest_detective_distance",
    "playout", "playout_by_steps", "playout_detective_action", "playout_mrx_action",
    "prepare_root", "roulette",
]


@nb.njit(cache=True, inline="always")
def borrowed_search_arguments(root, scratch, tree, node_player, rng):
    """A search decision's arguments as borrowed views (``games.lowlevel.borrow``: no
    reference counts while an iteration hands them to kernel after kernel; the
    caller's arrays outlive the decision): (root, scratch, tree, node_player, rng)."""
    return (borrowed_state(root), borrowed_state(scratch), borrowed_tree(tree), borrow(node_player),
            borrow(rng))


@nb.njit(cache=True, inline="always")
def search_work_buffers(root):
    """A search decision's work buffers: ``(owners, views)``, each ``(mask, values,
    occupied, moves)`` with ``mask`` bool[NUM_ACTIONS], ``values`` float64[MAX_DETECTIVES + 1],
    ``occupied`` bool[S + 1] (all False, see :func:`playout`), ``moves`` int64[NUM_ACTIONS].

    The views are borrowed. Inlined, so the owners are the calling kernel's locals,
    and it must call ``keep_alive(owners)`` after its last use of a view.
    """
    owners = (np.zeros(NUM_ACTIONS, dtype=np.bool_), np.zeros(MAX_DETECTIVES + 1, dtype=np.float64),
              np.zeros(root.possible.shape[0], dtype=np.bool_), np.zeros(NUM_ACTIONS, dtype=np.int64))
    views = (borrow(owners[0]), borrow(owners[1]), borrow(owners[2]), borrow(owners[3]))
    return owners, views
