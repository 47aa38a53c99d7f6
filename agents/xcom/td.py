"""MCTS guided by TD(0)-learned values: MCTS-TD, MF+FA and Conv-AE+FA.

All three are the one driver of ``mcts.py`` with a value term (``_value.py``):
when the search expands a child of one of the agent's own decision nodes (the
command ``c`` from state ``s`` to the afterstate ``s'``), the command's value
is stored as the child's ``node_bonus`` and added, times ``value_weight``, to
its UCT score. ``value_target`` says how the value is read:

* ``"td_target"`` (default): the command's TD target on the reward scale,
  ``node_bonus = r(s, c) + gamma * V(s')``, where ``r(s, c)`` is the agent's
  reward from the command itself (+10 for a kill, else 0) and ``V(s') = 0``
  when the command ends the round: the quantity the learning below moves
  ``V`` of the previous afterstate towards, so a kill's child carries its +10;
* ``"next_state"``: ``node_bonus = V(s')`` alone (the reading before issue 23;
  the command's own reward is left out). Recorded games of this reading replay
  with it unchanged.

UCT selection at the agent's own nodes then scores
``q_norm + K * sqrt(log(N + 1) / n) + value_weight * node_bonus``.

Learning (online, once per decision, in numba): after each of its commands
the agent computes the features of the afterstate ``x_t`` and makes one
TD(0) step on the previous one::

    r     = own reward at x_t - own reward at x_{t-1}   (kills on both sides)
    delta = r + gamma * V(x_t) - V(x_{t-1})
    w    += alpha * delta * phi(x_{t-1})

and at the end of the round a last step with ``V = 0`` after the terminal
state. The weights start uniform in [0, 1] (drawn from the agent's seed of
the first round of a series) and are the learned state carried from round to
round of a run (``learned_state`` -> ``{"weights": ...}``, saved by the
cluster as ``.npz``); a new run starts from fresh agents, hence fresh weights.

Conv-AE+FA's encoder comes from ``params.encoder`` (``builtin``: the shipped
encoder for the board size, or an ``.npz`` path) or from the seat's
``seed_population`` (an ``.npz`` file or MLflow artifact URI holding the
encoder arrays, optionally ``weights`` too), which the cluster loads once,
checks before any game (``check_for_game``) and ships to the workers through
the object store.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numba as nb
import numpy as np
from pydantic import Field, model_validator

from games.rng import make_rng
from games.validation import Real, config_class, one_of
from games.xcom.kernels import (
    M_MAX_MOVE, M_SIZE, XcomState, apply_action, copy_into, decode_action, new_dist,
)

from ..registry import register
from ._value import (
    MANUAL_FEATURES, TABLE_SIZE, VALUE_CONV, VALUE_MANUAL, VALUE_TABLE, VALUE_TARGETS, features,
    linear_value, td_update,
)
from .encoder import (
    ENCODER_KEYS, builtin_encoder_arrays, check_encoder_arrays, encoder_from_arrays,
    load_encoder_arrays,
)
from .mcts import MOVE_ENCODINGS, MCTSConfig, ValueWeight, XcomSearchAgent


@nb.njit(cache=True)
def afterstate_features(afterstate, observation, action, player, kind, enc, phi):
    """Play ``action`` on a copy of ``observation`` (into ``afterstate``) and fill
    ``phi`` with its features; returns (key, own reward at the afterstate)."""
    copy_into(afterstate, observation)
    apply_action(afterstate, action)
    unit = decode_action(observation, action)[0]
    n = afterstate.meta[M_SIZE]
    m = afterstate.meta[M_MAX_MOVE]
    cells = np.empty(2 * m * m + 2 * m + 1, dtype=np.int64)
    board_scratch = np.zeros((n, n))
    key = features(afterstate, player, unit, kind, enc, cells, new_dist(afterstate),
                   board_scratch, phi)
    return key, afterstate.rewards[player]


@config_class
class TDConfig(MCTSConfig):
    """MCTS plus a TD(0)-learned value term (shared by MCTS-TD, MF+FA, Conv-AE+FA)."""

    alpha: Annotated[Real, Field(gt=0, le=1)] = 0.01
    """TD(0) learning rate, in (0, 1]."""
    gamma: Annotated[Real, Field(ge=0, le=1)] = 0.9
    """TD(0) discount of the next afterstate's value, in [0, 1]."""
    value_weight: ValueWeight = 0.5
    """Weight of the command's value (``value_target``) added to a child's UCT score
    (rewards are +-10 per kill, UCT's mean values are normalised to [0, 1], so a kill
    weighs +5); 0 disables the guidance. 0.5 from the sweeps of issue 23 (Conv-AE+FA vs
    MCTS wins most at 0.5-1.0 on 6x6 and 0.2-1.0 on 18x18; 0.05 before them:
    ``jobs/xcom/FINDINGS.md``)."""
    value_target: Annotated[str, one_of(VALUE_TARGETS)] = "td_target"
    """How the search reads a command ``c`` from ``s`` to the afterstate ``s'``:
    ``"td_target"``: ``r(s, c) + gamma * V(s')`` (the command's own reward plus the
    discounted learned value; ``V = 0`` when ``s'`` ends the round); ``"next_state"``:
    ``V(s')`` alone (the reading before issue 23)."""
    move_encoding: Annotated[str, one_of(MOVE_ENCODINGS)] = "flat"
    """``"flat"``: one tree edge per command (unit, destination, target); ``"two_level"``:
    the unit first, then one of its commands, a unit carrying the best bonus among its
    expanded commands (``mcts.xcom_search_two_level``)."""


@config_class
class TableTDConfig(TDConfig):
    """MCTS-TD: the table over the 3x3 grid around the acting unit."""

    alpha: Annotated[Real, Field(gt=0, le=1)] = 0.1
    """TD(0) learning rate, in (0, 1] (one table entry moves per step)."""


@config_class
class ConvAEConfig(TDConfig):
    """Conv-AE+FA: linear TD over the convolutional encoder's features."""

    alpha: Annotated[Real, Field(gt=0, le=1)] = 5e-4
    """TD(0) learning rate, in (0, 1]. The encoder's features are unbounded (about 1.5 in
    magnitude on 6x6, 7.5 on 18x18), and linear TD is stable for alpha * |phi|^2 < 2:
    5e-4 keeps that near 0.5 on 18x18."""
    encoder: Annotated[str, Field(min_length=1)] = "builtin"
    """``builtin`` (the shipped encoder for the game's board size) or the path of an
    encoder ``.npz``; a lineup ``seed_population`` holding encoder arrays overrides it."""

    @model_validator(mode="after")
    def _encoder_file(self):
        if self.encoder != "builtin":
            path = Path(self.encoder).expanduser()
            if not path.is_file():
                raise ValueError(f"encoder: file not found: {self.encoder}")
            try:
                check_encoder_arrays(load_encoder_arrays(path))
            except ValueError as exc:
                raise ValueError(f"encoder: {self.encoder}: {exc}") from None
        return self


class TDAgent(XcomSearchAgent):
    """The learning glue: weights, the previous afterstate, one TD step per decision."""

    Config = TDConfig

    @classmethod
    def learns(cls, config) -> bool:
        return True  # the value weights, by TD(0) after every game

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._value_weight = float(config.value_weight)
        self._value_target = VALUE_TARGETS[config.value_target]
        self._gamma = float(config.gamma)
        self._weights = None
        self._afterstate: XcomState = self._scratch.__class__(*(a.copy() for a in self._scratch))
        self._phi = np.zeros(max(self.weight_count(), 1))
        self._prev_phi = np.zeros_like(self._phi)
        self._prev_key = -1
        self._prev_reward = None
        self.td_updates = 0

    @classmethod
    def num_weights(cls, game_config, encoder_features: int | None = None) -> int:
        """Length of the weight vector for ``game_config``."""
        raise NotImplementedError

    def weight_count(self) -> int:
        return self.num_weights(self.game_config)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        if self._weights is None:  # first round of a series: uniform in [0, 1]
            init = np.random.default_rng(np.random.SeedSequence(
                seed.entropy, spawn_key=(*seed.spawn_key, 7)) if isinstance(seed, np.random.SeedSequence)
                else seed)
            self._weights = init.uniform(0.0, 1.0, self._phi.shape[0])
        self._prev_reward = None

    def decide(self, observation):
        action, iterations = self.search(observation)
        key, reward = afterstate_features(self._afterstate, observation, action, self.seat,
                                          self.value_kind, self._encoder, self._phi)
        value = linear_value(self._weights, self._phi, key)
        if self._prev_reward is not None:
            td_update(self._weights, self._prev_phi, self._prev_key, reward - self._prev_reward,
                      value, float(self.config.alpha), float(self.config.gamma))
            self.td_updates += 1
        self._prev_phi[:] = self._phi
        self._prev_key = int(key)
        self._prev_reward = float(reward)
        return action, iterations

    def end_game(self, observation, returns):
        if self._prev_reward is not None:
            td_update(self._weights, self._prev_phi, self._prev_key,
                      float(observation.rewards[self.seat]) - self._prev_reward, 0.0,
                      float(self.config.alpha), float(self.config.gamma))
            self.td_updates += 1
        self._prev_reward = None

    # --- learned state --------------------------------------------------------
    def learned_state(self):
        if self._weights is None:
            return {"weights": np.zeros(0)}  # nothing learned yet (no game started)
        return {"weights": self._weights.copy()}

    def load_learned_state(self, arrays):
        weights = arrays.get("weights")
        if weights is not None and np.asarray(weights).size:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != self._phi.shape:
                raise ValueError(f"weights: expected shape {list(self._phi.shape)}, got {list(weights.shape)}")
            self._weights = weights.copy()

    @classmethod
    def check_learned_state(cls, config, arrays):
        weights = arrays.get("weights")
        if weights is None:
            raise ValueError(f"agent {cls.name!r}: expected an array 'weights'")
        if not np.isfinite(np.asarray(weights, dtype=np.float64)).all():
            raise ValueError("weights: must be finite")

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        """Raise ValueError if this agent cannot play ``game_config`` with ``arrays``
        (a seed population) before any game starts."""
        if arrays is not None and "weights" in arrays:
            n = cls.num_weights(game_config, _features_of(arrays))
            if np.asarray(arrays["weights"]).shape != (n,):
                raise ValueError(f"weights: expected shape [{n}] for this game, got "
                                 f"{list(np.asarray(arrays['weights']).shape)}")


def _features_of(arrays) -> int | None:
    if arrays is not None and "fc_w" in arrays:
        return int(np.asarray(arrays["fc_w"]).shape[0])
    return None


@register
class MCTSTDAgent(TDAgent):
    """MCTS-TD: tabular TD(0) over the 3x3 grid around the acting unit."""

    name = "xcom_mcts_td"
    Config = TableTDConfig
    value_kind = VALUE_TABLE

    @classmethod
    def num_weights(cls, game_config, encoder_features=None):
        return TABLE_SIZE


@register
class MFFAAgent(TDAgent):
    """MF+FA: linear TD(0) over five manual features."""

    name = "xcom_mf_fa"
    Config = TDConfig
    value_kind = VALUE_MANUAL

    @classmethod
    def num_weights(cls, game_config, encoder_features=None):
        return MANUAL_FEATURES


@register
class ConvAEFAAgent(TDAgent):
    """Conv-AE+FA: linear TD(0) over the convolutional encoder's features."""

    name = "xcom_convae_fa"
    Config = ConvAEConfig
    value_kind = VALUE_CONV

    def __init__(self, config, budget, game_config):
        self._encoder_arrays = self.encoder_arrays_for(config, game_config)
        super().__init__(config, budget, game_config)
        self._encoder = encoder_from_arrays(self._encoder_arrays, game_config.size)

    @staticmethod
    def encoder_arrays_for(config, game_config) -> dict:
        arrays = (builtin_encoder_arrays(game_config.size) if config.encoder == "builtin"
                  else load_encoder_arrays(config.encoder))
        try:
            check_encoder_arrays(arrays, game_config.size)
        except ValueError as exc:
            raise ValueError(f"encoder: {config.encoder}: {exc}") from None
        return arrays

    @classmethod
    def num_weights(cls, game_config, encoder_features=None):
        if encoder_features is None:
            raise ValueError("encoder: unknown feature count")
        return int(encoder_features)

    def weight_count(self) -> int:
        return self._features_count()

    def _features_count(self):
        return int(np.asarray(self._encoder_arrays["fc_w"]).shape[0])

    def load_learned_state(self, arrays):
        if any(k in arrays for k in ENCODER_KEYS):  # a seed population carrying an encoder
            self._encoder_arrays = {k: np.asarray(arrays[k]) for k in ENCODER_KEYS}
            self._encoder = encoder_from_arrays(self._encoder_arrays, self.game_config.size)
            f = self._features_count()
            if self._phi.shape[0] != f:
                self._phi = np.zeros(f)
                self._prev_phi = np.zeros(f)
                self._weights = None
        super().load_learned_state(arrays)

    @classmethod
    def check_learned_state(cls, config, arrays):
        if any(k in arrays for k in ENCODER_KEYS):
            check_encoder_arrays(arrays)
            if "weights" in arrays and np.asarray(arrays["weights"]).shape != (_features_of(arrays),):
                raise ValueError(f"weights: expected shape [{_features_of(arrays)}], got "
                                 f"{list(np.asarray(arrays['weights']).shape)}")
            return
        super().check_learned_state(config, arrays)

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None):
        if arrays is not None and any(k in arrays for k in ENCODER_KEYS):
            check_encoder_arrays(arrays, game_config.size)
            features_count = _features_of(arrays)
        else:
            try:
                features_count = _features_of(cls.encoder_arrays_for(config, game_config))
            except ValueError as exc:
                raise ValueError(f"params.{exc}") from None
        if arrays is not None and "weights" in arrays and \
                np.asarray(arrays["weights"]).shape != (features_count,):
            raise ValueError(f"weights: expected shape [{features_count}], got "
                             f"{list(np.asarray(arrays['weights']).shape)}")
