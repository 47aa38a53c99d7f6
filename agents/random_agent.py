"""Agents without search, for any registered game: uniform random."""
from __future__ import annotations

import numpy as np

from .api import Agent
from .registry import register


@register
class RandomAgent(Agent):
    """Uniformly random over the legal actions (own generator, seeded per game)."""

    name = "random"
    uses_forward_model = False

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._legal_actions = None

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        if self._legal_actions is None and self.game_config is not None:
            from games.registry import game_kernels

            # At the first game, not at construction: a worker builds its agents before
            # the game, and a plugin game's kernels are registered when it is loaded.
            self._legal_actions = game_kernels(self.game_config).legal_actions
        self._rng = np.random.default_rng(seed)

    def decide(self, observation):
        mask = self._legal_actions(observation, self.seat)
        legal = np.flatnonzero(mask)
        return int(self._rng.choice(legal)), 0
