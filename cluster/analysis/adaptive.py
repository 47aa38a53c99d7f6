"""The adaptive schedule of a tournament: rounds of tables chosen where the leaderboard is
least resolved, until its order is (``[design] stop = { ranking = { ... } }``).

    >>> schedule = AdaptiveSchedule.from_spec(spec)            # doctest: +SKIP
    >>> schedule.series()          # the seed rounds' games: what can be played before any result
    >>> schedule.add_game(rows)    # as games are recorded (the driver), or record(...)
    >>> schedule.advance()         # the next round's series once a round is complete, else []

**Rounds.** The first ``seed_rounds`` rounds play the seed design
(:func:`cluster.spec.adaptive.covering_tables`: every pair of entrants at a table, every
entrant at about as many). Once the last planned round is complete (every game recorded,
errored games included), the schedule fits the ratings of every complete round
(:func:`cluster.analysis.ranking_stop.fit_ranking`, the leaderboard's model over pairwise
results; in a free-for-all of more than two seats, the winner model's own fit,
:func:`cluster.analysis.winner_stop.fit_winner`) and looks at the adjacent pairs of their
order (:func:`cluster.analysis.ranking_stop.ranking_status`):

* every pair ordered or within delta: **resolved**, stop;
* the games planned reach ``max_games``: **cap**, stop (no round is cut short of its
  tables: the last round takes as many whole tables as the cap leaves);
* else the next round: ``round_growth`` times the boards so far (or ``tables_per_round``)
  tables chosen by
  :func:`cluster.analysis.ranking_stop.choose_tables` (a free-for-all:
  :func:`cluster.analysis.winner_stop.choose_winner_tables`), each played with every seat rotation
  on its own board (:func:`cluster.spec.adaptive.round_series`).

**Determinism.** A decision reads the results of complete rounds only, in plan order, and
nothing else (no clock, no arrival order, no count of hosts): the same results give the same
rounds. A driver killed and restarted feeds the stored games to a new schedule, which takes
the same decisions again and asks only for the games still missing
(:meth:`AdaptiveSchedule.add_frame`); games of a round that were recorded are never replayed.
The guarantee of a resolved order is stated in :mod:`cluster.analysis.ranking_stop`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from cluster.analysis.ranking_stop import (OPEN, PairwiseTally, RankingFit, RankingStatus, choose_tables,
                                           fit_ranking, ranking_status)
from cluster.analysis.winner_stop import WinnerTally, choose_winner_tables, fit_winner, winner_model_applies
from cluster.analysis.rounds import RUNNING, RoundSchedule, ScheduledRound
from cluster.spec.adaptive import seed_round_tables
from cluster.spec.tasks import SeriesTask
from cluster.spec.tournament import slot_of_seats

__all__ = ["AdaptiveSchedule", "ScheduledRound", "AdaptiveResult", "RESOLVED", "CAP", "RUNNING",
           "adaptive_markdown", "write_adaptive_report", "adaptive_of_study"]

#: Decisions.
RESOLVED, CAP = "resolved", "cap"


@dataclass
class AdaptiveResult:
    """Where an adaptive tournament stands (its report and MLflow run)."""

    decision: str
    """``resolved``, ``cap`` or ``running``."""
    confidence: float
    delta_elo: float
    max_games: int
    games_planned: int
    games_used: int
    """Games of the complete rounds the last look read."""
    rounds: int
    labels: list[str]
    status: RankingStatus | None = None
    fit: RankingFit | None = None
    looks: list = field(default_factory=list)
    """Per look: (round looked after, games used, open pairs)."""

    def pair_rows(self) -> list[dict]:
        """The adjacent pairs of the last look as rows (upper, lower, Elo apart, its standard
        error, the two log likelihood ratios, state)."""
        if self.status is None:
            return []
        return [{"upper": self.labels[p.upper], "lower": self.labels[p.lower], "difference": p.difference,
                 "se": p.se, "llr_ordered": p.llr_ordered, "llr_within": p.llr_within, "state": p.state}
                for p in self.status.pairs]


class AdaptiveSchedule(RoundSchedule):
    """Rounds of an adaptive tournament, decided from complete rounds (module docstring).

    ``entrants``: how many; ``slot_of_seat``: the slot (team) of every seat; ``ranking``: a
    :class:`cluster.spec.study.RankingSpec`; ``seed``: the study seed; ``by_game``: one
    series per game (else one per board); ``max_games``: the cap."""

    def __init__(self, entrants: int, slot_of_seat: Sequence[int], ranking, seed: int, by_game: bool,
                 max_games: int, labels: Sequence[str] | None = None):
        super().__init__(slot_of_seat, seed, by_game)
        self.entrants = int(entrants)
        self.ranking = ranking
        self.alpha = 1.0 - float(ranking.confidence)
        self.delta = float(ranking.delta_elo)
        self.max_games = int(max_games)
        self.labels = list(labels) if labels is not None else [f"E{i}" for i in range(self.entrants)]
        self.tables_per_round = int(ranking.tables_per_round) if ranking.tables_per_round else None
        self.round_growth = float(ranking.round_growth)
        # pairwise results one table gives a pair of its entrants: rotations x seats of one slot x of the other
        per_slot = self.seats // self.slots
        self.results_per_pair = float(self.slots * per_slot * per_slot)
        # a free-for-all (more than two slots, one seat each): the winner model's fit
        # (cluster.analysis.winner_stop); else the leaderboard's, over pairwise results
        self.winner_model = winner_model_applies(self.slot_of_seat)
        self.tally = WinnerTally(self.entrants, self.seats) if self.winner_model else PairwiseTally(self.entrants)
        self.status: RankingStatus | None = None
        self.fit: RankingFit | None = None
        self.looks: list[tuple[int, int, int]] = []
        self._start = None
        seed_tables = seed_round_tables(self.entrants, self.slot_of_seat)
        for _ in range(int(ranking.seed_rounds)):
            if self.games_planned + len(seed_tables) * self.slots > self.max_games and self.rounds:
                break
            self._add_round(seed_tables)

    @classmethod
    def from_spec(cls, spec) -> "AdaptiveSchedule":
        return cls(len(spec.lineup), slot_of_seats(spec.seat_teams), spec.design.stop.ranking, spec.seed,
                   spec.design.series_by == "game", spec.design.total_games,
                   labels=[s.label for s in spec.lineup])

    # --- decisions (the plan, the results and advance(): RoundSchedule) -----------------
    def _read(self, scheduled: ScheduledRound) -> None:
        played = [g for g in scheduled.games if self.ranks[g] is not None]
        if not played:
            return
        self.tally.add_games(np.array([self.board_of[g] for g in played]),
                             np.array([self.seating[g] for g in played]),
                             np.array([self.ranks[g] for g in played]), self.slot_of_seat)

    def _look(self) -> list[SeriesTask]:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):  # small matrices: BLAS threads only add overhead (10-30x)
            return self._decide()

    def _decide(self) -> list[SeriesTask]:
        used = self.games_planned
        if len(self.tally.board) == 0:
            self.decision = CAP if used >= self.max_games else RUNNING
            if self.finished:
                return []
            return list(self._add_round(seed_round_tables(self.entrants, self.slot_of_seat)).series)
        self.fit = (fit_winner if self.winner_model else fit_ranking)(self.tally, start=self._start)
        self._start = self.fit.optimum
        self.status = ranking_status(self.fit, self.alpha, self.delta)
        open_pairs = len(self.status.open_pairs)
        self.looks.append((len(self.rounds) - 1, used, open_pairs))
        if open_pairs == 0:
            self.decision = RESOLVED
            return []
        count = min(self.next_round_tables(), (self.max_games - used) // self.slots)
        if count < 1:
            self.decision = CAP
            return []
        if self.winner_model:
            tables = choose_winner_tables(self.fit, self.status, self.slots, count, self.seats)
        else:
            tables = choose_tables(self.fit, self.status, self.slots, count, self.results_per_pair)
        return list(self._add_round(tables, open_pairs).series)

    def next_round_tables(self) -> int:
        """Tables of the next round: ``tables_per_round``, or ``round_growth`` times the boards
        played so far (at least half the entrants), so that looks come at geometric intervals:
        a tournament of G games takes about log(G / G0) / log(1 + growth) looks, and its
        decision comes at most that share of its games late."""
        if self.tables_per_round:
            return self.tables_per_round
        return max(self.entrants // 2, 1, math.ceil(self.round_growth * self.boards_planned))

    def result(self) -> AdaptiveResult:
        used = sum(len(r.games) for r in self.rounds[:self.read_rounds])
        return AdaptiveResult(decision=self.decision, confidence=float(self.ranking.confidence),
                              delta_elo=self.delta, max_games=self.max_games, games_planned=self.games_planned,
                              games_used=used, rounds=len(self.rounds), labels=self.labels, status=self.status,
                              fit=self.fit, looks=list(self.looks))


def _model_text(result: AdaptiveResult) -> str:
    if getattr(result.fit, "model", None) == "winner":
        return ("the winner model (Plackett-Luce first place; games with no single winner count nothing): "
                "the order and the differences below are its fit's; the leaderboard is Bradley-Terry-Davidson "
                "over the pairwise results, whose order may differ where pairs are close")
    return "Bradley-Terry-Davidson over the pairwise results (the leaderboard's)"


def adaptive_markdown(result: AdaptiveResult) -> str:
    """The adaptive schedule's outcome in a few Markdown lines and a table of its adjacent pairs."""
    from cluster.analysis.tables import markdown_table

    verdict = {RESOLVED: "resolved: every adjacent pair is ordered or within delta",
               CAP: f"stopped at the cap of {result.max_games} games with pairs still open",
               RUNNING: "running"}[result.decision]
    threshold = math.log(1.0 / (1.0 - result.confidence))
    lines = [f"**Adaptive schedule**: confidence {result.confidence:g} per adjacent pair at least delta = "
             f"{result.delta_elo:g} Elo apart (a sequential test per pair: a log likelihood ratio of "
             f"{threshold:.2f} orders it or puts it within delta), cap {result.max_games} games.", "",
             f"- Decision: **{verdict}**",
             f"- Model: {_model_text(result)}",
             f"- Games: {result.games_used} in {result.rounds} rounds ({len(result.looks)} looks)"]
    rows = [[p["upper"], p["lower"], f"{p['difference']:.0f}", f"{p['se']:.0f}", f"{p['llr_ordered']:.2f}",
             f"{p['llr_within']:.2f}", {"ordered": "ordered", "within": f"within {result.delta_elo:g}",
                                         OPEN: "open"}[p["state"]]]
            for p in result.pair_rows()]
    if rows:
        lines += ["", markdown_table(["Higher", "Lower", "Elo apart", "SE", "LLR ordered", "LLR within", "State"],
                                     rows, ["---", "---", "---:", "---:", "---:", "---:", "---"])]
    return "\n".join(lines) + "\n"


def write_adaptive_report(result, out, title: str | None = None) -> list[Path]:
    """``adaptive.md`` (the decision and the adjacent pairs, :func:`adaptive_markdown`) and
    ``adaptive_pairs.csv`` in ``out``."""
    import csv

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, pairs = out / "adaptive.md", out / "adaptive_pairs.csv"
    md.write_text((f"# {title}\n\n" if title else "") + adaptive_markdown(result), encoding="utf-8")
    rows = result.pair_rows()
    with pairs.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["upper", "lower", "difference", "se", "llr_ordered",
                                                    "llr_within", "state"])
        writer.writeheader()
        writer.writerows(rows)
    return [md, pairs]


def adaptive_of_study(study_dir, rows) -> AdaptiveResult | None:
    """The adaptive schedule of a stored tournament (its ``spec.json`` has
    ``design.stop.ranking``) replayed from its rows, None for any other study (or when its
    spec cannot be rebuilt here)."""
    from cluster.analysis.rounds import replayed_schedule

    return replayed_schedule(AdaptiveSchedule, study_dir, rows, lambda design: design.stop is not None and design.stop.ranking is not None, "the adaptive schedule is")
