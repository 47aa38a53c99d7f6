"""OpenSpiel's games as Arena games: ``[game] name = "openspiel:connect_four"``.

The bridge to the field's standard library of games (``open_spiel`` on the package
index, imported as ``pyspiel``), installed with the optional extra
``pip install 'arena[openspiel]'``. Only this package imports ``pyspiel``; the
registry (:mod:`games.registry`) imports it when a name starts with ``openspiel:``,
so Arena without the extra runs as before, and naming an OpenSpiel game without it
is one error that says which extra to install. README.md here is the user's page.

* :func:`register_openspiel_game` registers ``openspiel:NAME`` with a config class
  built from the parameters OpenSpiel declares for NAME (:mod:`._config`);
* :class:`OpenSpielGame` plays it under Arena's rules of a game (seeded chance,
  observations, records, copies: :mod:`._game`);
* :func:`state_from_observation` gives an agent a ``pyspiel.State`` to plan on from
  what its player saw (OpenSpiel's bots take states).
"""
from __future__ import annotations

try:
    import pyspiel  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError("OpenSpiel games need OpenSpiel: pip install 'arena[openspiel]' "
                      f"(open_spiel==2.0.2; {exc})") from None

from ._config import PREFIX, config_class_for, load, short_name
from ._game import HIDDEN, NO_ENTRY, OpenSpielGame, OpenSpielObservation, sample_world, state_from_observation

__all__ = ["HIDDEN", "NO_ENTRY", "PREFIX", "OpenSpielGame", "OpenSpielObservation", "config_class_for",
           "load", "register_openspiel_game", "sample_world", "short_name", "state_from_observation"]


def register_openspiel_game(name: str, register) -> None:
    """Register ``openspiel:NAME`` through ``register`` (:func:`games.registry.register`);
    ValueError naming close names if OpenSpiel has no game NAME."""
    config_cls = config_class_for(short_name(name))
    register(name, config_cls, OpenSpielGame, kernels=OpenSpielGame.kernels)
