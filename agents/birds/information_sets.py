"""Information sets of the bird game's MCTS (:mod:`agents.birds.mcts`): what the
searching player has not seen, the determinization of the hidden cards, and the
chance outcomes drawn from them (card classes and their groupings).

Every kernel reads only what the searcher knows: the cards it has not seen are
the deck and the opponent's hidden cards, re-sampled uniformly
(:func:`determinize`); a chance outcome is a card class (``points * 4 + cost``)
or a wider group of classes (:func:`outcome_map`), and :func:`force_top_card`
puts a card of the chosen outcome on top of the deck.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer
from games.birds.kernels import (
    M_DECK_POS, N_CLASSES, N_COSTS, N_PLAYERS, P_BOARD, P_HAND, TRAY_SLOTS, card_class,
    copy_dynamic,
)


#: What a chance outcome is (``BirdsMCTSConfig.chance_grouping``).
GROUPING_CLASS = 0
GROUPING_COARSE = 1
GROUPING_NONE = 2
#: Points bands of the ``coarse`` grouping (0-2, 3-4, 5-6, 7-9), indexed by points.
COARSE_POINTS_BAND = (0, 0, 0, 1, 1, 2, 2, 3, 3, 3)


@nb.njit(cache=True)
def unseen_pool(state, player, pool):
    """Fill ``pool`` (int16[C]) with the cards ``player`` has not seen (not in its
    hand, on a board, in the tray or among the opponent's face-up cards);
    returns how many. Reads no hidden slot."""
    n_cards = state.cards.shape[0]
    seen = np.zeros(n_cards, dtype=np.bool_)
    q = 1 - player
    for i in range(state.player[player, P_HAND]):
        seen[state.hand[player, i]] = True
    for i in range(state.player[q, P_HAND]):
        if state.hand_public[q, i] != 0:
            seen[state.hand[q, i]] = True
    for p in range(N_PLAYERS):
        for i in range(state.player[p, P_BOARD]):
            seen[state.board[p, i]] = True
    for j in range(TRAY_SLOTS):
        if state.tray[j] >= 0:
            seen[state.tray[j]] = True
    n = 0
    for c in range(n_cards):
        if not seen[c]:
            pool[n] = c
            n += 1
    return n


@nb.njit(cache=True, inline="always")
def determinize(sim, root, player, pool, n_pool, rng):
    """``sim`` := ``root`` (a state or observation for ``player``) with every hidden
    slot filled by a uniform random arrangement of the ``n_pool`` unseen cards in
    ``pool`` (shuffled in place): the opponent's non-public cards first, then
    the deck from its current position."""
    copy_dynamic(sim, root)
    q = 1 - player
    for i in range(n_pool - 1, 0, -1):
        j = rng_integer(rng, i + 1)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    k = 0
    hand, hand_public, deck = sim.hand, sim.hand_public, sim.deck  # read out of the state once
    for i in range(sim.player[q, P_HAND]):
        if hand_public[q, i] == 0:
            hand[q, i] = pool[k]
            k += 1
    for pos in range(sim.meta[M_DECK_POS], deck.shape[0]):
        deck[pos] = pool[k]
        k += 1


@nb.njit(cache=True)
def unseen_class_counts(sim, player, counts):
    """``counts[k]`` (int64[N_CLASSES]) := unseen cards of class ``k`` from
    ``player``'s view in the determinized ``sim`` (the rest of the deck and the
    opponent's non-public cards); returns the total."""
    counts[:] = 0
    cards = sim.cards
    for pos in range(sim.meta[M_DECK_POS], sim.deck.shape[0]):
        counts[card_class(cards, sim.deck[pos])] += 1
    q = 1 - player
    for i in range(sim.player[q, P_HAND]):
        if sim.hand_public[q, i] == 0:
            counts[card_class(cards, sim.hand[q, i])] += 1
    total = 0
    for k in range(counts.shape[0]):
        total += counts[k]
    return total


def outcome_map(grouping: str) -> np.ndarray:
    """int64[N_CLASSES]: the chance outcome of each card class under ``grouping``:

    * ``class``: the class itself (``points * 4 + cost``; 40 outcomes, 26 with cards in
      the generated set);
    * ``coarse``: ``band * 2 + (cost >= 2)`` with the points bands 0-2, 3-4, 5-6, 7-9
      (8 outcomes: cheap or dear birds of low to high points);
    * ``none``: no chance node is made (the map is unused; the class map is returned).
    """
    classes = np.arange(N_CLASSES, dtype=np.int64)
    if grouping != "coarse":
        return classes
    points, cost = classes // N_COSTS, classes % N_COSTS
    return np.asarray(COARSE_POINTS_BAND, dtype=np.int64)[points] * 2 + (cost >= 2)


@nb.njit(cache=True)
def pool_outcome_counts(cards, pool, n_pool, grouped, outcome_of, in_pool, pool_counts):
    """Once per search: ``in_pool`` (bool[C]) := the cards among the first ``n_pool``
    of ``pool`` (those unseen at the root), ``pool_counts`` (int64[N_CLASSES]) := their
    chance outcomes' counts (classes, or groups by ``outcome_of`` when ``grouped``).
    Returns ``n_pool``."""
    for c in range(in_pool.shape[0]):
        in_pool[c] = False
    for k in range(pool_counts.shape[0]):
        pool_counts[k] = 0
    for i in range(n_pool):
        c = pool[i]
        in_pool[c] = True
        pool_counts[outcome_of_card(cards, c, grouped, outcome_of)] += 1
    return n_pool


@nb.njit(cache=True, inline="always")
def _seen_since_root(cards, c, grouped, outcome_of, in_pool, counts):
    """Take card ``c`` (now in a place ``player`` sees) out of ``counts`` if it was
    unseen at the root; returns 1 if it was taken out, else 0."""
    if c >= 0 and in_pool[c]:
        counts[outcome_of_card(cards, c, grouped, outcome_of)] -= 1
        return 1
    return 0


@nb.njit(cache=True, inline="always")
def unseen_outcome_counts(sim, player, grouped, outcome_of, in_pool, pool_counts, n_pool, counts):
    """:func:`unseen_class_counts` summed into chance outcomes when ``grouped``:
    ``counts[o]`` := unseen cards whose class ``k`` has ``outcome_of[k] == o``
    (else the class counts themselves); returns the total.

    Every card unseen now (the rest of the deck, the opponent's hidden cards) was
    unseen at the root, so the counts are the root's (``pool_counts`` of
    :func:`pool_outcome_counts`) less the root-unseen cards now in a place
    ``player`` sees (tray, boards, own hand, the opponent's face-up cards): at most
    37 slots instead of the whole deck. Same numbers as :func:`unseen_class_counts`."""
    for k in range(counts.shape[0]):
        counts[k] = pool_counts[k]
    cards, tray, board, hand, hand_public, players = (sim.cards, sim.tray, sim.board, sim.hand,
                                                      sim.hand_public, sim.player)
    seen = 0
    for j in range(TRAY_SLOTS):
        seen += _seen_since_root(cards, tray[j], grouped, outcome_of, in_pool, counts)
    for p in range(N_PLAYERS):
        for i in range(players[p, P_BOARD]):
            seen += _seen_since_root(cards, board[p, i], grouped, outcome_of, in_pool, counts)
    for i in range(players[player, P_HAND]):
        seen += _seen_since_root(cards, hand[player, i], grouped, outcome_of, in_pool, counts)
    q = 1 - player
    for i in range(players[q, P_HAND]):
        if hand_public[q, i] != 0:
            seen += _seen_since_root(cards, hand[q, i], grouped, outcome_of, in_pool, counts)
    return n_pool - seen


@nb.njit(cache=True, inline="always")
def outcome_of_card(cards, card, grouped, outcome_of):
    """The chance outcome of ``card``: its class, or its group when ``grouped``."""
    k = card_class(cards, card)
    return outcome_of[k] if grouped else k


@nb.njit(cache=True, inline="always")
def force_top_card(sim, player, outcome, count, grouped, outcome_of, rng):
    """Move a uniformly chosen unseen card of outcome ``outcome`` (a class, or a
    group of classes by ``outcome_of``; ``count`` such cards) to the top of the
    deck by a swap (with another deck position or an opponent's hidden card), so
    the next card drawn has that outcome (the determinization stays uniform
    given the outcome)."""
    r = rng_integer(rng, count)
    deck, hand, hand_public, cards = sim.deck, sim.hand, sim.hand_public, sim.cards  # read once
    top = sim.meta[M_DECK_POS]
    for pos in range(top, deck.shape[0]):
        if outcome_of_card(cards, deck[pos], grouped, outcome_of) == outcome:
            if r == 0:
                t = deck[top]
                deck[top] = deck[pos]
                deck[pos] = t
                return
            r -= 1
    q = 1 - player
    for i in range(sim.player[q, P_HAND]):
        if hand_public[q, i] == 0 and outcome_of_card(cards, hand[q, i], grouped, outcome_of) == outcome:
            if r == 0:
                t = deck[top]
                deck[top] = hand[q, i]
                hand[q, i] = t
                return
            r -= 1
