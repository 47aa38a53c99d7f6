"""The generic search compiled for one game, and cached on disk like every other kernel.

numba serves a function from its on-disk cache only if its signature holds no
jitted function: one that takes the game's kernels as arguments (or captures them
in a closure: numba keys a closure's cache entry by its pickled cell contents, and a
dispatcher pickles with a per-process id) is compiled again in every process, for
the generic search some seconds of CPU per Ray worker. So the search for a game is
a small module written once per game and version, that imports the game's kernels
by name and calls :func:`agents.search.generic.generic_search` (inlined) with them
as globals::

    from connect_four import copy_state as k_copy_state, ...
    @nb.njit(cache=True)
    def search(tree, stats, arrays, observation, player, params, max_iterations, time_limit, rng):
        return generic_search(k_copy_state, ..., HAS_CHANCE, ..., tree, ...)

The module lives under the numba cache root (``ARENA_CACHE_DIR``, default
``~/.cache/arena``) in ``generic_search/``, named by a hash of what its code depends
on: the kernels' names and modules, the sources of the packages they come from
(a plugin's too, which Arena's own cache key does not cover) and of
``agents/search``. An edit to any of them gives a new module and a fresh numba cache
entry; an unchanged game loads the compiled search in a fraction of a second. The
file is created once and never rewritten (numba stamps its cache with the
source file's modification time), by an atomic link, so processes that start at
once agree on it.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from games.generic import GenericKernels, check_generic_kernels, kernel_names
from games.numba_cache import cache_root

__all__ = ["search_kernel", "search_module_source"]

#: Bumped when the generated module's text changes shape.
GENERATOR_VERSION = 1
_SEARCH_DIR = Path(__file__).resolve().parent
#: What a stand-in replaces where a game declares no such kernel.
_STAND_INS = {"chance_outcomes": "no_chance_outcomes", "apply_chance": "no_apply_chance",
              "determinize": "no_determinize", "heuristic": "no_heuristic"}


def _import_name(fn, entry: str) -> tuple[str, str]:
    """(module, name) by which ``fn`` (a dispatcher) is imported; ValueError if that
    name does not give ``fn`` back."""
    py_func = fn.py_func
    module, name = py_func.__module__, py_func.__name__
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        found = None
    if found is not fn:
        raise ValueError(f"generic_kernels.{entry}: {module}.{name} does not import as this kernel "
                         f"(the search imports its kernels by module and name)")
    return module, name


@lru_cache(maxsize=None)
def _package_hash(module: str) -> str:
    """A hash of the sources of ``module``'s top-level package (or of the module's
    file when it is not in a package)."""
    top = importlib.import_module(module.partition(".")[0])
    files = sorted(Path(top.__path__[0]).rglob("*.py")) if hasattr(top, "__path__") else [Path(top.__file__)]
    digest = hashlib.sha1()
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def search_module_source(kernels: GenericKernels) -> str:
    """The text of the search module for ``kernels`` (a checked record)."""
    lines = [
        '"""The generic search compiled for one game (written by agents.search.per_game; do not edit)."""',
        "import numba as nb",
        "",
        "from agents.search.generic import generic_search, " + ", ".join(sorted(_STAND_INS.values())),
    ]
    for entry in kernel_names():
        fn = getattr(kernels, entry)
        if fn is None:
            lines.append(f"k_{entry} = {_STAND_INS[entry]}")
        else:
            module, name = _import_name(fn, entry)
            lines.append(f"from {module} import {name} as k_{entry}")
    lines += [
        "",
        f"HAS_CHANCE = {kernels.chance_outcomes is not None}",
        f"HAS_DETERMINIZE = {kernels.determinize is not None}",
        f"HAS_HEURISTIC = {kernels.heuristic is not None}",
        f"SIMULTANEOUS_MOVES = {bool(kernels.simultaneous)}",
        "",
        "",
        "@nb.njit(cache=True)",
        "def search(tree, stats, arrays, observation, player, params, max_iterations, time_limit, rng):",
        "    return generic_search(k_copy_state, k_copy_into, k_current_player, k_legal_actions, k_step,",
        "                          k_is_terminal, k_returns, k_chance_outcomes, k_apply_chance, k_determinize,",
        "                          k_heuristic, HAS_CHANCE, HAS_DETERMINIZE, HAS_HEURISTIC, SIMULTANEOUS_MOVES,",
        "                          tree, stats, arrays, observation, player, params, max_iterations,",
        "                          time_limit, rng)",
        "",
    ]
    return "\n".join(lines)


def _source_key(kernels: GenericKernels, text: str) -> str:
    digest = hashlib.sha1(f"v{GENERATOR_VERSION}\n{text}".encode())
    modules = sorted({getattr(kernels, e).py_func.__module__ for e in kernel_names() if getattr(kernels, e)})
    for module in modules:
        digest.update(_package_hash(module).encode())
    for path in sorted(_SEARCH_DIR.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _write_once(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` unless it exists (atomically: a link of a
    finished temporary file, so no process reads half a file or sees it replaced)."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


_KERNELS: dict[GenericKernels, object] = {}


def search_kernel(kernels: GenericKernels, where: str = "generic_kernels"):
    """The search kernel for a game's generic kernels (written, imported and memoised
    in this process on first use; compiled on its first call or loaded from numba's
    cache). ValueError naming ``where`` if the record breaks the contract."""
    hit = _KERNELS.get(kernels)
    if hit is not None:
        return hit
    check_generic_kernels(kernels, where)
    text = search_module_source(kernels)
    key = _source_key(kernels, text)
    module_name = f"arena_generic_search_{key}"
    module = sys.modules.get(module_name)
    if module is None:
        path = cache_root() / "generic_search" / f"{module_name}.py"
        try:
            _write_once(path, text)
        except OSError:  # a read-only cache root: the system's temporary directory instead
            path = Path(tempfile.gettempdir()) / "arena-generic-search" / f"{module_name}.py"
            _write_once(path, text)
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    _KERNELS[kernels] = module.search
    return module.search
