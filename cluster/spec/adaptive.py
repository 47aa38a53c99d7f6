"""The tables of an adaptive tournament and the games they expand into.

An adaptive tournament (``[design] format = "round_robin"`` with ``stop = { ranking =
{ ... } }``, :class:`cluster.spec.study.RankingSpec`) is played in *rounds*. Its first
``seed_rounds`` rounds play a fixed design, the *seed design*; every later round plays
the tables the schedule chose from the results of the rounds before it
(:mod:`cluster.analysis.adaptive`). This module holds what does not depend on results:

* :func:`covering_tables`, the seed design: tables of ``slots`` entrants such that every
  pair of entrants shares at least one table and every entrant sits at about as many
  tables (for two-player games: every pair once, the round robin's round). A greedy
  covering, so that a 16-entrant four-player field starts from about 20 tables, not the
  1,820 of the complete design.
* :func:`round_series`, the games of one round: table ``j`` of a round is board
  ``first_board + j`` (boards are numbered on through the rounds, one per table), played
  with every seat rotation, game ``board * slots + rotation``, its seeds drawn from the
  study seed and these indices (:mod:`cluster.spec.plan`). The order of entrants round a
  table is drawn from ``SeedSequence(seed, spawn_key=(ADAPTIVE_TABLE_STREAM, round))``. So
  a round's games follow from its tables and the boards before it, whatever ran them.

    >>> covering_tables(4, 2)
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    >>> len(covering_tables(16, 4)) <= 24
    True
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from cluster.spec.tasks import SeriesTask
from cluster.spec.tournament import rotation_seatings, slot_of_seats, table_series

__all__ = ["ADAPTIVE_TABLE_STREAM", "covering_tables", "seat_orders", "round_series", "seed_round_tables",
           "adaptive_seed_series", "adaptive_text"]

#: First element of the spawn key of the seat orders of an adaptive round (``(stream, round)``).
ADAPTIVE_TABLE_STREAM = 3


def covering_tables(entrants: int, slots: int) -> list[tuple[int, ...]]:
    """Tables of ``slots`` entrants (sorted tuples) such that every pair of the ``entrants``
    shares at least one; each new table starts from the entrant seated least so far and adds
    the entrant that meets the most partners it has not met yet (ties: fewer tables, then the
    lower index). Two slots: every pair once. Fewer entrants than slots: one table with the
    entrants repeated round it."""
    if entrants < 2:
        raise ValueError(f"entrants: a tournament needs at least two, got {entrants}")
    if entrants <= slots:
        return [tuple(s % entrants for s in range(slots))]
    if slots == 2:
        return list(itertools.combinations(range(entrants), 2))
    met = np.eye(entrants, dtype=bool)
    seated = np.zeros(entrants, dtype=np.int64)
    tables = []
    while not met.all():
        unmet = (~met).sum(axis=1)
        first = int(np.lexsort((np.arange(entrants), seated, -unmet))[0])  # most unmet, fewest tables
        table = [first]
        while len(table) < slots:
            gain = (~met[:, table]).sum(axis=1)
            gain[table] = -1
            nxt = int(np.lexsort((np.arange(entrants), seated, -gain))[0])
            table.append(nxt)
        for a, b in itertools.combinations(table, 2):
            met[a, b] = met[b, a] = True
        seated[table] += 1
        tables.append(tuple(sorted(table)))
    return tables


def seat_orders(tables: Sequence[Sequence[int]], seed: int, round_index: int,
                stream: int = ADAPTIVE_TABLE_STREAM) -> np.ndarray:
    """The tables (``tables x slots``) with their entrants in an order round the table drawn
    per table from ``SeedSequence(seed, spawn_key=(stream, round_index))`` (``stream``:
    :data:`ADAPTIVE_TABLE_STREAM`, or a Swiss tournament's :data:`cluster.spec.swiss.SWISS_TABLE_STREAM`)."""
    array = np.asarray(tables, dtype=np.int64)
    if array.size == 0:
        return array.reshape(0, 0)
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(stream), int(round_index))))
    order = np.argsort(rng.random(array.shape), axis=1, kind="stable")
    return np.take_along_axis(array, order, axis=1)


def round_series(tables: Sequence[Sequence[int]], slot_of_seat: Sequence[int], seed: int, round_index: int,
                 first_board: int, by_game: bool,
                 stream: int = ADAPTIVE_TABLE_STREAM) -> tuple[np.ndarray, list[SeriesTask]]:
    """The seated tables of one round and its series (see the module docstring): table ``j``
    on board ``first_board + j``, its games ``board * slots + rotation``; the seat orders
    from ``stream`` (:func:`seat_orders`)."""
    slots = max(slot_of_seat) + 1
    ordered = seat_orders(tables, seed, round_index, stream)
    series: list[SeriesTask] = []
    for j, rotations in enumerate(rotation_seatings(ordered, slot_of_seat)):
        board = first_board + j
        series += table_series(rotations, board, board * slots, by_game)
    return ordered, series


def seed_round_tables(entrants: int, slot_of_seat: Sequence[int]) -> list[tuple[int, ...]]:
    """The tables of one round of the seed design (:func:`covering_tables`)."""
    return covering_tables(entrants, max(slot_of_seat) + 1)


def adaptive_seed_series(spec) -> list[SeriesTask]:
    """The series of an adaptive tournament's seed rounds: what is planned before any result
    (:func:`cluster.spec.plan.plan_study` of such a spec). The rest is chosen as it plays."""
    slot_of_seat = slot_of_seats(spec.seat_teams)
    ranking = spec.design.stop.ranking
    tables = seed_round_tables(len(spec.lineup), slot_of_seat)
    by_game = spec.design.series_by == "game"
    series, board = [], 0
    for r in range(ranking.seed_rounds):
        _, more = round_series(tables, slot_of_seat, spec.seed, r, board, by_game)
        series += more
        board += len(tables)
    return series


def adaptive_text(spec) -> str:
    """One paragraph for ``arena run --check``: the seed design, how rounds grow, the stop."""
    ranking = spec.design.stop.ranking
    slot_of_seat = slot_of_seats(spec.seat_teams)
    slots = max(slot_of_seat) + 1
    tables = seed_round_tables(len(spec.lineup), slot_of_seat)
    rounds = (f"{ranking.tables_per_round} tables a round" if ranking.tables_per_round else
              f"rounds of {ranking.round_growth:g} x the boards so far (at least {max(len(spec.lineup) // 2, 1)} tables)")
    return (f"adaptive schedule of {len(spec.lineup)} entrants at {slots}-slot tables: a seed design of "
            f"{len(tables)} tables ({len(tables) * slots} games, every pair of entrants at a table) x "
            f"{ranking.seed_rounds} round{'s' * (ranking.seed_rounds != 1)}, then {rounds} chosen where the "
            f"leaderboard is least resolved, every table on its own board with every seat rotation; stops once "
            f"every adjacent pair is ordered or within {ranking.delta_elo:g} Elo at confidence "
            f"{ranking.confidence:g} (per pair), or at the cap of {spec.design.total_games} games.")
