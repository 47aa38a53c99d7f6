"""Value terms of the XCOM agents: features of an afterstate, V = w . phi, TD(0).

An *afterstate* is the state right after one of the agent's own commands
(``unit`` is the unit that acted). Three representations, chosen by
``kind`` (data, not code, for the one search driver in ``mcts.py``):

* ``VALUE_TABLE`` (MCTS-TD): a table over the 3x3 grid around the acting
  unit: its 8 neighbours, each blocked (wall or off the board) / empty /
  friend / enemy, give ``key = sum code_i * 4**i`` (65,536 entries);
  ``V = w[key]``.
* ``VALUE_MANUAL`` (MF+FA): five features, each scaled to [0, 1]: own units
  alive / K, enemy units alive / K, own legal commands / A, rows occupied by
  own units / n, by enemy units / n (for the humans' agent: humans, aliens,
  actions, human rows, alien rows as in the study); ``V = w . phi``.
* ``VALUE_CONV`` (Conv-AE+FA): ``phi`` = the encoder's feature vector of the
  board from the agent's side (``encoder.py``); ``V = w . phi``.

TD(0): ``w <- w + alpha * (r + gamma * V(s') - V(s)) * phi(s)`` (for the
table, ``phi`` is the one-hot of the key).

The value of a command in the search (:func:`command_value`), chosen by the
``target`` reading (data as well):

* ``TARGET_TD`` (``value_target = "td_target"``, the default): the command's
  TD target, on the reward scale::

      Q(s, c) = r(s, c) + gamma * V(s')      (V(s') = 0 when s' ends the round)

  with ``r(s, c)`` the searching side's reward gained by the command itself
  (+10 for a kill, else 0) and ``s'`` its afterstate. With ``VALUE_NONE``
  (no learned V) it is the reward alone: the reward-only control.
* ``TARGET_NEXT_STATE`` (``value_target = "next_state"``, the reading before
  issue 23): ``V(s')`` alone, terminal afterstates included; the command's own
  reward is left out.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.xcom.kernels import (
    EMPTY, M_DONE, M_MAX_MOVE, M_SIZE, M_UNITS, U_ALIVE, U_COL, U_ROW, WALL, reachable,
)

from .encoder import encode_state

VALUE_NONE, VALUE_TABLE, VALUE_MANUAL, VALUE_CONV = 0, 1, 2, 3
TARGET_NEXT_STATE, TARGET_TD = 0, 1
VALUE_TARGETS = {"td_target": TARGET_TD, "next_state": TARGET_NEXT_STATE}
"""The ``value_target`` readings of the TD agents (see the module docstring)."""
TABLE_SIZE = 4 ** 8
MANUAL_FEATURES = 5
NO_KEY = -1

_DR8 = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
_DC8 = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)


@nb.njit(cache=True)
def grid_key(state, player, unit):
    """Table key of the 3x3 grid around ``unit`` of ``player`` (see the module docstring)."""
    n = state.meta[M_SIZE]
    r0 = state.units[player, unit, U_ROW]
    c0 = state.units[player, unit, U_COL]
    own = state.board[r0 * n + c0]
    key = 0
    mult = 1
    for i in range(8):
        r = r0 + _DR8[i]
        c = c0 + _DC8[i]
        if r < 0 or r >= n or c < 0 or c >= n:
            code = 0
        else:
            v = state.board[r * n + c]
            if v == WALL:
                code = 0
            elif v == EMPTY:
                code = 1
            elif v == own:
                code = 2
            else:
                code = 3
        key += code * mult
        mult *= 4
    return key


@nb.njit(cache=True)
def count_commands(state, side, cells, dist):
    """Legal commands ``side`` would have if it were to move (moves + shots)."""
    n = state.meta[M_SIZE]
    k_units = state.meta[M_UNITS]
    enemy = 1 - side
    total = 0
    for u in range(k_units):
        if state.units[side, u, U_ALIVE] == 0:
            continue
        count = reachable(state, side, u, cells, dist)
        total += count - 1
        for j in range(k_units):
            if state.units[enemy, j, U_ALIVE]:
                t = state.units[enemy, j, U_ROW] * n + state.units[enemy, j, U_COL]
                for i in range(count):  # branch-free: visibility is a coin toss
                    total += np.int64(state.sight[t, cells[i]])
    return total


@nb.njit(cache=True)
def manual_features(state, player, cells, dist, phi):
    """The five MF+FA features of ``state`` for ``player`` into phi[:5]."""
    n = state.meta[M_SIZE]
    k_units = state.meta[M_UNITS]
    m = state.meta[M_MAX_MOVE]
    n_actions = k_units * (2 * m * m + 2 * m + 1) * (k_units + 1)
    enemy = 1 - player
    own_alive = 0
    enemy_alive = 0
    own_rows = 0
    enemy_rows = 0
    for r in range(n):
        has_own = False
        has_enemy = False
        for u in range(k_units):
            if state.units[player, u, U_ALIVE] and state.units[player, u, U_ROW] == r:
                has_own = True
            if state.units[enemy, u, U_ALIVE] and state.units[enemy, u, U_ROW] == r:
                has_enemy = True
        own_rows += has_own
        enemy_rows += has_enemy
    for u in range(k_units):
        own_alive += state.units[player, u, U_ALIVE]
        enemy_alive += state.units[enemy, u, U_ALIVE]
    phi[0] = own_alive / k_units
    phi[1] = enemy_alive / k_units
    phi[2] = count_commands(state, player, cells, dist) / n_actions
    phi[3] = own_rows / n
    phi[4] = enemy_rows / n


@nb.njit(cache=True)
def features(state, player, unit, kind, enc, cells, dist, board_scratch, phi):
    """Fill ``phi`` for the afterstate ``state`` (``unit`` of ``player`` acted);
    return the table key (VALUE_TABLE) or NO_KEY."""
    if kind == VALUE_TABLE:
        return grid_key(state, player, unit)
    if kind == VALUE_MANUAL:
        manual_features(state, player, cells, dist, phi)
    elif kind == VALUE_CONV:
        encode_state(state, player, enc, board_scratch, phi)
    return NO_KEY


@nb.njit(cache=True)
def linear_value(weights, phi, key):
    """V = w[key] (table) or w . phi."""
    if key >= 0:
        return weights[key]
    v = 0.0
    for i in range(weights.shape[0]):
        v += weights[i] * phi[i]
    return v


@nb.njit(cache=True)
def afterstate_value(state, player, unit, kind, weights, enc, cells, dist, board_scratch, phi):
    """V of the afterstate ``state`` (0.0 for VALUE_NONE)."""
    if kind == VALUE_NONE:
        return 0.0
    key = features(state, player, unit, kind, enc, cells, dist, board_scratch, phi)
    return linear_value(weights, phi, key)


@nb.njit(cache=True)
def command_value(afterstate, player, unit, reward, params, weights, enc, scratch):
    """The value of one of ``player``'s commands, read from its afterstate.

    Args:
        afterstate: XcomState right after the command (``unit`` of ``player`` acted).
        reward: float, ``player``'s reward gained by the command (+10 per kill).
        params: the search's :class:`~agents.xcom.mcts.XcomParams`, of which
            ``value_target``: TARGET_TD (``reward + gamma * V(afterstate)``, V = 0 when the
            round is over) or TARGET_NEXT_STATE (``V(afterstate)``), ``gamma``, and
            ``value_kind``, with ``weights`` and ``enc`` the value term (VALUE_NONE: V = 0).
        scratch: the search's :class:`~agents.xcom.mcts.XcomScratch`, whose ``cells``,
            ``dist``, ``board`` and ``phi`` the features overwrite.
    Returns: float, on the reward scale.
    """
    target, gamma, kind = params.value_target, params.gamma, params.value_kind
    cells, dist, board_scratch, phi = scratch.cells, scratch.dist, scratch.board, scratch.phi
    if target == TARGET_NEXT_STATE:
        return afterstate_value(afterstate, player, unit, kind, weights, enc, cells, dist,
                                board_scratch, phi)
    v = 0.0
    if kind != VALUE_NONE and afterstate.meta[M_DONE] == 0:
        v = afterstate_value(afterstate, player, unit, kind, weights, enc, cells, dist,
                             board_scratch, phi)
    return reward + gamma * v


@nb.njit(cache=True)
def td_update(weights, phi, key, reward, next_value, alpha, gamma):
    """One TD(0) step on V(s) = w . phi(s) (or w[key]), in place:
    ``delta = reward + gamma * next_value - V(s)``, ``w += alpha * delta * phi``.
    Returns delta."""
    delta = reward + gamma * next_value - linear_value(weights, phi, key)
    if key >= 0:
        weights[key] += alpha * delta
    else:
        for i in range(weights.shape[0]):
            weights[i] += alpha * delta * phi[i]
    return delta
