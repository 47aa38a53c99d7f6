"""One frozen config class per OpenSpiel game, its fields the game's own parameters.

OpenSpiel declares each game's parameters with their defaults
(``GameType.parameter_specification``: ``connect_four`` has ``rows``, ``columns``,
``x_in_row`` and ``egocentric_obs_tensor``); the class for ``openspiel:NAME`` is built
from that declaration once per process (:func:`config_class_for`), a field per
parameter of type bool, int, float or str, so that ``[game] name =
"openspiel:breakthrough"`` with ``rows = 6`` is validated like any Arena game
(strict types, unknown options refused naming them) and OpenSpiel itself is asked
whether it accepts the values (``load_game``), before any game.

The classes live in this module under a name derived from the game's
(:func:`class_name`), and the module creates a missing one on attribute access
(PEP 562), so a config pickles by reference and unpickles in a Ray worker that has
not seen the game yet.
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pyspiel
from pydantic import model_validator

from ..validation import Real, config_class

#: The registry names of OpenSpiel games: ``openspiel:`` and OpenSpiel's short name.
PREFIX = "openspiel:"
_CLASS_PREFIX = "OpenSpielConfig__"

_TYPES = {bool: bool, int: int, float: Real, str: str}


def short_name(name: str) -> str:
    """``connect_four`` of ``openspiel:connect_four``."""
    return name[len(PREFIX):] if name.startswith(PREFIX) else name


def class_name(game: str) -> str:
    """The name of the config class of OpenSpiel game ``game`` (its short name)."""
    return _CLASS_PREFIX + game


def game_type(game: str):
    """OpenSpiel's ``GameType`` of ``game``; ValueError naming close names if there is none."""
    types = {t.short_name: t for t in pyspiel.registered_games()}
    if game not in types:
        import difflib

        close = difflib.get_close_matches(game, list(types), n=5)
        hint = f"; did you mean {', '.join(PREFIX + c for c in close)}?" if close else \
            f"; OpenSpiel has {len(types)} games (python -c 'import pyspiel; print(pyspiel.registered_names())')"
        raise ValueError(f"unknown OpenSpiel game {game!r}{hint}")
    return types[game]


#: What the separate process of :func:`_check_with_openspiel` runs: load the game and play
#: its first node (where OpenSpiel checks most parameters).
_PROBE = """
import json, sys
import pyspiel
name, params = json.loads(sys.argv[1])
try:
    game = pyspiel.load_game(name, params)
    state = game.new_initial_state()
    state.legal_actions() if not state.is_chance_node() else state.chance_outcomes()
    str(state)
except pyspiel.SpielError as exc:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    print(lines[0].split(" ", 1)[0].rsplit("/", 1)[-1] + " " + lines[0].split(" ", 1)[-1])
    sys.exit(3)
"""

_CHECKED: dict[tuple, str | None] = {}


def _check_with_openspiel(self):
    """OpenSpiel's own check of values other than its defaults (ranges it declares
    nowhere else), in a separate process: some of its games abort the process on a bad
    value instead of raising (``connect_four`` with ``rows = 0`` crashes)."""
    values = dataclasses.asdict(self)
    defaults = {f.name: f.default for f in dataclasses.fields(self)}
    if values == defaults:
        return self
    key = (self.openspiel_game, tuple(sorted(values.items())))
    if key not in _CHECKED:
        probe = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([self.openspiel_game, values])],
                               capture_output=True, text=True, timeout=120)
        if probe.returncode == 0:
            _CHECKED[key] = None
        elif probe.returncode == 3:
            _CHECKED[key] = probe.stdout.strip()
        else:
            _CHECKED[key] = f"OpenSpiel aborted (exit code {probe.returncode}) on these values"
    if _CHECKED[key] is not None:
        raise ValueError(f"OpenSpiel refuses {self.openspiel_game}({_describe(self)}): {_CHECKED[key]}")
    return self


def _describe(config) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in dataclasses.asdict(config).items())


def _parameter_field(game: str, name: str, default: Any):
    kind = type(default)
    if kind not in _TYPES:
        return None  # a nested game or another structure: not an option of the spec
    return (name, _TYPES[kind], default)


_CLASSES: dict[str, type] = {}


def config_class_for(game: str) -> type:
    """The frozen config class of OpenSpiel game ``game`` (short name), built once."""
    cls = _CLASSES.get(game)
    if cls is not None:
        return cls
    spec = game_type(game).parameter_specification
    fields = [f for f in (_parameter_field(game, k, v) for k, v in sorted(spec.items())) if f is not None]
    namespace = {
        "__doc__": f"The parameters of OpenSpiel's {game!r}, as OpenSpiel declares them "
                   f"(defaults: OpenSpiel's).",
        "__module__": __name__,
        "openspiel_game": game,
        "_check_with_openspiel": model_validator(mode="after")(_check_with_openspiel),
    }
    namespace["__annotations__"] = {name: kind for name, kind, _ in fields}
    namespace.update({name: default for name, _, default in fields})
    namespace["__qualname__"] = class_name(game)
    cls = config_class(type(class_name(game), (), namespace))
    cls.__module__ = __name__
    cls.__qualname__ = cls.__name__ = class_name(game)
    _CLASSES[game] = cls
    setattr(sys.modules[__name__], class_name(game), cls)
    return cls


def load(config) -> "pyspiel.Game":
    """OpenSpiel's game object for ``config`` (OpenSpiel caches loaded games)."""
    return pyspiel.load_game(config.openspiel_game, dataclasses.asdict(config))


def __getattr__(name: str):
    """A config class unpickled before its game was loaded in this process."""
    if name.startswith(_CLASS_PREFIX):
        return config_class_for(name[len(_CLASS_PREFIX):])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PREFIX", "class_name", "config_class_for", "game_type", "load", "short_name"]
