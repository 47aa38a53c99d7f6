"""Agents for any game: ``mcts_generic`` (:mod:`agents.generic.mcts`), UCT over a game's
generic kernels in numba or through its Python members (:mod:`agents.generic.python_search`)."""
from . import mcts  # noqa: F401  (registration)
