"""PettingZoo environments for every Arena game (above the games floor; ``games/``
knows nothing of PettingZoo, and ``import agents`` does not load this package).

    >>> from agents.pettingzoo import env, parallel_env
    >>> aec = env("scotland_yard")             # turn-based: Mr X, then each detective
    >>> aec.reset(seed=7)
    >>> aec.agent_selection
    'player_0'
    >>> par = parallel_env("pommerman", view_range=2)   # simultaneous moves, fog of 2
    >>> observations, infos = par.reset(seed=7)
    >>> sorted(observations["player_0"])
    ['action_mask', 'observation']

``observation="planes"`` gives one float32 Box per game instead (Pommerman's featurized
planes, OpenSpiel's tensors), the action mask in ``infos``: what networks and SuperSuit's
wrappers take. ``aec_to_parallel(env(game))`` works for the games whose players all act
at every step (``is_parallelizable``: Pommerman, OpenSpiel's simultaneous-move games).
OpenSpiel games (``env("openspiel:leduc_poker")``) get the face too, with Arena's seeded
chance and the same games as a study's.

``env(game, **options)`` is the AEC form (any game; the turn-based games'
natural one), ``parallel_env(game, **options)`` the Parallel form (any game;
Pommerman's natural one). ``game`` is a name of :mod:`games.registry`, so a
game registered by a plugin gets a face too if its observation is a state
layout; ``options`` are the game's options, validated as in a study spec
(``view_range``, ``mode``, ``ruleset``, ``max_steps``, ...). See
:mod:`agents.pettingzoo._face` for what each part of the API comes from.
"""
from __future__ import annotations

from ._face import ArenaAECEnv, ArenaParallelEnv, GameFace

__all__ = ["env", "parallel_env", "ArenaAECEnv", "ArenaParallelEnv", "GameFace"]


def env(game: str, render_mode: str | None = None, observation: str = "fields", **game_options) -> ArenaAECEnv:
    """The AEC environment of Arena game ``game`` with ``game_options``; ``observation``:
    ``fields`` (a Dict of the game's observed arrays and the action mask) or ``planes``
    (one float32 Box, the mask in ``infos``)."""
    return ArenaAECEnv(game, render_mode=render_mode, observation=observation, **game_options)


def parallel_env(game: str, render_mode: str | None = None, observation: str = "fields",
                 **game_options) -> ArenaParallelEnv:
    """The Parallel environment of Arena game ``game`` with ``game_options`` (``observation``
    as for :func:`env`)."""
    return ArenaParallelEnv(game, render_mode=render_mode, observation=observation, **game_options)
