"""The shape of a study's design: the one rule that tells its two shapes apart.

* **seeds x games_per_seed**: ``seeds`` boards (board seeds), each played
  ``games_per_seed`` times (the seat rotation); a *group* is a board.
* **runs x rounds**: ``runs`` independent runs of ``rounds`` games each (learned
  state carried from round to round, boards cycling over ``seeds``); a *group*
  is a run.
* **a tournament** (``format = "round_robin"``, ``"gauntlet"`` or ``"swiss"``, :mod:`cluster.spec.tournament`):
  tables of entrants, each played on its own board with every seat rotation,
  repeated ``rounds`` times; a *group* is a round (what ``--scale`` scales).

A design is runs x rounds when it is not a tournament and names ``runs`` or
``rounds`` (validation then requires both). Everything that asks "is this runs x rounds?" asks here. The
functions take the design table as a mapping, and only two callers have one: the
builder (:func:`cluster.spec.build.build_design`, which also reads a stored
``spec.json``'s design back) and ``--scale`` (:mod:`cluster.spec.edits`,
which scales the group count before validation). Everyone after them asks the
validated model: :class:`cluster.spec.study.DesignSpec`'s ``runs_design``,
``group_key``, ``group_name`` and ``games_per_group`` (sweeps, whose trials are whole
groups; the report, with learning curves per run; the driver and MLflow).
"""
from __future__ import annotations

from typing import Mapping

from cluster.spec.fields import is_int

__all__ = ["is_runs_design", "is_tournament", "group_key", "group_name", "games_per_group", "default_seeds",
           "LINEUP_FORMAT", "TOURNAMENT_FORMATS"]

#: ``design.format`` of a study with one lineup entry per seat (the default).
LINEUP_FORMAT = "lineup"
#: ``design.format`` values of tournaments (:mod:`cluster.spec.tournament`).
TOURNAMENT_FORMATS = ("round_robin", "gauntlet", "swiss")


def is_tournament(design: Mapping) -> bool:
    """Whether ``design`` is a tournament (any ``format`` but ``lineup``)."""
    return design.get("format", LINEUP_FORMAT) != LINEUP_FORMAT


def is_runs_design(design: Mapping) -> bool:
    """Whether ``design`` is a runs x rounds design (a tournament's ``rounds`` are its repeats)."""
    if is_tournament(design):
        return False
    return design.get("runs") is not None or design.get("rounds") is not None


def group_key(design: Mapping) -> str:
    """The key of the group count: ``runs``, ``seeds`` or a tournament's ``rounds`` (what
    ``--scale`` scales)."""
    if is_tournament(design):
        return "rounds"
    return "runs" if is_runs_design(design) else "seeds"


def group_name(design: Mapping) -> str:
    """What one group is called in messages: ``run``, ``board`` or ``round``."""
    if is_tournament(design):
        return "round"
    return "run" if is_runs_design(design) else "board"


def games_per_group(design: Mapping) -> int:
    """Games of one group: ``rounds``, or ``games_per_seed`` (1 where the value is not a
    positive int yet: validation names the field)."""
    size = design.get("rounds") if is_runs_design(design) else design.get("games_per_seed", 1)
    return size if is_int(size) and size > 0 else 1


def default_seeds(design: dict) -> dict:
    """A runs x rounds design without ``seeds`` plays a new board every round: ``seeds =
    rounds`` (in place; returns ``design``)."""
    if "seeds" not in design and is_runs_design(design) and is_int(design.get("rounds")):
        design["seeds"] = design["rounds"]
    return design
