"""Tic-tac-toe as an Arena game: the :class:`games.api.Game` wrapper over
:mod:`arena_example.tictactoe_kernels`, loaded by Arena from the entry point
``tictactoe`` (``pyproject.toml``). It declares its ``Config`` and ``kernels``;
``reset(seed)`` places a seeded opening (one X, one O) when ``random_opening``.
"""
from __future__ import annotations

import json

import numpy as np

from games.api import LOSS, TIE, WIN, Game
from games.validation import config_class

from . import tictactoe_kernels as K


@config_class
class TicTacToeConfig:
    """Options of tic-tac-toe."""

    random_opening: bool = True
    """Start from one X and one O on cells drawn from the board seed (else an empty board)."""


class TicTacToe(Game):
    num_players = 2
    num_actions = K.NUM_ACTIONS
    Config = TicTacToeConfig
    kernels = K
    #: mcts_generic plans through the Python members (copy, apply, ...): nothing is hidden,
    #: so the observation is the state (games/CONTRACT.md)
    searchable = True
    perfect_information = True

    def new_state(self, seed):
        opening = ()
        if self.config.random_opening:
            opening = np.random.default_rng(seed).choice(K.NUM_ACTIONS, size=2, replace=False)
        return K.init(opening)

    def apply(self, joint):
        K.step(self.state, int(joint[int(self.state.meta[K.M_TO_MOVE])]))

    def observation(self, player):
        return K.copy_state(self.state)  # nothing is hidden

    def legal_actions(self, player):
        return K.legal_actions(self.state, player)

    def acting_players(self):
        return [] if self.done else [int(self.state.meta[K.M_TO_MOVE])]

    @property
    def done(self):
        return K.is_terminal(self.state)

    @property
    def step_count(self):
        return int(self.state.meta[K.M_PLIES])

    def returns(self):
        return K.returns(self.state)

    def outcomes(self):
        result = self.returns()
        return [WIN if r > 0 else LOSS if r < 0 else TIE for r in result]

    def copy(self):
        other = TicTacToe(self.config)
        other.state = K.copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self):
        return json.dumps({"config": {"random_opening": self.config.random_opening},
                           "board": self.state.board.tolist(), "meta": self.state.meta.tolist(),
                           "invalid_actions": self.invalid_actions.tolist()})

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        game = cls(TicTacToeConfig(**data["config"]))
        game.state = K.TicTacToeState(np.array(data["board"], dtype=np.int8),
                                      np.array(data["meta"], dtype=np.int64))
        game.invalid_actions = np.array(data["invalid_actions"], dtype=np.int64)
        return game

    def render(self, state=None):
        state = self.state if state is None else state
        marks = {K.EMPTY: ".", 0: "X", 1: "O"}
        return "\n".join(" ".join(marks[int(v)] for v in state.board[r * 3:r * 3 + 3]) for r in range(3))
