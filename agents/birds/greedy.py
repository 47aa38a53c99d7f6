"""The baselines of the bird game besides ``random``: the greedy rule
(:func:`agents.birds.features.greedy_action`) and the random player of the public
project's kind (:func:`agents.birds.features.typed_random_action`)."""
from __future__ import annotations

from agents.registry import register

from ._agent import BirdsAgent
from games.birds.kernels import M_TO_MOVE

from .features import greedy_action, typed_random_action


@register
class BirdsGreedyAgent(BirdsAgent):
    """Play the best affordable bird; else gain food for a dear hand bird, else
    take the best tray bird (no search, deterministic)."""

    name = "birds_greedy"

    def decide(self, observation):
        return int(greedy_action(observation, int(observation.meta[M_TO_MOVE]))), 0


@register
class BirdsTypedRandomAgent(BirdsAgent):
    """Uniformly random over the action types (play, food, draw) with a legal action, then
    uniformly within the type: the public project's random player (``random`` is flat
    over all legal actions)."""

    name = "birds_random_typed"

    def decide(self, observation):
        return int(typed_random_action(observation, int(observation.meta[M_TO_MOVE]), self.rng)), 0
