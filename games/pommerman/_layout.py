"""Pommerman state layout: one NamedTuple of fixed-capacity, fixed-dtype arrays.

This module is the contract between the rules kernels (``_canonical.py``,
``_java.py``), the shared kernels (``_engine.py``), the agents and the
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

Flames (``flames``): ``uint64[FLAME_WORDS]``, held per cell. Word ``c``
(``c < N_CELLS``) counts the flames at cell ``c`` by life: byte ``l`` (bits
``8 l .. 8 l + 7``) is the number of flames there with life ``l``
(``0 <= l <= MAX_FLAME_LIFE``; several flames may share a cell, with equal or
different lives, as in the java ruleset where overlapping blasts each add a
flame). Words ``FLAME_MASK`` and ``FLAME_MASK + 1`` mark the cells holding any
flame (bit ``c % 64`` of word ``FLAME_MASK + c // 64``), so that a step visits
only those cells. A tick ages every flame by shifting its cell's word one byte
down. ``meta[M_N_FLAMES]`` is the total number of flames. The JSON list of
flames (``_json.py``) is read and written from this; ``flame_list`` gives it as
``(row, col, life)`` tuples in cell order.

Meta (``meta``): ``int32[META_FIELDS]``: step count, bomb count, flame count, done flag,
result, game mode, ruleset, collapse switch, max steps, wood at the start
(for the heuristic), and an overflow flag set by a kernel that ran out of
bomb or flame capacity (the state is then invalid).

All six arrays are carved out of ONE buffer (``empty_state``, ``copy_state``),
in the order flames (cell words, then the two mark words), meta, agents, board,
items, bombs (offsets ``_OFF_*``), so that ``copy_into`` copies the marks, meta,
agents, board, items and the live bomb rows with one ``memcpy`` of a contiguous
span, and of the 121 cell words only those of cells marked in either state (a
search's per-iteration reset moves ~0.4 KB instead of 1.4 KB: games hold a few
flames). A cell word is zero whenever its cell is unmarked (every kernel adds and
removes flames through ``add_flames`` / ``clear_flame_cell`` or keeps the word
and the mark together), which is what makes skipping the unmarked words exact.
A state assembled from separate arrays (a ``PommermanState(...)`` built by hand)
still works: the copies then go array by array.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from numba.cpython.unsafe.numbers import trailing_zeros

from ..lowlevel import (
    add_references, borrow, carve, copy_bytes, data_address, data_pointer, stack_alloca, zero_bytes,
)

BOARD_SIZE = 11
N_CELLS = BOARD_SIZE * BOARD_SIZE
N_AGENTS = 4
N_ACTIONS = 6
MAX_BOMBS = 64
#: Flames per cell: one uint64 word per cell, one byte per life 0..MAX_FLAME_LIFE
#: holding the number of flames with that life, then two words of cell bits.
MAX_FLAME_LIFE = 7
FLAME_COUNT_MAX = 255
FLAME_MASK = N_CELLS
FLAME_WORDS = N_CELLS + 2
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

def _neighbour_table():
    """int16[121 * 5]: entry ``c * 5 + direction`` is the cell one step from flat cell
    ``c`` in ``direction`` (0 none: ``c`` itself, 1..4 up / down / left / right), or -1
    off the board."""
    table = np.full(N_CELLS * 5, -1, dtype=np.int16)
    for c in range(N_CELLS):
        for d in range(5):
            r = c // BOARD_SIZE + ACTION_DROW[d]
            q = c % BOARD_SIZE + ACTION_DCOL[d]
            if 0 <= r < BOARD_SIZE and 0 <= q < BOARD_SIZE:
                table[c * 5 + d] = r * BOARD_SIZE + q
    return table


#: The rules' moves as table loads (compile-time constants in the kernels: no division
#: by 11, no branch on the direction): ``NEIGHBOUR`` (see ``_neighbour_table``), and the
#: row and column of each flat cell (int8[121]).
NEIGHBOUR = _neighbour_table()
ROW_OF = (np.arange(N_CELLS) // BOARD_SIZE).astype(np.int8)
COL_OF = (np.arange(N_CELLS) % BOARD_SIZE).astype(np.int8)

@nb.njit(cache=True, inline="always")
def unsigned(i):
    """``i`` (a non-negative int) as an unsigned index: numba then compiles no wraparound of
    negative indices (three instructions per access on the rules' hot paths)."""
    return np.uint64(i)


@nb.njit(cache=True, inline="always")
def neighbour_cell(c, direction):
    """The flat cell one step from flat cell ``c`` in ``direction`` (0: ``c`` itself,
    1..4 up / down / left / right), or -1 off the board: one load from ``NEIGHBOUR`` (a
    compile-time constant: no division by 11, no branch on the direction)."""
    return np.int64(NEIGHBOUR[unsigned(c * 5 + direction)])


@nb.njit(cache=True, inline="always")
def is_wall(code):
    """True for the cell codes that stop a move (rigid, wood); ``|``, not ``or``: no branch."""
    return (code == RIGID) | (code == WOOD)


@nb.njit(cache=True, inline="always")
def is_powerup(code):
    """True for the visible power-up codes 6, 7, 8 (extra bomb, range, kick)."""
    return (code >= EXTRA_BOMB) & (code <= KICK)


# Agent columns.
A_ROW, A_COL, A_ALIVE, A_AMMO, A_BLAST, A_KICK, A_STATUS, A_REWARD, A_VISIBLE = range(9)
AGENT_FIELDS = 9
# Bomb columns.
B_ROW, B_COL, B_OWNER, B_LIFE, B_BLAST, B_DIR = range(6)
BOMB_FIELDS = 6
NO_OWNER = -1

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
    flames: np.ndarray  # uint64[FLAME_WORDS]
    meta: np.ndarray    # int32[META_FIELDS]


# Byte offsets of the arrays in the single buffer of a state (each a multiple of 8).
# ``copy_into`` copies ``_OFF_MARKS`` .. the end of the live bomb rows as one span (the
# flame marks, meta, agents, board, items, bombs) and the marked cell words apart.
_OFF_FLAMES = 0
_OFF_MARKS = _OFF_FLAMES + 8 * FLAME_MASK
_OFF_META = _OFF_FLAMES + 8 * FLAME_WORDS
_OFF_AGENTS = _OFF_META + 8 * ((4 * META_FIELDS + 7) // 8)
_OFF_BOARD = _OFF_AGENTS + 8 * ((2 * N_AGENTS * AGENT_FIELDS + 7) // 8)
_OFF_ITEMS = _OFF_BOARD + 8 * ((N_CELLS + 7) // 8)
_OFF_BOMBS = _OFF_ITEMS + 8 * ((N_CELLS + 7) // 8)
_STATE_BYTES = _OFF_BOMBS + 8 * ((2 * MAX_BOMBS * BOMB_FIELDS + 7) // 8)
_BOMB_ROW_BYTES = 2 * BOMB_FIELDS
#: Arrays per state (each carved view holds one reference to the buffer).
_N_ARRAYS = 6


@nb.njit(cache=True, inline="always")
def has_layout_shapes(state, actions):
    """True when ``state``'s arrays have this layout's shapes and ``actions`` one entry per
    agent: what the rules' pointer call (:func:`step_through_pointers`) needs before the
    rules may read them."""
    return state_has_layout_shapes(state) and actions.shape[0] == N_AGENTS


@nb.njit(cache=True, inline="always")
def state_has_layout_shapes(state):
    """True when ``state``'s arrays have this layout's shapes (see :func:`has_layout_shapes`)."""
    return (state.board.shape[0] == N_CELLS and state.items.shape[0] == N_CELLS
            and state.agents.shape[0] == N_AGENTS and state.agents.shape[1] == AGENT_FIELDS
            and state.bombs.shape[0] == MAX_BOMBS and state.bombs.shape[1] == BOMB_FIELDS
            and state.flames.shape[0] == FLAME_WORDS and state.meta.shape[0] == META_FIELDS)


@nb.njit(cache=True, inline="always")
def require_layout_shapes(state):
    """Raise ValueError unless ``state``'s arrays have the layout's shapes: what a search
    kernel checks once per decision for the states it steps with ``checked=False`` (see
    :func:`step_through_pointers`)."""
    if not state_has_layout_shapes(state):
        raise ValueError("search: the states' arrays must have the layout's shapes (_layout.py)")


@nb.njit(cache=True, inline="always")
def step_through_pointers(step_at, state, actions, checked=True):
    """One tick of ``state`` by a ruleset's ``step_at`` (``_step_at`` of ``_java`` or
    ``_canonical``), the body of both rulesets' ``step``: a finished game is left alone;
    a state whose arrays do not have the layout's shapes is refused (ValueError) instead
    of read out of bounds; the actions (any int array, any layout) are copied to the stack.

    Inlined into the caller, so a search loop calls ``step_at`` with seven data pointers
    (seven registers instead of ~55 words of array structs pushed per simulated tick);
    ``step_at`` rebuilds the arrays at the layout's fixed shapes.

    ``checked=False`` (a constant of the caller: the check is then not compiled) skips the
    shape check, for a search loop whose kernel checked its states once
    (:func:`require_layout_shapes`) and steps them with its own ``int64[4]`` actions: the
    check was about an eighth of a search kernel's IR, at every inlined tick.
    """
    if state.meta[M_DONE] != 0:
        return
    if checked and not has_layout_shapes(state, actions):
        raise ValueError("step: the state's arrays must have the layout's shapes "
                         "(_layout.py), and actions one entry per agent")
    joint = nb.carray(stack_alloca(N_AGENTS, np.int64), N_AGENTS)
    for i in range(N_AGENTS):
        joint[i] = actions[i]
    step_at(data_pointer(state.board), data_pointer(state.items), data_pointer(state.agents),
            data_pointer(state.bombs), data_pointer(state.flames), data_pointer(state.meta),
            data_pointer(joint))


@nb.njit(cache=True, inline="always")
def _carve_state(buf):
    """The six arrays of a state over ``buf`` (uint8[_STATE_BYTES], just allocated by the
    caller): one reference-count store for the six views (``add_references``)."""
    add_references(buf, _N_ARRAYS)
    return PommermanState(
        carve(buf, _OFF_BOARD, np.int8, N_CELLS, 0),
        carve(buf, _OFF_ITEMS, np.int8, N_CELLS, 0),
        carve(buf, _OFF_AGENTS, np.int16, N_AGENTS, AGENT_FIELDS),
        carve(buf, _OFF_BOMBS, np.int16, MAX_BOMBS, BOMB_FIELDS),
        carve(buf, _OFF_FLAMES, np.uint64, FLAME_WORDS, 0),
        carve(buf, _OFF_META, np.int32, META_FIELDS, 0))


@nb.njit(cache=True)
def empty_state(mode, ruleset, collapse, max_steps):
    """An all-passage board with no agents placed, bombs or flames.

    Args: mode (MODE_*), ruleset (RULESET_*), collapse (0/1), max_steps (int).
    Returns: PommermanState (one zeroed buffer, see the module docstring) with every
    agent alive, ammo 1, blast 2, no kick, visible, at (0, 0) (callers place them).
    """
    s = _carve_state(np.zeros(_STATE_BYTES, dtype=np.uint8))
    agents = s.agents
    for i in range(N_AGENTS):
        agents[i, A_ALIVE] = 1
        agents[i, A_AMMO] = 1
        agents[i, A_BLAST] = 2
        agents[i, A_VISIBLE] = 1
    meta = s.meta
    meta[M_MODE] = mode
    meta[M_RULESET] = ruleset
    meta[M_COLLAPSE] = collapse
    meta[M_MAX_STEPS] = max_steps
    meta[M_VIEW_RANGE] = FULL_VIEW
    return s


@nb.njit(cache=True, inline="always")
def is_packed(s):
    """True when the six arrays of ``s`` lie in one buffer at the layout's offsets
    (``empty_state`` / ``copy_state`` made it), with the layout's shapes."""
    f = data_address(s.flames)
    return (data_address(s.meta) == f + _OFF_META and data_address(s.agents) == f + _OFF_AGENTS
            and data_address(s.board) == f + _OFF_BOARD and data_address(s.items) == f + _OFF_ITEMS
            and data_address(s.bombs) == f + _OFF_BOMBS
            and s.meta.shape[0] == META_FIELDS and s.agents.shape[0] == N_AGENTS
            and s.agents.shape[1] == AGENT_FIELDS and s.flames.shape[0] == FLAME_WORDS
            and s.board.shape[0] == N_CELLS and s.items.shape[0] == N_CELLS
            and s.bombs.shape[0] == MAX_BOMBS and s.bombs.shape[1] == BOMB_FIELDS)


@nb.njit(cache=True, inline="always")
def _copy_arrays(dst, src):
    """Copy ``src`` into ``dst`` array by array (states not laid out in one buffer):
    everything but the bomb rows past ``src``'s count."""
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
    dfl = dst.flames
    sfl = src.flames
    for k in range(FLAME_WORDS):
        dfl[k] = sfl[k]
    dm = dst.meta
    sm = src.meta
    for f in range(META_FIELDS):
        dm[f] = sm[f]


@nb.njit(cache=True, inline="always")
def _copy_live_bombs(dst, src):
    """Copy the first ``src.meta[M_N_BOMBS]`` bomb rows; returns their number."""
    dbo = dst.bombs
    sbo = src.bombs
    n = src.meta[M_N_BOMBS]
    for k in range(n):
        for f in range(BOMB_FIELDS):
            dbo[k, f] = sbo[k, f]
    return n


@nb.njit(cache=True, inline="always")
def _copy_marked_words(dfl, sfl, marks_lo, marks_hi):
    """``dfl[c] = sfl[c]`` for the cells ``c`` whose bit is set in the mask words
    ``marks_lo`` (cells 0..63) / ``marks_hi`` (cells 64..120); dfl, sfl: uint64[FLAME_WORDS]."""
    bits = marks_lo
    while bits:
        c = first_cell(bits)
        bits = drop_lowest(bits)
        dfl[c] = sfl[c]
    bits = marks_hi
    while bits:
        c = 64 + first_cell(bits)
        bits = drop_lowest(bits)
        dfl[c] = sfl[c]


@nb.njit(cache=True)
def copy_into(dst, src):
    """Copy ``src`` into the preallocated ``dst`` (both PommermanState), in place.

    Bomb rows past ``src``'s count are not copied (``dst`` keeps its own there), so
    this is the cheap way to reset a scratch state inside a search loop. Two states
    laid out in one buffer each (``is_packed``) are copied with one ``memcpy`` from the
    flame marks to the end of the live bomb rows, then the flame words of the cells
    marked in ``src`` or in ``dst`` (a cell flaming in ``dst`` only gets ``src``'s zero);
    other states array by array. Both are borrowed (``borrowed_state``): binding their
    arrays inside takes no atomic reference counts.
    """
    src = borrowed_state(src)
    dst = borrowed_state(dst)
    if is_packed(src) and is_packed(dst):
        sfl = src.flames
        dfl = dst.flames
        lo = sfl[FLAME_MASK] | dfl[FLAME_MASK]  # dst's marks before the span overwrites them
        hi = sfl[FLAME_MASK + 1] | dfl[FLAME_MASK + 1]
        copy_bytes(dfl, sfl, _OFF_MARKS, _OFF_BOMBS + src.meta[M_N_BOMBS] * _BOMB_ROW_BYTES)
        _copy_marked_words(dfl, sfl, lo, hi)
    else:
        _copy_arrays(dst, src)
        _copy_live_bombs(dst, src)


@nb.njit(cache=True)
def copy_state(src):
    """A new PommermanState equal to ``src`` (fresh arrays; bomb rows past the live
    count and the flame words of unmarked cells are zero).

    The six arrays are views into ONE new buffer (one heap allocation and one
    reference-count store instead of six of each), with the same array types as
    ``empty_state``'s, so kernels see no difference. A packed ``src`` is copied with
    one ``memcpy`` up to the end of its live bomb rows (into a fresh buffer the unmarked
    cell words must be written anyway: zeroing them and copying the marked ones
    measured no faster). ``src`` and the new arrays are used through borrowed views (no
    atomic reference counts for binding them).
    """
    src = borrowed_state(src)
    buf = np.empty(_STATE_BYTES, dtype=np.uint8)
    new = _carve_state(buf)
    dst = borrowed_state(new)
    n = src.meta[M_N_BOMBS]
    if is_packed(src):
        copy_bytes(dst.flames, src.flames, 0, _OFF_BOMBS + n * _BOMB_ROW_BYTES)
    else:
        zero_bytes(buf, 0, _OFF_BOMBS)  # the padding after the meta, agents, board and items too
        _copy_arrays(dst, src)
        _copy_live_bombs(dst, src)
    zero_bytes(buf, _OFF_BOMBS + n * _BOMB_ROW_BYTES, _STATE_BYTES)  # the rows past the count
    return new


_BYTE = np.uint64(0xFF)
_ONE = np.uint64(1)


@nb.njit(cache=True, inline="always")
def add_flames(flames, c, life, count):
    """Add ``count`` flames of ``life`` at flat cell ``c`` to ``flames`` (uint64[FLAME_WORDS])
    and mark the cell. Returns False (and adds nothing) when the cell's count for that life
    would pass FLAME_COUNT_MAX; the caller keeps ``meta[M_N_FLAMES]``."""
    shift = np.uint64(8 * life)
    v = flames[c]
    if np.int64((v >> shift) & _BYTE) + count > FLAME_COUNT_MAX:
        return False
    flames[c] = v + (np.uint64(count) << shift)
    w = FLAME_MASK + (c >> 6)
    flames[w] = flames[w] | (_ONE << np.uint64(c & 63))
    return True


@nb.njit(cache=True, inline="always")
def clear_flame_cell(flames, c):
    """Remove every flame at flat cell ``c`` (count and mark)."""
    flames[c] = np.uint64(0)
    w = FLAME_MASK + (c >> 6)
    flames[w] = flames[w] & ~(_ONE << np.uint64(c & 63))


@nb.njit(cache=True, inline="always")
def cell_in(lo, hi, c):
    """True when flat cell ``c`` (0..120) is set in the two-word cell mask ``lo`` (bit
    ``c`` for cells 0..63), ``hi`` (bit ``c - 64`` for 64..120): the layout of the flames'
    marks, which the rules also use for the cells of a tick's bombs and blasts. A select,
    no branch."""
    return ((lo if c < 64 else hi) >> np.uint64(c & 63)) & _ONE != 0


@nb.njit(cache=True, inline="always")
def with_cell(lo, hi, c):
    """The two-word cell mask ``(lo, hi)`` (see :func:`cell_in`) with flat cell ``c`` set
    (selects, no branch)."""
    bit = _ONE << np.uint64(c & 63)
    low = c < 64
    return (lo | bit) if low else lo, hi if low else (hi | bit)


@nb.njit(cache=True, inline="always")
def has_flames(flames, c):
    """True when flat cell ``c`` holds any flame (its mark)."""
    return (flames[FLAME_MASK + (c >> 6)] >> np.uint64(c & 63)) & _ONE != 0


@nb.njit(cache=True, inline="always")
def flames_in_word(v):
    """Number of flames counted by one cell word (the sum of its bytes)."""
    n = 0
    for life in range(MAX_FLAME_LIFE + 1):
        n += np.int64((v >> np.uint64(8 * life)) & _BYTE)
    return n


@nb.njit(cache=True, inline="always")
def first_cell(bits):
    """The lowest set bit of a non-zero uint64 mask word, as an int."""
    return np.int64(trailing_zeros(bits))


@nb.njit(cache=True, inline="always")
def drop_lowest(bits):
    """``bits`` without its lowest set bit."""
    return bits & (bits - _ONE)


def flame_list(state) -> list[tuple[int, int, int]]:
    """The flames of ``state`` as (row, col, life) tuples, by cell then life (Python)."""
    out = []
    words = state.flames
    for c in range(N_CELLS):
        v = int(words[c])
        if v == 0:
            continue
        for life in range(MAX_FLAME_LIFE + 1):
            for _ in range((v >> (8 * life)) & 0xFF):
                out.append((c // BOARD_SIZE, c % BOARD_SIZE, life))
    return out


def set_flames(state, flames) -> None:
    """Replace the flames of ``state`` by ``flames``, (row, col, life) tuples (Python).

    Raises ValueError naming the flame when a life is outside 0..MAX_FLAME_LIFE or a
    cell holds more than FLAME_COUNT_MAX flames of one life."""
    words = np.zeros(FLAME_WORDS, dtype=np.uint64)
    counts = {}
    for k, (r, c, life) in enumerate(flames):
        if not 0 <= life <= MAX_FLAME_LIFE:
            raise ValueError(f"flames[{k}].life: {life} is outside 0..{MAX_FLAME_LIFE}")
        p = r * BOARD_SIZE + c
        counts[p, life] = counts.get((p, life), 0) + 1
        if counts[p, life] > FLAME_COUNT_MAX:
            raise ValueError(f"flames[{k}]: more than {FLAME_COUNT_MAX} flames of life {life} at {[r, c]}")
    for (p, life), n in counts.items():
        words[p] += np.uint64(n) << np.uint64(8 * life)
        words[FLAME_MASK + p // 64] |= np.uint64(1) << np.uint64(p % 64)
    state.flames[:] = words
    state.meta[M_N_FLAMES] = len(flames)


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
