"""Baselines without search: a greedy Mr X and greedy seekers (random play for
either side is the generic ``random`` agent).

* ``sy_greedy_mrx``: the move farthest from the nearest detective (no double-move
  card; a black ticket only when no other ticket moves him), ties at random.
* ``sy_greedy_seekers``: the detective to move goes where the nearest possible
  location of Mr X is closest (ties at random); it never reads his station.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.scotland_yard.kernels import M_TO_MOVE, NUM_ACTIONS, legal_actions_into

from ..api import NoConfig
from ..registry import register
from ..search import tie_noise
from ._common import playout_mrx_action
from .mcts_mrx import ScotlandYardAgent


@nb.njit(cache=True)
def greedy_seeker_action(observation, rng):
    """The move of the detective to move that minimises its distance to the
    nearest possible location (``observation.possible``); -1 if it cannot move."""
    p = observation.meta[M_TO_MOVE]
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    if legal_actions_into(observation, p, mask) == 0:
        return -1
    u = observation.positions[p]
    best = -1
    best_score = 1e18
    for a in range(NUM_ACTIONS):
        if not mask[a]:
            continue
        v = observation.neighbours[u, a >> 1]
        nearest = 1 << 20
        for w in range(1, observation.possible.shape[0]):
            if observation.possible[w] and observation.dist_detective[v, w] < nearest:
                nearest = observation.dist_detective[v, w]
        score = tie_noise(float(nearest), 1e-3, rng)
        if score < best_score:
            best_score = score
            best = a
    return best


@nb.njit(cache=True)
def greedy_mrx_decide(observation, rng):
    """Mr X's greedy move (see the module docstring)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    return playout_mrx_action(observation, 0.0, mask, rng)


@register
class GreedyMrXAgent(ScotlandYardAgent):
    """Mr X moving away from the nearest detective."""

    name = "sy_greedy_mrx"
    Config = NoConfig
    side = 0

    def decide(self, observation):
        return int(greedy_mrx_decide(observation, self._rng)), 0


@register
class GreedySeekersAgent(ScotlandYardAgent):
    """Detectives moving toward the nearest possible location of Mr X."""

    name = "sy_greedy_seekers"
    Config = NoConfig
    side = 1

    def decide(self, observation):
        return int(greedy_seeker_action(observation, self._rng)), 0
