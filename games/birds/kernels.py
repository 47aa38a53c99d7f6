"""The bird card game's public kernel surface: the state layout and the pure kernels.

What other packages (agents, cluster, tests) may use of the game; the
underscore modules beside it are private to ``games.birds``.

* Layout (``_layout.py``): ``BirdsState`` (drawn in its docstring), the
  constants (actions ``PLAY``/``DRAW_TRAY``/``DRAW_DECK``/``GAIN_FOOD``, field
  indices ``P_*``/``M_*``/``C_*``, ``HIDDEN``/``EMPTY``), ``card_class``,
  ``copy_into`` / ``copy_dynamic`` / ``copy_state`` / ``empty_state``, ``borrowed_state``.
* Rules (``_rules.py``): ``init`` (allocate and ``deal``), ``deal``, ``step`` (= ``apply_action`` + ``end_turn``),
  ``is_legal``, ``legal_actions`` / ``legal_actions_into`` / ``nth_legal_action`` / ``random_legal_action``, ``is_terminal``,
  ``returns`` / ``result_of``, ``score``, ``to_move``, ``deck_remaining``, ``hide_from`` /
  ``observe``, ``refill_tray``, ``shuffle_deck``.
* Cards (``_cards.py``): ``generate_cards``, ``load_cards_csv``, ``CardFileError``.
"""
from ._cards import POINT_COUNTS, CardFileError, generate_cards, load_cards_csv
from ._layout import (
    BOARD_SLOTS, C_COST, C_POINTS, DRAW_DECK, DRAW_TRAY, EMPTY, FEEDER_SIZE, FULL_STATE,
    GAIN_FOOD, HIDDEN, MAX_CARDS, MAX_COST, MAX_HAND, MAX_POINTS, META_FIELDS, MIN_CARDS,
    M_DECK_POS, M_FEEDER, M_OBSERVER, M_START_FOOD, M_TO_MOVE, M_TURN, N_ACTIONS, N_CLASSES,
    N_COSTS, N_PLAYERS, PLAY, PLAYER_FIELDS, P_BOARD, P_FOOD, P_HAND, P_SCORE, START_HAND,
    TOTAL_TURNS, TRAY_SLOTS, TURNS_PER_PLAYER, BirdsState, borrowed_state, card_class, copy_dynamic, copy_into,
    copy_state, empty_state,
)
from ._rules import (
    apply_action, deal, deck_remaining, end_turn, hide_from, init, is_legal, is_terminal,
    legal_actions, legal_actions_into, nth_legal_action, observe, random_legal_action, refill_tray, result_of, returns, score, shuffle_deck, step,
    to_move,
)

__all__ = [
    "BOARD_SLOTS", "BirdsState", "CardFileError", "C_COST", "C_POINTS", "DRAW_DECK", "DRAW_TRAY",
    "EMPTY", "FEEDER_SIZE", "FULL_STATE", "GAIN_FOOD", "HIDDEN", "MAX_CARDS", "MAX_COST",
    "MAX_HAND", "MAX_POINTS", "META_FIELDS", "MIN_CARDS", "M_DECK_POS", "M_FEEDER", "M_OBSERVER",
    "M_START_FOOD", "M_TO_MOVE", "M_TURN", "N_ACTIONS", "N_CLASSES", "N_COSTS", "N_PLAYERS",
    "PLAY", "PLAYER_FIELDS", "POINT_COUNTS", "P_BOARD", "P_FOOD", "P_HAND", "P_SCORE",
    "START_HAND", "TOTAL_TURNS", "TRAY_SLOTS", "TURNS_PER_PLAYER", "apply_action", "borrowed_state", "card_class",
    "copy_dynamic", "copy_into", "copy_state", "deal", "deck_remaining", "empty_state",
    "end_turn", "generate_cards", "hide_from", "init", "is_legal", "is_terminal", "legal_actions",
    "legal_actions_into", "load_cards_csv", "nth_legal_action", "observe", "random_legal_action", "refill_tray", "result_of", "returns", "score",
    "shuffle_deck", "step", "to_move",
]
