"""Explicit, seedable random numbers for numba kernels.

Every kernel that needs randomness takes ``rng``, a ``uint64[2]`` array holding
the state of a xoroshiro128+ generator, and advances it in place. There is no
global generator anywhere: a game or a search is reproducible from the seed
that created its ``rng``.

Seed one from a :class:`numpy.random.SeedSequence` (the study's per-game seed)::

    rng = make_rng(np.random.SeedSequence(1234))
"""
from __future__ import annotations

import numba as nb
import numpy as np

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def make_rng(seed) -> np.ndarray:
    """A fresh ``uint64[2]`` generator state from an int or a SeedSequence."""
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(int(seed))
    state = seed.generate_state(2, dtype=np.uint64)
    if state[0] == 0 and state[1] == 0:  # xoroshiro's only forbidden state
        state[0] = np.uint64(0x9E3779B97F4A7C15)
    return state


@nb.njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@nb.njit(cache=True)
def rng_next(rng):
    """Advance ``rng`` (uint64[2]) and return the next uint64."""
    s0 = rng[0]
    s1 = rng[1]
    result = s0 + s1
    s1 ^= s0
    rng[0] = _rotl(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    rng[1] = _rotl(s1, 37)
    return result


@nb.njit(cache=True)
def rng_uniform(rng):
    """A float64 uniform on [0, 1) from the top 53 bits."""
    return (rng_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True)
def rng_integer(rng, n):
    """An int uniform on [0, n) for n >= 1 (Lemire's multiply-shift, bias < 2**-32)."""
    return np.int64((rng_next(rng) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))


@nb.njit(cache=True)
def rng_split(rng):
    """A new independent ``uint64[2]`` generator derived from (and advancing) ``rng``."""
    child = np.empty(2, dtype=np.uint64)
    # splitmix64 of two draws decorrelates the child from the parent stream
    for i in range(2):
        z = rng_next(rng) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        child[i] = z ^ (z >> np.uint64(31))
    if child[0] == 0 and child[1] == 0:
        child[0] = np.uint64(1)
    return child
