"""The one summary of result rows per label: the rules every tally of the cluster follows.

A result row is one seat of one game (:data:`cluster.results.store.SCHEMA`). The
rules, stated once here and nowhere else:

* **Which games count.** A row counts when its ``result`` is ``win``, ``tie`` or
  ``loss`` (:data:`PLAYED`); a row whose game ended in an error (``result ==
  "error"``) is counted apart (``errors``) and in nothing else: rates, deaths,
  margins, rewards and agents' figures are over the counted rows.
* **Deaths.** A counted row died when its ``died_at`` (the tick the seat died at)
  is present (not null, not NaN).
* **Ties and the score.** A game scores win 1, tie 0.5, loss 0
  (:data:`RESULT_POINTS`); the score of a label is the mean over its counted rows.
* **Margins, rewards, figures.** ``score_margin`` (games with scores), ``reward``
  (missing or NaN counts as 0) and ``metric.<name>`` (an agent's own per-game figure) are
  averaged over the counted rows that carry them.
* **Conduct.** ``overruns`` (decisions over the time budget's tolerance), ``invalid_actions``
  (actions the game replaced) and forfeits (rows with a ``forfeit`` reason: lost on time)
  are summed over *every* row, errors included: they are what the agent did. A row
  without them (a store written before they existed) counts 0.

:class:`LabelSummary` keeps sums, so it grows row by row (the driver's progress
bar and MLflow tracking add each game as it arrives) or is built from a whole
frame (:func:`summarize`: the report, a sweep's objective). Intervals: Wilson for
rates, normal (:data:`cluster.stats.Z95`) for means; what to show when a label has
no counted game is the caller's choice (``nan`` here).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import pandas as pd

from cluster.results.store import METRIC_PREFIX
from cluster.stats import Z95, sample_variance, wilson_interval

__all__ = ["PLAYED", "RESULT_POINTS", "LabelSummary", "summarize", "label_order", "present"]

#: The results of a game that counts (an ``error`` is counted apart).
PLAYED = ("win", "tie", "loss")
#: What a result scores: a tie is half a win.
RESULT_POINTS = {"win": 1.0, "tie": 0.5, "loss": 0.0}


def present(value) -> bool:
    """Whether a row's optional figure is there (not None, NaN or a pandas NA)."""
    return value is not None and not pd.isna(value)


def _count(value) -> int:
    """A row's count column as an int (absent, None or NaN: 0)."""
    return int(value) if present(value) else 0


@dataclass
class _Mean:
    """A running mean and its 95% normal interval, from sums."""

    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.total_sq += value * value

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    @property
    def half_width(self) -> float:
        """Half width of the 95% normal interval of the mean (nan under two values)."""
        if self.n < 2:
            return math.nan
        return Z95 * math.sqrt(sample_variance(self.total, self.total_sq, self.n)) / math.sqrt(self.n)


@dataclass
class LabelSummary:
    """One label's result rows, summarised by the module's rules."""

    counts: dict[str, int] = field(default_factory=lambda: {"win": 0, "tie": 0, "loss": 0, "error": 0})
    deaths: int = 0
    died_at: _Mean = field(default_factory=_Mean)
    points: _Mean = field(default_factory=_Mean)
    margin: _Mean = field(default_factory=_Mean)
    reward: _Mean = field(default_factory=_Mean)
    figures: dict[str, _Mean] = field(default_factory=dict)
    """``metric.<name>`` -> its running mean over the counted rows that carry it."""
    overruns: int = 0
    """Decisions over the time budget's tolerance, summed over every row."""
    invalid_actions: int = 0
    """Actions the game refused and replaced, summed over every row."""
    forfeits: int = 0
    """Games lost on time (rows with a ``forfeit`` reason)."""

    def add(self, row: Mapping) -> None:
        """Count one row (one seat of one game)."""
        self.overruns += _count(row.get("overruns"))
        self.invalid_actions += _count(row.get("invalid_actions"))
        forfeit = row.get("forfeit")
        if present(forfeit) and forfeit:
            self.forfeits += 1
        result = row["result"]
        if result not in RESULT_POINTS:
            self.counts["error"] += 1
            return
        self.counts[result] += 1
        self.points.add(RESULT_POINTS[result])
        reward = row.get("reward")
        self.reward.add(float(reward) if present(reward) else 0.0)
        died_at = row.get("died_at")
        if present(died_at):
            self.deaths += 1
            self.died_at.add(float(died_at))
        margin = row.get("score_margin")
        if present(margin):
            self.margin.add(float(margin))
        for key, value in row.items():
            if key.startswith(METRIC_PREFIX) and present(value):
                self.figures.setdefault(key, _Mean()).add(float(value))

    @classmethod
    def of(cls, rows: pd.DataFrame | Iterable[Mapping]) -> "LabelSummary":
        """The summary of ``rows`` taken as one label's (a frame or row mappings)."""
        summary = cls()
        for row in rows.to_dict("records") if isinstance(rows, pd.DataFrame) else rows:
            summary.add(row)
        return summary

    # --- counts and rates -------------------------------------------------------------
    @property
    def games(self) -> int:
        """Counted games (without errors)."""
        return self.counts["win"] + self.counts["tie"] + self.counts["loss"]

    @property
    def errors(self) -> int:
        return self.counts["error"]

    def rate(self, result: str) -> float:
        """Share of the counted games that ended in ``result`` (nan without games)."""
        return self.counts[result] / self.games if self.games else math.nan

    def interval(self, result: str) -> tuple[float, float]:
        """95% Wilson interval of :meth:`rate` (nan, nan without games)."""
        return wilson_interval(self.counts[result], self.games)

    @property
    def death_rate(self) -> float:
        return self.deaths / self.games if self.games else math.nan

    def death_interval(self) -> tuple[float, float]:
        return wilson_interval(self.deaths, self.games)

    @property
    def error_rate(self) -> float:
        """Share of all the label's games (errors included) that ended in an error."""
        total = self.games + self.errors
        return self.errors / total if total else math.nan

    @property
    def score(self) -> float:
        """Mean result, win 1, tie 0.5, loss 0 (nan without games)."""
        return self.points.mean

    def wtl(self) -> str:
        """``wins/ties/losses``, e.g. for a progress bar."""
        return f"{self.counts['win']}/{self.counts['tie']}/{self.counts['loss']}"


def label_order(df: pd.DataFrame) -> list:
    """Labels in the order they sit in the earliest game (lineup order without rotation)."""
    ordered = df.sort_values(["game_index", "seat"], kind="stable") \
        if {"game_index", "seat"} <= set(df.columns) else df
    return list(dict.fromkeys(ordered["label"]))


def summarize(rows: pd.DataFrame | Iterable[Mapping]) -> dict[str, LabelSummary]:
    """Label -> :class:`LabelSummary` of ``rows`` (a frame or row mappings); a frame's
    labels come in lineup order (:func:`label_order`), row mappings in order of appearance."""
    out: dict[str, LabelSummary] = {}
    if isinstance(rows, pd.DataFrame):
        if not len(rows):
            return out
        out = {label: LabelSummary() for label in label_order(rows)}
        rows = rows.to_dict("records")
    for row in rows:
        out.setdefault(row["label"], LabelSummary()).add(row)
    return out
