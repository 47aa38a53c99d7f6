"""Agents from outside Arena: installed plugins and import paths.

A spec's ``agent`` is a registry name (a built-in agent, or the name of an entry
point in the group ``arena.agents`` of an installed distribution)::

    [project.entry-points."arena.agents"]
    bandit = "arena_example.agent:BanditAgent"

or an import path ``package.module:ClassName`` for code on ``sys.path``. Either
names an :class:`agents.api.Agent` subclass. :mod:`agents.registry` resolves both
through :func:`load_plugin_agent` on first use, in every process that needs the
agent (driver and Ray workers alike); a plugin that does not load raises
:class:`games.plugins.PluginError` naming its module. The mechanics (import paths,
entry points) are shared with the games' registry in :mod:`games.plugins`.
"""
from __future__ import annotations

import inspect

from games.plugins import PluginError, entry_points, is_import_path, load_entry_point, load_import_path

from .api import Agent

__all__ = ["AGENT_ENTRY_POINTS", "PluginError", "is_import_path", "plugin_agent_names", "load_plugin_agent",
           "check_agent_class"]

#: Entry-point group of plugin agents: ``name = "package.module:ClassName"``.
AGENT_ENTRY_POINTS = "arena.agents"


def plugin_agent_names() -> list[str]:
    """Names of the installed plugin agents (nothing is imported)."""
    return sorted(entry_points(AGENT_ENTRY_POINTS))


def check_agent_class(obj, where: str) -> type[Agent]:
    """``obj`` if it is a concrete Agent subclass, else PluginError naming ``where``."""
    if not (isinstance(obj, type) and issubclass(obj, Agent)):
        raise PluginError(f"{where} is not an agents.api.Agent subclass (got {obj!r})")
    if inspect.isabstract(obj):
        missing = sorted(getattr(obj, "__abstractmethods__", ()))
        raise PluginError(f"{where} does not implement {', '.join(missing)}")
    return obj


def load_plugin_agent(name: str) -> type[Agent] | None:
    """The agent class of import path or plugin name ``name``; None if ``name`` is
    neither (no such entry point). PluginError if the plugin does not load."""
    if is_import_path(name):
        return check_agent_class(load_import_path(name), repr(name))
    entry_point = entry_points(AGENT_ENTRY_POINTS).get(name)
    if entry_point is None:
        return None
    where = f"entry point {name!r} ({AGENT_ENTRY_POINTS} = {entry_point.value!r})"
    return check_agent_class(load_entry_point(entry_point), where)
