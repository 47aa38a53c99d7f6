"""Games by name: the only way the cluster and the CLI construct a game."""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Callable

from .validation import build

_GAMES: dict[str, tuple[type, Callable[[Any], Any]]] = {}
_KERNELS: dict[type, Any] = {}


def register(name: str, config_cls: type, factory: Callable[[Any], Any], kernels: Any = None) -> None:
    """Register a game: its frozen, validating config class, a constructor from a
    config, and the module of its kernels (``legal_actions(observation, player)``,
    ``step``, ...) for agents that work on any game."""
    _GAMES[name] = (config_cls, factory)
    if kernels is not None:
        _KERNELS[config_cls] = kernels


def game_kernels(config) -> Any:
    """The kernels module of the game that ``config`` configures."""
    try:
        return _KERNELS[type(config)]
    except KeyError:
        raise ValueError(f"no kernels registered for game config {type(config).__name__}") from None


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
    return build(config_cls, options)


def make_game(name: str, config=None, **options):
    """A game instance from a name and either a config or options."""
    if config is None:
        config = make_config(name, options)
    return _GAMES[name][1](config)


def _register_builtin() -> None:
    from .pommerman import Pommerman, PommermanConfig, kernels
    register("pommerman", PommermanConfig, Pommerman, kernels=kernels)
    from .birds import Birds, BirdsConfig, kernels as birds_kernels
    register("birds", BirdsConfig, Birds, kernels=birds_kernels)
    from .scotland_yard import ScotlandYard, ScotlandYardConfig, kernels as sy_kernels
    register("scotland_yard", ScotlandYardConfig, ScotlandYard, kernels=sy_kernels)
    from .xcom import Xcom, XcomConfig, kernels as xcom_kernels
    register("xcom", XcomConfig, Xcom, kernels=xcom_kernels)


_register_builtin()
