"""Tic-tac-toe rules as pure functions over a state of two small arrays.

State layout (``TicTacToeState``)::

    board  int8[9]   cells 0..8, row by row:   0 | 1 | 2
                                               3 | 4 | 5
                                               6 | 7 | 8
                     EMPTY (-1), or the player (0 = X, 1 = O) who marked it
    meta   int64[3]  [M_TO_MOVE, M_PLIES, M_WINNER]; the winner is NO_WINNER (-1)
                     while the game runs, 0 or 1, or DRAW (2)

Plain numpy: a plugin game needs no numba (Arena's own games use it for speed).
An action is the cell to mark. ``legal_actions(state, player)`` is what agents that
play any game call (Arena's ``random``, the example's ``bandit``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

EMPTY, NO_WINNER, DRAW = -1, -1, 2
M_TO_MOVE, M_PLIES, M_WINNER = 0, 1, 2
NUM_ACTIONS = 9
LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])


class TicTacToeState(NamedTuple):
    board: np.ndarray
    """int8[9]: EMPTY or the player who marked the cell."""
    meta: np.ndarray
    """int64[3]: player to move, plies played (after the opening), winner (NO_WINNER, 0, 1 or DRAW)."""


def init(opening_cells=()) -> TicTacToeState:
    """An empty board, X to move, with X and then O already on ``opening_cells``
    (a seeded opening: the same strength for both players, a different game per seed)."""
    board = np.full(NUM_ACTIONS, EMPTY, dtype=np.int8)
    for i, cell in enumerate(opening_cells):
        board[int(cell)] = i % 2
    meta = np.array([len(opening_cells) % 2, 0, NO_WINNER], dtype=np.int64)
    return TicTacToeState(board, meta)


def copy_state(state: TicTacToeState) -> TicTacToeState:
    return TicTacToeState(state.board.copy(), state.meta.copy())


def is_terminal(state: TicTacToeState) -> bool:
    return bool(state.meta[M_WINNER] != NO_WINNER)


def legal_actions(state: TicTacToeState, player: int) -> np.ndarray:
    """bool[9]: the empty cells for the player to move (nothing for the other, or at the end)."""
    if is_terminal(state) or player != state.meta[M_TO_MOVE]:
        return np.zeros(NUM_ACTIONS, dtype=np.bool_)
    return state.board == EMPTY


def step(state: TicTacToeState, cell: int) -> None:
    """The player to move marks ``cell`` (legal: the caller checked), in place."""
    player = int(state.meta[M_TO_MOVE])
    state.board[cell] = player
    state.meta[M_PLIES] += 1
    if (state.board[LINES] == player).all(axis=1).any():
        state.meta[M_WINNER] = player
    elif not (state.board == EMPTY).any():
        state.meta[M_WINNER] = DRAW
    state.meta[M_TO_MOVE] = 1 - player


def returns(state: TicTacToeState) -> np.ndarray:
    """float64[2]: +1 the winner, -1 the loser, 0 both for a draw or a running game."""
    out = np.zeros(2, dtype=np.float64)
    winner = int(state.meta[M_WINNER])
    if winner in (0, 1):
        out[winner], out[1 - winner] = 1.0, -1.0
    return out
