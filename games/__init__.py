"""Arena's games: state layouts and pure numba kernels, one package per game.

``games`` imports nothing above it (no ``agents``, ``cluster`` or ``jobs``).
Each game package ``games/<name>/`` has a public kernel module
(``kernels.py``: layout constants and pure kernels) and a wrapper class in its
``__init__``; its underscore modules are private to the package.

Importing this package points numba's on-disk cache at a directory keyed by a
hash of the ``games/`` sources (:mod:`games.numba_cache`; ``agents`` keys its
own by ``games/`` and ``agents/``), and repairs numba's IR inliner's compile time
(:mod:`games.numba_inline`) before any kernel compiles.
"""
from __future__ import annotations

from . import numba_inline
from .numba_cache import configure_numba_cache

configure_numba_cache("games")
numba_inline.install()
