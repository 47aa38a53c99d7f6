"""Pommerman rules, java ruleset (placeholder: being written)."""
import numba as nb


@nb.njit(cache=True)
def step_java(state, actions):
    """Advance a java-ruleset state by one tick in place (not yet implemented)."""
    raise NotImplementedError("java rules are not written yet")
