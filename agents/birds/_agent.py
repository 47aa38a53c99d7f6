"""Python glue shared by the bird game's agents (private to ``agents.birds``)."""
from __future__ import annotations

import numpy as np

from agents.api import Agent
from games._rng import make_rng

from .features import N_FEATURES

#: Key of the policy weights in a learned state / ``.npz`` file.
WEIGHTS_KEY = "weights"


def check_weights(arrays: dict, source: str = "weights") -> np.ndarray:
    """The float64[N_FEATURES] policy weights in ``arrays``, or ValueError naming what is wrong."""
    if WEIGHTS_KEY not in arrays:
        raise ValueError(f"{source}: no array {WEIGHTS_KEY!r} (found {sorted(arrays)})")
    w = np.asarray(arrays[WEIGHTS_KEY])
    if w.shape != (N_FEATURES,) or not np.issubdtype(w.dtype, np.number) or not np.isfinite(w).all():
        raise ValueError(f"{source}: {WEIGHTS_KEY!r} must be {N_FEATURES} finite numbers, "
                         f"got shape {w.shape} dtype {w.dtype}")
    return w.astype(np.float64)


def load_weights(path) -> np.ndarray:
    """Policy weights from an ``.npz`` file (``allow_pickle=False``)."""
    with np.load(path, allow_pickle=False) as npz:
        return check_weights({k: npz[k] for k in npz.files}, str(path))


class BirdsAgent(Agent):
    """Base of the bird agents: a ``uint64[2]`` generator per game from the seat's seed."""

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.rng = make_rng(seed)
