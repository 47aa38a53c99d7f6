"""Games by name: the only way the cluster and the CLI construct a game."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable

_GAMES: dict[str, tuple[type, Callable[[Any], Any]]] = {}


def register(name: str, config_cls: type, factory: Callable[[Any], Any]) -> None:
    """Register a game: its frozen, validating config class and a constructor from a config."""
    _GAMES[name] = (config_cls, factory)


def game_names() -> list[str]:
    return sorted(_GAMES)


def make_config(name: str, options: dict | None = None):
    """Validate ``options`` for game ``name``; errors name the offending field."""
    if name not in _GAMES:
        raise ValueError(f"game: unknown game {name!r}; known: {game_names()}")
    config_cls, _ = _GAMES[name]
    options = dict(options or {})
    known = {f.name for f in fields(config_cls)}
    for key in options:
        if key not in known:
            raise ValueError(f"game.{key}: unknown option for {name!r}; known: {sorted(known)}")
    return config_cls(**options)


def make_game(name: str, config=None, **options):
    """A game instance from a name and either a config or options."""
    if config is None:
        config = make_config(name, options)
    return _GAMES[name][1](config)


def _register_builtin() -> None:
    from .pommerman import Pommerman, PommermanConfig
    register("pommerman", PommermanConfig, Pommerman)


_register_builtin()
