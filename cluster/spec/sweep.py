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
does, applied to the raw dict in one place (:func:`cluster.spec.edits.scale_sweep`,
beside :func:`~cluster.spec.edits.scale_study`): the boards per trial, the
re-evaluation's boards and the grace period's boards become ``ceil(n * F)``,
at least one, each board keeping all its games; the grace period never
exceeds the trial. A sweep has one more axis to shrink: each grid axis keeps
its first ``ceil(n * F)`` values (at least one), and ``num_samples`` becomes
``ceil(n * F)`` (at least one).
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Mapping

import numpy as np

from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.edits import scale_sweep, set_path
from cluster.spec.fields import (NAME_MAX, Name, NonNegativeInt, PositiveInt, SpecError, SweepError, config_class,
                                 is_int, one_of, rule, section, table)
from cluster.spec.limits import check_count
from cluster.spec.search_space import DEFAULT_NUM_SAMPLES, KINDS, SearchParam, flatten_search, parse_param
from cluster.spec.study import StudySpec, TrackingSpec

__all__ = ["SweepError", "SearchParam", "SweepSpec", "build_sweep",
           "SEARCH_STREAM", "REEVAL_STREAM", "KINDS", "OBJECTIVE_METRICS"]

SWEEP_SECTIONS = ("sweep", "base", "objective", "search", "scheduler", "searcher", "reevaluate", "tracking")
OBJECTIVE_METRICS = ("win_rate", "mean_reward")
SCHEDULERS = ("asha", "fifo")
SEARCHERS = ("basic", "optuna")
#: The longest sweep name: a trial's study id (``<name>-reeval-<10 hex digits>``) is a study id.
SWEEP_NAME_MAX = NAME_MAX - 20
#: spawn_key[0] of the study seed of search trials / of the re-evaluation.
SEARCH_STREAM = 0
REEVAL_STREAM = 1


@config_class
class _SweepTable:
    """``[sweep]`` (defaults that depend on the base are filled in by :func:`build_sweep`)."""

    name: Name
    seed: NonNegativeInt = 0
    base: Any = None
    games_per_trial: PositiveInt | None = None
    num_samples: PositiveInt = DEFAULT_NUM_SAMPLES
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
        base = spec_from_dict({"source": data.get("source", ""), **data.pop("base")})
        tracking = section(TrackingSpec, data.pop("tracking", {}), "tracking", error=SweepError)
        return cls(search=search, base=base, tracking=tracking, **data)


def plain(value):
    """Tune / numpy scalars (and lists of them) as plain Python values."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def build_sweep(data: Mapping, source: str = "", scale: float | None = None,
                base_source: str = "") -> SweepSpec:
    """Validate a raw sweep dict into a :class:`SweepSpec` (raises SweepError).

    ``data["base"]`` is the whole base study (a TOML-shaped dict; ``sweep.base``,
    if present, only names the file it was read from); ``source`` is the sweep
    file's path and ``base_source`` the base study file's (relative paths in the
    base resolve against it, else against ``source``). ``scale`` is ``--scale``,
    applied to (a copy of) the raw dict first, as for a study
    (:func:`cluster.spec.edits.scale_sweep`)."""
    data = dict(data)
    for key in data:
        if key not in SWEEP_SECTIONS:
            raise SweepError(f"{key}: unknown section; known: {list(SWEEP_SECTIONS)}")
    try:
        data = scale_sweep(copy.deepcopy(data), scale)
    except SpecError as exc:
        raise SweepError(str(exc)) from None
    sweep = _section(_SweepTable, data, "sweep")
    name, seed = sweep.name, sweep.seed
    if len(name) > SWEEP_NAME_MAX:
        raise SweepError(f"sweep.name: at most {SWEEP_NAME_MAX} characters (its trials' study ids, "
                         f"<name>-reeval-<10 hex digits>, are study ids of at most {NAME_MAX}), got {len(name)}")
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
    if base_spec.design.tournament:
        raise SweepError(f"base.design.format: a sweep's trials are studies of whole boards of one lineup; "
                         f"a tournament ({base_spec.design.format}) cannot be a sweep's base")
    results_dir = sweep.results_dir if sweep.results_dir is not None else base_spec.results_dir
    base_spec = replace(base_spec, results_dir=str(Path(str(results_dir)).resolve()))
    group, unit = base_spec.design.games_per_group, base_spec.design.group_name

    games = sweep.games_per_trial if sweep.games_per_trial is not None else base_spec.design.games_per_condition
    if games % group:
        raise SweepError(f"sweep.games_per_trial: must be a multiple of {group} (games per "
                         f"{'run' if unit == 'run' else 'board seed'} of the base design), got {games}")

    objective = _section(_ObjectiveTable, data, "objective",
                         required={"label": f"one of {list(base_spec.labels)}"})
    label, metric = objective.label, objective.metric
    if label not in base_spec.labels:
        raise SweepError(f"objective.label: {label!r} is not a lineup label; known: {list(base_spec.labels)}")

    raw_search = flatten_search(table("search", data.get("search", {}), SweepError))
    if not raw_search:
        raise SweepError("search: empty search space; add at least one parameter")
    params = [parse_param(path, raw, base_spec) for path, raw in raw_search.items()]
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
        grace //= group
    grace = min(grace, boards)

    searcher_kind = _section(_SearcherTable, data, "searcher").kind
    if searcher_kind == "optuna":
        grids = [p.path for p in params if p.kind == "grid"]
        if grids:
            raise SweepError(f"search.{grids[0]}: a grid needs searcher.kind = 'basic'; with optuna "
                             f"use choice = [...] instead")

    reeval = _section(_ReevaluateTable, data, "reevaluate")
    top_k = reeval.top_k
    reeval_games = games if reeval.games is None else reeval.games
    if reeval_games % group:
        raise SweepError(f"reevaluate.games: must be a multiple of {group}, got {reeval_games}")

    over = _section(_TrackingTable, data, "tracking")
    tracking = section(TrackingSpec, {"uri": base_spec.tracking.uri, "experiment": base_spec.tracking.experiment,
                                      **{k: v for k, v in asdict(over).items() if v is not None}},
                       "tracking", error=SweepError)

    spec = SweepSpec(
        name=name, seed=seed, base=base_spec, search=tuple(params), objective_label=label,
        objective_metric=metric, games_per_trial=games, num_samples=sweep.num_samples,
        max_concurrent_trials=sweep.max_concurrent_trials, workers_per_trial=sweep.workers_per_trial,
        max_failures=sweep.max_failures,
        scheduler=kind, grace_period=grace, reduction_factor=reduction,
        searcher=searcher_kind, top_k=top_k, reeval_games=reeval_games, tracking=tracking,
        source=base_source or str(source))
    _check_sweep_size(spec)
    _validate_points(spec)
    return spec


def _check_sweep_size(spec: SweepSpec) -> None:
    """The sweep's games (trials x games per trial, plus the re-evaluation of the top trials)
    within the base study's ``[limits] games``; names the larger of the two factors."""
    trials, games = spec.total_trials, spec.games_per_trial
    total = trials * games + spec.top_k * spec.reeval_games
    where = "sweep.num_samples" if trials >= games else "sweep.games_per_trial"
    check_count(where, total, spec.base.limits, "games", "games per sweep",
                f"{trials} trials x {games} games + {spec.top_k} x {spec.reeval_games} re-evaluated = {total} games",
                error=SweepError)


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
