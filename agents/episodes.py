"""Playing a game: the one loop every benchmark, probe and diagnostic and the agent
contract run, with random players or with agents.

    >>> import numpy as np
    >>> from games.registry import make_game
    >>> from agents.episodes import play, random_players
    >>> game = make_game("birds")
    >>> game.reset(0)
    >>> steps = play(game, random_players(np.random.default_rng(0), game.num_players))
    >>> game.done and steps == game.step_count
    True

A *player* is a callable ``(game, seat) -> action``. At every step :func:`play` asks
the seats of ``game.acting_players()``, in that order, and passes 0 for the others
(which ``Game.step`` ignores), so a turn-based game asks one seat per step and
Pommerman every seat still alive. :func:`random_player` draws uniformly over the
seat's legal actions; :func:`agent_player` asks an :class:`~agents.api.Agent` for its
move (``act``, timed and counted) on the seat's view; any other callable (a timed
decision, a checked one, one that records what it saw) plays a seat the same way.
:func:`begin_game` and :func:`end_game` frame a game of agents as the cluster does;
they are apart from :func:`play` because some callers act between them and the
first step (a warm-up decision that compiles the kernels).

Hooks: ``until(game)`` ends the game early (checked before each step, after
``game.done``), ``before_step(game)`` sees each position before the players are
asked, ``after_step(game, joint)`` each joint action once it is played (a fresh list
per step, safe to keep).

The study's own loop (:func:`cluster.run.play.play_recorded_game`) is not this one:
it names the seat or the game that raised in the row's error and keeps the
traceback of that frame, and an error row written through an extra frame would
not be byte-identical to the rows stored before.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["Player", "play", "random_player", "random_players", "agent_player", "agent_players",
           "begin_game", "end_game"]

Player = Callable[[object, int], int]
"""``(game, seat) -> action``: the action of ``seat`` in ``game`` as it stands."""


def play(game, players: Sequence[Player], *, max_steps: int | None = None,
         until: Callable[[object], bool] | None = None,
         before_step: Callable[[object], None] | None = None,
         after_step: Callable[[object, list[int]], None] | None = None) -> int:
    """Play ``game`` (already reset) with ``players[seat]`` for each seat until it is
    done, ``max_steps`` steps were played, or ``until(game)`` is true; returns the
    steps played here.

    Args:
        game: a :class:`games.api.Game` after ``reset``.
        players: one :data:`Player` per seat (only the acting seats are asked).
        max_steps: steps to play at most (None: no limit).
        until: checked before every step: true ends the game here.
        before_step: called with the game before the players of a step are asked.
        after_step: called with the game and the joint action after every step.
    """
    if len(players) != game.num_players:
        raise ValueError(f"players: one per seat, expected {game.num_players}, got {len(players)}")
    steps = 0
    while not game.done and (max_steps is None or steps < max_steps) and not (until and until(game)):
        if before_step is not None:
            before_step(game)
        joint = [0] * game.num_players
        for seat in game.acting_players():
            joint[seat] = players[seat](game, seat)
        game.step(joint)
        steps += 1
        if after_step is not None:
            after_step(game, joint)
    return steps


def random_player(rng: np.random.Generator) -> Player:
    """A player uniform over the seat's legal actions, drawn from ``rng``
    (``rng.choice`` of the legal actions in increasing order)."""

    def choose(game, seat: int) -> int:
        return int(rng.choice(np.flatnonzero(game.legal_actions(seat))))

    return choose


def random_players(rng: np.random.Generator, num_players: int) -> list[Player]:
    """:func:`random_player` in every seat, all drawing from the one ``rng`` (in the
    order the seats are asked)."""
    return [random_player(rng)] * num_players


def agent_player(agent) -> Player:
    """A player that asks ``agent`` (``Agent.act``: timed and counted) for its move on
    the seat's view: its observation, or the whole state for an agent that reads it
    (``Agent.reads_true_state``, as in the cluster's game loop)."""

    def choose(game, seat: int) -> int:
        view = game.true_state_view() if agent.reads_true_state else game.observation(seat)
        return agent.act(view)

    return choose


def agent_players(agents: Sequence) -> list[Player]:
    """:func:`agent_player` of ``agents[seat]`` in every seat."""
    return [agent_player(agent) for agent in agents]


def begin_game(agents: Sequence, seat_seeds: Sequence) -> None:
    """``agents[seat].begin_game(seat, seat_seeds[seat])`` for every seat, in seat order."""
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, seat_seeds[seat])


def end_game(game, agents: Sequence) -> None:
    """``agents[seat].end_game(observation, returns)`` for every seat once ``game`` is
    over (the learning hook; returns as float64, as the cluster passes them)."""
    returns = np.asarray(game.returns(), dtype=np.float64)
    for seat, agent in enumerate(agents):
        agent.end_game(game.observation(seat), returns)
