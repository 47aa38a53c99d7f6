"""Pommerman state layout: one NamedTuple of fixed-capacity, fixed-dtype arrays.

This module is the contract between the rules kernels (``_canonical.py``,
``_java.py``), the shared kernels (``_kernels.py``), the agents and the
Python wrapper. Copying a state is copying its arrays (``copy_state`` /
``copy_into``); kernels update states in place.

Board (``board``, ``items``): flat ``int8[121]``, index = row * 11 + col::

         col 0   1   2  ...  10
    row 0  [ 0] [ 1] [ 2] ... [10]
    row 1  [11] [12] [13] ... [21]
    ...
    row 10 [110]          ... [120]

``board`` holds the cell codes of FORMAT.md (0 passage, 1 rigid, 2 wood,
3 bomb, 4 flames, 5 fog, 6 extra bomb, 7 range, 8 kick, 9 agent dummy,
10..13 agents 0..3). ``items[cell]`` is the power-up code hidden at that
cell (0 = none): under wood, under the flames of burnt wood, and (java)
under collapsed tiles.

Agents (``agents``): ``int16[4, AGENT_FIELDS]``, row = agent id; columns
``A_ROW, A_COL, A_ALIVE, A_AMMO, A_BLAST, A_KICK, A_STATUS, A_REWARD,
A_VISIBLE``. ``A_STATUS`` is the per-agent result (``STATUS_*``), set the
moment the rules decide it (java) or at game end (canonical: winners get
``STATUS_WIN``, everybody else ``STATUS_LOSS`` or ``STATUS_TIE``).
``A_REWARD`` is the reward the reference reports after the last step.
``A_VISIBLE`` is 1 in a true state; in an observation it is 0 for agents
hidden by fog (their other fields are then meaningless).

Bombs (``bombs``): ``int16[MAX_BOMBS, BOMB_FIELDS]``, the first
``meta[M_N_BOMBS]`` rows in laying order (order matters to the rules);
columns ``B_ROW, B_COL, B_OWNER, B_LIFE, B_BLAST, B_DIR`` where ``B_DIR`` is
0 when not moving, else 1 up / 2 down / 3 left / 4 right, and ``B_OWNER`` is
-1 when unknown (in an agent's model of the world built from an observation:
no ammo refund).

Flames (``flames``): ``int16[MAX_FLAMES, FLAME_FIELDS]``, the first
``meta[M_N_FLAMES]`` rows; columns ``F_ROW, F_COL, F_LIFE``. Several flames
may share a cell; their order carries no meaning.

Meta (``meta``): ``int32[META_FIELDS]``: step count, list lengths, done flag,
result, game mode, ruleset, collapse switch, max steps, wood at the start
(for the heuristic), and an overflow flag set by a kernel that ran out of
bomb or flame capacity (the state is then invalid).
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..lowlevel import borrow, sub_array

BOARD_SIZE = 11
N_CELLS = BOARD_SIZE * BOARD_SIZE
N_AGENTS = 4
N_ACTIONS = 6
MAX_BOMBS = 64
MAX_FLAMES = 1024
DEFAULT_MAX_STEPS = 800

# Cell codes (FORMAT.md).
PASSAGE, RIGID, WOOD, BOMB, FLAMES, FOG = 0, 1, 2, 3, 4, 5
EXTRA_BOMB, INCR_RANGE, KICK, AGENT_DUMMY = 6, 7, 8, 9
AGENT0 = 10  # agent i shows as AGENT0 + i

# Actions.
STOP, UP, DOWN, LEFT, RIGHT, LAY_BOMB = 0, 1, 2, 3, 4, 5
# Row / column offsets by action (STOP and LAY_BOMB do not move).
ACTION_DROW = np.array([0, -1, 1, 0, 0, 0], dtype=np.int64)
ACTION_DCOL = np.array([0, 0, 0, -1, 1, 0], dtype=np.int64)

# Agent columns.
A_ROW, A_COL, A_ALIVE, A_AMMO, A_BLAST, A_KICK, A_STATUS, A_REWARD, A_VISIBLE = range(9)
AGENT_FIELDS = 9
# Bomb columns.
B_ROW, B_COL, B_OWNER, B_LIFE, B_BLAST, B_DIR = range(6)
BOMB_FIELDS = 6
NO_OWNER = -1
# Flame columns.
F_ROW, F_COL, F_LIFE = range(3)
FLAME_FIELDS = 3

# Meta slots.
(M_STEP, M_N_BOMBS, M_N_FLAMES, M_DONE, M_RESULT, M_MODE, M_RULESET,
 M_COLLAPSE, M_MAX_STEPS, M_INITIAL_WOOD, M_OVERFLOW, M_VIEW_RANGE) = range(12)
META_FIELDS = 12

# meta[M_MODE]
MODE_FFA, MODE_TEAM = 0, 1
# meta[M_RULESET]
RULESET_CANONICAL, RULESET_JAVA = 0, 1
# meta[M_RESULT]
RESULT_INCOMPLETE, RESULT_WIN, RESULT_TIE = 0, 1, 2
# agents[:, A_STATUS] (Java's Types.RESULT)
STATUS_INCOMPLETE, STATUS_WIN, STATUS_TIE, STATUS_LOSS = 0, 1, 2, 3
# meta[M_VIEW_RANGE] of an observation: -1 = full observability
FULL_VIEW = -1

MODES = {"ffa": MODE_FFA, "team": MODE_TEAM}
RULESETS = {"canonical": RULESET_CANONICAL, "java": RULESET_JAVA}


class PommermanState(NamedTuple):
    """A Pommerman state (see the module docstring for the layout)."""

    board: np.ndarray   # int8[121]
    items: np.ndarray   # int8[121]
    agents: np.ndarray  # int16[4, AGENT_FIELDS]
    bombs: np.ndarray   # int16[MAX_BOMBS, BOMB_FIELDS]
    flames: np.ndarray  # int16[MAX_FLAMES, FLAME_FIELDS]
    meta: np.ndarray    # int32[META_FIELDS]


@nb.njit(cache=True)
def empty_state(mode, ruleset, collapse, max_steps):
    """An all-passage board with no agents placed, bombs or flames.

    Args: mode (MODE_*), ruleset (RULESET_*), collapse (0/1), max_steps (int).
    Returns: PommermanState with every agent alive, ammo 1, blast 2, no kick,
    visible, at (0, 0) (callers place them).
    """
    board = np.zeros(N_CELLS, dtype=np.int8)
    items = np.zeros(N_CELLS, dtype=np.int8)
    agents = np.zeros((N_AGENTS, AGENT_FIELDS), dtype=np.int16)
    for i in range(N_AGENTS):
        agents[i, A_ALIVE] = 1
        agents[i, A_AMMO] = 1
        agents[i, A_BLAST] = 2
        agents[i, A_VISIBLE] = 1
    bombs = np.zeros((MAX_BOMBS, BOMB_FIELDS), dtype=np.int16)
    flames = np.zeros((MAX_FLAMES, FLAME_FIELDS), dtype=np.int16)
    meta = np.zeros(META_FIELDS, dtype=np.int32)
    meta[M_MODE] = mode
    meta[M_RULESET] = ruleset
    meta[M_COLLAPSE] = collapse
    meta[M_MAX_STEPS] = max_steps
    meta[M_VIEW_RANGE] = FULL_VIEW
    return PommermanState(board, items, agents, bombs, flames, meta)


@nb.njit(cache=True)
def copy_into(dst, src):
    """Copy ``src`` into the preallocated ``dst`` (both PommermanState), in place.

    Only the live prefix of the bomb and flame lists is copied, so this is the
    cheap way to reset a scratch state inside a search loop. Explicit element
    loops: numba's slice assignment (``a[:] = b``) checks for overlap and
    broadcasting and costs ~100 ns per array.
    """
    db = dst.board
    sb = src.board
    di = dst.items
    si = src.items
    for p in range(N_CELLS):
        db[p] = sb[p]
        di[p] = si[p]
    da = dst.agents
    sa = src.agents
    for i in range(N_AGENTS):
        for f in range(AGENT_FIELDS):
            da[i, f] = sa[i, f]
    dbo = dst.bombs
    sbo = src.bombs
    for k in range(src.meta[M_N_BOMBS]):
        for f in range(BOMB_FIELDS):
            dbo[k, f] = sbo[k, f]
    dfl = dst.flames
    sfl = src.flames
    for k in range(src.meta[M_N_FLAMES]):
        for f in range(FLAME_FIELDS):
            dfl[k, f] = sfl[k, f]
    dm = dst.meta
    sm = src.meta
    for f in range(META_FIELDS):
        dm[f] = sm[f]


# Byte offsets of the arrays in the single buffer of ``copy_state`` (each a multiple of 8).
_OFF_META = 0
_OFF_AGENTS = _OFF_META + 8 * ((4 * META_FIELDS + 7) // 8)
_OFF_BOMBS = _OFF_AGENTS + 8 * ((2 * N_AGENTS * AGENT_FIELDS + 7) // 8)
_OFF_FLAMES = _OFF_BOMBS + 8 * ((2 * MAX_BOMBS * BOMB_FIELDS + 7) // 8)
_OFF_BOARD = _OFF_FLAMES + 8 * ((2 * MAX_FLAMES * FLAME_FIELDS + 7) // 8)
_OFF_ITEMS = _OFF_BOARD + 8 * ((N_CELLS + 7) // 8)
_STATE_BYTES = _OFF_ITEMS + 8 * ((N_CELLS + 7) // 8)


@nb.njit(cache=True)
def copy_state(src):
    """A new PommermanState equal to ``src`` (fresh arrays; bomb and flame rows past
    the live counts are zero).

    The six arrays are views into ONE new zeroed byte buffer: one heap allocation
    instead of six (each ``np.empty`` is a separate NRT allocation, ~50-100 ns),
    with the same array types as ``empty_state``'s, so kernels see no difference.
    """
    buf = np.zeros(_STATE_BYTES, dtype=np.uint8)
    dst = PommermanState(
        sub_array(buf, _OFF_BOARD, np.int8, N_CELLS, 0),
        sub_array(buf, _OFF_ITEMS, np.int8, N_CELLS, 0),
        sub_array(buf, _OFF_AGENTS, np.int16, N_AGENTS, AGENT_FIELDS),
        sub_array(buf, _OFF_BOMBS, np.int16, MAX_BOMBS, BOMB_FIELDS),
        sub_array(buf, _OFF_FLAMES, np.int16, MAX_FLAMES, FLAME_FIELDS),
        sub_array(buf, _OFF_META, np.int32, META_FIELDS, 0))
    copy_into(dst, src)
    return dst


@nb.njit(cache=True, inline="always")
def cell(row, col):
    """Flat board index of (row, col)."""
    return row * BOARD_SIZE + col


@nb.njit(cache=True, inline="always")
def on_board(row, col):
    """True when (row, col) lies on the 11x11 board."""
    return 0 <= row < BOARD_SIZE and 0 <= col < BOARD_SIZE


@nb.njit(cache=True, inline="always")
def borrowed_state(s):
    """``s`` with every array a borrowed view (``games.lowlevel.borrow``: no reference
    counts); for a search kernel's own use while ``s`` itself is alive."""
    return PommermanState(borrow(s.board), borrow(s.items), borrow(s.agents), borrow(s.bombs),
                          borrow(s.flames), borrow(s.meta))
