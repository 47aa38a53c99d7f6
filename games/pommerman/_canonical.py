"""Pommerman rules, canonical ruleset (placeholder: being written)."""
import numba as nb


@nb.njit(cache=True)
def step_canonical(state, actions):
    """Advance a canonical-ruleset state by one tick in place (not yet implemented)."""
    raise NotImplementedError("canonical rules are not written yet")
