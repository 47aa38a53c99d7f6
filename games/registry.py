"""Games by name: the only way the cluster and the CLI construct a game.

Names are the built-in games registered below, the games of installed plugins
(entry points in the group ``arena.games``, each naming a :class:`games.api.Game`
subclass that declares its ``Config``, see :mod:`games.plugins`), and import paths
``package.module:GameClass`` given directly. Plugins are loaded on first use.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any, Callable

from .plugins import PluginError, bridged_module, entry_points, is_import_path, load_entry_point, load_import_path
from .validation import build

#: Entry-point group of plugin games: ``name = "package.module:GameClass"``.
GAME_ENTRY_POINTS = "arena.games"

_GAMES: dict[str, tuple[type, Callable[[Any], Any]]] = {}
_KERNELS: dict[type, Any] = {}


def register(name: str, config_cls: type, factory: Callable[[Any], Any], kernels: Any = None) -> None:
    """Register a game: its frozen, validating config class, a constructor from a
    config, and the module of its kernels (``legal_actions(observation, player)``,
    ``step``, ...) for agents that work on any game."""
    _GAMES[name] = (config_cls, factory)
    if kernels is not None:
        _KERNELS[config_cls] = kernels


def register_game_class(name: str, game_cls: type) -> None:
    """Register a plugin game: a :class:`games.api.Game` subclass declaring its frozen
    ``Config`` (and, for agents that play any game, its ``kernels``) under ``name``."""
    from .api import Game

    where = f"{game_cls.__module__}.{getattr(game_cls, '__qualname__', game_cls)!s}"
    if not (isinstance(game_cls, type) and issubclass(game_cls, Game)):
        raise PluginError(f"{where} is not a games.api.Game subclass")
    if game_cls.Config is None or not is_dataclass(game_cls.Config):
        raise PluginError(f"{where}.Config: a plugin game declares its config class "
                          f"(a frozen dataclass, e.g. games.validation.config_class)")
    # a game that declares only the generic kernels offers legal_actions through them
    register(name, game_cls.Config, game_cls, kernels=game_cls.kernels or game_cls.generic_kernels)


def _load_plugin(name: str) -> bool:
    """Load the plugin game ``name`` (entry point or import path) into the registry;
    False if no plugin has that name. Raises PluginError if it does not load; an
    OpenSpiel game (``openspiel:NAME``, :mod:`games.openspiel`) is registered here too."""
    if bridged_module(name) is not None:
        _load_openspiel(name)
        return True
    if is_import_path(name):
        register_game_class(name, load_import_path(name))
        return True
    entry_point = entry_points(GAME_ENTRY_POINTS).get(name)
    if entry_point is None:
        return False
    game_cls = load_entry_point(entry_point)
    try:
        register_game_class(name, game_cls)
    except PluginError as exc:
        raise PluginError(f"entry point {name!r} ({GAME_ENTRY_POINTS} = {entry_point.value!r}): {exc}") from None
    return True


def _load_openspiel(name: str) -> None:
    """Register OpenSpiel game ``name`` (``openspiel:NAME``); PluginError naming the extra
    when OpenSpiel is not installed, ValueError when it has no game NAME."""
    try:
        from . import openspiel
    except ImportError as exc:
        raise PluginError(f"{name!r}: {exc}") from None
    openspiel.register_openspiel_game(name, register)


def check_game(name: str) -> None:
    """Load game ``name`` if it is a plugin; ValueError (PluginError naming the module
    for a plugin that does not load) if there is no such game."""
    if name in _GAMES or _load_plugin(name):
        return
    raise ValueError(f"unknown game {name!r}; known: {game_names()}")


def game_kernels(config) -> Any:
    """The kernels module of the game that ``config`` configures."""
    game = getattr(config, "openspiel_game", None)
    if type(config) not in _KERNELS and isinstance(game, str):  # unpickled in a fresh worker
        _load_openspiel("openspiel:" + game)
    if type(config) not in _KERNELS:  # a plugin game's config built from a pickle: load the plugins
        for name in game_names():
            if name not in _GAMES:
                _load_plugin(name)
    try:
        return _KERNELS[type(config)]
    except KeyError:
        raise ValueError(f"no kernels registered for game config {type(config).__name__}") from None


def game_class(name: str) -> type | None:
    """The :class:`games.api.Game` subclass of game ``name`` (loading a plugin), or None
    when its registered constructor is a function rather than the class."""
    check_game(name)
    factory = _GAMES[name][1]
    return factory if isinstance(factory, type) else None


def make_game_for(config):
    """A game instance from a config alone (the game that registered ``type(config)``;
    a plugin game's config built from a pickle loads the plugins first)."""
    for _ in range(2):
        for config_cls, factory in _GAMES.values():
            if type(config) is config_cls:
                return factory(config)
        for name in game_names():  # not registered in this process yet: load the plugins
            if name not in _GAMES:
                _load_plugin(name)
    raise ValueError(f"no game registered for game config {type(config).__name__}")


def has_kernels(name: str) -> bool:
    """Whether game ``name`` registered a kernels module (``legal_actions(observation,
    player)`` at least), so that agents written for any game can play it."""
    check_game(name)
    return _GAMES[name][0] in _KERNELS


def game_names() -> list[str]:
    """The built-in games and the installed plugins' (not import paths, nor the bridged
    games a process has loaded: ``openspiel:NAME`` is an open family, games/openspiel/README.md)."""
    return sorted({name for name in _GAMES if not is_import_path(name) and bridged_module(name) is None}
                  | set(entry_points(GAME_ENTRY_POINTS)))


def make_config(name: str, options: dict | None = None):
    """Validate ``options`` for game ``name``; errors name the offending field."""
    try:
        check_game(name)
    except PluginError:
        raise
    except ValueError as exc:
        raise ValueError(f"game: {exc}") from None
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
    check_game(name)
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
