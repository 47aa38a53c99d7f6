"""Arena agents: one search core (``agents.search``) plus game drivers and agents.

Imports go one way: ``agents -> games``. Agents use a game through the shared
interface (``games.api``) and the game's public kernel module (e.g.
``games.pommerman.kernels``), never its underscore modules; nothing in
``agents`` imports ``cluster`` or ``jobs``.
"""
import games  # noqa: F401  (configures the numba cache before any kernel is defined)
