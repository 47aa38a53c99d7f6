"""The validated sweep model: a base study plus a search space, checked before Ray starts.

:func:`build_sweep` validates a TOML-shaped dict whose base study is already
resolved (``jobs.spec.load_sweep`` reads the files); :mod:`cluster.sweep.driver`
runs the result on Ray Tune.

    >>> sweep = build_sweep(data, scale=0.4)    # data: a sweep TOML with its base resolved  # doctest: +SKIP
    >>> sweep.grid_size, sweep.games_per_trial
    (8, 16)

The TOML shape::

    [sweep]
    name = "femcts-ffa"           # names the Tune experiment, the MLflow parent run, study ids
    seed = 2024                   # every trial's study seed derives from it (see below)
    base = "../femcts/3a.toml"    # optional: a study TOML; inline [base] tables are merged over it
    games_per_trial = 40          # a multiple of the base design's games per group (see below)
    num_samples = 1               # Tune samples (a grid is expanded once per sample)
    max_concurrent_trials = 2     # default: max(1, CPUs // 2)
    workers_per_trial = 1         # game hosts per trial (default: CPUs // max_concurrent_trials)
    max_failures = 2              # a trial whose worker dies is retried this often

    [base]                        # a whole study spec (study, game, budget, design, lineup, tracking)
    ...

    [objective]
    label = "FEMCTS"              # a lineup label
    metric = "win_rate"           # or "mean_reward"; always maximised

    [search]                      # dotted paths into the base spec -> a distribution
    "lineup.0.params.mutation_probability" = { grid = [0.2, 0.5], alias = "mP" }
    "lineup.0.params.elite_count" = { choice = [2, 4] }
    "lineup.0.params.mutation_strength" = { loguniform = [1e-4, 1e-2] }
    "game.max_steps" = { uniform = [100, 400] }        # ints when both bounds are ints

    [scheduler]                   # early stopping (Tune's ASHA) on the running objective
    kind = "asha"                 # or "fifo" (no early stopping)
    grace_period = 8              # games before a trial can be stopped: whole boards (a multiple
                                  # of the design's games per board; default a quarter of the boards)
    reduction_factor = 3

    [searcher]
    kind = "basic"                # Tune's grid / random search; "optuna" needs `pip install optuna`

    [reevaluate]                  # honest selection after the search
    top_k = 3
    games = 40                    # per setting, on fresh boards (default: games_per_trial)

Searchable paths: ``lineup.<i>.params.<name>``, ``game.<option>`` and
``budget.<ms|iterations>``. Every grid point and choice, and both bounds (and
the midpoint) of a range, are built into a full trial spec here, so a value
an agent or game config rejects is a :class:`SweepError` naming the field
(``search.lineup.0.params.elite_count: ...``) before any trial starts.

Trials and seeds: the base design is kept except its group count (``seeds``,
or ``runs`` of a runs x rounds design), set so that the trial plays
``games_per_trial`` games. Every trial of the search plays with the same study
seed ``SeedSequence(sweep.seed, spawn_key=(SEARCH_STREAM,))`` (the same boards:
a paired comparison); the re-evaluation uses
``SeedSequence(sweep.seed, spawn_key=(REEVAL_STREAM,))``, a disjoint stream.
A trial's study id is ``<sweep name>-t<hash of its params>`` (deterministic,
so a retried or resumed trial finds its Parquet store and skips finished games).

Boards: a trial's games come in whole *boards*: a board seed with its
``games_per_seed`` games (the seat rotation), or a run with its ``rounds`` in a
runs x rounds design. ``games_per_trial``, ``reevaluate.games`` and
``scheduler.grace_period`` are given in games and must be whole boards; ASHA
counts boards (Tune's ``time_attr`` is the trial's completed boards), so its
grace period and rungs fall on board boundaries and every rung compares
settings on the same whole boards.

``--scale F`` (a quick try) scales boards exactly as ``arena run --scale``
does (:func:`cluster.spec.study.scale_groups`): the boards per trial, the
re-evaluation's boards and the grace period's boards become ``ceil(n * F)``,
at least one, each board keeping all its games; the grace period never
exceeds the trial. A sweep has one more axis to shrink: each grid axis keeps
its first ``ceil(n * F)`` values (at least one), and ``num_samples`` becomes
``ceil(n * F)`` (at least one).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Mapping

import numpy as np

from agents.registry import agent_class
from cluster.spec.fields import (Name, NonNegativeInt, PositiveInt, Text, config_class, is_int, one_of, rule, section,
                                 table)
from cluster.spec.study import SpecError, StudySpec, TrackingSpec, build_spec, check_scale, scale_groups, set_path

__all__ = ["SweepError", "SearchParam", "SweepSpec", "build_sweep",
           "SEARCH_STREAM", "REEVAL_STREAM", "KINDS", "OBJECTIVE_METRICS"]

SWEEP_SECTIONS = ("sweep", "base", "objective", "search", "scheduler", "searcher", "reevaluate", "tracking")
PARAM_KEYS = ("grid", "choice", "uniform", "loguniform", "alias")
#: Distribution kinds of a search parameter.
KINDS = ("grid", "choice", "uniform", "loguniform")
OBJECTIVE_METRICS = ("win_rate", "mean_reward")
SCHEDULERS = ("asha", "fifo")
SEARCHERS = ("basic", "optuna")
#: spawn_key[0] of the study seed of search trials / of the re-evaluation.
SEARCH_STREAM = 0
REEVAL_STREAM = 1


class SweepError(SpecError):
    """An invalid sweep spec; the message starts with the dotted field name."""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# --- the raw sections ----------------------------------------------------------------
@config_class
class _SweepTable:
    """``[sweep]`` (defaults that depend on the base are filled in by :func:`build_sweep`)."""

    name: Name
    seed: NonNegativeInt = 0
    base: Any = None
    games_per_trial: PositiveInt | None = None
    num_samples: PositiveInt = 1
    max_concurrent_trials: PositiveInt | None = None
    workers_per_trial: PositiveInt | None = None
    max_failures: NonNegativeInt = 2
    results_dir: Any = None


@config_class
class _ObjectiveTable:
    label: Any
    metric: one_of(*OBJECTIVE_METRICS) = "win_rate"


@config_class
class _SchedulerTable:
    kind: one_of(*SCHEDULERS) = "asha"
    grace_period: PositiveInt | None = None
    reduction_factor: Annotated[Any, rule(lambda v: is_int(v) and v >= 2, "must be an int >= 2")] = 3


@config_class
class _SearcherTable:
    kind: one_of(*SEARCHERS) = "basic"


@config_class
class _ReevaluateTable:
    top_k: PositiveInt = 3
    games: PositiveInt | None = None


@config_class
class _TrackingTable:
    uri: Any = None
    experiment: Any = None
    enabled: Any = None


def _section(cls, data: Mapping, key: str, **kwargs):
    return section(cls, data.get(key, {}), key, error=SweepError, **kwargs)


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


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: the base study (raw, TOML-shaped) plus search space and settings."""

    name: str
    """Sweep name: the Tune experiment, the MLflow parent run, the prefix of study ids."""
    seed: int
    """Sweep seed: the study seeds of the search and of the re-evaluation derive from it."""
    base: StudySpec
    """The base study (validated; its results_dir absolute). A trial edits a dict derived
    from it (:meth:`trial_data`) and validates that into its own spec."""
    search: tuple[SearchParam, ...]
    """The searched parameters."""
    objective_label: str
    """Lineup label whose result is the objective."""
    objective_metric: str = "win_rate"
    """``win_rate`` or ``mean_reward`` of the label (maximised)."""
    games_per_trial: int = 20
    """Games each trial plays (a whole number of design groups)."""
    num_samples: int = 1
    """Tune's num_samples (grids are expanded once per sample)."""
    max_concurrent_trials: int | None = None
    """Trials running at once (None: max(1, CPUs // 2) at run time)."""
    workers_per_trial: int | None = None
    """Game hosts of each trial (None: max(1, CPUs // max_concurrent_trials))."""
    max_failures: int = 2
    """Retries of a trial whose worker dies (Tune's FailureConfig)."""
    scheduler: str = "asha"
    """``asha`` (early stopping on the running objective) or ``fifo``."""
    grace_period: int = 1
    """ASHA: whole boards a trial plays before it can be stopped (its rungs are at
    ``grace_period * reduction_factor**k`` boards)."""
    reduction_factor: int = 3
    """ASHA: keep the best 1/reduction_factor at each rung."""
    searcher: str = "basic"
    """``basic`` (Tune's grid / random search) or ``optuna`` (model-based; optional dependency)."""
    top_k: int = 3
    """Settings re-evaluated on fresh boards after the search."""
    reeval_games: int = 20
    """Games per re-evaluated setting."""
    tracking: TrackingSpec = field(default_factory=TrackingSpec)
    """Where the sweep is mirrored in MLflow (default: the base spec's uri and experiment, enabled)."""
    source: str = ""
    """Path of the sweep TOML."""

    # --- derived ---------------------------------------------------------------
    @property
    def results_dir(self) -> Path:
        return Path(self.base.results_dir)

    @property
    def sweep_dir(self) -> Path:
        """``<results_dir>/sweeps/<name>``: Tune experiment, report, population."""
        return self.results_dir / "sweeps" / self.name

    @property
    def games_per_board(self) -> int:
        """Games of one board of the base design (``games_per_seed``, or ``rounds``)."""
        return self.base.design.games_per_group

    @property
    def group_name(self) -> str:
        """What one board of the base design is called: ``run`` or ``board``."""
        return self.base.design.group_name

    @property
    def boards_per_trial(self) -> int:
        return self.games_per_trial // self.games_per_board

    @property
    def grid_size(self) -> int:
        return math.prod(len(p.values) for p in self.search if p.kind == "grid")

    @property
    def total_trials(self) -> int:
        return self.grid_size * self.num_samples

    def study_seed(self, stream: int) -> int:
        """The study seed of every trial of ``stream`` (SEARCH_STREAM or REEVAL_STREAM)."""
        return int(np.random.SeedSequence(self.seed, spawn_key=(stream,)).generate_state(1, np.uint32)[0])

    def param_key(self, params: Mapping) -> str:
        blob = json.dumps({k: params[k] for k in sorted(params)}, sort_keys=True, default=str)
        return hashlib.sha1(blob.encode()).hexdigest()[:10]

    def trial_study_id(self, params: Mapping, stream: int = SEARCH_STREAM) -> str:
        kind = "t" if stream == SEARCH_STREAM else "reeval-"
        return f"{self.name}-{kind}{self.param_key(params)}"

    def trial_data(self, params: Mapping, stream: int = SEARCH_STREAM, games: int | None = None) -> dict:
        """The study dict of a trial with ``params`` ({path: value}): the base spec's
        (:meth:`StudySpec.to_dict`) with the searched values set, the group count of
        ``games`` (default ``games_per_trial``), the stream's study seed and the trial's id."""
        data = self.base.to_dict()
        data.pop("source")
        for path, value in params.items():
            set_path(data, path.split("."), plain(value))
        design = self.base.design  # searched paths never touch the design
        games = self.games_per_trial if games is None else games
        data["design"][design.group_key] = games // design.games_per_group
        study = data["study"]
        study["seed"] = self.study_seed(stream)
        study["id"] = self.trial_study_id(params, stream)
        data["tracking"]["enabled"] = False  # the sweep mirrors trials into MLflow
        return data

    def trial_spec(self, params: Mapping, stream: int = SEARCH_STREAM, games: int | None = None,
                   check_files: bool = False) -> StudySpec:
        """The validated study spec of a trial (raises SpecError)."""
        return build_spec(self.trial_data(params, stream, games), source=self.source, check_files=check_files)

    def param_space(self) -> dict:
        return {p.path: p.tune_domain() for p in self.search}

    def aliases(self) -> dict[str, str]:
        return {p.path: p.alias for p in self.search}

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("search", "base", "tracking")}
        out["base"] = self.base.to_dict()
        out["tracking"] = asdict(self.tracking)
        out["search"] = [{"path": p.path, "kind": p.kind, "values": list(p.values), "alias": p.alias}
                         for p in self.search]
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "SweepSpec":
        data = dict(data)
        search = tuple(SearchParam(d["path"], d["kind"], tuple(d["values"]), d["alias"])
                       for d in data.pop("search"))
        base = StudySpec.from_dict({"source": data.get("source", ""), **data.pop("base")})
        tracking = section(TrackingSpec, data.pop("tracking", {}), "tracking", error=SweepError)
        return cls(search=search, base=base, tracking=tracking, **data)


def plain(value):
    """Tune / numpy scalars (and lists of them) as plain Python values."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


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
            if len({json.dumps(v, sort_keys=True, default=str) for v in values}) != len(values):
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


def _parse_param(path: str, raw, base_spec: StudySpec) -> SearchParam:
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


def _flatten_search(table: Mapping, prefix: str = "") -> dict:
    """``{"lineup": {"0": {"params": {"x": {grid = ...}}}}}`` (nested tables, ``--set
    search.lineup.0.params.x=...``) and quoted dotted keys both give ``{"lineup.0.params.x": ...}``."""
    out = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value and not any(k in PARAM_KEYS for k in value):
            out.update(_flatten_search(value, path + "."))
        else:
            out[path] = value
    return out


def _scale_games(games: int, scale: float | None, group: int) -> int:
    """``games`` (whole boards of ``group`` games) with its boards scaled as ``arena run --scale``."""
    return scale_groups(games // group, scale) * group


def build_sweep(data: Mapping, source: str = "", scale: float | None = None,
                base_source: str = "") -> SweepSpec:
    """Validate a raw sweep dict into a :class:`SweepSpec` (raises SweepError).

    ``data["base"]`` is the whole base study (a TOML-shaped dict; ``sweep.base``,
    if present, only names the file it was read from); ``source`` is the sweep
    file's path and ``base_source`` the base study file's (relative paths in the
    base resolve against it, else against ``source``)."""
    data = dict(data)
    for key in data:
        if key not in SWEEP_SECTIONS:
            raise SweepError(f"{key}: unknown section; known: {list(SWEEP_SECTIONS)}")
    try:
        check_scale(scale)
    except SpecError as exc:
        raise SweepError(str(exc)) from None
    sweep = _section(_SweepTable, data, "sweep")
    name, seed = sweep.name, sweep.seed
    base = data.get("base")
    if not base:
        raise SweepError("base: a base study is needed: sweep.base = 'study.toml' or inline [base] tables")
    base = table("base", base, SweepError)

    # The base must be a valid study on its own (errors name base.<field>).
    try:
        base_spec = build_spec(base, source=base_source or source, check_files=True)
    except SpecError as exc:
        raise SweepError(f"base.{exc}") from None
    # Absolute paths: Tune runs trials in their own working directories (seed
    # populations are resolved to absolute paths by the spec already).
    results_dir = sweep.results_dir if sweep.results_dir is not None else base_spec.results_dir
    base_spec = replace(base_spec, results_dir=str(Path(str(results_dir)).resolve()))
    group, unit = base_spec.design.games_per_group, base_spec.design.group_name

    games = raw_games = (sweep.games_per_trial if sweep.games_per_trial is not None
                         else base_spec.design.games_per_condition)
    if games % group:
        raise SweepError(f"sweep.games_per_trial: must be a multiple of {group} (games per "
                         f"{'run' if unit == 'run' else 'board seed'} of the base design), got {games}")
    games = _scale_games(games, scale, group)
    num_samples = scale_groups(sweep.num_samples, scale)

    objective = _section(_ObjectiveTable, data, "objective",
                         required={"label": f"one of {list(base_spec.labels)}"})
    label, metric = objective.label, objective.metric
    if label not in base_spec.labels:
        raise SweepError(f"objective.label: {label!r} is not a lineup label; known: {list(base_spec.labels)}")

    raw_search = _flatten_search(table("search", data.get("search", {}), SweepError))
    if not raw_search:
        raise SweepError("search: empty search space; add at least one parameter")
    params = []
    for path, raw in raw_search.items():
        param = _parse_param(path, raw, base_spec)
        if scale is not None and param.kind == "grid":
            keep = max(1, math.ceil(len(param.values) * scale - 1e-9))
            param = SearchParam(param.path, param.kind, param.values[:keep], param.alias)
        params.append(param)
    aliases = [p.alias for p in params]
    for p in params:
        if aliases.count(p.alias) > 1:
            raise SweepError(f"search.{p.path}.alias: duplicate alias {p.alias!r}")

    scheduler = _section(_SchedulerTable, data, "scheduler")
    kind, reduction = scheduler.kind, scheduler.reduction_factor
    boards = games // group
    grace = scheduler.grace_period
    if grace is None:
        grace = max(1, boards // 4)
    else:
        if grace % group:
            raise SweepError(f"scheduler.grace_period: must be whole boards, a multiple of {group} "
                             f"(games per {'run' if unit == 'run' else 'board seed'} of the "
                             f"base design), got {grace}")
        grace = scale_groups(grace // group, scale)
    grace = min(grace, boards)

    searcher_kind = _section(_SearcherTable, data, "searcher").kind
    if searcher_kind == "optuna":
        grids = [p.path for p in params if p.kind == "grid"]
        if grids:
            raise SweepError(f"search.{grids[0]}: a grid needs searcher.kind = 'basic'; with optuna "
                             f"use choice = [...] instead")

    reeval = _section(_ReevaluateTable, data, "reevaluate")
    top_k = reeval.top_k
    reeval_games = raw_games if reeval.games is None else reeval.games
    if reeval_games % group:
        raise SweepError(f"reevaluate.games: must be a multiple of {group}, got {reeval_games}")
    reeval_games = _scale_games(reeval_games, scale, group)

    over = _section(_TrackingTable, data, "tracking")
    tracking = section(TrackingSpec, {"uri": base_spec.tracking.uri, "experiment": base_spec.tracking.experiment,
                                      **{k: v for k, v in asdict(over).items() if v is not None}},
                       "tracking", error=SweepError)

    spec = SweepSpec(
        name=name, seed=seed, base=base_spec, search=tuple(params), objective_label=label,
        objective_metric=metric, games_per_trial=games, num_samples=num_samples,
        max_concurrent_trials=sweep.max_concurrent_trials, workers_per_trial=sweep.workers_per_trial,
        max_failures=sweep.max_failures,
        scheduler=kind, grace_period=grace, reduction_factor=reduction,
        searcher=searcher_kind, top_k=top_k, reeval_games=reeval_games, tracking=tracking,
        source=base_source or str(source))
    _validate_points(spec)
    return spec


def _validate_points(spec: SweepSpec) -> None:
    """Build a trial spec for every grid point / choice / bound: errors name the search field."""
    defaults = {}
    for p in spec.search:
        defaults[p.path] = p.probe_values()[0]
    # Each value against the first value of every other parameter ...
    for p in spec.search:
        for value in p.probe_values():
            _probe(spec, {**defaults, p.path: value}, p.path)
    # ... and the whole grid (cheap: config objects only), so value combinations
    # an agent rejects (e.g. elite_count > population_size) are caught too.
    grid = [p for p in spec.search if p.kind == "grid"]
    if grid and spec.grid_size <= 5000:
        for combo in itertools.product(*(p.values for p in grid)):
            point = {**defaults, **{p.path: v for p, v in zip(grid, combo)}}
            _probe(spec, point, None)


def _probe(spec: SweepSpec, params: dict, path: str | None) -> None:
    try:
        spec.trial_spec(params, check_files=False)
    except SpecError as exc:
        msg = str(exc)
        where = _field_of(msg, params) or path or next(iter(params))
        shown = {k: params[k] for k in params}
        raise SweepError(f"search.{where}: {msg}" + ("" if path else f" (at grid point {shown})")) from None


def _field_of(msg: str, params: Mapping) -> str | None:
    """The searched path an error message is about (``lineup[0].params.x`` -> lineup.0.params.x)."""
    head = msg.removeprefix("--set ").split(":", 1)[0].replace("[", ".").replace("]", "")
    for path in params:
        if head.startswith(path) or path.startswith(head):
            return path
    return None
