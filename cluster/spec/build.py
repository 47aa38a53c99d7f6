"""Building a :class:`~cluster.spec.study.StudySpec` from a raw TOML-shaped dict: every check, before any game.

:func:`build_spec` takes the dict (the TOML's shape, read by ``jobs.spec``, edited by
``--set`` / ``--unset`` / ``--scale`` in :mod:`cluster.spec.edits`, or rebuilt from
:meth:`StudySpec.to_dict` on a Ray worker by :func:`spec_from_dict`) and builds it
section by section, each into its small model class, in this order (the first error
wins, one line naming the field, a :class:`~cluster.spec.fields.SpecError`):

1. the sections: known, and ``study``, ``game``, ``lineup`` (and ``design``) present;
2. ``[limits]`` (:mod:`cluster.spec.limits`), ``[study]`` (:class:`_StudyTable`), ``[game]``
   (through the game registry: its config and its number of players), ``[budget]``;
3. ``[design]`` (:func:`build_design`, with its ``stop``), the game config of every
   condition of ``design.vary``, ``[tracking]``;
4. ``[[lineup]]`` (:func:`build_lineup`): one entry per seat
   (:func:`check_one_entry_per_seat`), each agent and its params through the agent
   registry, seed populations, the agent's checks against the game, labels;
5. what ties sections together: the stop's labels against the lineup, iteration
   budgets against the agents that can honour them, the sizes against ``[limits]``
   (:func:`check_sizes`; a tournament's game count is checked before its tables are
   listed, :func:`cluster.spec.tournament.check_tournament`).

A new section is a raw table class (or a model class of :mod:`cluster.spec.study`
validated by :func:`~cluster.spec.fields.section`), a ``build_<section>`` function
here and a field of the model; a rule over two sections goes to step 5.
"""
from __future__ import annotations

import copy
import math
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Mapping

from agents.api import Budget
from agents.registry import agent_class, agent_names, make_agent_config
from cluster.spec.design import default_seeds, is_runs_design
from cluster.spec.edits import scale_study
from cluster.spec.fields import (LABEL_RULE, Flag, Label, Name, NonNegativeInt, PositiveInt, SpecError, Text,
                                 config_class, is_label, one_of, rule, section, table)
from cluster.spec.limits import DEFAULT_LIMITS, Limits, check_count
from cluster.spec.seed_populations import check_population_fits, resolve_population
from cluster.spec.study import (DEFAULT_HANG_ABANDONS, DEFAULT_HANG_FACTOR, DEFAULT_HANG_FLOOR_SECONDS,
                                DEFAULT_OVERRUN_POLICY, DEFAULT_OVERRUN_TOLERANCE, OVERRUN_POLICIES, SECTIONS,
                                DesignSpec, RankingSpec, SeatSpec, SprtSpec, StopSpec, StudySpec, TrackingSpec)
from cluster.tracking.client import key_safe
from games.registry import check_game, game_names, make_config, make_game

__all__ = ["build_spec", "spec_from_dict", "build_game", "build_budget", "build_design", "build_stop",
           "build_conditions", "build_tracking", "build_lineup", "check_one_entry_per_seat",
           "check_stop_fits_lineup", "check_iteration_budgets", "check_sizes"]


# --- the raw tables that are not model objects themselves --------------------------
HangFactor = Annotated[Any, rule(lambda v: _finite(v) and 1 <= v <= 1000, "must be a number in [1, 1000]")]
Seconds = Annotated[Any, rule(lambda v: _finite(v) and 0 < v <= 86400, "must be a number of seconds in (0, 86400]")]
Tolerance = Annotated[Any, rule(lambda v: _finite(v) and 0 <= v <= 1000,
                                "must be a number in [0, 1000] (0.5: a decision over 1.5 x ms counts)")]


def _finite(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


@config_class
class _StudyTable:
    """``[study]``."""

    name: Name
    seed: NonNegativeInt
    results_dir: Text = "arena-studies"
    id: Name | None = None
    max_in_flight: PositiveInt | None = None
    hang_factor: HangFactor = DEFAULT_HANG_FACTOR
    hang_floor_seconds: Seconds = DEFAULT_HANG_FLOOR_SECONDS
    hang_abandons: PositiveInt = DEFAULT_HANG_ABANDONS


Milliseconds = Annotated[Any, rule(lambda v: not isinstance(v, bool) and isinstance(v, (int, float)),
                                   "must be a number of milliseconds")]


@config_class
class _SeatBudgetTable:
    """A lineup entry's ``budget = { iterations = N }`` or ``{ ms = M }``."""

    ms: Milliseconds | None = None
    iterations: PositiveInt | None = None


@config_class
class _BudgetTable(_SeatBudgetTable):
    """``[budget]``."""

    per_seat: Flag = True
    overrun_tolerance: Tolerance = DEFAULT_OVERRUN_TOLERANCE
    overrun_policy: one_of(*OVERRUN_POLICIES) = DEFAULT_OVERRUN_POLICY


@config_class
class _SeatTable:
    """A ``[[lineup]]`` entry."""

    agent: Text
    label: Label | None = None
    params: Any = None
    seed_population: Text | None = None
    budget: Any = None


# --- the spec, section by section ---------------------------------------------------
def build_spec(data: Mapping, source: str = "", check_files: bool = True,
               scale: float | None = None) -> StudySpec:
    """Validate a raw TOML-shaped dict into a :class:`StudySpec` (raises SpecError).

    ``source`` is the spec file's path (relative seed populations resolve against its
    directory); ``check_files`` opens seed population files (a Ray worker, which may not
    see them, passes False); ``scale`` is ``--scale``, applied to (a copy of) the raw
    dict first (:func:`cluster.spec.edits.scale_study`, the one rule it shares with sweeps)."""
    if scale is not None:
        data = scale_study(copy.deepcopy(dict(data)), scale)
    data = dict(data)
    for key in data:
        if key not in SECTIONS:
            raise SpecError(f"{key}: unknown section; known: {list(SECTIONS)}")
    for required in ("study", "game", "lineup"):
        if required not in data:
            raise SpecError(f"{required}: required section is missing")
    limits = section(Limits, data.get("limits", {}), "limits")
    study = section(_StudyTable, data["study"], "study",
                    required={"name": "letters, digits, '.', '_' and '-'", "seed": "a non-negative int"})

    game, game_config, seat_teams = build_game(data["game"])
    num_players = len(seat_teams)
    budget, seat_budgets = build_budget(data.get("budget", {}))
    conduct = section(_BudgetTable, data.get("budget", {}), "budget")
    if "design" not in data:
        raise SpecError("design: required section is missing (design.seeds at least)")
    design = build_design(data["design"])
    check_sizes(design, budget, limits)
    condition_configs = build_conditions(game, game_config, design)
    tracking = build_tracking(data.get("tracking", {}))
    if isinstance(data["lineup"], list):
        check_count("lineup", len(data["lineup"]), limits, "entrants", "entries in a lineup",
                    f"{len(data['lineup'])} entries")
    base_dir = Path(source).resolve().parent if source else Path.cwd()
    lineup = build_lineup(data["lineup"], num_players, game, base_dir, check_files,
                          tracking.uri, Path(study.results_dir) / ".seed-populations", game_config,
                          tournament=design.tournament)

    if design.stop is not None and design.stop.sprt is not None:
        check_stop_fits_lineup(design.stop, lineup, num_players)
        if design.stop.scoring == "blocks" and (len(lineup) != num_players or design.games_per_seed % num_players):
            raise SpecError(f"design.games_per_seed: scoring = 'blocks' plays every board with its {num_players} "
                            f"seat rotations: a multiple of {num_players}, got {design.games_per_seed}")
    check_iteration_budgets(lineup, budget, seat_budgets)
    for i, seat in enumerate(lineup):
        if seat.budget is not None and seat.budget.iterations is not None:
            check_count(f"lineup[{i}].budget.iterations", seat.budget.iterations, limits, "iterations",
                        "iterations per decision")
    spec = StudySpec(name=study.name, seed=study.seed, results_dir=study.results_dir, game=game,
                     game_config=game_config, lineup=lineup, budget=budget, design=design,
                     tracking=tracking, max_in_flight=study.max_in_flight, source=str(source),
                     id=study.id, condition_configs=condition_configs,
                     seat_budgets=seat_budgets, seat_teams=seat_teams,
                     overrun_tolerance=float(conduct.overrun_tolerance), overrun_policy=conduct.overrun_policy,
                     hang_factor=float(study.hang_factor), hang_floor_seconds=float(study.hang_floor_seconds),
                     hang_abandons=study.hang_abandons, limits=limits)
    if design.tournament:
        from cluster.spec.tournament import check_tournament

        check_tournament(spec)  # the candidates' labels, the game count (set on the design)
    return spec


def spec_from_dict(data: Mapping, check_files: bool = False) -> StudySpec:
    """Rebuild (and re-validate) a spec from :meth:`StudySpec.to_dict` (its ``source``
    included). Seed population files are not opened unless ``check_files`` (a Ray worker
    may not see them)."""
    data = dict(data)
    source = data.pop("source", "") or ""
    return build_spec(data, source=source, check_files=check_files)


def build_game(raw) -> tuple[str, Any, tuple[int, ...]]:
    """The ``[game]`` table: ``(name, validated config, the team of every seat)``, through the
    game registry (a plugin game is loaded here); the seats are the players
    (``Game.teams()``: FFA, every seat its own team)."""
    options = table("game", raw)
    if "name" not in options:
        raise SpecError(f"game.name: required; known games: {game_names()}")
    name = options.pop("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"game.name: must be a non-empty string, got {name!r}")
    try:
        check_game(name)  # a plugin game (entry point or import path) is loaded here
    except ValueError as exc:  # chained: --debug shows where a plugin failed to import
        raise SpecError(f"game.name: {exc}") from exc
    try:
        config = make_config(name, options)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        raise SpecError(msg if msg.startswith("game.") else f"game.{msg}") from None
    instance = make_game(name, config)
    teams = tuple(int(t) for t in instance.teams())
    if len(teams) != int(instance.num_players):  # a game's own teams() that does not cover its seats
        teams = tuple(range(int(instance.num_players)))
    return name, config, teams


def build_budget(raw, where: str = "budget", exactly_one: bool = False) -> tuple[Budget, bool]:
    """The ``[budget]`` table and its ``per_seat`` (or a seat's ``budget``, ``where`` =
    ``lineup[i].budget``, which must give exactly one of ``ms`` and ``iterations``)."""
    parsed = section(_SeatBudgetTable if exactly_one else _BudgetTable, raw, where)
    ms, iterations = parsed.ms, parsed.iterations
    if exactly_one and (ms is None) == (iterations is None):
        raise SpecError(f"{where}: give exactly one of iterations (per decision) or ms "
                        f"(per decision), e.g. {{ iterations = 1270 }}, got {dict(raw)!r}")
    kwargs = {}
    if ms is not None:
        kwargs["ms"] = float(ms)
    if iterations is not None:
        kwargs["iterations"] = iterations
    try:
        budget = Budget(**kwargs)
    except ValueError as exc:
        msg = str(exc).removeprefix("budget.")
        raise SpecError(f"{where}.{msg}") from None
    return budget, getattr(parsed, "per_seat", True)


def build_design(raw) -> DesignSpec:
    """The ``[design]`` table as a :class:`DesignSpec` (raises SpecError naming the field).
    Needs no registry: a stored spec's design reads back through it too
    (:class:`cluster.spec.stored.StoredSpec`)."""
    values = table("design", raw)
    default_seeds(values)
    values.setdefault("series_by", "run" if is_runs_design(values) else "seed")
    stop = values.pop("stop", None)
    return section(DesignSpec, values, "design", required={"seeds": "number of board seeds"},
                   stop=None if stop is None else build_stop(stop))


def build_stop(raw) -> StopSpec:
    """``design.stop`` as a :class:`StopSpec`: a two-entrant test (``sprt`` and ``between``;
    its labels are checked against the lineup later, by :func:`check_stop_fits_lineup`) or a
    tournament's ranking stop (:class:`RankingSpec`)."""
    example = 'e.g. stop = { sprt = { elo0 = 0, elo1 = 20 }, between = ["A", "B"] }'
    values = table("design.stop", raw)
    sprt = values.pop("sprt", None)
    ranking = values.pop("ranking", None)
    if ranking is not None:
        values["ranking"] = section(RankingSpec, ranking, "design.stop.ranking")
    elif sprt is None:
        raise SpecError(f"design.stop.sprt: required ({example}; or a tournament's "
                        f"stop = {{ ranking = {{ confidence = 0.95, delta_elo = 20 }} }})")
    if sprt is not None:
        values["sprt"] = section(SprtSpec, sprt, "design.stop.sprt",
                                 required={"elo0": "Elo difference of H0", "elo1": "Elo difference of H1"})
        if values.get("between") is None:
            raise SpecError(f"design.stop.between: required ({example})")
    return section(StopSpec, values, "design.stop")


def build_conditions(game: str, game_config, design: DesignSpec) -> tuple:
    """The game config of every condition of ``design.vary`` (validated)."""
    if not design.vary:
        return (game_config,)
    base = asdict(game_config)
    configs = []
    for condition in design.conditions:
        for key in condition:
            if key not in base:
                raise SpecError(f"design.vary.{key}: unknown option of game {game!r}; "
                                f"known: {sorted(base)}")
        try:
            configs.append(make_config(game, {**base, **condition}))
        except (ValueError, TypeError) as exc:
            key = next(iter(condition))
            msg = str(exc).removeprefix("game.")
            raise SpecError(f"design.vary.{key}: {msg}") from None
    return tuple(configs)


def build_tracking(raw) -> TrackingSpec:
    """The ``[tracking]`` table."""
    return section(TrackingSpec, raw, "tracking")


# --- the lineup -------------------------------------------------------------------------
def check_one_entry_per_seat(raw, num_players: int, game: str, tournament: bool = False) -> None:
    """The lineup rule of a study: a non-empty array of tables with exactly one entry per
    seat of the game; a tournament takes any number of entrants, two at least."""
    if not isinstance(raw, list) or not raw:
        raise SpecError("lineup: must be a non-empty array of tables ([[lineup]] entries)")
    if tournament:
        if len(raw) < 2:
            raise SpecError(f"lineup: a tournament needs at least two entrants, got {len(raw)}")
    elif len(raw) != num_players:
        raise SpecError(f"lineup: the game {game!r} has {num_players} players, but the lineup "
                        f"has {len(raw)} entries (or hold a tournament of any number of entrants: "
                        f"[design] format = \"round_robin\", \"gauntlet\" or \"swiss\")")


def build_lineup(raw, num_players: int, game: str, base_dir: Path,
                 check_files: bool, tracking_uri: str | None = None,
                 cache_dir: Path | None = None, game_config=None,
                 tournament: bool = False) -> tuple[SeatSpec, ...]:
    """The ``[[lineup]]`` entries as :class:`SeatSpec`, in order: each agent through the
    agent registry (a plugin agent is loaded here) with its params validated, its seed
    population resolved (and, with ``check_files``, opened and checked against the agent
    and the game), its own budget, and a unique label (:func:`_assign_labels`)."""
    check_one_entry_per_seat(raw, num_players, game, tournament)
    entries = []
    for i, item in enumerate(raw):
        where = f"lineup[{i}]"
        seat = section(_SeatTable, item, where, required={"agent": f"known: {agent_names()}"})
        agent = seat.agent
        try:
            cls = agent_class(agent)  # a plugin agent (entry point or import path) is loaded here
        except ValueError as exc:  # chained: --debug shows where a plugin failed to import
            raise SpecError(f"{where}.agent: {str(exc).removeprefix('agent: ')}") from exc
        if cls.games and not cls.plays(game):  # (an agent declaring no games is asked by check_for_game)
            players = [name for name in agent_names() if _plays_quietly(name, game)]
            where_it_plays = ", ".join(cls.games) if cls.games else cls.plays_any_description
            raise SpecError(f"{where}.agent: {agent!r} does not play {game!r} (it plays {where_it_plays}); "
                            f"agents for {game!r}: {players}")
        params = table(f"{where}.params", {} if seat.params is None else seat.params)
        try:
            config = make_agent_config(agent, params, field_prefix=f"{where}.params")
        except ValueError as exc:
            raise SpecError(str(exc)) from None
        population = seat.seed_population
        if population is not None:
            population = resolve_population(f"{where}.seed_population", population, base_dir,
                                            check_files, tracking_uri, cache_dir)
            if check_files:
                arrays = check_population_fits(f"{where}.seed_population", agent, config, population)
                _check_fits_game(where, agent, config, game_config, arrays, population)
        elif check_files:
            _check_fits_game(where, agent, config, game_config, None, None)
        budget = None
        if seat.budget is not None:
            budget, _ = build_budget(seat.budget, f"{where}.budget", exactly_one=True)
        entries.append(dict(agent=agent, label=seat.label, params=params, config=config,
                            seed_population=population, budget=budget))
    labels = _assign_labels([entry["agent"] for entry in entries], [entry["label"] for entry in entries])
    for i, (entry, label) in enumerate(zip(entries, labels)):
        if entry["label"] is None and not is_label(label):  # e.g. a long import path, an odd plugin name
            raise SpecError(f"lineup[{i}].label: required: the agent's name {label!r} is no label ({LABEL_RULE}); "
                            f"give one, e.g. label = \"A\"")
    _check_metric_keys(labels)
    return tuple(SeatSpec(**{**entry, "label": label}) for entry, label in zip(entries, labels))


def _check_metric_keys(labels: list[str]) -> None:
    """Two labels that MLflow would log under one key (``MCTS+R`` and ``MCTS_R`` are both
    ``W/MCTS_R``: MLflow keys take letters, digits, ``_ - . /`` and spaces) are refused."""
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        key = key_safe(label)
        if key in seen:
            raise SpecError(f"lineup[{i}].label: {label!r} and {labels[seen[key]]!r} (lineup[{seen[key]}]) "
                            f"would share the MLflow metrics of {key!r}; make them differ in letters, "
                            f"digits, '.', '_', '-' or spaces")
        seen[key] = i


def _assign_labels(agents: list[str], given: list[str | None]) -> list[str]:
    """Every entry's label: the one given (unique among those given), else the agent's
    name when it is the only entry of that agent without a label and no given label takes
    it, else ``<agent>-1``, ``<agent>-2`` ... skipping labels already taken."""
    explicit = [label for label in given if label is not None]
    for i, label in enumerate(given):
        if label is not None and explicit.count(label) > 1:
            raise SpecError(f"lineup[{i}].label: duplicate label {label!r}")
    taken = set(explicit)
    unlabelled = [agent for agent, label in zip(agents, given) if label is None]
    labels, counters = [], {}
    for agent, label in zip(agents, given):
        if label is None:
            if unlabelled.count(agent) == 1 and agent not in taken:
                label = agent
            else:
                counters[agent] = counters.get(agent, 0) + 1
                label = f"{agent}-{counters[agent]}"
                while label in taken:
                    counters[agent] += 1
                    label = f"{agent}-{counters[agent]}"
            taken.add(label)
        labels.append(label)
    return labels


def _plays_quietly(agent: str, game: str) -> bool:
    """Whether ``agent`` plays ``game``; False for a plugin agent that does not load."""
    try:
        return agent_class(agent).plays(game)
    except Exception:  # noqa: BLE001 - only a list of suggestions
        return False


def _check_fits_game(where: str, agent: str, config, game_config, arrays, population) -> None:
    """The agent's ``Agent.check_for_game(config, game_config, arrays)``: inputs that
    depend on the game (e.g. an encoder's board size) are checked before any game.
    Its messages start with ``params.<field>`` or name the population's arrays."""
    if game_config is None:
        return
    try:
        agent_class(agent).check_for_game(config, game_config, arrays)
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith("params."):
            raise SpecError(f"{where}.{msg}") from None
        raise SpecError(f"{where}.seed_population: {population}: {msg}" if population
                        else f"{where}: {msg}") from None


# --- rules across sections --------------------------------------------------------------
def check_sizes(design: DesignSpec, budget: Budget, limits: Limits = DEFAULT_LIMITS) -> None:
    """The study's iterations per decision and its games (a lineup design's; a tournament's
    are counted from its lineup, :func:`cluster.spec.tournament.check_tournament`) within
    ``limits``, naming the largest factor of the count."""
    if budget.iterations is not None:
        check_count("budget.iterations", budget.iterations, limits, "iterations", "iterations per decision")
    stop = design.stop
    for where, cap in (("design.stop.max_games", stop and stop.max_games),
                       ("design.stop.ranking.max_games", stop and stop.ranking and stop.ranking.max_games),
                       ("design.stop.ranking.tables_per_round",
                        stop and stop.ranking and stop.ranking.tables_per_round)):
        if cap:
            check_count(where, cap, limits, "games", "games per study")
    if design.tournament:
        return
    if design.runs_design:
        factors = {"runs": (design.runs, "runs"), "rounds": (design.rounds, "rounds")}
    else:
        factors = {"seeds": (design.seeds, "board seeds"), "games_per_seed": (design.games_per_seed, "games")}
    conditions = math.prod(len(values) for values in design.vary.values())  # without listing them
    if conditions > 1:
        factors["vary"] = (conditions, "conditions")
    largest = max(factors, key=lambda key: factors[key][0])
    games = math.prod(count for count, _ in factors.values())
    shown = " x ".join(f"{count} {what}" for count, what in factors.values())
    check_count(f"design.{largest}", games, limits, "games", "games per study", f"{shown} = {games} games")


def check_stop_fits_lineup(stop: StopSpec, lineup, num_players: int) -> None:
    """The stop's labels are in the lineup; pairs need a two-player game."""
    labels = [seat.label for seat in lineup]
    for i, label in enumerate(stop.between):
        if label not in labels:
            raise SpecError(f"design.stop.between[{i}]: no lineup label {label!r}; labels: {labels}")
    if stop.scoring == "pairs" and num_players != 2:
        raise SpecError(f"design.stop.scoring: 'pairs' needs a two-player game (this one has "
                        f"{num_players} players); use scoring = \"blocks\" (a board's {num_players} seat "
                        f"rotations) or \"games\"")


def check_iteration_budgets(lineup, budget: Budget, seat_budgets: bool) -> None:
    """An agent that cannot honour an iteration budget (``Agent.supports_iteration_budget``
    false) is refused a seat whose budget is in iterations (a deterministic study)."""
    for i, seat in enumerate(lineup):
        own = seat.budget if seat.budget is not None and seat_budgets else None
        effective = own or budget
        if effective.deterministic and not agent_class(seat.agent).supports_iteration_budget:
            where = f"lineup[{i}].budget" if own is not None else "budget"
            raise SpecError(f"lineup[{i}].agent: {seat.agent!r} has no iteration budget "
                            f"(supports_iteration_budget = False) but {where} gives it "
                            f"{effective.describe()} per decision; give this seat budget = {{ ms = 40 }}")
