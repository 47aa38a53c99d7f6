"""One-step look-ahead for Pommerman (the Java framework's ``OSLAPlayer``)."""
from __future__ import annotations

from typing import Annotated

import numba as nb
import numpy as np
from pydantic import Field

from games.pommerman.kernels import M_RULESET, N_ACTIONS, STOP, copy_into
from games.validation import Real, config_class

from ..registry import register
from ..search import tie_noise
from ._agent import PommermanSearchAgent, PommermanSearchConfig, can_act
from ._common import KERNEL_RULESETS, advance, begin_search, search_value


@nb.njit(cache=True, inline="always")
def osla_search(observation, player, root, scratch, epsilon, rng, quirks, max_wood, ruleset):
    """Each of the six actions for one tick with random opponents, scored by the
    heuristic (tie noise); returns (best action, 6 simulations). ``quirks``,
    ``max_wood``: the profile's switches (see ``_common.prepare_search``); ``ruleset``:
    the observation's, a constant (inlined into one kernel per ruleset)."""
    root, scratch, hidden, joint, n_hidden, root_wood, rng, _, _ = begin_search(
        observation, root, scratch, rng, quirks, max_wood, 0.0)
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


def _osla_decide_for(ruleset):
    """The decision kernel: :func:`osla_search` with ``ruleset`` a constant of the kernel
    (a closure value), so it compiles only its own rules (as :func:`.mcts._mcts_decide_for`)."""

    @nb.njit(cache=True)
    def osla_decide(observation, player, root, scratch, epsilon, rng, quirks=0, max_wood=0):
        return osla_search(observation, player, root, scratch, epsilon, rng, quirks, max_wood, ruleset)

    return osla_decide


#: The decision kernel by the observation's ruleset (each compiles only its rules).
OSLA_DECIDE = {ruleset: _osla_decide_for(ruleset) for ruleset in KERNEL_RULESETS}


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
