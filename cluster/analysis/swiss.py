"""The Swiss schedule of a tournament: each round paired from the points of the rounds before
(``[design] format = "swiss"``, two-slot games; the pairing rule is :mod:`cluster.spec.swiss`).

    >>> schedule = SwissSchedule.from_spec(spec)         # doctest: +SKIP
    >>> schedule.series()          # round 1 (the lineup folded): what can be played before any result
    >>> schedule.add_game(rows)    # as games are recorded (the driver)
    >>> schedule.advance()         # the next round's series once a round is complete, else []

**Rounds.** Round 1 is planned at once; once the last planned round is complete (every game
recorded, errored games included), its results are added to the standings and the next round
is paired (:func:`cluster.spec.swiss.swiss_pairing`), until ``design.rounds`` rounds are
planned. The mechanism is the adaptive schedule's (:class:`cluster.analysis.rounds.RoundSchedule`):
complete rounds only, in plan order, so the pairings depend on the results alone, not on the
order games finish in, the number of hosts or a driver killed and restarted (a resume feeds
the stored games to a new schedule, which pairs the same rounds). Table ``j`` of round ``r`` is
board ``r * (N // 2) + j``, its games ``board * 2 + rotation``; the order of the two entrants
at a table is drawn from ``SeedSequence(seed, spawn_key=(SWISS_TABLE_STREAM, r))``.

**Points.** An entrant scores, per game, 1 for a win, 1/2 for a draw, 0 for a loss (the
result of its slot; a team's seats share it), so 0 to 2 per pairing (its two seat
rotations); an errored game scores nothing for either; a bye scores
:data:`cluster.spec.swiss.BYE_POINTS` (2: a won pairing) and plays no game. **Buchholz**: the
sum of the current points of the entrants met (a bye adds nothing). Standings, as the
pairing's order: points, then Buchholz, then lineup order. The Bradley-Terry-Davidson
leaderboard of the games is computed as for every tournament; a Swiss tournament's pairings
are not balanced (strong entrants meet strong ones), which the ratings take into account and
points do not.
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from cluster.analysis.rounds import RoundSchedule, ScheduledRound
from cluster.spec.swiss import BYE_POINTS, SWISS_TABLE_STREAM, Pairing, standing_order, swiss_pairing
from cluster.spec.tasks import SeriesTask
from cluster.spec.tournament import slot_of_seats

__all__ = ["SwissSchedule", "SwissResult", "COMPLETE", "swiss_markdown", "write_swiss_report", "swiss_of_study"]

#: The decision of a Swiss schedule whose rounds are all planned.
COMPLETE = "complete"


@dataclass
class SwissResult:
    """Where a Swiss tournament stands (its report): standings over the rounds read."""

    rounds: int
    """Rounds of the design."""
    rounds_read: int
    """Complete rounds whose results are in the standings."""
    labels: list[str]
    standings: list[dict] = field(default_factory=list)
    """One row per entrant in standing order: rank, entrant, points, buchholz, games, wins,
    draws, losses, bye (the round of its bye, 1-based, or "")."""
    pairings: list[list[str]] = field(default_factory=list)
    """Per round read: each pair as ``"A 1.5 - 0.5 B"`` and the bye as ``"C bye"``."""
    rematches: int = 0
    """Pairs of the planned rounds that met before (0 while rematches are avoidable)."""


class SwissSchedule(RoundSchedule):
    """Rounds of a Swiss tournament, paired from complete rounds (module docstring).

    ``entrants``: how many; ``slot_of_seat``: the slot (team) of every seat (two slots);
    ``rounds``: the design's rounds; ``seed``: the study seed; ``by_game``: one series per
    game (else one per board)."""

    def __init__(self, entrants: int, slot_of_seat: Sequence[int], rounds: int, seed: int, by_game: bool,
                 labels: Sequence[str] | None = None):
        super().__init__(slot_of_seat, seed, by_game, stream=SWISS_TABLE_STREAM)
        if self.slots != 2:
            raise ValueError(f"a Swiss tournament pairs two entrants a table, got {self.slots} slots")
        self.entrants = int(entrants)
        self.total_rounds = int(rounds)
        self.labels = list(labels) if labels is not None else [f"E{i}" for i in range(self.entrants)]
        self.points = np.zeros(self.entrants)
        self.wins = np.zeros(self.entrants, dtype=np.int64)
        self.draws = np.zeros(self.entrants, dtype=np.int64)
        self.losses = np.zeros(self.entrants, dtype=np.int64)
        self.opponents: list[list[int]] = [[] for _ in range(self.entrants)]
        self.met: Counter = Counter()
        self.bye_round: dict[int, int] = {}
        """Entrant: the round (0-based) of its bye."""
        self.pairings: list[Pairing] = []
        self.round_points: list[dict[int, float]] = []
        """Per round read: each paired entrant's points in it."""
        self._pair(swiss_pairing([0.0] * self.entrants, [0.0] * self.entrants, {}, set()))

    @classmethod
    def from_spec(cls, spec) -> "SwissSchedule":
        return cls(len(spec.lineup), slot_of_seats(spec.seat_teams), spec.design.repeats, spec.seed,
                   spec.design.series_by == "game", labels=[s.label for s in spec.lineup])

    def _pair(self, pairing: Pairing) -> list[SeriesTask]:
        self.pairings.append(pairing)
        return list(self._add_round(pairing.tables).series)

    # --- standings ------------------------------------------------------------------------
    def buchholz(self) -> np.ndarray:
        """Each entrant's Buchholz: the sum of the current points of the entrants it met."""
        return np.array([sum(self.points[o] for o in opponents) for opponents in self.opponents], dtype=float)

    def order(self) -> list[int]:
        """Entrants in standing order (points, Buchholz, lineup index)."""
        return standing_order(self.points.tolist(), self.buchholz().tolist())

    # --- decisions (the plan, the results and advance(): RoundSchedule) -----------------
    def _read(self, scheduled: ScheduledRound) -> None:
        pairing = self.pairings[scheduled.index]
        scored: dict[int, float] = {e: 0.0 for pair in pairing.tables for e in pair}
        for g in scheduled.games:
            ranks = self.ranks[g]
            if ranks is None:  # an errored game: counts nothing
                continue
            seating = self.seating[g]
            for e in set(seating):
                rank = int(ranks[seating.index(e)])  # the entrant's slot; a team's seats share it
                scored[e] += rank / 2.0
                if rank == 2:
                    self.wins[e] += 1
                elif rank == 1:
                    self.draws[e] += 1
                else:
                    self.losses[e] += 1
        for e, points in scored.items():
            self.points[e] += points
        for a, b in pairing.tables:
            self.opponents[a].append(b)
            self.opponents[b].append(a)
            self.met[(min(a, b), max(a, b))] += 1
        if pairing.bye is not None:
            self.points[pairing.bye] += BYE_POINTS
            self.bye_round[pairing.bye] = scheduled.index
        self.round_points.append(scored)

    def _look(self) -> list[SeriesTask]:
        if len(self.rounds) >= self.total_rounds:
            self.decision = COMPLETE
            return []
        return self._pair(swiss_pairing(self.points.tolist(), self.buchholz().tolist(), self.met,
                                        set(self.bye_round)))

    def result(self) -> SwissResult:
        buchholz = self.buchholz()
        rows = []
        for rank, e in enumerate(self.order(), start=1):
            rows.append({"rank": rank, "entrant": self.labels[e], "points": float(self.points[e]),
                         "buchholz": float(buchholz[e]), "games": int(self.wins[e] + self.draws[e] + self.losses[e]),
                         "wins": int(self.wins[e]), "draws": int(self.draws[e]), "losses": int(self.losses[e]),
                         "bye": self.bye_round[e] + 1 if e in self.bye_round else ""})
        pairings = []
        for r in range(self.read_rounds):
            pairing, scored = self.pairings[r], self.round_points[r]
            shown = [f"{self.labels[a]} {scored[a]:g} - {scored[b]:g} {self.labels[b]}" for a, b in pairing.tables]
            if pairing.bye is not None:
                shown.append(f"{self.labels[pairing.bye]} bye")
            pairings.append(shown)
        return SwissResult(rounds=self.total_rounds, rounds_read=self.read_rounds, labels=self.labels,
                           standings=rows, pairings=pairings, rematches=sum(p.rematches for p in self.pairings))


def swiss_markdown(result: SwissResult) -> str:
    """The Swiss standings (points, Buchholz, games) and every round's pairings, in Markdown."""
    from cluster.analysis.tables import markdown_table

    lines = [f"**Swiss standings** after {result.rounds_read} of {result.rounds} rounds (points: 1 a win, "
             f"1/2 a draw, {BYE_POINTS:g} a bye; ties by Buchholz, the sum of the opponents' points, then "
             f"lineup order)" + (f"; {result.rematches} rematches could not be avoided" if result.rematches else ""),
             ""]
    rows = [[str(r["rank"]), r["entrant"], f"{r['points']:g}", f"{r['buchholz']:g}", str(r["games"]),
             f"{r['wins']}-{r['draws']}-{r['losses']}", str(r["bye"])] for r in result.standings]
    lines.append(markdown_table(["Rank", "Entrant", "Points", "Buchholz", "Games", "W-D-L", "Bye (round)"], rows,
                                ["---:", "---", "---:", "---:", "---:", "---:", "---:"]))
    for r, shown in enumerate(result.pairings, start=1):
        lines += ["", f"Round {r}: " + ", ".join(shown)]
    return "\n".join(lines) + "\n"


def write_swiss_report(result: SwissResult, out, title: str | None = None) -> list[Path]:
    """``swiss.md`` (:func:`swiss_markdown`) and ``swiss_standings.csv`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, table = out / "swiss.md", out / "swiss_standings.csv"
    md.write_text((f"# {title}\n\n" if title else "") + swiss_markdown(result), encoding="utf-8")
    with table.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["rank", "entrant", "points", "buchholz", "games", "wins",
                                                    "draws", "losses", "bye"])
        writer.writeheader()
        writer.writerows(result.standings)
    return [md, table]


def swiss_of_study(study_dir, rows) -> SwissResult | None:
    """The Swiss standings of a stored tournament (its ``spec.json`` has ``design.format =
    "swiss"``) replayed from its rows, None for any other study (or when its spec cannot be
    rebuilt here)."""
    from cluster.analysis.rounds import replayed_schedule

    return replayed_schedule(SwissSchedule, study_dir, rows, lambda design: design.format == "swiss", "the Swiss standings are")
