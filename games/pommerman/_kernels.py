"""Shared Pommerman kernels: the ruleset dispatcher and rules-independent helpers.

``step(state, actions)`` advances a PommermanState in place by one tick under
the state's own ruleset (``meta[M_RULESET]``). The rules themselves live in
``_canonical.py`` and ``_java.py``.
"""
from __future__ import annotations

import numba as nb

from ._layout import M_RULESET, RULESET_JAVA
from ._canonical import step_canonical
from ._java import step_java


@nb.njit(cache=True)
def step(state, actions):
    """Advance ``state`` by one tick in place.

    Args:
        state: PommermanState (modified in place).
        actions: int64[4], one action (0..5) per agent id; ignored for dead agents.
    """
    if state.meta[M_RULESET] == RULESET_JAVA:
        step_java(state, actions)
    else:
        step_canonical(state, actions)
