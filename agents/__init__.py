"""Arena agents: one search core (``agents.search``) plus game drivers and agents.

Imports go one way: ``agents -> games``. Agents use a game through the shared
interface (``games.api``), the game's public kernel module (e.g.
``games.pommerman.kernels``) and the kernels' toolkit (``games.lowlevel``), never
an underscore module or name of another package (``tests/test_layers.py``
checks); nothing in ``agents`` imports ``cluster`` or ``jobs``.

Importing the package registers the built-in agents (each module registers
its classes in the leaf :mod:`agents.registry`, which imports no agent).
"""
from games.numba_cache import configure_numba_cache

configure_numba_cache("games", "agents")  # before any agent kernel is defined

from . import birds, generic, openspiel, pommerman, random_agent, scotland_yard, xcom  # noqa: E402,F401  (registration)
