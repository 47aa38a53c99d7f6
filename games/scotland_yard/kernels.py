"""Scotland Yard's public kernel surface: board, state layout and pure kernels.

What other packages (agents, cluster, tests) may use of the game; the
underscore modules beside it are private to ``games.scotland_yard``.

* Board (``_board.py``): ``Board`` (neighbour slots, transports, degree,
  black-ticket slots, all-pairs distance tables for the detectives' transport
  set and for any transport), ``load_board``, transports ``TAXI``, ``BUS``,
  ``UNDERGROUND``, ``FERRY``, ``MAX_DEGREE``.
* Layout (``_layout.py``): ``ScotlandYardState``, ``M_*`` meta slots, ticket
  columns, actions (``NUM_ACTIONS``, ``DOUBLE_MOVE``), ``empty_state``,
  ``copy_into``, ``copy_dynamic_into``, ``copy_state``, ``borrowed_state``.
* Kernels (``_rules.py``): ``init``, ``legal_actions`` / ``legal_actions_into``,
  ``is_legal``, ``can_move``, ``step`` (and its journey part ``travel``),
  ``is_terminal``, ``returns``, ``observe``.
"""
from ._board import (
    BUS, FERRY, MAX_DEGREE, TAXI, TRANSPORTS, UNDERGROUND, UNREACHABLE, Board,
    all_pairs_distances, build_board, load_board, read_edges, read_start_cards,
)
from ._layout import (
    BLACK_TICKET, BUS_TICKET, DOUBLE_MOVE, DOUBLE_TICKET, HIDDEN, MAX_DETECTIVES, MAX_ROUNDS,
    META_FIELDS, MRX, M_CAPTURER, M_IN_DOUBLE, M_LAST_REVEAL, M_MOVES_LEFT, M_NUM_DETECTIVES,
    M_PLIES, M_RESULT, M_ROUND, M_ROUNDS, M_SEEKER_VIEW, M_TO_MOVE, M_TRACK_POSSIBLE,
    NUM_ACTIONS, RESULT_MRX_WINS, RESULT_ONGOING, RESULT_SEEKERS_WIN, TAXI_TICKET, TICKET_KINDS,
    TICKET_NAMES, UNDERGROUND_TICKET, ScotlandYardState, borrowed_state, copy_dynamic_into, copy_into,
    copy_state, empty_state,
)
from ._rules import (
    can_move, init, is_legal, is_terminal, legal_actions, legal_actions_into,
    occupied_by_detective, observe, returns, step, travel,
)

__all__ = [
    "BUS", "FERRY", "MAX_DEGREE", "TAXI", "TRANSPORTS", "UNDERGROUND", "UNREACHABLE", "Board",
    "all_pairs_distances", "build_board", "load_board", "read_edges", "read_start_cards",
    "BLACK_TICKET", "BUS_TICKET", "DOUBLE_MOVE", "DOUBLE_TICKET", "HIDDEN", "MAX_DETECTIVES",
    "MAX_ROUNDS", "META_FIELDS", "MRX", "M_CAPTURER", "M_IN_DOUBLE", "M_LAST_REVEAL",
    "M_MOVES_LEFT", "M_NUM_DETECTIVES", "M_PLIES", "M_RESULT", "M_ROUND", "M_ROUNDS",
    "M_SEEKER_VIEW", "M_TO_MOVE", "M_TRACK_POSSIBLE", "NUM_ACTIONS", "RESULT_MRX_WINS",
    "RESULT_ONGOING", "RESULT_SEEKERS_WIN", "TAXI_TICKET", "TICKET_KINDS", "TICKET_NAMES",
    "UNDERGROUND_TICKET", "ScotlandYardState", "borrowed_state", "copy_dynamic_into", "copy_into", "copy_state",
    "empty_state",
    "can_move", "init", "is_legal", "is_terminal", "legal_actions", "legal_actions_into",
    "occupied_by_detective", "observe", "returns", "step", "travel",
]
