"""numba's on-disk cache, keyed by the kernel sources of a layer and the layers below it.

numba invalidates a cached function only when its own file changes, not when
a kernel it calls (in another file) does. Keying the cache directory by a hash
of every source file a layer's kernels can call makes a stale kernel
impossible after an upgrade or an edit. Each layer configures it when its
package is imported, before any of its kernels is defined::

    configure_numba_cache("games")            # games/__init__.py
    configure_numba_cache("games", "agents")  # agents/__init__.py

so an edit to ``agents/`` recompiles the agents' kernels only, and ``games``
never reads the sources of the layer above it. Set ``NUMBA_CACHE_DIR`` to
choose the directory yourself, or ``ARENA_CACHE_DIR`` to move the root
(default ``~/.cache/arena``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: Set beside ``NUMBA_CACHE_DIR`` when Arena chose it (not the user), so a
#: subprocess's layers still key their own directories.
_AUTO = "ARENA_NUMBA_CACHE_AUTO"
_ROOT = Path(__file__).resolve().parent.parent


def source_hash(*packages: str) -> str:
    """A short hash of the ``.py`` files of ``packages`` (directories beside ``games``)."""
    digest = hashlib.sha1()
    for package in packages:
        for path in sorted((_ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(_ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def configure_numba_cache(*packages: str) -> None:
    """Point numba's cache at ``<root>/numba/<source_hash(packages)>`` (unless the
    user set ``NUMBA_CACHE_DIR``); subprocesses and Ray workers inherit it."""
    if os.environ.get("NUMBA_CACHE_DIR") and not os.environ.get(_AUTO):
        return
    base = Path(os.environ.get("ARENA_CACHE_DIR", Path.home() / ".cache" / "arena"))
    cache_dir = base / "numba" / source_hash(*packages)
    import numba

    numba.config.CACHE_DIR = str(cache_dir)
    os.environ["NUMBA_CACHE_DIR"] = str(cache_dir)
    os.environ[_AUTO] = "1"
