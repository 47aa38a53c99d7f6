"""One-step look-ahead for Pommerman (the Java framework's ``OSLAPlayer``)."""
from __future__ import annotations

from typing import Annotated

import numba as nb
import numpy as np
from pydantic import Field

from games.pommerman.kernels import N_ACTIONS, STOP, copy_into
from games.validation import Real, config_class

from ..registry import register
from ..search import tie_noise
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import advance, prepare_search_in_frame, search_value


@nb.njit(cache=True)
def osla_decide(observation, player, root, scratch, epsilon, rng, quirks=0, max_wood=0):
    """Each of the six actions for one tick with random opponents, scored by the
    heuristic (tie noise); returns (best action, 6 simulations). ``quirks``,
    ``max_wood``: the profile's switches (see ``_common.prepare_search``)."""
    hidden, joint, n_hidden, root_wood, rng = prepare_search_in_frame(root, observation, rng, quirks,
                                                                      max_wood)
    best = 0
    best_value = -np.inf
    for action in range(N_ACTIONS):
        copy_into(scratch, root)
        advance(scratch, player, action, joint, hidden, n_hidden, rng)
        value = tie_noise(search_value(root, root_wood, scratch, player, quirks), epsilon, rng)
        if value > best_value:
            best_value = value
            best = action
    return best, N_ACTIONS


# --------------------------------------------------------------------- the agent
@config_class
class OSLAConfig(PommermanSearchConfig):
    """One-step look-ahead (the Java framework's OSLAPlayer)."""

    epsilon: Annotated[Real, Field(ge=0, lt=0.01)] = 1e-6
    """Tie-breaking noise on the heuristic values."""


@register
class OSLAAgent(PommermanSearchAgent):
    """Each action one tick ahead with random opponents; best heuristic value.
    Always six simulations, whatever the budget."""

    name = "osla"
    Config = OSLAConfig

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        action, n = osla_decide(observation, self.seat, self._root, self._scratch,
                                float(self.config.epsilon), self._rng, self.quirks,
                                self.model_max_wood(observation))
        return int(action), int(n)
