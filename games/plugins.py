"""Code from outside Arena: import paths (``package.module:Name``) and entry points.

Arena loads user games and agents two ways, without a fork:

* an **entry point** of an installed distribution, in the group ``arena.games``
  (:mod:`games.registry`) or ``arena.agents`` (:mod:`agents.registry`); its name is
  the registry name a spec uses::

      [project.entry-points."arena.games"]
      tictactoe = "arena_example.tictactoe:TicTacToe"

* an **import path** given directly in a spec (``agent = "package.module:ClassName"``,
  ``[game] name = "package.module:GameClass"``), for code on ``sys.path`` that is
  not packaged.

Both are resolved lazily, on first use, in whatever process needs them (the driver
while it validates a spec, every Ray worker when it builds a game or an agent), so
a worker imports the same plugins as long as they are installed on its node (see
``infra/runtime_env.yaml``). A plugin that does not load raises :class:`PluginError`,
whose message names the module and the reason in one line, with the file and line that
raised when the module's own code did (``module 'my_agents' does not import
(/src/my_agents.py:12: NameError: name 'np' is not defined)``); ``arena --debug`` shows
the whole traceback.

Standard library only (``games`` imports nothing above it).
"""
from __future__ import annotations

import importlib
import traceback
from importlib import import_module, metadata
from typing import Any

__all__ = ["BRIDGES", "PluginError", "bridged_module", "is_import_path", "split_import_path", "load_import_path", "entry_points",
           "load_entry_point", "plugin_module", "raised_at", "describe_import_error"]


class PluginError(ValueError):
    """A plugin that does not load (bad import path, module that fails to import,
    missing attribute, wrong kind of object); the message names the module."""


#: Registry names of games Arena plays through a bridge to another library, by prefix
#: (``openspiel:connect_four``, :mod:`games.openspiel`): not import paths, though they hold
#: a colon; the module each needs on every node.
BRIDGES = {"openspiel:": "pyspiel"}


def bridged_module(name: str) -> str | None:
    """The module a bridged game ``name`` needs (``pyspiel`` for ``openspiel:...``), else None."""
    if isinstance(name, str):
        for prefix, module in BRIDGES.items():
            if name.startswith(prefix):
                return module
    return None


def is_import_path(name: str) -> bool:
    """Whether ``name`` is an import path (``package.module:Name``) rather than a registry
    name (or a bridged game's, :data:`BRIDGES`)."""
    return isinstance(name, str) and ":" in name and bridged_module(name) is None


def split_import_path(path: str) -> tuple[str, str]:
    """``("package.module", "Name")`` of ``package.module:Name``; PluginError when malformed."""
    module_name, _, attribute = path.partition(":")
    module_name, attribute = module_name.strip(), attribute.strip()
    if not module_name or not attribute or ":" in attribute \
            or not all(part.isidentifier() for part in module_name.split(".")) \
            or not all(part.isidentifier() for part in attribute.split(".")):
        raise PluginError(f"{path!r} is not an import path; expected 'package.module:ClassName'")
    return module_name, attribute


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def raised_at(exc: BaseException) -> str | None:
    """``file:line`` of the code that raised ``exc`` while a module was imported: where a
    :class:`SyntaxError` is, else the innermost frame below ``importlib.import_module`` that
    is not the import machinery itself (None when only the machinery ran, e.g. a module
    that is not there)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    calls = [i for i, f in enumerate(frames) if f.filename == importlib.__file__]
    below = frames[calls[-1] + 1:] if calls else frames
    code = [f for f in below if not f.filename.startswith("<frozen ")]
    return f"{code[-1].filename}:{code[-1].lineno}" if code else None


def describe_import_error(exc: BaseException) -> str:
    """One line: where a module's import failed and why, ``/src/plugin.py:3: ZeroDivisionError:
    division by zero`` (the exception alone when only the import machinery ran)."""
    where = raised_at(exc)
    return f"{where}: {_describe(exc)}" if where else _describe(exc)


def load_import_path(path: str) -> Any:
    """The object that ``package.module:Name`` names (``Name`` may be dotted). A module that
    raises while it is imported is a :class:`PluginError` naming the module, the file and line
    that raised, and the exception (its traceback chained, for ``--debug``)."""
    module_name, attribute = split_import_path(path)
    try:
        obj = import_module(module_name)
    except Exception as exc:  # ImportError, or any error raised while the module runs
        raise PluginError(f"module {module_name!r} does not import ({describe_import_error(exc)})") from exc
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"module {module_name!r} has no {attribute!r}") from None
    return obj


def entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    """The entry points of ``group`` among the installed distributions, by name
    (found from the installed metadata; nothing is imported)."""
    return {ep.name: ep for ep in metadata.entry_points(group=group)}


def load_entry_point(entry_point: metadata.EntryPoint) -> Any:
    """The object an entry point names; PluginError naming its module if it does not load."""
    where = f"entry point {entry_point.name!r} ({entry_point.group} = {entry_point.value!r})"
    try:
        return load_import_path(entry_point.value)
    except PluginError as exc:
        raise PluginError(f"{where}: {exc}") from exc.__cause__


def plugin_module(name: str, group: str) -> str | None:
    """The module that plugin ``name`` comes from (its import path's module, or the
    module of its entry point in ``group``, the library a bridged game needs); None if
    ``name`` is none of those."""
    if bridged_module(name) is not None:
        return bridged_module(name)
    if is_import_path(name):
        return split_import_path(name)[0]
    entry_point = entry_points(group).get(name)
    return None if entry_point is None else entry_point.module
