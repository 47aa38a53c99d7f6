"""Pommerman's public kernel surface: the state layout and the pure kernels.

This is what other packages (agents, cluster, tests) may use of the game; the
underscore modules beside it are private to ``games.pommerman`` and may change.

* Layout (``_layout.py``): the ``PommermanState`` NamedTuple of flat arrays,
  its field indices (``A_*`` agent columns, ``B_*`` bomb columns, ``M_*`` meta
  slots), the flames held per cell (``FLAME_*``, ``add_flames``, ``has_flames``,
  ``flames_in_word``, the cell marks walked with ``first_cell`` / ``drop_lowest``,
  ``flame_list`` / ``set_flames`` in Python), cell codes, actions, ``copy_into`` /
  ``copy_state`` / ``empty_state``.
* Kernels (``_engine.py``): ``step`` (dispatches on the state's ruleset), ``step_under``
  (one ruleset, for kernels compiled per ruleset),
  ``is_terminal``, ``returns``, ``legal_actions``, ``observe``, ``heuristic``
  and helpers; the rules of each ruleset (``step_canonical``, ``step_java``).
* Board generation (``_board_generation.py``): ``generate_canonical``,
  ``generate_java`` (a fresh game of each ruleset), ``inaccessible_passages``.
* JSON (``_json.py``): ``state_from_dict`` / ``state_to_dict`` in the golden
  trajectories' format, raising ``StateFormatError`` naming the field.
"""
from ._board_generation import generate_canonical, generate_java, inaccessible_passages
from ._canonical import step_canonical
from ._java import COLLAPSE_START, COLLAPSE_STEP, step_java
from ._json import StateFormatError, state_from_dict, state_to_dict
from ._engine import (
    FULL_FLAME_LIFE_CANONICAL, FULL_FLAME_LIFE_JAVA, count_alive, count_wood, heuristic,
    heuristic_score, is_terminal, legal_actions, observe, returns, STATE_RULESET, step, step_under,
    teammate_of,
)
from ._layout import (
    ACTION_DCOL, ACTION_DROW, AGENT0, AGENT_DUMMY, AGENT_FIELDS, A_ALIVE, A_AMMO, A_BLAST,
    A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS, A_VISIBLE, BOARD_SIZE, BOMB, BOMB_FIELDS,
    B_BLAST, B_COL, B_DIR, B_LIFE, B_OWNER, B_ROW, DEFAULT_MAX_STEPS, DOWN, EXTRA_BOMB,
    FLAMES, FLAME_COUNT_MAX, FLAME_MASK, FLAME_WORDS, FOG, FULL_VIEW, INCR_RANGE, KICK, LAY_BOMB,
    LEFT, MAX_BOMBS, MAX_FLAME_LIFE, META_FIELDS, MODES, MODE_FFA, MODE_TEAM, M_COLLAPSE,
    M_DONE, M_INITIAL_WOOD, M_MAX_STEPS, M_MODE, M_N_BOMBS, M_N_FLAMES, M_OVERFLOW,
    M_RESULT, M_RULESET, M_STEP, M_VIEW_RANGE, NO_OWNER, N_ACTIONS, N_AGENTS, N_CELLS,
    PASSAGE, PommermanState, borrowed_state, require_layout_shapes, RESULT_INCOMPLETE, RESULT_TIE, RESULT_WIN, RIGHT, RIGID,
    RULESETS, RULESET_CANONICAL, RULESET_JAVA, STATUS_INCOMPLETE, STATUS_LOSS, STATUS_TIE,
    STATUS_WIN, STOP, UP, WOOD, add_flames, cell, clear_flame_cell, copy_into, copy_state,
    drop_lowest, empty_state, first_cell, flame_list, flames_in_word, has_flames, on_board, set_flames,
)

__all__ = [
    'ACTION_DCOL', 'ACTION_DROW', 'COLLAPSE_START', 'COLLAPSE_STEP', 'AGENT0', 'AGENT_DUMMY', 'AGENT_FIELDS', 'A_ALIVE',
    'A_AMMO', 'A_BLAST', 'A_COL', 'A_KICK', 'A_REWARD', 'A_ROW', 'A_STATUS', 'A_VISIBLE',
    'BOARD_SIZE', 'BOMB', 'BOMB_FIELDS', 'B_BLAST', 'B_COL', 'B_DIR', 'B_LIFE', 'B_OWNER',
    'B_ROW', 'DEFAULT_MAX_STEPS', 'DOWN', 'EXTRA_BOMB', 'FLAMES', 'FLAME_COUNT_MAX', 'FLAME_MASK',
    'FLAME_WORDS', 'FOG', 'FULL_FLAME_LIFE_CANONICAL', 'FULL_FLAME_LIFE_JAVA', 'FULL_VIEW',
    'INCR_RANGE', 'KICK', 'LAY_BOMB', 'LEFT', 'MAX_BOMBS', 'MAX_FLAME_LIFE',
    'META_FIELDS', 'MODES', 'MODE_FFA', 'MODE_TEAM', 'M_COLLAPSE', 'M_DONE',
    'M_INITIAL_WOOD', 'M_MAX_STEPS', 'M_MODE', 'M_N_BOMBS', 'M_N_FLAMES', 'M_OVERFLOW',
    'M_RESULT', 'M_RULESET', 'M_STEP', 'M_VIEW_RANGE', 'NO_OWNER', 'N_ACTIONS', 'N_AGENTS',
    'N_CELLS', 'PASSAGE', 'PommermanState', 'borrowed_state', 'require_layout_shapes', 'RESULT_INCOMPLETE', 'RESULT_TIE', 'RESULT_WIN',
    'RIGHT', 'RIGID', 'RULESETS', 'RULESET_CANONICAL', 'RULESET_JAVA', 'STATUS_INCOMPLETE',
    'STATUS_LOSS', 'STATUS_TIE', 'STATUS_WIN', 'STOP', 'StateFormatError', 'UP', 'WOOD',
    'add_flames', 'cell', 'clear_flame_cell', 'copy_into', 'copy_state', 'count_alive', 'count_wood',
    'drop_lowest', 'empty_state', 'first_cell', 'flame_list', 'flames_in_word', 'has_flames', 'set_flames',
    'generate_canonical', 'inaccessible_passages', 'generate_java', 'heuristic', 'heuristic_score', 'is_terminal', 'legal_actions',
    'observe', 'on_board', 'returns', 'STATE_RULESET', 'state_from_dict', 'state_to_dict', 'step', 'step_under',
    'step_canonical', 'step_java', 'teammate_of',
]
