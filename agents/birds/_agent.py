"""Python glue shared by the bird game's agents (private to ``agents.birds``)."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from agents.api import Agent
from games.rng import make_rng

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


#: The shipped policy (package data; ``weights/PROVENANCE.md``): the default of a search
#: whose opponent or rollout model is the policy and whose seat has no learned state.
SHIPPED_POLICY = Path(__file__).resolve().parent / "weights" / "birds_policy.npz"


@lru_cache(maxsize=1)
def _shipped() -> tuple[np.ndarray, str]:
    weights = load_weights(SHIPPED_POLICY)
    weights.setflags(write=False)
    return weights, hashlib.sha256(SHIPPED_POLICY.read_bytes()).hexdigest()


def shipped_weights() -> np.ndarray:
    """A fresh copy of the shipped policy's float64[N_FEATURES] weights."""
    return _shipped()[0].copy()


def shipped_policy_id() -> str:
    """``weights/birds_policy.npz sha256:<first 12 hex digits>`` of the shipped policy."""
    return f"weights/{SHIPPED_POLICY.name} sha256:{_shipped()[1][:12]}"


class BirdsAgent(Agent):
    """Base of the bird agents: a ``uint64[2]`` generator per game from the seat's seed."""

    games = ("birds",)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.rng = make_rng(seed)
