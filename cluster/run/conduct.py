"""How an agent behaved at its seat: decisions over its time budget, and the forfeit rule.

Two things an agent can do wrong without raising, counted per seat per game in its rows:

* **Overruns** (``overruns``): decisions that took longer than the seat's ``ms`` budget
  by more than ``budget.overrun_tolerance`` (0.5: a decision over 1.5 x ms counts). The
  time is the wall time of ``Agent.act``, measured by the host around the call; a seat
  with an iteration budget has no time limit and never overruns, and counting reads a
  clock only, so it never changes a move (a game under iteration budgets stays a pure
  function of its seeds).
* **Invalid actions** (``invalid_actions``): actions the game refused and replaced by its
  replacement (the first legal action by default; :meth:`games.api.Game.step`).

``budget.overrun_policy`` says what an overrun costs: ``"count"`` (the default) counts it
and plays on; ``"forfeit"`` ends the game at the step of the first overrun, as a loss on
time (:func:`forfeit_outcomes`), the reason in the seat's ``forfeit`` column.

:class:`ConductWatch` is the driver's side: one warning per label the first time its rows
show an overrun, an invalid action or a forfeit, so a study that runs past its budgets or
with a broken agent says so while it runs (the counts are in the result table, the report
and MLflow).
"""
from __future__ import annotations

import logging
from typing import Iterable, Mapping, Sequence

import numpy as np

from cluster.spec.study import OVERRUN_POLICIES
from games.api import LOSS, TIE, WIN

__all__ = ["OVERRUN_POLICIES", "COUNT", "FORFEIT", "FORFEIT_REWARDS", "overrun_limit", "forfeit_outcomes",
           "forfeit_reason", "forfeit_rewards", "ConductWatch"]

log = logging.getLogger(__name__)

#: The values of ``budget.overrun_policy`` (:data:`OVERRUN_POLICIES`, declared with the spec).
COUNT, FORFEIT = OVERRUN_POLICIES
#: The reward of each result of a forfeited game (the game never reached its end, so its
#: own returns do not exist): a win 1, a tie 0, a loss -1.
FORFEIT_REWARDS = {WIN: 1.0, TIE: 0.0, LOSS: -1.0}


def overrun_limit(budget, tolerance: float) -> float | None:
    """Seconds a decision under ``budget`` may take before it counts as an overrun:
    ``ms x (1 + tolerance) / 1000``; None for an iteration budget (no time limit)."""
    if budget.ms is None or budget.iterations is not None:
        return None
    return float(budget.ms) * (1.0 + float(tolerance)) / 1000.0


def forfeit_outcomes(teams: Sequence[int], forfeited: Iterable[int]) -> list[str]:
    """The result of every seat of a game that ends because the seats ``forfeited`` overran
    their budget: their teams lose, every other team wins; when every team has a seat that
    forfeited (at the same step of a game with simultaneous moves) nobody can claim the
    game and every seat ties.

    >>> forfeit_outcomes([0, 1], [1])
    ['win', 'loss']
    >>> forfeit_outcomes([0, 1, 0, 1], [2])
    ['loss', 'win', 'loss', 'win']
    >>> forfeit_outcomes([0, 1], [0, 1])
    ['tie', 'tie']
    """
    losing = {int(teams[s]) for s in forfeited}
    if not losing:
        raise ValueError("forfeit_outcomes: no seat forfeited")
    if losing >= {int(t) for t in teams}:
        return [TIE] * len(teams)
    return [LOSS if int(t) in losing else WIN for t in teams]


def forfeit_reason(ms: float, tolerance: float, seconds: float, decision: int) -> str:
    """The ``forfeit`` text of a seat that lost on time."""
    return (f"lost on time: decision {decision} took {1000.0 * seconds:.1f} ms, over its {ms:g} ms "
            f"budget + {100.0 * tolerance:g}% tolerance ({ms * (1.0 + tolerance):g} ms)")


def forfeit_rewards(outcomes: Sequence[str]) -> np.ndarray:
    """:data:`FORFEIT_REWARDS` of each seat's result."""
    return np.asarray([FORFEIT_REWARDS[o] for o in outcomes], dtype=np.float64)


def _count(row: Mapping, column: str) -> int:
    value = row.get(column)
    try:
        return 0 if value is None or value != value else int(value)  # None or NaN (a store without it)
    except (TypeError, ValueError):
        return 0


class ConductWatch:
    """Warns once per label and kind the first time rows show an overrun, an invalid action
    or a forfeit (the driver feeds it every recorded game's rows)."""

    def __init__(self):
        self._warned: set[tuple[str, str]] = set()

    def add(self, rows: Iterable[Mapping]) -> None:
        for row in rows:
            label = str(row.get("label"))
            game = row.get("game_index")
            if _count(row, "overruns") and (label, "overruns") not in self._warned:
                self._warned.add((label, "overruns"))
                log.warning("%s overran its %s budget in %d decision(s) of game %s (counted per seat in "
                            "the overruns column; budget.overrun_policy = \"forfeit\" makes it lose on time)",
                            label, row.get("budget"), _count(row, "overruns"), game)
            if _count(row, "invalid_actions") and (label, "invalid_actions") not in self._warned:
                self._warned.add((label, "invalid_actions"))
                log.warning("%s played %d invalid action(s) in game %s; the game replaced each by its "
                            "replacement action (counted per seat in the invalid_actions column)",
                            label, _count(row, "invalid_actions"), game)
            if row.get("forfeit") and (label, "forfeit") not in self._warned:
                self._warned.add((label, "forfeit"))
                log.warning("%s forfeited game %s: %s", label, game, row.get("forfeit"))
