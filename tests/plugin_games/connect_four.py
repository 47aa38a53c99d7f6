"""Connect four as a plugin game that declares the generic kernels (``games/CONTRACT.md``).

Loaded by import path, ``plugin_games.connect_four:ConnectFour`` (this directory's
parent on ``sys.path``), with no change to Arena: ``mcts_generic`` searches it through
:data:`KERNELS`, and through the Python members (``searchable``) on request.

State layout (``ConnectFourState``)::

    board  int8[42]   cell row * 7 + col, row 0 at the bottom:   35 36 37 38 39 40 41
                      EMPTY (-1), or the player (0 or 1)          ...
                      who dropped a disc there                     0  1  2  3  4  5  6
    height int8[7]    discs in each column
    meta   int64[3]   [M_TO_MOVE, M_PLIES, M_WINNER]; the winner is NO_WINNER (-1)
                      while the game runs, 0 or 1, or DRAW (2)

An action is the column to drop a disc in. Returns are +1 / -1 for a win and 0 for a
draw, as OpenSpiel's ``connect_four``, so the two searches can be timed side by side.
"""
from __future__ import annotations

import json
from typing import Annotated, NamedTuple

import numba as nb
import numpy as np
from pydantic import Field

from games.api import LOSS, TIE, WIN, Game
from games.generic import GenericKernels
from games.validation import config_class

ROWS, COLS = 6, 7
NUM_CELLS = ROWS * COLS
EMPTY, NO_WINNER, DRAW = -1, -1, 2
M_TO_MOVE, M_PLIES, M_WINNER = 0, 1, 2


class ConnectFourState(NamedTuple):
    board: np.ndarray   # int8[42]
    height: np.ndarray  # int8[7]
    meta: np.ndarray    # int64[3]


def init() -> ConnectFourState:
    return ConnectFourState(np.full(NUM_CELLS, EMPTY, dtype=np.int8), np.zeros(COLS, dtype=np.int8),
                            np.array([0, 0, NO_WINNER], dtype=np.int64))


@nb.njit(cache=True)
def copy_state(state):
    return ConnectFourState(state.board.copy(), state.height.copy(), state.meta.copy())


@nb.njit(cache=True)
def copy_into(dst, src):
    dst.board[:] = src.board
    dst.height[:] = src.height
    dst.meta[:] = src.meta


@nb.njit(cache=True)
def current_player(state):
    return state.meta[M_TO_MOVE]


@nb.njit(cache=True)
def is_terminal(state):
    return state.meta[M_WINNER] != NO_WINNER


@nb.njit(cache=True)
def legal_actions(state, player):
    """bool[7]: the columns with room, for the player to move (none for the other)."""
    out = np.zeros(COLS, dtype=np.bool_)
    if state.meta[M_WINNER] == NO_WINNER and player == state.meta[M_TO_MOVE]:
        for c in range(COLS):
            out[c] = state.height[c] < ROWS
    return out


@nb.njit(cache=True)
def _run(board, row, col, dr, dc, player):
    """Discs of ``player`` in a line from (row, col) along (dr, dc), the cell excluded."""
    n = 0
    r, c = row + dr, col + dc
    while 0 <= r < ROWS and 0 <= c < COLS and board[r * COLS + c] == player:
        n += 1
        r += dr
        c += dc
    return n


@nb.njit(cache=True)
def drop(state, col):
    """The player to move drops a disc in ``col`` (legal), in place."""
    player = state.meta[M_TO_MOVE]
    row = state.height[col]
    state.board[row * COLS + col] = player
    state.height[col] = row + 1
    state.meta[M_PLIES] += 1
    board = state.board
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        if _run(board, row, col, dr, dc, player) + _run(board, row, col, -dr, -dc, player) >= 3:
            state.meta[M_WINNER] = player
            break
    else:
        if state.meta[M_PLIES] >= NUM_CELLS:
            state.meta[M_WINNER] = DRAW
    state.meta[M_TO_MOVE] = 1 - player


@nb.njit(cache=True)
def step(state, joint):
    """The generic ``step``: the player to move plays ``joint[player]``."""
    drop(state, joint[state.meta[M_TO_MOVE]])


@nb.njit(cache=True)
def returns(state):
    out = np.zeros(2, dtype=np.float64)
    winner = state.meta[M_WINNER]
    if winner == 0 or winner == 1:
        out[winner] = 1.0
        out[1 - winner] = -1.0
    return out


KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                         legal_actions=legal_actions, step=step, is_terminal=is_terminal, returns=returns)


@config_class
class ConnectFourConfig:
    """Options of connect four."""

    opening_plies: Annotated[int, Field(ge=0, le=8)] = 0
    """Random discs dropped from the board seed before the players move (a different
    game per seed); 0: the empty board."""


class ConnectFour(Game):
    num_players = 2
    num_actions = COLS
    Config = ConnectFourConfig
    generic_kernels = KERNELS
    searchable = True
    perfect_information = True

    def new_state(self, seed):
        state = init()
        rng = np.random.default_rng(seed)
        for _ in range(self.config.opening_plies):
            drop(state, int(rng.choice(np.flatnonzero(legal_actions(state, int(state.meta[M_TO_MOVE]))))))
        state.meta[M_PLIES] = 0 if not is_terminal(state) else state.meta[M_PLIES]
        return state

    def apply(self, joint):
        step(self.state, np.asarray(joint, dtype=np.int64))

    def observation(self, player):
        return copy_state(self.state)

    def legal_actions(self, player):
        return legal_actions(self.state, int(player))

    def acting_players(self):
        return [] if self.done else [int(self.state.meta[M_TO_MOVE])]

    @property
    def done(self):
        return bool(is_terminal(self.state))

    @property
    def step_count(self):
        return int(self.state.meta[M_PLIES])

    def returns(self):
        return returns(self.state)

    def outcomes(self):
        return [WIN if r > 0 else LOSS if r < 0 else TIE for r in self.returns()]

    def copy(self):
        other = type(self)(self.config)
        other.state = copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self):
        return json.dumps({"config": {"opening_plies": self.config.opening_plies},
                           "board": self.state.board.tolist(), "height": self.state.height.tolist(),
                           "meta": self.state.meta.tolist(), "invalid_actions": self.invalid_actions.tolist()})

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        game = cls(ConnectFourConfig(**data["config"]))
        game.state = ConnectFourState(np.array(data["board"], dtype=np.int8),
                                      np.array(data["height"], dtype=np.int8),
                                      np.array(data["meta"], dtype=np.int64))
        game.invalid_actions = np.array(data["invalid_actions"], dtype=np.int64)
        return game

    def render(self, state=None):
        state = self.state if state is None else state
        marks = {EMPTY: ".", 0: "x", 1: "o"}
        rows = [" ".join(marks[int(state.board[r * COLS + c])] for c in range(COLS)) for r in range(ROWS - 1, -1, -1)]
        return "\n".join(rows)
