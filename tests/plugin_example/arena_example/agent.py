"""A pure-Python agent for any Arena game whose kernels offer ``legal_actions``.

``bandit`` learns across the games of a series which actions went with good
results: per action, the sum of the game returns of the games it was chosen in
(weighted by how often) and a count. Each decision draws, ``iterations`` times
(or until the ms budget runs out), a noisy value for every legal action
(Thompson sampling: mean + noise / sqrt(count + 1)) and plays the action that
won the most draws. All randomness comes from the seat's seed, so under an
iteration budget a game is a pure function of its seeds.
"""
from __future__ import annotations

import time
from typing import Annotated

import numpy as np
from pydantic import Field

from agents.api import Agent
from games.registry import game_kernels
from games.validation import config_class


@config_class
class BanditConfig:
    """Parameters of the bandit agent."""

    noise: Annotated[float, Field(gt=0)] = 1.0
    """Spread of an unexplored action's sampled value (shrinks as 1 / sqrt(count + 1))."""


class BanditAgent(Agent):
    name = "bandit"
    Config = BanditConfig

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self.legal_actions = game_kernels(game_config).legal_actions
        self.value_sum = self.count = None  # float64 / int64 [num_actions], sized at first sight

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.rng = np.random.default_rng(seed)
        self.chosen = []

    def decide(self, observation):
        legal = np.flatnonzero(self.legal_actions(observation, self.seat))
        if self.count is None:
            n = len(self.legal_actions(observation, self.seat))
            self.value_sum, self.count = np.zeros(n), np.zeros(n, dtype=np.int64)
        mean = self.value_sum[legal] / np.maximum(self.count[legal], 1)
        spread = self.config.noise / np.sqrt(self.count[legal] + 1.0)
        votes = np.zeros(len(legal), dtype=np.int64)
        max_iterations, seconds = self.budget.kernel_args()
        deadline = time.perf_counter() + seconds
        iterations = 0
        while iterations < max_iterations and (seconds == 0 or iterations == 0 or time.perf_counter() < deadline):
            votes[np.argmax(mean + spread * self.rng.standard_normal(len(legal)))] += 1
            iterations += 1
        action = int(legal[np.argmax(votes)])
        self.chosen.append(action)
        return action, iterations

    def end_game(self, observation, returns):
        if self.chosen:
            np.add.at(self.value_sum, self.chosen, float(returns[self.seat]))
            np.add.at(self.count, self.chosen, 1)

    @classmethod
    def learns(cls, config):
        return True

    def learned_state(self):
        if self.count is None:
            return None
        return {"value_sum": self.value_sum.copy(), "count": self.count.copy()}

    def load_learned_state(self, arrays):
        self.check_learned_state(self.config, arrays)
        self.value_sum = np.array(arrays["value_sum"], dtype=np.float64)
        self.count = np.array(arrays["count"], dtype=np.int64)

    @classmethod
    def check_learned_state(cls, config, arrays):
        if set(arrays) != {"value_sum", "count"}:
            raise ValueError(f"expected arrays value_sum and count, got {sorted(arrays)}")
        if arrays["value_sum"].shape != arrays["count"].shape or arrays["count"].ndim != 1:
            raise ValueError("value_sum and count must be 1-D arrays of one length (the game's actions)")
        if (np.asarray(arrays["count"]) < 0).any():
            raise ValueError("count: must be non-negative")
