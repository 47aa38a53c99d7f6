"""Pommerman board generation for both rulesets: a fresh game's board, hidden
power-ups and agents at their start cells.

``generate_canonical`` draws a board with the constraints of the reference
package's ``utility.make_board`` / ``utility.make_items``; ``generate_java`` one
under the constraints of the Java framework's ``LevelGenerator`` (not bit-equal
to ``java.util.Random``). Plain Python and numpy, run once per game; the rules of
a tick are in ``_canonical.py`` and ``_java.py``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._layout import (
    A_COL, A_ROW, AGENT0, BOARD_SIZE, DEFAULT_MAX_STEPS, EXTRA_BOMB, INCR_RANGE, KICK,
    M_INITIAL_WOOD, MODE_FFA, MODE_TEAM, PASSAGE, RIGID, RULESET_CANONICAL, RULESET_JAVA, WOOD,
    PommermanState, empty_state,
)


class BoardCounts(NamedTuple):
    """What a fresh board of a ruleset holds."""

    rigid: int
    """Rigid walls."""
    wood: int
    """Wood cells (the fixed ones included)."""
    items: int
    """Power-ups hidden under wood (at most the wood cells)."""


#: Start cells (row, col) of agents 0..3, the same in both rulesets.
START_CELLS = ((1, 1), (BOARD_SIZE - 2, 1), (BOARD_SIZE - 2, BOARD_SIZE - 2), (1, BOARD_SIZE - 2))


# --------------------------------------------------------------------------
# Canonical ruleset (utility.make_board / utility.make_items)
# --------------------------------------------------------------------------

#: PommeFFACompetition-v0 / PommeTeamCompetition-v0.
CANONICAL_BOARD = BoardCounts(rigid=36, wood=36, items=20)


def _free_coordinates() -> list[tuple[int, int]]:
    """The cells make_board may put random walls on (off-diagonal, not reserved), sorted."""
    n = BOARD_SIZE
    coords = {(x, y) for x in range(n) for y in range(n) if x != y}
    for pos in START_CELLS:
        coords.discard(pos)
    for i in range(2, 4):  # breathing room next to the agents
        for pos in ((1, i), (i, 1), (n - 2, n - i - 1), (n - i - 1, n - 2),
                    (1, n - i - 1), (n - i - 1, 1), (i, n - 2), (n - 2, i)):
            coords.remove(pos)
    for pos in _fixed_wood():
        coords.remove(pos)
    return sorted(coords)


def _fixed_wood() -> list[tuple[int, int]]:
    """The 12 wood cells make_board always lays (middle of rows/cols 1 and 9)."""
    n = BOARD_SIZE
    out = []
    for i in range(4, n - 4):
        out += [(1, i), (n - i - 1, 1), (n - 2, n - i - 1), (n - i - 1, n - 2)]
    return out


def inaccessible_passages(board: np.ndarray) -> int:
    """Passages (value 0) not reachable from (9, 9) through non-rigid cells.

    board: int array [11, 11]. Mirrors utility.inaccessible_passages, which
    starts from the last agent of its list, (size - 2, size - 2).
    """
    n = BOARD_SIZE
    start = (n - 2, n - 2)
    seen = {start}
    stack = [start]
    while stack:
        r, c = stack.pop()
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            q = (r + dr, c + dc)
            if q in seen or not (0 <= q[0] < n and 0 <= q[1] < n) or board[q] == RIGID:
                continue
            seen.add(q)
            stack.append(q)
    return sum(1 for r in range(n) for c in range(n)
               if board[r, c] == PASSAGE and (r, c) not in seen)


def _make_board_canonical(rng: np.random.Generator) -> np.ndarray:
    """One draw of make_board's ``make``: int8[11, 11] with agents, rigid and wood."""
    n = BOARD_SIZE
    board = np.zeros((n, n), dtype=np.int8)
    for a, (r, c) in enumerate(START_CELLS):
        board[r, c] = AGENT0 + a
    for pos in _fixed_wood():
        board[pos] = WOOD
    coords = _free_coordinates()
    alive = set(coords)
    for value, count in ((RIGID, CANONICAL_BOARD.rigid), (WOOD, CANONICAL_BOARD.wood - len(_fixed_wood()))):
        left = count
        while left > 0:
            # random.sample(coordinates, 1): uniform over the remaining cells.
            pool = [p for p in coords if p in alive]
            x, y = pool[int(rng.integers(len(pool)))]
            alive.discard((x, y))
            alive.discard((y, x))
            board[x, y] = value
            board[y, x] = value
            left -= 2
    return board


def generate_canonical(seed, mode) -> PommermanState:
    """A fresh canonical board: 36 rigid, 36 wood, 20 hidden power-ups.

    Args:
        seed: int or numpy.random.SeedSequence (the only randomness source).
        mode: MODE_FFA or MODE_TEAM.
    Returns:
        PommermanState at step 0: agents 0..3 at (1,1), (9,1), (9,9), (1,9),
        board symmetric about the main diagonal, items under wood (uniform
        over extra bomb / range / kick), meta[M_INITIAL_WOOD] set.
    """
    if mode not in (MODE_FFA, MODE_TEAM):
        raise ValueError(f"mode: expected MODE_FFA or MODE_TEAM, got {mode!r}")
    rng = np.random.default_rng(seed)
    board = _make_board_canonical(rng)
    while inaccessible_passages(board) > 4:
        board = _make_board_canonical(rng)
    flat = board.reshape(-1)
    wood_cells = np.flatnonzero(flat == WOOD)
    chosen = rng.choice(wood_cells, size=CANONICAL_BOARD.items, replace=False)
    kinds = rng.integers(EXTRA_BOMB, KICK + 1, size=CANONICAL_BOARD.items)

    s = empty_state(mode, RULESET_CANONICAL, 0, DEFAULT_MAX_STEPS)
    s.board[:] = flat
    for cell_, kind in zip(chosen, kinds):
        s.items[int(cell_)] = int(kind)
    for a, (r, c) in enumerate(START_CELLS):
        s.agents[a, A_ROW] = r
        s.agents[a, A_COL] = c
    s.meta[M_INITIAL_WOOD] = int(len(wood_cells))
    return s


# --------------------------------------------------------------------------
# Java ruleset (LevelGenerator's constraints)
# --------------------------------------------------------------------------

#: LevelGenerator's defaults.
JAVA_BOARD = BoardCounts(rigid=20, wood=20, items=10)
#: Cells from the border to the corner agents, and cells kept free beside each of them.
CORNER_DISTANCE = 1
BREATHING_SPACE = 2


def generate_java(seed, mode, collapse) -> PommermanState:
    """A new java-ruleset game: board, hidden items and agents at their corners.

    Args:
        seed: int or np.random.SeedSequence (only ``np.random.default_rng(seed)`` is used).
        mode: MODE_FFA / MODE_TEAM, or "ffa" / "team".
        collapse: bool, the COLLAPSE_BOARD switch.
    Returns: PommermanState (ruleset java, 800 steps) with meta[M_INITIAL_WOOD] set.
    """
    from ._layout import MODES
    if isinstance(mode, str):
        mode = MODES[mode]
    rng = np.random.default_rng(seed)
    board = _make_board_java(rng)
    s = empty_state(int(mode), RULESET_JAVA, int(bool(collapse)), DEFAULT_MAX_STEPS)
    s.board[:] = board.reshape(-1)
    wood = np.flatnonzero(s.board == WOOD)
    chosen = rng.choice(wood, size=min(JAVA_BOARD.items, wood.size), replace=False)
    kinds = rng.integers(0, 3, size=chosen.size)
    for c, kind in zip(chosen, kinds):
        s.items[c] = (EXTRA_BOMB, INCR_RANGE, KICK)[int(kind)]
    for i, (r, c) in enumerate(START_CELLS):
        s.agents[i, A_ROW] = r
        s.agents[i, A_COL] = c
        s.board[r * BOARD_SIZE + c] = AGENT0 + i
    s.meta[M_INITIAL_WOOD] = int(wood.size)
    return s


def _make_board_java(rng) -> np.ndarray:
    """An 11x11 int64 board (0 passage, 1 rigid, 2 wood; agents not placed).

    Follows LevelGenerator.make: the main diagonal stays free; the agents'
    cells and an L of BREATHING_SPACE free cells on each side of every corner
    agent are excluded; the 12 fixed wood cells (rows/columns 1 and 9, cells
    4..6) are placed; then rigid pairs and wood pairs, each at a random
    available cell and its mirror about the main diagonal, until 20 of each.
    """
    n = BOARD_SIZE
    loc = CORNER_DISTANCE
    b = np.zeros((n, n), dtype=np.int64)
    avail = {(r, c) for r in range(n) for c in range(n) if r != c}
    corners = ((loc, loc), (n - 1 - loc, loc), (n - 1 - loc, n - 1 - loc), (loc, n - 1 - loc))
    for r, c in corners:
        avail.discard((r, c))
        for i in range(1, BREATHING_SPACE + 1):
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                rr, cc = r + dr * i, c + dc * i
                # only the two sides pointing into the board
                if loc <= rr <= n - 1 - loc and loc <= cc <= n - 1 - loc:
                    avail.discard((rr, cc))
    start = loc + BREATHING_SPACE + 1
    n_wood = JAVA_BOARD.wood
    for i in range(n - 2 * start):
        x0, y0 = start + i, loc
        x1, y1 = n - 1 - x0, n - 1 - loc
        for r, c in ((x0, y0), (y0, x0), (x1, y1), (y1, x1)):
            b[r, c] = WOOD
            avail.discard((r, c))
        n_wood -= 4
    cells = sorted(avail)
    order = rng.permutation(len(cells))
    taken = set()
    n_rigid = JAVA_BOARD.rigid
    for k in order:
        if n_rigid <= 0 and n_wood <= 0:
            break
        r, c = cells[k]
        if (r, c) in taken:
            continue
        taken.add((r, c))
        taken.add((c, r))
        if n_rigid > 0:
            b[r, c] = b[c, r] = RIGID
            n_rigid -= 2
        else:
            b[r, c] = b[c, r] = WOOD
            n_wood -= 2
    return b


__all__ = ["BoardCounts", "CANONICAL_BOARD", "JAVA_BOARD", "START_CELLS", "generate_canonical",
           "generate_java", "inaccessible_passages"]
