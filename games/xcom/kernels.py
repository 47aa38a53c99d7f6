"""XCOM's public kernel surface: the state layout and the pure kernels.

Other packages (agents, cluster, tests) use the game through this module and
the wrapper in ``games.xcom``; the underscore modules are private.

* Layout (``_layout.py``): ``XcomState`` (board, units, sight, rewards, meta),
  cell codes, ``U_*`` unit columns, ``M_*`` meta slots, ``MAX_MOVE`` / ``MAX_REACH``
  (the longest move and the cells it can reach: the kernels' stack scratch), the action
  encoding (``move_offsets``, ``num_actions``), layouts from text (``parse_layout``,
  ``load_layout``, ``grid_from_ascii``), ``state_from_grid``, ``copy_into`` /
  ``copy_state``, ``borrowed_state``, ``render_state``.
* Rules (``_rules.py``): ``legal_actions`` / ``legal_actions_into``, ``step``,
  ``apply_action``, ``apply_command``, ``decode_action``, ``is_terminal``,
  ``returns``, ``observe``, ``reachable``, the rollout policy
  ``random_command`` / ``random_playout``, ``count_alive``.
"""
from ._layout import (
    ALIENS, ALIEN_CELL, BUILTIN_LAYOUTS, CELL_VALUES, DEFAULT_MAX_MOVES, EMPTY, HUMANS,
    HUMAN_CELL, KILL_REWARD, LayoutError, MAX_MOVE, MAX_REACH, MAX_UNITS, META_FIELDS, M_DONE,
    M_FIRST, M_LAYOUT_ID, M_MAX_MOVE, M_MAX_MOVES, M_MOVES, M_SIZE, M_TO_MOVE, M_UNITS, M_WINNER,
    NO_WINNER, UNIT_FIELDS, U_ALIVE, U_COL, U_ROW, WALL, XcomState, borrowed_state, compute_sight,
    copy_into, copy_state, grid_from_ascii, grid_of, load_layout, move_offsets, num_actions,
    parse_layout, render_state, state_from_grid,
)
from ._rules import (
    apply_action, apply_command, count_alive, decode_action, is_terminal, legal_actions,
    legal_actions_into, new_dist, observe, offset_index_table, offsets_of, random_command,
    random_playout, reachable, returns, rollout_scratch, step,
)

__all__ = [
    "ALIENS", "ALIEN_CELL", "BUILTIN_LAYOUTS", "CELL_VALUES", "DEFAULT_MAX_MOVES", "EMPTY",
    "HUMANS", "HUMAN_CELL", "KILL_REWARD", "LayoutError", "MAX_MOVE", "MAX_REACH", "MAX_UNITS",
    "META_FIELDS", "M_DONE", "M_FIRST", "M_LAYOUT_ID", "M_MAX_MOVE", "M_MAX_MOVES", "M_MOVES",
    "M_SIZE", "M_TO_MOVE", "M_UNITS", "M_WINNER", "NO_WINNER", "UNIT_FIELDS", "U_ALIVE", "U_COL",
    "U_ROW", "WALL", "XcomState", "apply_action", "apply_command", "borrowed_state",
    "compute_sight",
    "copy_into", "copy_state", "count_alive", "decode_action", "grid_from_ascii", "grid_of",
    "is_terminal", "legal_actions", "legal_actions_into", "load_layout", "move_offsets",
    "new_dist", "num_actions", "observe", "offset_index_table", "offsets_of",
    "parse_layout", "random_command", "random_playout", "reachable", "render_state",
    "returns", "rollout_scratch", "state_from_grid", "step",
]
