"""XCOM state layout, cell codes, action encoding, layouts from text.

State (``XcomState``, a NamedTuple of flat arrays; ``n`` = board side, ``K`` =
units per side, ``C = n * n`` cells)::

    board    int8[C]        cell codes, row-major: EMPTY 0, WALL -2, HUMAN 1, ALIEN -1
                            (cell index = row * n + col)
    units    int16[2, K, 3] per side (HUMANS 0, ALIENS 1) and unit: U_ROW, U_COL, U_ALIVE;
                            units are numbered in reading order of the layout
    sight    bool[C, C]     static line of sight between cell centres (walls only;
                            units never block a shot), symmetric
    rewards  float64[2]     accumulated reward per side (+10 / -10 per kill)
    meta     int64[META_FIELDS]  M_SIZE, M_UNITS, M_MAX_MOVE, M_MAX_MOVES, M_TO_MOVE,
                            M_MOVES (commands played), M_DONE, M_WINNER
                            (HUMANS, ALIENS or NO_WINNER), M_FIRST (side that moved
                            first), M_LAYOUT_ID (hash of the walls; ``copy_into``
                            copies ``sight`` only when it differs)

Actions: one index per (unit, destination, target)::

    action = (unit * D + offset) * (K + 1) + target

``offset`` indexes ``move_offsets(max_move)``: every (drow, dcol) with
``|drow| + |dcol| <= max_move`` (``D = 2 M^2 + 2 M + 1`` of them, offset 0 is
(0, 0): stay); ``target`` 0 = no shot, ``j + 1`` = shoot enemy unit ``j`` from
the destination. Seat 0 plays the humans, seat 1 the aliens.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numba as nb
import numpy as np

from ..lowlevel import borrow

EMPTY, WALL, HUMAN_CELL, ALIEN_CELL = 0, -2, 1, -1
CELL_VALUES = (WALL, ALIEN_CELL, EMPTY, HUMAN_CELL)
HUMANS, ALIENS = 0, 1
NO_WINNER = -1
SIDE_CELL = np.array([HUMAN_CELL, ALIEN_CELL], dtype=np.int8)

U_ROW, U_COL, U_ALIVE = 0, 1, 2
UNIT_FIELDS = 3

M_SIZE, M_UNITS, M_MAX_MOVE, M_MAX_MOVES, M_TO_MOVE, M_MOVES, M_DONE, M_WINNER, M_FIRST, \
    M_LAYOUT_ID = range(10)
META_FIELDS = 10

KILL_REWARD = 10.0
MAX_UNITS = 8
MAX_SIDE = 32
MAX_MOVE = 12
#: Most cells one move can reach (the diamond of ``MAX_MOVE``): the size of the kernels'
#: stack scratch for a breadth-first search.
MAX_REACH = 2 * MAX_MOVE * MAX_MOVE + 2 * MAX_MOVE + 1
DEFAULT_MAX_MOVES = 25
LAYOUT_DIR = Path(__file__).resolve().parent / "layouts"
BUILTIN_LAYOUTS = {"mini": (LAYOUT_DIR / "mini.txt", 4), "large": (LAYOUT_DIR / "large.txt", 6)}


class XcomState(NamedTuple):
    board: np.ndarray    # int8[C]
    units: np.ndarray    # int16[2, K, 3]
    sight: np.ndarray    # bool[C, C]
    rewards: np.ndarray  # float64[2]
    meta: np.ndarray     # int64[META_FIELDS]


class LayoutError(ValueError):
    """A malformed layout; the message names the row and column (1-based)."""


def move_offsets(max_move: int) -> np.ndarray:
    """int64[D, 2]: every (drow, dcol) with |drow| + |dcol| <= max_move; (0, 0) first."""
    out = [(0, 0)]
    for dr in range(-max_move, max_move + 1):
        for dc in range(-max_move, max_move + 1):
            if (dr, dc) != (0, 0) and abs(dr) + abs(dc) <= max_move:
                out.append((dr, dc))
    return np.array(out, dtype=np.int64)


def num_actions(units: int, max_move: int) -> int:
    return units * (2 * max_move * max_move + 2 * max_move + 1) * (units + 1)


def parse_layout(text: str, source: str = "layout") -> np.ndarray:
    """int8[n, n] grid from text: one row per line, cells separated by blanks or
    commas, ``#`` starts a comment. Raises :class:`LayoutError` naming the row
    and column (1-based, counting board rows only) of the first problem."""
    rows: list[list[int]] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        r = len(rows) + 1
        row = []
        for c, token in enumerate(line.split(), start=1):
            try:
                value = int(token)
            except ValueError:
                raise LayoutError(f"{source}: row {r}, column {c}: {token!r} is not an int "
                                  f"(cells are -2 wall, -1 alien, 0 empty, 1 human)") from None
            if value not in CELL_VALUES:
                raise LayoutError(f"{source}: row {r}, column {c}: cell value {value} not in "
                                  f"{{-2, -1, 0, 1}}")
            row.append(value)
        if rows and len(row) != len(rows[0]):
            raise LayoutError(f"{source}: row {r}, column {min(len(row), len(rows[0])) + 1}: "
                              f"ragged row ({len(row)} cells, row 1 has {len(rows[0])})")
        rows.append(row)
    if not rows:
        raise LayoutError(f"{source}: row 1, column 1: empty layout")
    grid = np.array(rows, dtype=np.int8)
    n_rows, n_cols = grid.shape
    if n_rows != n_cols:
        raise LayoutError(f"{source}: row {n_rows + 1 if n_rows < n_cols else n_cols + 1}, column 1: "
                          f"the board must be square, got {n_rows} rows of {n_cols} cells")
    if not 2 <= n_rows <= MAX_SIDE:
        raise LayoutError(f"{source}: row 1, column 1: board side must be in [2, {MAX_SIDE}], got {n_rows}")
    humans = np.argwhere(grid == HUMAN_CELL)
    aliens = np.argwhere(grid == ALIEN_CELL)
    if len(humans) != len(aliens) or not 1 <= len(humans) <= MAX_UNITS:
        # name the first unit beyond the smaller squad (or the first cell if none)
        more = humans if len(humans) > len(aliens) else aliens
        k = min(len(humans), len(aliens), MAX_UNITS)
        r, c = (more[k] if len(more) > k else (0, 0))
        raise LayoutError(f"{source}: row {r + 1}, column {c + 1}: wrong unit count: {len(humans)} "
                          f"humans and {len(aliens)} aliens (both sides need the same number, "
                          f"1..{MAX_UNITS})")
    return grid


def load_layout(path) -> np.ndarray:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise LayoutError(f"{path}: row 1, column 1: cannot read layout file ({exc.strerror or exc})") from None
    return parse_layout(text, str(path))


@nb.njit(cache=True)
def _segment_blocked(r1, c1, r2, c2, board, n):
    """Whether the segment between the centres of cells (r1, c1) and (r2, c2)
    meets a wall cell's closed square (touching a corner or an edge blocks).

    Exact integer geometry at twice the scale: centres at odd coordinates,
    cell (r, c) covers [2r, 2r + 2] x [2c, 2c + 2]. Every wall in the bounding
    box of the two cells overlaps the segment's bounding box, so it blocks iff
    its four corners are not all strictly on one side of the line.
    """
    y1 = 2 * r1 + 1
    x1 = 2 * c1 + 1
    dy = 2 * (r2 - r1)
    dx = 2 * (c2 - c1)
    for r in range(min(r1, r2), max(r1, r2) + 1):
        for c in range(min(c1, c2), max(c1, c2) + 1):
            if board[r * n + c] != WALL:
                continue
            pos = False
            neg = False
            for k in range(4):
                cy = 2 * r + 2 * (k // 2)
                cx = 2 * c + 2 * (k % 2)
                cross = dx * (cy - y1) - dy * (cx - x1)
                if cross >= 0:
                    pos = True
                if cross <= 0:
                    neg = True
            if pos and neg:
                return True
    return False


@nb.njit(cache=True)
def compute_sight(board, n, sight):
    """Fill ``sight`` (bool[C, C]) with line of sight between every two non-wall cells."""
    cells = n * n
    for a in range(cells):
        sight[a, a] = board[a] != WALL
        for b in range(a + 1, cells):
            ok = board[a] != WALL and board[b] != WALL
            if ok:
                ok = not _segment_blocked(a // n, a % n, b // n, b % n, board, n)
            sight[a, b] = ok
            sight[b, a] = ok


def layout_id(grid: np.ndarray) -> int:
    """A 62-bit hash of the walls (and the side) of a layout."""
    import hashlib

    walls = np.ascontiguousarray(grid == WALL)
    h = hashlib.sha1(np.int64(grid.shape[0]).tobytes() + walls.tobytes()).digest()
    return int.from_bytes(h[:8], "little") >> 2


def state_from_grid(grid, max_move: int, max_moves: int = DEFAULT_MAX_MOVES,
                    first: int = HUMANS) -> XcomState:
    """A fresh state from an int8[n, n] layout (validated by :func:`parse_layout`)."""
    if not 1 <= max_move <= MAX_MOVE:
        raise ValueError(f"max_move: must be in [1, {MAX_MOVE}], got {max_move}")
    grid = np.asarray(grid, dtype=np.int8)
    n = grid.shape[0]
    k = int((grid == HUMAN_CELL).sum())
    units = np.zeros((2, k, UNIT_FIELDS), dtype=np.int16)
    for side, code in ((HUMANS, HUMAN_CELL), (ALIENS, ALIEN_CELL)):
        for i, (r, c) in enumerate(np.argwhere(grid == code)):
            units[side, i] = (r, c, 1)
    board = grid.reshape(-1).copy()
    sight = np.zeros((n * n, n * n), dtype=np.bool_)
    compute_sight(board, n, sight)
    meta = np.zeros(META_FIELDS, dtype=np.int64)
    meta[M_SIZE] = n
    meta[M_UNITS] = k
    meta[M_MAX_MOVE] = max_move
    meta[M_MAX_MOVES] = max_moves
    meta[M_TO_MOVE] = first
    meta[M_FIRST] = first
    meta[M_WINNER] = NO_WINNER
    meta[M_LAYOUT_ID] = layout_id(grid)
    return XcomState(board, units, sight, np.zeros(2, dtype=np.float64), meta)


@nb.njit(cache=True)
def copy_into(dst, src):
    """Copy ``src`` into ``dst`` in place (same board size and unit count);
    the static ``sight`` table is copied only when the layouts differ."""
    dst.board[:] = src.board
    dst.units[:] = src.units
    dst.rewards[:] = src.rewards
    if dst.meta[M_LAYOUT_ID] != src.meta[M_LAYOUT_ID]:
        dst.sight[:] = src.sight
    dst.meta[:] = src.meta


@nb.njit(cache=True, inline="always")
def borrowed_state(s):
    """``s`` with every array a borrowed view (``games.lowlevel.borrow``: no reference
    counts, which numba otherwise takes each time a kernel reads an array out of the
    state or passes the state on); for a search kernel's own use while ``s`` itself is
    alive: never store or return it."""
    return XcomState(borrow(s.board), borrow(s.units), borrow(s.sight), borrow(s.rewards),
                     borrow(s.meta))


def copy_state(state: XcomState) -> XcomState:
    return XcomState(state.board.copy(), state.units.copy(), state.sight.copy(),
                     state.rewards.copy(), state.meta.copy())


def grid_of(state: XcomState) -> np.ndarray:
    n = int(state.meta[M_SIZE])
    return state.board.reshape(n, n).copy()


_ASCII = {".": EMPTY, "#": WALL, "H": HUMAN_CELL, "A": ALIEN_CELL}
_GLYPH = {EMPTY: ".", WALL: "#", HUMAN_CELL: "H", ALIEN_CELL: "A"}


def grid_from_ascii(picture: str) -> np.ndarray:
    """int8[n, n] from an ASCII board (``.`` empty, ``#`` wall, ``H`` human,
    ``A`` alien; blanks ignored), for tests and docs."""
    rows = []
    for line in picture.strip().splitlines():
        cells = [ch for ch in line if not ch.isspace()]
        rows.append([_ASCII[ch] for ch in cells])
    text = "\n".join(" ".join(str(v) for v in row) for row in rows)
    return parse_layout(text, "ascii")


def render_state(state: XcomState) -> str:
    """ASCII picture (``H`` humans, ``A`` aliens, ``#`` walls) and a status line."""
    n = int(state.meta[M_SIZE])
    lines = [" ".join(_GLYPH[int(v)] for v in state.board[r * n:(r + 1) * n]) for r in range(n)]
    side = ("humans", "aliens")
    m = state.meta
    status = f"move {int(m[M_MOVES])}/{int(m[M_MAX_MOVES])} | to move: {side[int(m[M_TO_MOVE])]}"
    status += f" | rewards H {state.rewards[0]:+g} A {state.rewards[1]:+g}"
    if m[M_DONE]:
        status += " | " + ("draw" if m[M_WINNER] == NO_WINNER else f"{side[int(m[M_WINNER])]} win")
    lines.append(status)
    return "\n".join(lines)
