"""Agents by name: the only way the cluster and the CLI construct an agent.

A leaf of the agents package: it imports only the agent interface and the
plugin loader; the built-in agents register themselves when the ``agents``
package loads them (``agents/__init__.py``). Installed plugins (entry points
``arena.agents``) and import paths (``package.module:ClassName``) are loaded on
first use (:mod:`agents.plugins`), in whichever process asks.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, asdict, fields, is_dataclass
from typing import Any

from games.validation import build

from .api import Agent, Budget
from .plugins import is_import_path, load_plugin_agent, plugin_agent_names

_AGENTS: dict[str, type[Agent]] = {}


def register(cls: type[Agent]) -> type[Agent]:
    """Class decorator: register an Agent subclass under ``cls.name``."""
    _AGENTS[cls.name] = cls
    return cls


def agent_names() -> list[str]:
    """The built-in agents, those registered by imported modules, and the installed
    plugins (entry points ``arena.agents``; listed without importing them)."""
    return sorted({name for name in _AGENTS if not is_import_path(name)} | set(plugin_agent_names()))


def agent_class(name: str) -> type[Agent]:
    """The class of agent ``name`` (a registry name, a plugin's name or an import
    path ``package.module:ClassName``). ValueError if there is none; a plugin that
    does not load raises :class:`games.plugins.PluginError` naming its module."""
    cls = _AGENTS.get(name)
    if cls is None:
        cls = load_plugin_agent(name)
        if cls is None:
            raise ValueError(f"agent: unknown agent {name!r}; known: {agent_names()}")
        _AGENTS[name] = cls
    return cls


def make_agent_config(name: str, params: dict | None = None, field_prefix: str = "params"):
    """Validate ``params`` for agent ``name``; errors name the field as ``field_prefix.key``."""
    cls = agent_class(name)
    params = dict(params or {})
    known = {f.name for f in fields(cls.Config)}
    for key in params:
        if key not in known:
            raise ValueError(f"{field_prefix}.{key}: unknown parameter for agent {name!r}; "
                             f"known: {sorted(known) or 'none'}")
    return build(cls.Config, params, field_prefix)


def make_agent(name: str, params: dict | Any | None, budget: Budget, game_config) -> Agent:
    """An agent from its name, parameters (dict or Config), budget and the game's config."""
    cls = agent_class(name)
    config = params if isinstance(params, cls.Config) else make_agent_config(name, params)
    return cls(config, budget, game_config)


def resolved_params(name: str, config, game_config) -> dict[str, Any]:
    """Parameters whose effective value depends on the game (e.g. a Pommerman
    search agent's ``profile = "auto"`` becomes ``java`` or ``arena``), as the
    agent will use them; ``{}`` for agents without such parameters."""
    return dict(agent_class(name).resolved_params(config, game_config))


def non_default_fields(config) -> dict[str, Any]:
    """The fields of a config dataclass whose value is not the field's default (fields
    without a default always), as :func:`dataclasses.asdict` gives them."""
    values = asdict(config)
    out = {}
    for f in fields(config):
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            out[f.name] = values[f.name]
            continue
        if is_dataclass(default):
            default = asdict(default)
        if values[f.name] != default:
            out[f.name] = values[f.name]
    return out


def config_hash(name: str, config, budget: Budget) -> str:
    """A short stable hash of an agent's identity: its name, the parameters and budget
    fields that are not at their defaults, and its ``config_version`` when not 0.

    Fields at their defaults are left out, so a release that adds an option with a
    default changes no hash: a study begun before it resumes with the same players
    (its new rows carry the old hashes; ratings pool them). A release that changes a
    default bumps the agent's :attr:`~agents.api.Agent.config_version` instead."""
    identity: dict[str, Any] = {"name": name, "config": non_default_fields(config),
                                "budget": non_default_fields(budget)}
    version = agent_class(name).config_version if name in _AGENTS else 0
    if version:
        identity["config_version"] = version
    blob = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]
