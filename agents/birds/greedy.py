"""The greedy baseline of the bird game (rule in :func:`agents.birds.features.greedy_action`)."""
from __future__ import annotations

from agents.registry import register

from ._agent import BirdsAgent
from games.birds.kernels import M_TO_MOVE

from .features import greedy_action


@register
class BirdsGreedyAgent(BirdsAgent):
    """Play the best affordable bird; else gain food for a dear hand bird, else
    take the best tray bird (no search, deterministic)."""

    name = "birds_greedy"

    def decide(self, observation):
        return int(greedy_action(observation, int(observation.meta[M_TO_MOVE]))), 0
