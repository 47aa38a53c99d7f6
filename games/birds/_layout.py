"""Bird card game state layout: one NamedTuple of fixed-capacity, fixed-dtype arrays.

Cards are identified by their index ``c`` in ``cards`` (``0 .. C-1``, C = 180
for the generated set). A card's *class* is ``points * N_COSTS + cost``
(``N_CLASSES`` = 40 classes); cards of one class are interchangeable for play,
which is what chance nodes branch on.

Layout (``C`` = number of cards, ``H`` = ``MAX_HAND``)::

    cards        int16[C, 2]    (points, cost) of each card; constant in a game
    deck         int16[C]       card ids in draw order; deck[meta[M_DECK_POS]:] are
                                still in the deck. HIDDEN everywhere in an observation
    hand         int16[2, H]    card ids of each hand, the first player[p, P_HAND]
                                entries in the order they were taken; HIDDEN for the
                                opponent's cards that the observer has not seen
    hand_public  int8[2, H]     1 if the card was taken face up from the tray (so both
                                players know it), 0 if it came from the deal or the deck
    board        int16[2, 5]    birds played, first player[p, P_BOARD] entries
    tray         int16[3]       face-up cards, EMPTY where a slot was taken this turn
    player       int16[2, 4]    columns P_FOOD, P_HAND, P_BOARD, P_SCORE
    meta         int32[8]       M_TURN (turns played, 0..2*TURNS), M_TO_MOVE, M_FEEDER,
                                M_DECK_POS, M_OBSERVER (-1 in a true state, else the
                                player an observation is for), M_START_FOOD

Actions (``N_ACTIONS`` = 17) of the player to move::

     0 .. 11  PLAY + i       play hand card i onto the board, paying its cost
    12 .. 14  DRAW_TRAY + j  take tray card j into the hand
    15        DRAW_DECK      take the top card of the deck into the hand
    16        GAIN_FOOD      take one food from the feeder (it refills to 5 when empty)
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..lowlevel import borrow

N_PLAYERS = 2
TURNS_PER_PLAYER = 10
TOTAL_TURNS = N_PLAYERS * TURNS_PER_PLAYER
START_HAND = 2
MAX_HAND = START_HAND + TURNS_PER_PLAYER     # a player who only draws ends with 12 cards
BOARD_SLOTS = 5
TRAY_SLOTS = 3
FEEDER_SIZE = 5
MAX_POINTS = 9
MAX_COST = 3
N_COSTS = MAX_COST + 1
N_CLASSES = (MAX_POINTS + 1) * N_COSTS      # 40 (points, cost) classes
#: The fewest cards a deck may have: both starting hands, the tray and one draw per turn.
MIN_CARDS = N_PLAYERS * START_HAND + TRAY_SLOTS + TOTAL_TURNS
MAX_CARDS = 10_000

C_POINTS, C_COST = 0, 1
P_FOOD, P_HAND, P_BOARD, P_SCORE = 0, 1, 2, 3
PLAYER_FIELDS = 4
M_TURN, M_TO_MOVE, M_FEEDER, M_DECK_POS, M_OBSERVER, M_START_FOOD = 0, 1, 2, 3, 4, 5
META_FIELDS = 8

PLAY = 0
DRAW_TRAY = MAX_HAND                         # 12
DRAW_DECK = DRAW_TRAY + TRAY_SLOTS           # 15
GAIN_FOOD = DRAW_DECK + 1                    # 16
N_ACTIONS = GAIN_FOOD + 1                    # 17

EMPTY = -1       # an empty tray slot / hand or board entry past the count
HIDDEN = -2      # a card the observer cannot see
FULL_STATE = -1  # meta[M_OBSERVER] of a true state


class BirdsState(NamedTuple):
    """A game state (see the module docstring for the layout)."""

    cards: np.ndarray        # int16[C, 2]
    deck: np.ndarray         # int16[C]
    hand: np.ndarray         # int16[2, MAX_HAND]
    hand_public: np.ndarray  # int8[2, MAX_HAND]
    board: np.ndarray        # int16[2, BOARD_SLOTS]
    tray: np.ndarray         # int16[TRAY_SLOTS]
    player: np.ndarray       # int16[2, PLAYER_FIELDS]
    meta: np.ndarray         # int32[META_FIELDS]


def empty_state(cards: np.ndarray) -> BirdsState:
    """A zeroed state over ``cards`` (int16[C, 2]); the arrays are fresh except ``cards``."""
    n = cards.shape[0]
    return BirdsState(
        cards=cards,
        deck=np.full(n, EMPTY, dtype=np.int16),
        hand=np.full((N_PLAYERS, MAX_HAND), EMPTY, dtype=np.int16),
        hand_public=np.zeros((N_PLAYERS, MAX_HAND), dtype=np.int8),
        board=np.full((N_PLAYERS, BOARD_SLOTS), EMPTY, dtype=np.int16),
        tray=np.full(TRAY_SLOTS, EMPTY, dtype=np.int16),
        player=np.zeros((N_PLAYERS, PLAYER_FIELDS), dtype=np.int16),
        meta=np.zeros(META_FIELDS, dtype=np.int32),
    )


@nb.njit(cache=True)
def copy_dynamic(dst, src):
    """Copy everything but ``cards`` (constant in a game) from ``src`` into ``dst``.

    Explicit loops: this is the per-iteration state reset of the searches.
    """
    for i in range(src.deck.shape[0]):
        dst.deck[i] = src.deck[i]
    for p in range(N_PLAYERS):
        for i in range(MAX_HAND):
            dst.hand[p, i] = src.hand[p, i]
            dst.hand_public[p, i] = src.hand_public[p, i]
        for i in range(BOARD_SLOTS):
            dst.board[p, i] = src.board[p, i]
        for f in range(PLAYER_FIELDS):
            dst.player[p, f] = src.player[p, f]
    for i in range(TRAY_SLOTS):
        dst.tray[i] = src.tray[i]
    for i in range(META_FIELDS):
        dst.meta[i] = src.meta[i]


@nb.njit(cache=True)
def copy_into(dst, src):
    """Copy ``src`` into the preallocated ``dst`` (same number of cards), in place."""
    for c in range(src.cards.shape[0]):
        dst.cards[c, 0] = src.cards[c, 0]
        dst.cards[c, 1] = src.cards[c, 1]
    copy_dynamic(dst, src)


def copy_state(src):
    """A new state equal to ``src`` (fresh arrays, ``cards`` included)."""
    dst = BirdsState(src.cards.copy(), src.deck.copy(), src.hand.copy(), src.hand_public.copy(),
                     src.board.copy(), src.tray.copy(), src.player.copy(), src.meta.copy())
    return dst


@nb.njit(cache=True, inline="always")
def card_class(cards, card):
    """The (points, cost) class ``points * N_COSTS + cost`` of ``card``."""
    return cards[card, C_POINTS] * N_COSTS + cards[card, C_COST]


@nb.njit(cache=True, inline="always")
def borrowed_state(s):
    """``s`` with every array a borrowed view (``games.lowlevel.borrow``: no reference
    counts, which numba otherwise takes each time a kernel reads an array out of the
    state); for a search kernel's own use while ``s`` itself is alive."""
    return BirdsState(borrow(s.cards), borrow(s.deck), borrow(s.hand), borrow(s.hand_public),
                      borrow(s.board), borrow(s.tray), borrow(s.player), borrow(s.meta))
