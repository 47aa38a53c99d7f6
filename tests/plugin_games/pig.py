"""Pig to 20 points, a plugin game with chance nodes (``games/CONTRACT.md``).

The player to move rolls a die or holds. A roll is a chance node: 1 loses the
turn's points and passes the turn, 2..6 add to them; holding banks them and passes
the turn. The first to 20 banked points wins (+1 / -1). Import path
``plugin_games.pig:Pig``.

State layout (``PigState``)::

    scores  int64[2]   banked points
    meta    int64[5]   [M_TO_MOVE, M_TURN_TOTAL, M_ROLLING (1: the die is in the air,
                       a chance node), M_WINNER (-1 while the game runs), M_PLIES]
    rng     uint64[2]  the game's own generator (games.rng), for the rolls of a
                       played game; searches branch on the outcomes instead
"""
from __future__ import annotations

import json
from typing import NamedTuple

import numba as nb
import numpy as np

from games.api import LOSS, WIN, Game
from games.generic import CHANCE_PLAYER, GenericKernels
from games.rng import make_rng, rng_integer
from games.validation import config_class

TARGET = 20
ROLL, HOLD = 0, 1
M_TO_MOVE, M_TURN_TOTAL, M_ROLLING, M_WINNER, M_PLIES = 0, 1, 2, 3, 4
FACES = 6


class PigState(NamedTuple):
    scores: np.ndarray
    meta: np.ndarray
    rng: np.ndarray


@nb.njit(cache=True)
def copy_state(state):
    return PigState(state.scores.copy(), state.meta.copy(), state.rng.copy())


@nb.njit(cache=True)
def copy_into(dst, src):
    dst.scores[:] = src.scores
    dst.meta[:] = src.meta
    dst.rng[:] = src.rng


@nb.njit(cache=True)
def current_player(state):
    if state.meta[M_ROLLING]:
        return CHANCE_PLAYER
    return state.meta[M_TO_MOVE]


@nb.njit(cache=True)
def is_terminal(state):
    return state.meta[M_WINNER] >= 0


@nb.njit(cache=True)
def legal_actions(state, player):
    out = np.zeros(2, dtype=np.bool_)
    if not is_terminal(state) and not state.meta[M_ROLLING] and player == state.meta[M_TO_MOVE]:
        out[:] = True
    return out


@nb.njit(cache=True)
def step(state, joint):
    player = state.meta[M_TO_MOVE]
    state.meta[M_PLIES] += 1
    if joint[player] == ROLL:
        state.meta[M_ROLLING] = 1
        return
    state.scores[player] += state.meta[M_TURN_TOTAL]
    state.meta[M_TURN_TOTAL] = 0
    if state.scores[player] >= TARGET:
        state.meta[M_WINNER] = player
    state.meta[M_TO_MOVE] = 1 - player


@nb.njit(cache=True)
def chance_outcomes(state):
    return np.full(FACES, 1.0 / FACES)


@nb.njit(cache=True)
def apply_chance(state, outcome):
    """The die shows ``outcome + 1``."""
    state.meta[M_ROLLING] = 0
    if outcome == 0:
        state.meta[M_TURN_TOTAL] = 0
        state.meta[M_TO_MOVE] = 1 - state.meta[M_TO_MOVE]
    else:
        state.meta[M_TURN_TOTAL] += outcome + 1


@nb.njit(cache=True)
def returns(state):
    out = np.zeros(2, dtype=np.float64)
    w = state.meta[M_WINNER]
    if w >= 0:
        out[w] = 1.0
        out[1 - w] = -1.0
    return out


KERNELS = GenericKernels(copy_state=copy_state, copy_into=copy_into, current_player=current_player,
                         legal_actions=legal_actions, step=step, is_terminal=is_terminal, returns=returns,
                         chance_outcomes=chance_outcomes, apply_chance=apply_chance, max_chance_outcomes=FACES)


@config_class
class PigConfig:
    """Pig has no options."""


class Pig(Game):
    num_players = 2
    num_actions = 2
    action_names = ("roll", "hold")
    Config = PigConfig
    generic_kernels = KERNELS
    searchable = True
    perfect_information = True

    def new_state(self, seed):
        return PigState(np.zeros(2, dtype=np.int64), np.array([0, 0, 0, -1, 0], dtype=np.int64), make_rng(seed))

    def apply(self, joint):
        if self.is_chance_node():  # a played game rolls with its own generator
            apply_chance(self.state, rng_integer(self.state.rng, FACES))
        else:
            step(self.state, np.asarray(joint, dtype=np.int64))

    def is_chance_node(self):
        return bool(self.state.meta[M_ROLLING]) and not self.done

    def chance_outcomes(self):
        return chance_outcomes(self.state)

    def apply_chance(self, outcome):
        apply_chance(self.state, int(outcome))

    def acting_players(self):
        if self.done or self.is_chance_node():
            return []
        return [int(self.state.meta[M_TO_MOVE])]

    def observation(self, player):
        return copy_state(self.state)

    def legal_actions(self, player):
        return legal_actions(self.state, int(player))

    @property
    def done(self):
        return bool(is_terminal(self.state))

    @property
    def step_count(self):
        return int(self.state.meta[M_PLIES])

    def returns(self):
        return returns(self.state)

    def outcomes(self):
        return [WIN if r > 0 else LOSS for r in self.returns()]

    def copy(self):
        other = type(self)(self.config)
        other.state = copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self):
        return json.dumps({"scores": self.state.scores.tolist(), "meta": self.state.meta.tolist(),
                           "rng": [str(int(x)) for x in self.state.rng]})

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        game = cls(PigConfig())
        game.state = PigState(np.array(d["scores"], dtype=np.int64), np.array(d["meta"], dtype=np.int64),
                              np.array([int(x) for x in d["rng"]], dtype=np.uint64))
        return game

    def render(self, state=None):
        s = self.state if state is None else state
        return (f"scores {s.scores.tolist()}, player {int(s.meta[M_TO_MOVE])} to move with "
                f"{int(s.meta[M_TURN_TOTAL])} this turn" + (" (rolling)" if s.meta[M_ROLLING] else ""))
