"""One-step look-ahead for Pommerman (the Java framework's ``OSLAPlayer``)."""
from __future__ import annotations

from typing import Annotated

import numba as nb
import numpy as np
from pydantic import Field

from games.pommerman.kernels import (
    M_RULESET, N_ACTIONS, RULESET_CANONICAL, RULESET_JAVA, STOP, copy_into, require_layout_shapes,
)
from games.validation import Real, config_class

from ..registry import register
from ..search import tie_noise
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import advance, prepare_search_in_frame, search_value


@nb.njit(cache=True, inline="always")
def osla_search(observation, player, root, scratch, epsilon, rng, quirks, max_wood, ruleset):
    """Each of the six actions for one tick with random opponents, scored by the
    heuristic (tie noise); returns (best action, 6 simulations). ``quirks``,
    ``max_wood``: the profile's switches (see ``_common.prepare_search``); ``ruleset``:
    the observation's, a constant (inlined into one kernel per ruleset)."""
    require_layout_shapes(scratch)  # once per decision: advance steps it unchecked
    hidden, joint, n_hidden, root_wood, rng = prepare_search_in_frame(root, observation, rng, quirks,
                                                                      max_wood)
    best = 0
    best_value = -np.inf
    for action in range(N_ACTIONS):
        copy_into(scratch, root)
        advance(scratch, player, action, joint, hidden, n_hidden, rng, ruleset)
        value = tie_noise(search_value(root, root_wood, scratch, player, quirks), epsilon, rng)
        if value > best_value:
            best_value = value
            best = action
    return best, N_ACTIONS


@nb.njit(cache=True)
def osla_decide_canonical(observation, player, root, scratch, epsilon, rng, quirks=0, max_wood=0):
    """:func:`osla_search` for an observation of the canonical ruleset."""
    return osla_search(observation, player, root, scratch, epsilon, rng, quirks, max_wood,
                       RULESET_CANONICAL)


@nb.njit(cache=True)
def osla_decide_java(observation, player, root, scratch, epsilon, rng, quirks=0, max_wood=0):
    """:func:`osla_search` for an observation of the java ruleset."""
    return osla_search(observation, player, root, scratch, epsilon, rng, quirks, max_wood, RULESET_JAVA)


#: The decision kernel by the observation's ruleset (each compiles only its rules).
OSLA_DECIDE = {RULESET_CANONICAL: osla_decide_canonical, RULESET_JAVA: osla_decide_java}


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
    compile_seconds = 5.0  # CPU s of a first decision beyond the game's kernels, alone in a fresh cache, 2026-12-06 14:10 (pommerman_compile_profile.py --agents osla,osla,osla,osla)
    Config = OSLAConfig

    def decide(self, observation):
        if not can_act(observation, self.seat):
            return STOP, 0
        decide = OSLA_DECIDE[int(observation.meta[M_RULESET])]
        action, n = decide(observation, self.seat, self._root, self._scratch, float(self.config.epsilon),
                           self._rng, self.quirks, self.model_max_wood(observation))
        return int(action), int(n)
