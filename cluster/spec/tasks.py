"""The tasks a plan is made of: one game (:class:`GameTask`) and a series of games
(:class:`SeriesTask`), with the streams their seeds are spawned from.

Shared by the plan of a lineup study (:mod:`cluster.spec.plan`) and of a tournament
(:mod:`cluster.spec.tournament`); the seeds themselves are drawn in ``plan``
(``board_seed_sequence``, ``seat_seed_sequence``).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GameTask", "SeriesTask", "BOARD_STREAM", "SEAT_STREAM"]

#: First element of the spawn key of board seeds.
BOARD_STREAM = 0
#: First element of the spawn key of agents' seat seeds.
SEAT_STREAM = 1


@dataclass(frozen=True, slots=True)
class GameTask:
    """One game of the plan."""

    game_index: int
    """Global index of the game, 0 .. total_games - 1, stable for a spec."""
    series_id: int
    """The series the game belongs to."""
    index_in_series: int
    """Position of the game in its series (learned state flows in this order)."""
    board_seed: int
    """Index of the board seed (the board comes from ``board_seed_sequence``)."""
    seat_lineup: tuple[int, ...]
    """Lineup index of the agent sitting at each seat."""
    spawn_key: tuple[int, ...]
    """``(SEAT_STREAM, game_index)``: the prefix of this game's seat seeds."""
    condition: int = 0
    """Index of the condition (combination of ``design.vary`` game options)."""


@dataclass(frozen=True)
class SeriesTask:
    """Games that run in order on one actor, sharing learned state."""

    series_id: int
    """Index of the series, 0 .. number of series - 1."""
    games: tuple[GameTask, ...]
    """The games, in the order they are played."""

    @property
    def game_indices(self) -> tuple[int, ...]:
        return tuple(g.game_index for g in self.games)
