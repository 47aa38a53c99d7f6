"""Tournaments: any number of entrants, a format, and the tables and games they expand into.

A study whose ``[design] format`` is not ``lineup`` is a tournament: its
``[[lineup]]`` lists the *entrants* (any number of them), and the format says who
meets whom. A *table* is one meeting: one entrant per *slot*, where a slot is a
team of the game (in a free-for-all every seat is its own team, so a 4-player
FFA table seats four entrants; in Pommerman's team mode a table seats two
entrants, each playing both seats of its team with two instances of itself).
Every table is played on its own board with every seat rotation, one game per
rotation (slot ``j`` of the table takes the seats of team ``(j + r) % slots`` in
rotation ``r``): the variance reduction of the seat swap, for k players.

Formats (the tables of one round):

* ``round_robin``: every set of ``slots`` entrants is a table (the complete
  design), so every pair of entrants shares the same number of tables,
  ``C(N - 2, slots - 2)`` per round, and every entrant sits every seat
  ``C(N - 1, slots - 1)`` times per round: exactly balanced for any N. 8 entrants
  at a 4-player game: 70 tables, 280 games per round. Fewer entrants than slots
  (one candidate and MCTS in a 4-player FFA): one table, the entrants repeated
  round the table (A B A B) so that each has as many seats as the numbers allow.
* ``swiss`` (two-slot games only): ``rounds`` rounds of ``N // 2`` tables, each a pair of
  entrants of equal or near points, no pair twice while avoidable, a bye for one entrant a
  round when N is odd; its rounds after the first are paired from the results
  (:mod:`cluster.spec.swiss` for the rule, :mod:`cluster.analysis.swiss` for the schedule,
  which numbers its games as an adaptive tournament does: board ``r * (N // 2) + j`` for
  table ``j`` of round ``r``). Not extended by a new entrant (refused).
* ``gauntlet``: the ``candidates`` against the *field* (every other entrant);
  a table is one candidate and ``slots - 1`` entrants of the field (every such
  set), and candidates never meet each other. A field smaller than ``slots - 1``
  is repeated round the table: one candidate against MCTS in a 4-player FFA is
  the table (candidate, MCTS, MCTS, MCTS), the candidate in each seat in turn.

An entrant that sits several seats of one game (a team, or a small field) plays
each with its own instance; their pairwise results with each other are not
counted (:mod:`cluster.analysis.leaderboard`).

``design.rounds`` repeats the tables on fresh boards. The seat order round a
table (who sits next to whom before the rotation) is drawn per table from the
study seed, so no pair of entrants is always neighbours.

**Numbering, and adding an entrant.** Tables are numbered by their newest
entrant (the highest lineup index at the table): all tables of entrants 0..i come
before any table of entrant i + 1, and the tables of one newest entrant are
listed in an order that does not depend on later entrants (the same holds for
their seat orders, drawn from ``SeedSequence(study_seed, spawn_key=(2, i))``).
Game ``g`` of a tournament is table ``t``, round ``r``, rotation ``j`` with
``g = (t * rounds + r) * slots + j``, on board seed ``t * rounds + r``; its seeds
come from the study seed and these indices (:mod:`cluster.spec.plan`). So an
entrant appended to ``[[lineup]]`` of a finished tournament adds tables and games
after every existing one: nothing played is renumbered, and a resume plays only
the new games (:func:`check_extension` refuses anything that is not such a pure
extension, naming the first game that would change; removing an entrant is
refused). Changing ``rounds`` renumbers the games, so it is a new study.

**Play order.** The plan is listed round by round (every table of round 0, then
of round 1, ...), so an interrupted tournament has met every entrant, and its
live leaderboard ranks them all.

    >>> tables = round_robin_tables(5, 4)
    >>> len(tables), tables[:2]
    (5, [(0, 1, 2, 3), (0, 1, 2, 4)])
    >>> gauntlet_tables(4, 2, candidates=(3,))
    [(3, 0), (3, 1), (3, 2)]
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cluster.spec.fields import SpecError
from cluster.spec.limits import check_count
from cluster.spec.tasks import SEAT_STREAM, GameTask, SeriesTask

__all__ = ["Table", "TournamentRound", "TournamentPlan", "plan_tournament", "round_robin_tables", "rotation_seatings",
           "table_series",
           "gauntlet_tables", "table_count", "slot_of_seats", "check_tournament", "check_extension", "balance_text",
           "TABLE_STREAM", "ExtensionError"]

#: First element of the spawn key of the seat orders of tables (``(TABLE_STREAM, newest entrant)``).
TABLE_STREAM = 2


class ExtensionError(SpecError):
    """A changed tournament that is not a pure extension of the stored one (one line)."""


@dataclass(frozen=True)
class Table:
    """One meeting of entrants, played on one board per round with every seat rotation."""

    table_id: int
    """Stable number of the table (tables are numbered by their newest entrant)."""
    entrants: tuple[int, ...]
    """Lineup index of the entrant at each slot (team) in rotation 0."""


@dataclass(frozen=True)
class TournamentRound:
    """The tables of one round and their games (one series per board, or per game)."""

    round: int
    """Index of the round, 0 .. rounds - 1."""
    tables: tuple[Table, ...]
    """Every table of the round, in table order."""
    series: tuple[SeriesTask, ...]
    """The round's series, in play order."""


@dataclass(frozen=True)
class TournamentPlan:
    """A tournament's plan: rounds of tables, and the slot of each seat."""

    rounds: tuple[TournamentRound, ...]
    """The rounds, in play order."""
    slot_of_seat: tuple[int, ...]
    """The slot (team) of every seat; a table has ``max + 1`` slots."""
    tables: tuple[Table, ...]
    """The tables of one round (every round plays the same tables on fresh boards)."""

    @property
    def slots(self) -> int:
        return max(self.slot_of_seat) + 1

    @property
    def series(self) -> list[SeriesTask]:
        """Every series, round by round: what :func:`cluster.spec.plan.plan_study` returns."""
        return [s for r in self.rounds for s in r.series]

    @property
    def total_games(self) -> int:
        return len(self.tables) * len(self.rounds) * self.slots


# --- the tables of a format ---------------------------------------------------------------
def round_robin_tables(entrants: int, slots: int) -> list[tuple[int, ...]]:
    """Every set of ``slots`` entrants, grouped by the newest (highest) entrant, each group
    in an order that later entrants do not change; fewer entrants than slots: one table
    that repeats them round it."""
    if entrants < slots:
        return [tuple(s % entrants for s in range(slots))]
    return [combo + (newest,) for newest in range(slots - 1, entrants)
            for combo in itertools.combinations(range(newest), slots - 1)]


def gauntlet_tables(entrants: int, slots: int, candidates: Sequence[int]) -> list[tuple[int, ...]]:
    """Every candidate with every set of ``slots - 1`` entrants of the field, grouped by the
    newest entrant at the table; a field smaller than ``slots - 1`` is repeated round the
    table, one table per field entrant to start from."""
    candidates = sorted(set(int(c) for c in candidates))
    is_candidate = set(candidates)
    field = [i for i in range(entrants) if i not in is_candidate]
    if len(field) < slots - 1:
        return [(c,) + tuple(field[(start + s) % len(field)] for s in range(slots - 1))
                for c in candidates for start in range(len(field))]
    tables = []
    for newest in range(entrants):
        before = [f for f in field if f < newest]
        if newest in is_candidate:
            tables += [(newest,) + combo for combo in itertools.combinations(before, slots - 1)]
        else:
            tables += [(c,) + combo + (newest,) for c in candidates if c < newest
                       for combo in itertools.combinations(before, slots - 2)]
    return tables


def slot_of_seats(seat_teams: Sequence[int]) -> tuple[int, ...]:
    """Each seat's slot: its team, numbered 0, 1, ... in the order the teams first appear."""
    order: dict[int, int] = {}
    return tuple(order.setdefault(int(t), len(order)) for t in seat_teams)


def _seat_orders(tables: list[tuple[int, ...]], seed: int) -> np.ndarray:
    """The tables with their entrants in a seat order drawn per table (``tables x slots``);
    the draws of the tables of newest entrant i come from ``SeedSequence(seed,
    spawn_key=(TABLE_STREAM, i))`` alone, so later entrants do not change them."""
    array = np.asarray(tables, dtype=np.int64)
    if array.size == 0:
        return array.reshape(0, 0)
    newest = array.max(axis=1)
    out = np.empty_like(array)
    bounds = np.flatnonzero(np.diff(newest)) + 1
    for block in np.split(np.arange(len(array)), bounds):
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(TABLE_STREAM, int(newest[block[0]]))))
        order = np.argsort(rng.random((len(block), array.shape[1])), axis=1, kind="stable")
        out[block] = np.take_along_axis(array[block], order, axis=1)
    return out


def _format_tables(spec) -> list[tuple[int, ...]]:
    design = spec.design
    slots = max(slot_of_seats(spec.seat_teams)) + 1
    if design.format == "gauntlet":
        labels = [seat.label for seat in spec.lineup]
        return gauntlet_tables(len(labels), slots, [labels.index(c) for c in design.candidates])
    return round_robin_tables(len(spec.lineup), slots)


# --- the plan -----------------------------------------------------------------------------
def plan_tournament(spec) -> TournamentPlan:
    """The tournament's rounds of tables and their games (see the module docstring); not for a
    Swiss tournament, whose rounds are paired as it plays (:class:`cluster.analysis.swiss.SwissSchedule`)."""
    design = spec.design
    if design.format == "swiss":
        raise ValueError("a swiss tournament's rounds are paired from its results: "
                         "cluster.analysis.swiss.SwissSchedule, or plan_study for round 1")
    slot_of_seat = slot_of_seats(spec.seat_teams)
    slots = max(slot_of_seat) + 1
    seats = len(slot_of_seat)
    rounds = design.repeats
    ordered = _seat_orders(_format_tables(spec), spec.seed)
    tables = tuple(Table(t, tuple(row)) for t, row in enumerate(ordered.tolist()))  # tolist: Python ints
    by_game = design.series_by == "game"
    seatings = rotation_seatings(ordered, slot_of_seat)
    planned = []
    for r in range(rounds):
        series = []
        for t, rotations in enumerate(seatings):
            board = t * rounds + r
            series += table_series(rotations, board, board * slots, by_game)
        planned.append(TournamentRound(round=r, tables=tables, series=tuple(series)))
    return TournamentPlan(rounds=tuple(planned), slot_of_seat=slot_of_seat, tables=tables)


def rotation_seatings(tables, slot_of_seat: Sequence[int]) -> list[list[tuple[int, ...]]]:
    """For every table (entrant per slot, rows of ``tables``), the entrant at every seat in
    each rotation: seat ``s`` of rotation ``j`` is slot ``(slot_of_seat[s] + j) % slots``."""
    slots, seats = max(slot_of_seat) + 1, len(slot_of_seat)
    slot_at = np.array([[(slot_of_seat[s] + j) % slots for s in range(seats)] for j in range(slots)])
    array = np.asarray(tables, dtype=np.int64).reshape(-1, slots)
    return [list(map(tuple, table)) for table in array[:, slot_at].tolist()]


def table_series(rotations: Sequence[tuple[int, ...]], board: int, first_game: int,
                 by_game: bool) -> list[SeriesTask]:
    """The games of one table on board seed ``board``, one per rotation (``rotations``: the
    entrant at every seat, :func:`rotation_seatings`), numbered from ``first_game``: one
    series of them all, or (``by_game``) one series per game. A schedule that adds tables
    (an adaptive tournament) builds its games here, on board seeds and game indices past the
    plan's."""
    task, series_task, stream = GameTask, SeriesTask, SEAT_STREAM  # ~10^5 games: positional, local names
    if by_game:
        return [series_task(first_game + j, (task(first_game + j, first_game + j, 0, board, seating,
                                                  (stream, first_game + j)),))
                for j, seating in enumerate(rotations)]
    return [series_task(board, tuple(task(first_game + j, board, j, board, seating, (stream, first_game + j))
                                     for j, seating in enumerate(rotations)))]


def table_count(format: str, entrants: int, slots: int, candidates: int = 0) -> int:
    """Tables of one round (:func:`round_robin_tables`, :func:`gauntlet_tables`), counted
    without listing them.

    >>> table_count("round_robin", 5, 4), table_count("gauntlet", 4, 2, candidates=1)
    (5, 3)
    """
    if format == "swiss":
        return entrants // 2
    if format == "gauntlet":
        field = entrants - candidates
        return candidates * (field if field < slots - 1 else math.comb(field, slots - 1))
    return 1 if entrants < slots else math.comb(entrants, slots)


def _check_size(spec) -> None:
    """The tournament's games within ``spec.limits`` before its tables are listed (a round
    robin of 300 entrants at a 4-seat table is 330,791,175 tables); names ``lineup`` when
    one round is over the limit, else ``design.rounds``."""
    design = spec.design
    slots = max(slot_of_seats(spec.seat_teams)) + 1
    tables = table_count(design.format, len(spec.lineup), slots, len(design.candidates))
    adaptive = design.stop is not None  # plays at most its cap, chosen among one round's tables
    rounds = 1 if adaptive else design.repeats
    games = tables * rounds * slots
    shown = (f"a {design.format} of {len(spec.lineup)} entrants at {slots}-entrant tables is {tables} tables x "
             f"{rounds} round{'s' * (rounds != 1)} x {slots} seat rotations = {games} games")
    where = "lineup" if tables * slots > spec.limits.games or rounds == 1 else "design.rounds"
    check_count(where, games, spec.limits, "games", "games per study", shown)


def tournament_games(spec) -> int:
    """Games of the tournament, without building its plan."""
    slots = max(slot_of_seats(spec.seat_teams)) + 1
    if spec.design.format == "swiss":
        return table_count("swiss", len(spec.lineup), slots) * spec.design.repeats * slots
    return len(_format_tables(spec)) * spec.design.repeats * slots


def check_tournament(spec) -> None:
    """What the design alone cannot check: the candidates are entrants, the field is not
    empty; sets the design's game count. Raises SpecError naming the field."""
    design = spec.design
    labels = [seat.label for seat in spec.lineup]
    for i, label in enumerate(design.candidates):
        if label not in labels:
            raise SpecError(f"design.candidates[{i}]: no lineup label {label!r}; labels: {labels}")
    if design.format == "gauntlet" and len(design.candidates) == len(labels):
        raise SpecError(f"design.candidates: every entrant is a candidate, so the field is empty; "
                        f"a gauntlet needs entrants that are not candidates, got {list(design.candidates)}")
    if design.format == "swiss":
        _check_swiss(spec)
    _check_size(spec)
    games = tournament_games(spec)
    if design.stop is not None:  # an adaptive tournament: at most its cap
        slots = max(slot_of_seats(spec.seat_teams)) + 1
        if len(labels) < max(slots, 3):
            raise SpecError(f"design.stop.ranking: an adaptive schedule needs at least {max(slots, 3)} entrants "
                            f"(one per seat of a table, and more than one pair to order), got {len(labels)}")
        games = design.stop.ranking.max_games or games
        if games < slots:
            raise SpecError(f"design.stop.ranking.max_games: at least one table's games ({slots}), got {games}")
    object.__setattr__(design, "_tournament_games", games)


def _check_swiss(spec) -> None:
    """A Swiss tournament: a two-slot game, and fewer rounds than entrants (N - 1 rounds at
    most can pair everyone without a rematch); one line naming the field."""
    slots = max(slot_of_seats(spec.seat_teams)) + 1
    n, rounds = len(spec.lineup), spec.design.repeats
    if slots != 2:
        raise SpecError(f"design.format: \"swiss\" pairs two entrants a table, and this game's tables seat "
                        f"{slots} ({len(spec.seat_teams)} seats in {slots} teams); use "
                        f"\"round_robin\" or \"gauntlet\"")
    if rounds >= n:
        raise SpecError(f"design.rounds: a swiss of {n} entrants has at most {n - 1} round"
                        f"{'s' * (n - 1 != 1)} (each entrant meets each other at most once), got {rounds}; "
                        f"use a round robin to meet everyone")


# --- balance --------------------------------------------------------------------------------
def meetings(plan: TournamentPlan, labels: Sequence[str]) -> dict[tuple[str, str], int]:
    """Tables per round shared by every pair of different entrants that meet at all."""
    count: Counter = Counter()
    for table in plan.tables:
        for a, b in itertools.combinations(sorted(set(table.entrants)), 2):
            count[(labels[a], labels[b])] += 1
    return dict(count)


def _spread(values) -> str:
    values = sorted(set(values))
    return f"{values[0]}" if len(values) == 1 else f"{values[0]} to {values[-1]}"


def balance_text(spec, plan: TournamentPlan | None = None) -> str:
    """One paragraph: the tables of a round, how often entrants meet and sit each slot (a seat,
    or a team's side); a gauntlet's meetings are those of candidates with the field."""
    plan = plan or plan_tournament(spec)
    labels = [seat.label for seat in spec.lineup]
    slots, tables, rounds = plan.slots, len(plan.tables), len(plan.rounds)
    teams = len(plan.slot_of_seat) != slots
    pairs = meetings(plan, labels)
    per_slot = Counter(e for t in plan.tables for e in t.entrants)
    text = (f"{spec.design.format} of {len(labels)} entrants at {slots}-slot tables"
            f"{' (teams of ' + str(len(plan.slot_of_seat) // slots) + ' seats)' if teams else ''}: "
            f"{tables} table{'s' * (tables != 1)} x {rounds} round{'s' * (rounds != 1)} x {slots} seat rotations "
            f"= {plan.total_games} games, each table on its own board. ")
    where = "side" if teams else "seat"
    candidates = set(spec.design.candidates)
    if candidates:
        met = [n for (a, b), n in pairs.items() if (a in candidates) != (b in candidates)]
        text += (f"Every candidate meets every field entrant at {_spread(met)} tables per round; every "
                 f"candidate plays every {where} {_spread(per_slot[i] for i, l in enumerate(labels) if l in candidates)} "
                 f"times and every field entrant {_spread(per_slot[i] for i, l in enumerate(labels) if l not in candidates)} "
                 f"times per round.")
        return text
    if pairs:
        counts = set(pairs.values())
        text += (f"Every pair of entrants shares {_spread(counts)} table{'s' * (max(counts) != 1)} per round"
                 f"{' (exactly balanced)' if len(counts) == 1 else ' (as near as the numbers allow)'}; ")
    text += f"every entrant plays every {where} {_spread(per_slot.values())} times per round."
    return text


# --- extending a tournament -------------------------------------------------------------------
def check_extension(stored, spec) -> None:
    """Refuse ``spec`` as the continuation of the stored tournament ``stored`` (both
    :class:`cluster.spec.study.StudySpec`) unless it only appends entrants (and
    candidates among them) and every stored game keeps its index, table, seats and
    seeds. Raises :class:`ExtensionError` in one line."""
    old, new = [s.label for s in stored.lineup], [s.label for s in spec.lineup]
    if stored.design.stop is not None or spec.design.stop is not None:
        raise ExtensionError("design.stop.ranking: an adaptive tournament is not extended: its rounds were "
                             "chosen from its entrants' results, so a new entrant changes every choice "
                             "after the seed round; use a new study id")
    if "swiss" in (stored.design.format, spec.design.format) and stored.design.format == spec.design.format:
        if old != new:
            raise ExtensionError("lineup: a swiss tournament is not extended or changed: its pairings after "
                                 "round 1 follow from its entrants' results, so another entrant changes every "
                                 "pairing; use a new study id")
        return  # the same entrants: the same pairings from the same results
    if stored.design.format != spec.design.format:
        raise ExtensionError(f"design.format: the stored tournament is a {stored.design.format}, now "
                             f"{spec.design.format}; use a new study id")
    missing = [label for label in old if label not in new]
    if missing:
        raise ExtensionError(f"lineup: entrant{'s' * (len(missing) > 1)} {missing} of the stored tournament "
                             f"{'are' if len(missing) > 1 else 'is'} missing; entrants can be added (at the end "
                             f"of [[lineup]]), never removed (their games are in the store and every later game "
                             f"would be renumbered); use a new study id for a smaller field")
    if new[:len(old)] != old:
        raise ExtensionError(f"lineup: the stored entrants {old} must keep their order at the start of "
                             f"[[lineup]] (new entrants go after them), got {new}")
    gone = [c for c in stored.design.candidates if c not in spec.design.candidates]
    if gone:
        raise ExtensionError(f"design.candidates: {gone} were candidates of the stored gauntlet; "
                             f"candidates can be added (new entrants), never removed")
    turned = [c for c in spec.design.candidates if c not in stored.design.candidates and c in old]
    if turned:
        raise ExtensionError(f"design.candidates: {turned} already played as the field; only a new "
                             f"entrant can join as a candidate")
    before, after = plan_tournament(stored).series, plan_tournament(spec).series
    now = {g.game_index: g for s in after for g in s.games}
    for series in before:
        for game in series.games:
            other = now.get(game.game_index)
            if other != game:
                seats = [old[e] for e in game.seat_lineup]
                raise ExtensionError(f"lineup: adding {new[len(old):]} changes stored game {game.game_index} "
                                     f"(board {game.board_seed}, seats {seats}): not a pure extension"
                                     f"{' (a table with fewer entrants than seats is re-seated)' if other else ''}; "
                                     f"use a new study id")

