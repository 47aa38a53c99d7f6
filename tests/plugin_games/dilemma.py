"""A repeated prisoner's dilemma, a plugin game with simultaneous moves (``games/CONTRACT.md``).

Both players choose at once, ``ROUNDS`` times: cooperate (0) or defect (1); each
round pays (3, 3) for mutual cooperation, (1, 1) for mutual defection, and 5 to a
lone defector against 0. Returns are the total payoffs scaled to [0, 1] (divided by
``5 * ROUNDS``). Defecting is dominant in every round. Import path
``plugin_games.dilemma:Dilemma``.

State layout (``DilemmaState``): ``payoff float64[2]`` (totals so far), ``meta
int64[1]`` (rounds played).
"""
from __future__ import annotations

import json
from typing import NamedTuple

import numba as nb
import numpy as np

from games.api import LOSS, TIE, WIN, Game
from games.generic import SIMULTANEOUS, GenericKernels
from games.validation import config_class

ROUNDS = 3
COOPERATE, DEFECT = 0, 1
PAYOFF = np.array([[[3, 3], [0, 5]], [[5, 0], [1, 1]]], dtype=np.float64)  # [a0, a1] -> (p0, p1)


class DilemmaState(NamedTuple):
    payoff: np.ndarray
    meta: np.ndarray


@nb.njit(cache=True)
def copy_state(state):
    return DilemmaState(state.payoff.copy(), state.meta.copy())


@nb.njit(cache=True)
def copy_into(dst, src):
    dst.payoff[:] = src.payoff
    dst.meta[:] = src.meta


@nb.njit(cache=True)
def current_player(state):
    return SIMULTANEOUS


@nb.njit(cache=True)
def is_terminal(state):
    return state.meta[0] >= ROUNDS


@nb.njit(cache=True)
def legal_actions(state, player):
    out = np.zeros(2, dtype=np.bool_)
    if state.meta[0] < ROUNDS:
        out[:] = True
    return out


@nb.njit(cache=True)
def step(state, joint):
    a0, a1 = joint[0], joint[1]
    state.payoff[0] += PAYOFF[a0, a1, 0]
    state.payoff[1] += PAYOFF[a0, a1, 1]
    state.meta[0] += 1


@nb.njit(cache=True)
def returns(state):
    out = np.zeros(2, dtype=np.float64)
    if state.meta[0] >= ROUNDS:
        out[0] = state.payoff[0] / (5.0 * ROUNDS)
        out[1] = state.payoff[1] / (5.0 * ROUNDS)
    return out


KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                         legal_actions=legal_actions, step=step, is_terminal=is_terminal, returns=returns,
                         simultaneous=True)


@config_class
class DilemmaConfig:
    """The dilemma has no options."""


class Dilemma(Game):
    num_players = 2
    num_actions = 2
    action_names = ("cooperate", "defect")
    Config = DilemmaConfig
    generic_kernels = KERNELS
    searchable = True
    perfect_information = True

    def new_state(self, seed):
        return DilemmaState(np.zeros(2), np.zeros(1, dtype=np.int64))

    def apply(self, joint):
        step(self.state, np.asarray(joint, dtype=np.int64))

    def observation(self, player):
        return copy_state(self.state)

    def legal_actions(self, player):
        return legal_actions(self.state, int(player))

    @property
    def done(self):
        return bool(is_terminal(self.state))

    @property
    def step_count(self):
        return int(self.state.meta[0])

    def returns(self):
        return returns(self.state)

    def outcomes(self):
        a, b = self.state.payoff
        return [TIE, TIE] if a == b else [WIN, LOSS] if a > b else [LOSS, WIN]

    def copy(self):
        other = type(self)(self.config)
        other.state = copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self):
        return json.dumps({"payoff": self.state.payoff.tolist(), "meta": self.state.meta.tolist()})

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        game = cls(DilemmaConfig())
        game.state = DilemmaState(np.array(d["payoff"], dtype=np.float64), np.array(d["meta"], dtype=np.int64))
        return game

    def render(self, state=None):
        s = self.state if state is None else state
        return f"round {int(s.meta[0])} of {ROUNDS}, payoffs {s.payoff.tolist()}"
