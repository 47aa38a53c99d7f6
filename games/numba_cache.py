"""numba's on-disk cache, keyed by the kernel sources of a layer and the layers below it.

numba invalidates a cached function only when its own file changes, not when
a kernel it calls (in another file) does. Keying the cache directory by a hash
of every source file a layer's kernels can call makes a stale kernel
impossible after an upgrade or an edit. Each layer configures it when its
package is imported, before any of its kernels is defined::

    configure_numba_cache("games")            # games/__init__.py
    configure_numba_cache("games", "agents")  # agents/__init__.py

so an edit to ``agents/`` recompiles the agents' kernels only, and ``games``
never reads the sources of the layer above it. A kernel caches under its own
layer's key whatever was imported first (:class:`LayerCacheLocator`): a game's
forward model compiled in a process that imported ``agents`` first is the one a
process importing only ``games`` loads, not a second copy compiled beside it.
Set ``NUMBA_CACHE_DIR`` to choose the directory yourself, or ``ARENA_CACHE_DIR``
to move the root (default ``~/.cache/arena``).
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator

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


@functools.lru_cache(maxsize=None)
def _layer_hash(packages: tuple[str, ...]) -> str:
    return source_hash(*packages)


def _arena_root() -> Path:
    return Path(os.environ.get("ARENA_CACHE_DIR", Path.home() / ".cache" / "arena"))


def _layer_dir(packages: tuple[str, ...]) -> Path:
    """``<root>/numba/<source_hash(packages)>``: the cache directory of a layer and those below."""
    return _arena_root() / "numba" / _layer_hash(packages)


def configure_numba_cache(*packages: str) -> None:
    """Point numba's cache at ``<root>/numba/<source_hash(packages)>`` (unless the
    user set ``NUMBA_CACHE_DIR``); subprocesses and Ray workers inherit it. Kernels
    of ``games/`` and ``agents/`` cache under their own layer's directory whichever
    layer configured last (:class:`LayerCacheLocator`)."""
    if os.environ.get("NUMBA_CACHE_DIR") and not os.environ.get(_AUTO):
        return
    cache_dir = _layer_dir(tuple(packages))
    import numba

    numba.config.CACHE_DIR = str(cache_dir)
    os.environ["NUMBA_CACHE_DIR"] = str(cache_dir)
    os.environ[_AUTO] = "1"
    # numba >= 0.61 takes its cache locators from a setting; the user's own list is kept
    if getattr(numba.config, "CACHE_LOCATOR_CLASSES", None) == "":
        numba.config.CACHE_LOCATOR_CLASSES = _LOCATORS


#: The layers whose kernels cache under their own key (``configure_numba_cache``'s packages).
_LAYER_KEYS = {"games": ("games",), "agents": ("games", "agents")}
#: numba's locators, :class:`LayerCacheLocator` first (names without a module are numba's own).
_LOCATORS = ("games.numba_cache.LayerCacheLocator,UserProvidedCacheLocator,InTreeCacheLocator,"
             "UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator")


def layer_cache_dir(py_file: str | Path) -> Path | None:
    """The cache directory of a kernel defined in ``py_file``: its layer's
    (``<root>/numba/<source_hash(layer and below)>``) for a file of ``games/`` or
    ``agents/``, else None (the current ``NUMBA_CACHE_DIR``)."""
    try:
        rel = Path(py_file).resolve().relative_to(_ROOT)
    except (OSError, ValueError):
        return None
    packages = _LAYER_KEYS.get(rel.parts[0]) if len(rel.parts) > 1 else None
    return None if packages is None else _layer_dir(packages)


class LayerCacheLocator(UserProvidedCacheLocator):
    """numba's locator for a cache directory of Arena's choosing, with the directory
    chosen by the kernel's layer (:func:`layer_cache_dir`) instead of by whichever
    layer was imported last: ``agents`` configures its directory on import, and a
    game's module imported after it would otherwise cache its kernels there too,
    compiling them twice on a machine (once per directory). Anything else, or a
    ``NUMBA_CACHE_DIR`` the user chose, is numba's own behaviour."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        directory = None if _user_chose_cache_dir() else layer_cache_dir(py_file)
        if directory is not None:
            self._cache_path = os.path.join(str(directory), self.get_suitable_cache_subpath(py_file))


def _user_chose_cache_dir() -> bool:
    return bool(os.environ.get("NUMBA_CACHE_DIR")) and not os.environ.get(_AUTO)


def cache_root() -> Path:
    """The directory this process's numba caches live under: ``NUMBA_CACHE_DIR`` when the
    user set it, else the root of :func:`configure_numba_cache` (``ARENA_CACHE_DIR``,
    default ``~/.cache/arena``)."""
    if _user_chose_cache_dir():
        return Path(os.environ["NUMBA_CACHE_DIR"])
    return _arena_root()


def private_cache_env(private_root: str | Path) -> dict[str, str]:
    """The environment of a subprocess that compiles into ``private_root`` laid out as
    :func:`cache_root` is (so that :func:`merge_cache` can copy it over the shared one)."""
    env = dict(os.environ)
    if _user_chose_cache_dir():
        env["NUMBA_CACHE_DIR"] = str(private_root)
    else:
        env["ARENA_CACHE_DIR"] = str(private_root)
        env.pop("NUMBA_CACHE_DIR", None)
    env.pop(_AUTO, None)
    return env


#: Prefix of the scratch directories of a parallel warm-up inside :func:`cache_root`.
SCRATCH_PREFIX = ".warm-scratch-"


def seed_private_cache(private_root: str | Path) -> int:
    """Fill ``private_root`` with the shared cache's entries for the current sources
    (hard links, or copies across file systems), so that a subprocess compiling into it
    loads what is cached already and compiles only what is missing; returns the files
    linked. numba replaces a cache file by renaming a new one over it, so the shared
    files are never written through the links."""
    root = cache_root()
    if _user_chose_cache_dir():
        sources = [root]
    else:
        sources = [_layer_dir(packages) for packages in _LAYER_KEYS.values()]
    private_root = Path(private_root)
    linked = 0
    for source in sources:
        if not source.is_dir():
            continue
        for path in source.rglob("*.nb[ic]"):
            rel = path.relative_to(root)
            if any(part.startswith(SCRATCH_PREFIX) for part in rel.parts):
                continue
            target = private_root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(path, target)
            linked += 1
    return linked


def _link_or_copy(path: Path, target: Path) -> None:
    """Hard-link ``path`` as ``target``, or copy it where a hard link cannot be made
    (another file system)."""
    import shutil

    try:
        os.link(path, target)
    except OSError:
        shutil.copy2(path, target)


def link_complete_index(src_index: str | Path, dst_index: str | Path) -> bool:
    """Hard-link (or copy) the numba cache index ``src_index`` as ``dst_index`` with the
    data files it names, if ``dst_index`` does not exist yet and every one of those data
    files does (numba writes an index before the data it points at, so a process still
    compiling can have an index ahead of its data); returns whether it linked. For a
    warm-up group that loads a kernel another group compiled (``cluster.run.warm``)."""
    src_index = Path(src_index)
    index = _read_index(src_index)
    if index is None or Path(dst_index).exists():
        return False
    if not all((src_index.parent / name).exists() for name in index[1].values()):
        return False
    return bool(_link_index(src_index, Path(dst_index)))


def _link_index(index: Path, target: Path) -> int:
    """Link ``index`` and its data files as ``target`` (the index last) unless ``target``
    exists; 1 if linked, else 0."""
    if target.exists():
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    base = index.name[:-len(".nbi")]
    for path in [*index.parent.glob(f"{base}.*.nbc"), index]:  # the index last
        out = target.parent / path.name
        if not out.exists():
            try:
                _link_or_copy(path, out)
            except FileNotFoundError:  # replaced by its process meanwhile: numba compiles instead
                return 0
    return 1


def _read_index(path: Path):
    """``(stamp, overloads)`` of a numba cache index (``*.nbi``) written by this numba
    version, else None (numba's own format: the version pickled, then the pickled pair).

    None too for an index this process cannot unpickle: its signatures name the types of
    the kernels' arguments by module, and a plugin game's state type (a NamedTuple of a
    module on another process's path, e.g. the generic search compiled for it) does not
    import here. Such an entry is skipped, not an error: the processes that can import
    it still load it."""
    import pickle

    import numba

    try:
        with open(path, "rb") as f:
            if pickle.load(f) != numba.__version__:
                return None
            return pickle.loads(f.read())
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, ImportError, AttributeError):
        return None


def _replace_file(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def merge_cache(src_root: str | Path, dst_root: str | Path) -> int:
    """Add the numba cache entries under ``src_root`` (a private cache a subprocess
    compiled into) to the cache under ``dst_root``, file by file; returns the number
    of entries (compiled signatures) added.

    numba numbers the data files of a function's index from 1 in each process, so two
    processes compiling different signatures of one function into one cache at once
    can give both the same data file name, and an index then points at the other
    signature's code. Compiling into private caches and merging them here, one merge at
    a time (a file lock), gives every entry its own data file. Entries the destination
    has already are kept; an index of another numba version or of other sources (its
    stamp differs) is replaced, as numba would.
    """
    import fcntl

    from numba.core.serialize import dumps

    src_root, dst_root = Path(src_root), Path(dst_root)
    dst_root.mkdir(parents=True, exist_ok=True)
    added = 0
    with open(dst_root / ".merge.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for src_index in sorted(src_root.rglob("*.nbi")):
            src = _read_index(src_index)
            if src is None:
                continue
            stamp, overloads = src
            dst_index = dst_root / src_index.relative_to(src_root)
            dst_index.parent.mkdir(parents=True, exist_ok=True)
            dst = _read_index(dst_index) if dst_index.exists() else None
            merged = dict(dst[1]) if dst is not None and dst[0] == stamp else {}
            base = src_index.name[:-len(".nbi")]
            used = set(merged.values())
            changed = False
            for key, data_name in overloads.items():
                if key in merged or not (src_index.parent / data_name).exists():
                    continue
                number = 1
                while f"{base}.{number}.nbc" in used:
                    number += 1
                name = f"{base}.{number}.nbc"
                _replace_file(dst_index.parent / name, (src_index.parent / data_name).read_bytes())
                merged[key] = name
                used.add(name)
                changed = True
                added += 1
            if changed:  # data files first, then the index that points at them
                import pickle

                import numba

                _replace_file(dst_index, pickle.dumps(numba.__version__, protocol=-1)
                              + dumps((stamp, merged)))
    return added
