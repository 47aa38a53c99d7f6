"""Rounds that depend on results: the mechanism shared by the tournaments whose later rounds
are chosen from earlier results (the adaptive schedule, :mod:`cluster.analysis.adaptive`, and
the Swiss system, :mod:`cluster.analysis.swiss`).

A :class:`RoundSchedule` holds the rounds planned so far (tables, boards, games) and the
result of every game recorded; :meth:`RoundSchedule.advance` reads every newly *complete*
round (every game recorded, errored games included) in plan order, and once every planned
round is complete asks the subclass to decide (``_look``): stop, or plan the next round.

**Determinism.** A decision reads the results of complete rounds only, in plan order, and
nothing else (no clock, no arrival order, no count of hosts): the same results give the same
rounds. A driver killed and restarted feeds the stored games to a new schedule
(:meth:`RoundSchedule.add_frame`), which takes the same decisions again and asks only for the
games still missing. Table ``j`` of a round is board ``first_board + j`` (boards numbered on
through the rounds, one per table), its games ``board * slots + rotation``, so every game's
seeds follow from the study seed and these indices (:func:`cluster.spec.adaptive.round_series`).

**Checked on resume.** A stored game is read only if it was played as the schedule plans it
(the same entrants at the same seats, on the same board) and every stored game is one the
schedule plans: games played to another plan (a study begun by a version of Arena whose
schedule decided otherwise) are refused (:class:`PlanMismatch`, the driver's exit 2), never
read as if they were this plan's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cluster.analysis.ratings import RESULT_RANK
from cluster.results.store import StoreError
from cluster.spec.adaptive import ADAPTIVE_TABLE_STREAM, round_series
from cluster.spec.tasks import SeriesTask

__all__ = ["RoundSchedule", "ScheduledRound", "RUNNING", "PlanMismatch"]


class PlanMismatch(StoreError):
    """Stored games that this schedule does not plan, or plans otherwise (module docstring)."""

#: The decision of a schedule that still plans rounds.
RUNNING = "running"


@dataclass(frozen=True)
class ScheduledRound:
    """One round: its tables, boards and games."""

    index: int
    tables: tuple[tuple[int, ...], ...]
    """Entrant at each slot of every table (rotation 0), in board order."""
    first_board: int
    """Board of the first table; table ``j`` is board ``first_board + j``."""
    games: tuple[int, ...]
    """Game indices of the round."""
    series: tuple[SeriesTask, ...]
    open_pairs: int = -1
    """Open adjacent pairs at the look that chose the round (-1: a seed round; adaptive only)."""


class RoundSchedule:
    """Rounds planned from complete rounds (module docstring). Subclasses plan their first
    rounds in ``__init__`` (:meth:`_add_round`) and implement ``_read(round)`` (take in the
    results of a complete round) and ``_look()`` (decide once every planned round is
    complete: set ``decision`` and return ``[]``, or return the series of a new round).

    ``slot_of_seat``: the slot (team) of every seat; ``seed``: the study seed; ``by_game``: one
    series per game (else one per board); ``stream``: the first element of the spawn key of
    the rounds' seat orders."""

    def __init__(self, slot_of_seat: Sequence[int], seed: int, by_game: bool,
                 stream: int = ADAPTIVE_TABLE_STREAM):
        self.slot_of_seat = tuple(int(s) for s in slot_of_seat)
        self.slots = max(self.slot_of_seat) + 1
        self.seats = len(self.slot_of_seat)
        self.seed = int(seed)
        self.by_game = bool(by_game)
        self.stream = int(stream)
        self.rounds: list[ScheduledRound] = []
        self.seating: dict[int, tuple[int, ...]] = {}
        self.board_of: dict[int, int] = {}
        self.ranks: dict[int, np.ndarray | None] = {}
        self.read_rounds = 0
        """Rounds whose results have been read."""
        self.decision = RUNNING

    labels: list[str] | None = None
    """Every entrant's label (a subclass's; stored games are checked against it on resume)."""

    # --- the plan so far ------------------------------------------------------------------
    @property
    def games_planned(self) -> int:
        return sum(len(r.games) for r in self.rounds)

    @property
    def boards_planned(self) -> int:
        return sum(len(r.tables) for r in self.rounds)

    def series(self) -> list[SeriesTask]:
        """Every series planned so far, round by round."""
        return [s for r in self.rounds for s in r.series]

    def _add_round(self, tables: Sequence[Sequence[int]], open_pairs: int = -1) -> ScheduledRound:
        index = len(self.rounds)
        first_board = self.boards_planned
        ordered, series = round_series(tables, self.slot_of_seat, self.seed, index, first_board, self.by_game,
                                       stream=self.stream)
        games = []
        for s in series:
            for g in s.games:
                self.seating[g.game_index] = tuple(g.seat_lineup)
                self.board_of[g.game_index] = g.board_seed
                games.append(g.game_index)
        scheduled = ScheduledRound(index=index, tables=tuple(map(tuple, ordered.tolist())), first_board=first_board,
                                   games=tuple(sorted(games)), series=tuple(series), open_pairs=open_pairs)
        self.rounds.append(scheduled)
        return scheduled

    # --- results --------------------------------------------------------------------------
    def record(self, game_index: int, ranks: Sequence[int] | None) -> None:
        """The result of a planned game: each seat's rank (2 win, 1 tie, 0 loss), or None for
        an errored game (it completes its round and counts nothing)."""
        game_index = int(game_index)
        if game_index not in self.seating:
            raise ValueError(f"game {game_index} is not in the plan so far")
        self.ranks[game_index] = None if ranks is None else np.asarray(ranks, dtype=np.int64)

    def add_game(self, rows: Sequence[dict]) -> None:
        """The rows of one recorded game (one per seat, as the store holds them)."""
        if not rows:
            return
        game_index = int(rows[0]["game_index"])
        if game_index not in self.seating:
            return  # not planned yet: add_frame checks that every stored game is, in the end
        by_seat = sorted(rows, key=lambda r: int(r["seat"]))
        self._check_planned(game_index, by_seat)
        results = [r["result"] for r in by_seat]
        self.record(game_index, None if "error" in results else [RESULT_RANK[r] for r in results])

    def add_frame(self, df) -> list[SeriesTask]:
        """The stored rows of the study (a resume): every game recorded, every decision they
        allow taken again; returns the series of the rounds decided on the way."""
        if df is None or not len(df):
            return []
        games = {int(g): rows for g, rows in df.groupby("game_index", sort=True)}
        added: list[SeriesTask] = []
        while True:
            for game_index in [g for g in self.seating if g in games and g not in self.ranks]:
                self.add_game(games[game_index].to_dict("records"))
            more = self.advance()
            if not more:
                break
            added += more
        unplanned = sorted(set(games) - set(self.seating))
        if unplanned:
            raise PlanMismatch(f"{len(unplanned)} stored games (game_index {unplanned[0]}"
                               f"{', ...' if len(unplanned) > 1 else ''}) are not in the plan this schedule "
                               f"decides from the games before them: {_ANOTHER_PLAN}")
        return added

    def _check_planned(self, game_index: int, by_seat: Sequence[dict]) -> None:
        """Refuse a stored game played otherwise than planned (where the rows say: a store's
        rows carry the seats' labels and the board)."""
        if self.labels is not None and all("label" in r for r in by_seat):
            planned = [self.labels[e] for e in self.seating[game_index]]
            stored = [r["label"] for r in by_seat]
            if stored != planned:
                raise PlanMismatch(f"game {game_index} was played with {stored} at its seats, but this "
                                   f"schedule plans {planned}: {_ANOTHER_PLAN}")
        if all("board_seed" in r for r in by_seat):
            boards = {int(r["board_seed"]) for r in by_seat}
            if boards != {int(self.board_of[game_index])}:
                raise PlanMismatch(f"game {game_index} was played on board {sorted(boards)[0]}, but this "
                                   f"schedule plans board {self.board_of[game_index]}: {_ANOTHER_PLAN}")

    # --- decisions ------------------------------------------------------------------------
    def _complete(self, scheduled: ScheduledRound) -> bool:
        return all(g in self.ranks for g in scheduled.games)

    @property
    def finished(self) -> bool:
        """Decided: nothing more is planned."""
        return self.decision != RUNNING

    def advance(self) -> list[SeriesTask]:
        """Read every newly complete round in order; once every planned round is complete,
        look and decide: stop, or plan the next round (its series are returned)."""
        if self.finished:
            return []
        while self.read_rounds < len(self.rounds) and self._complete(self.rounds[self.read_rounds]):
            self._read(self.rounds[self.read_rounds])
            self.read_rounds += 1
        if self.read_rounds < len(self.rounds):
            return []
        return self._look()

    def _read(self, scheduled: ScheduledRound) -> None:
        raise NotImplementedError

    def _look(self) -> list[SeriesTask]:
        raise NotImplementedError


_ANOTHER_PLAN = ("the study's games were played to another plan (begun by a version of Arena whose schedule "
                 "decided otherwise?); finish it with that version, or start it afresh in a new results directory")


def replayed_schedule(cls, study_dir, rows, applies, what: str):
    """``cls.from_spec`` of the stored spec of ``study_dir`` (when ``applies(design)``), fed
    ``rows``, and its ``result()``; None for any other study, or (with a warning naming
    ``what``) when the spec cannot be rebuilt here (e.g. a plugin agent not imported)."""
    import warnings
    from pathlib import Path

    from cluster.results.store import StoreError, read_stored_spec
    from cluster.spec.fields import SpecError

    try:
        stored = read_stored_spec(study_dir)
    except StoreError:
        return None
    if stored is None or stored.design is None or not applies(stored.design):
        return None
    try:
        spec = stored.study_spec()
    except SpecError as exc:
        warnings.warn(f"{Path(study_dir) / 'spec.json'}: {what} not reported ({exc})", RuntimeWarning, stacklevel=3)
        return None
    schedule = cls.from_spec(spec)
    try:
        schedule.add_frame(rows)
    except PlanMismatch as exc:
        warnings.warn(f"{Path(study_dir) / 'results'}: {what} not reported ({exc})", RuntimeWarning, stacklevel=3)
        return None
    return schedule.result()
