"""One-step look-ahead for Pommerman (the Java framework's ``OSLAPlayer``)."""
from __future__ import annotations

import numba as nb
import numpy as np

from games.pommerman._kernels import heuristic
from games.pommerman._layout import N_ACTIONS, copy_into

from ..search.uct import tie_noise
from ._common import advance, prepare_search


@nb.njit(cache=True)
def osla_decide(observation, player, root, scratch, epsilon, rng):
    """Each of the six actions for one tick with random opponents, scored by the
    heuristic (tie noise); returns (best action, 6 simulations)."""
    hidden, joint, n_hidden, root_wood = prepare_search(root, observation)
    best = 0
    best_value = -np.inf
    for action in range(N_ACTIONS):
        copy_into(scratch, root)
        advance(scratch, player, action, joint, hidden, n_hidden, rng)
        value = tie_noise(heuristic(root, root_wood, scratch, player), epsilon, rng)
        if value > best_value:
            best_value = value
            best = action
    return best, N_ACTIONS
