"""The search space of a sweep: its ``[search]`` entries, validated into :class:`SearchParam`.

A ``[search]`` table maps a dotted path into the base study to one distribution
(``grid``, ``choice``, ``uniform`` or ``loguniform``) and an optional ``alias``;
nested tables (``--set search.lineup.0.params.x=...``) and quoted dotted keys are the
same entry (:func:`flatten_search`)::

    >>> flatten_search({"lineup": {"0": {"params": {"c": {"grid": [1, 2]}}}}, "game.max_steps": {"choice": [9]}})
    {'lineup.0.params.c': {'grid': [1, 2]}, 'game.max_steps': {'choice': [9]}}

Both the sweep's builder (:func:`cluster.spec.sweep.build_sweep`) and ``--scale``
(:func:`cluster.spec.edits.scale_sweep`, which keeps the first values of every grid)
read entries this way. Errors are :class:`~cluster.spec.fields.SweepError` naming
``search.<path>``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any, Mapping

from agents.registry import agent_class
from cluster.spec.fields import SweepError, Text, config_class, is_int, rule, section
from cluster.spec.study import StudySpec

__all__ = ["PARAM_KEYS", "KINDS", "DEFAULT_NUM_SAMPLES", "SearchParam", "distinct_values", "flatten_search", "parse_param"]

#: The keys of one ``[search]`` entry.
PARAM_KEYS = ("grid", "choice", "uniform", "loguniform", "alias")
#: Distribution kinds of a search parameter.
KINDS = ("grid", "choice", "uniform", "loguniform")
#: ``sweep.num_samples`` when not given: the search space sampled once (every grid point once).
DEFAULT_NUM_SAMPLES = 1


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def distinct_values(values: list) -> bool:
    """Whether a grid's or a choice's values are all different (compared as JSON, so
    ``1`` and ``1.0`` are one value)."""
    return len({json.dumps(v, sort_keys=True, default=str) for v in values}) == len(values)


@dataclass(frozen=True)
class SearchParam:
    """One searched parameter: a dotted path into the base spec and its distribution."""

    path: str
    """Dotted path, e.g. ``lineup.0.params.mutation_probability`` or ``game.max_steps``."""
    kind: str
    """``grid`` (every value), ``choice`` (sampled), ``uniform`` or ``loguniform`` (bounds)."""
    values: tuple
    """The values (grid, choice) or ``(lo, hi)`` (uniform, loguniform)."""
    alias: str
    """Short name for tables and MLflow params (``mP``; default: the last path part)."""

    @property
    def integer(self) -> bool:
        """A range over ints (both bounds ints): sampled as ints."""
        return self.kind in ("uniform", "loguniform") and all(is_int(v) for v in self.values)

    def tune_domain(self):
        """The Tune search-space object of this parameter."""
        from ray import tune

        lo_hi = self.values
        if self.kind == "grid":
            return tune.grid_search(list(self.values))
        if self.kind == "choice":
            return tune.choice(list(self.values))
        if self.kind == "uniform":
            return tune.randint(lo_hi[0], lo_hi[1] + 1) if self.integer else tune.uniform(*lo_hi)
        return tune.lograndint(lo_hi[0], lo_hi[1] + 1) if self.integer else tune.loguniform(*lo_hi)

    def probe_values(self) -> list:
        """Values every one of which must build a valid trial spec."""
        if self.kind in ("grid", "choice"):
            return list(self.values)
        lo, hi = self.values
        mid = (lo + hi) / 2 if self.kind == "uniform" else math.sqrt(lo * hi)
        return [lo, int(round(mid)) if self.integer else mid, hi]


def _default_alias(parts: list[str], base_spec: StudySpec) -> str:
    """The short name the seat's agent declares for a ``lineup.<i>.params.<name>`` path
    (``Agent.param_aliases``), else the path's last part."""
    if parts[0] == "lineup" and int(parts[1]) < len(base_spec.lineup):
        return agent_class(base_spec.lineup[int(parts[1])].agent).param_aliases.get(parts[-1], parts[-1])
    return parts[-1]


List = Annotated[Any, rule(lambda v: isinstance(v, list), "must be a list")]


@config_class
class _SearchTable:
    """One ``[search]`` entry: exactly one distribution, and an optional alias."""
    grid: List | None = None
    choice: List | None = None
    uniform: List | None = None
    loguniform: List | None = None
    alias: Text | None = None

    def __post_init__(self):
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"give exactly one of {list(KINDS)}, got {kinds or 'none'}")
        kind, values = kinds[0], getattr(self, kinds[0])
        if kind in ("grid", "choice"):
            if not values:
                raise ValueError(f"{kind}: empty list (nothing to search)")
            if not distinct_values(values):
                raise ValueError(f"{kind}: repeated values in {values!r}")
            return
        if len(values) != 2 or not all(_number(v) for v in values):
            raise ValueError(f"{kind}: must be [lo, hi] (two numbers), got {values!r}")
        lo, hi = values
        if not lo < hi:
            raise ValueError(f"{kind}: empty range, lo must be < hi, got [{lo}, {hi}]")
        if kind == "loguniform" and lo <= 0:
            raise ValueError(f"{kind}: bounds must be > 0 for a log-uniform range, got {lo}")

    @property
    def kind(self) -> str:
        return next(k for k in KINDS if getattr(self, k) is not None)


def parse_param(path: str, raw, base_spec: StudySpec) -> SearchParam:
    """The ``[search]`` entry ``raw`` at ``path`` as a :class:`SearchParam` (raises
    SweepError naming ``search.<path>``): one distribution, a searchable path
    (``lineup.<i>.params.<name>``, ``game.<option>``, ``budget.ms`` / ``budget.iterations``),
    and its alias (default: the one the seat's agent declares, else the last part)."""
    where = f"search.{path}"
    entry = section(_SearchTable, raw, where, error=SweepError)
    kind = entry.kind
    values = getattr(entry, kind)
    parts = path.split(".")
    ok = (len(parts) == 4 and parts[0] == "lineup" and parts[1].isdigit() and parts[2] == "params") \
        or (len(parts) == 2 and parts[0] == "game" and parts[1] != "name") \
        or (len(parts) == 2 and parts[0] == "budget" and parts[1] in ("ms", "iterations"))
    if not ok:
        raise SweepError(f"{where}: not a searchable path; use lineup.<i>.params.<name>, "
                         f"game.<option> or budget.ms / budget.iterations")
    alias = entry.alias if entry.alias is not None else _default_alias(parts, base_spec)
    return SearchParam(path=path, kind=kind, values=tuple(values), alias=alias)


def flatten_search(table: Mapping, prefix: str = "") -> dict:
    """``{"lineup": {"0": {"params": {"x": {grid = ...}}}}}`` (nested tables, ``--set
    search.lineup.0.params.x=...``) and quoted dotted keys both give ``{"lineup.0.params.x": ...}``."""
    out = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not any(k in PARAM_KEYS for k in value):
            out.update(flatten_search(value, path + "."))
        else:
            out[path] = value
    return out


