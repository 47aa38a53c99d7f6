"""Arena's games: state layouts and pure numba kernels, one package per game.

``games`` imports nothing above it (no ``agents``, ``cluster`` or ``jobs``).
Each game package ``games/<name>/`` has a public kernel module
(``kernels.py``: layout constants and pure kernels) and a wrapper class in its
``__init__``; its underscore modules are private to the package.

Importing this package points numba's on-disk cache at a directory keyed by a
hash of the kernel sources (``games/`` and ``agents/``). numba invalidates a
cached function only when its own file changes, not when a kernel it calls
(in another file) does; keying the whole cache by the sources makes a stale
kernel impossible after an upgrade or an edit. Set ``NUMBA_CACHE_DIR`` to
choose the directory yourself, or ``ARENA_CACHE_DIR`` to move the root
(default ``~/.cache/arena``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def _kernel_source_hash() -> str:
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for package in ("games", "agents"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _configure_numba_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = Path(os.environ.get("ARENA_CACHE_DIR", Path.home() / ".cache" / "arena"))
    cache_dir = base / "numba" / _kernel_source_hash()
    import numba

    numba.config.CACHE_DIR = str(cache_dir)
    os.environ["NUMBA_CACHE_DIR"] = str(cache_dir)  # inherited by subprocesses and Ray workers


_configure_numba_cache()
