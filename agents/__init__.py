"""Arena agents: one search core (agents.search) plus game drivers and agents."""
import games  # noqa: F401  (configures the numba cache before any kernel is defined)
