"""Agents without search: uniform random."""
from __future__ import annotations

import numpy as np

from .api import Agent
from .registry import register


@register
class RandomAgent(Agent):
    """Uniformly random over the legal actions (own generator, seeded per game)."""

    name = "random"

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = np.random.default_rng(seed)

    def decide(self, observation):
        from games.pommerman._kernels import legal_actions
        mask = legal_actions(observation, self.seat)
        legal = np.flatnonzero(mask)
        return int(self._rng.choice(legal)), 0
