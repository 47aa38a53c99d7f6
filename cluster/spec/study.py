"""The validated study model: frozen section classes, one docstring per field.

A :class:`StudySpec` is the whole study, its sections small frozen classes
(:class:`DesignSpec` with its :class:`StopSpec` and :class:`SprtSpec`, a
:class:`SeatSpec` per lineup entry, :class:`TrackingSpec`). The model lives in
``cluster`` because the cluster runs it; it is built from a raw TOML-shaped dict by
:func:`cluster.spec.build.build_spec` (the dict read by ``jobs.spec.load_spec``,
edited first by the command line's ``--set`` / ``--unset`` / ``--scale``,
:mod:`cluster.spec.edits`), and rebuilt from :meth:`StudySpec.to_dict` on a Ray
worker by :func:`cluster.spec.build.spec_from_dict`::

    >>> import tomllib
    >>> from cluster.spec.build import build_spec
    >>> data = tomllib.loads(Path("jobs/pommerman_ffa_demo.toml").read_text())
    >>> data["design"]["seeds"] = 2
    >>> spec = build_spec(data)
    >>> spec.design.total_games, spec.study_dir
    (8, PosixPath('arena-studies/pommerman-ffa-demo'))

Every error is raised while building, before anything runs, as a :class:`SpecError`
whose message starts with the dotted name of the offending field::

    design.seeds: must be a positive int, got 0
    lineup[2].agent: unknown agent 'mctz'; known: ['mcts', 'random', ...]
    lineup[1].params.mutation_probability: must be in [0, 1], got 1.5
    game.view_range: must be one of (0, 1, 2, 3, 4) or absent (full), got 7
    lineup[0].seed_population: file not found: x.npz (resolved to /abs/x.npz)
    study.bogus: unknown key; known: [...]

The TOML shape (sections ``study``, ``game``, ``budget``, ``design``,
``lineup`` (an array of tables), ``tracking`` and ``limits``) is shown in
``jobs/pommerman_ffa_demo.toml``.

Names and sizes: ``study.name`` and ``study.id`` name a directory (letters, digits, ``.``,
``_``, ``-``, the first a letter or a digit); lineup labels take letters, digits, spaces and
``. _ - + = : , ( ) @ #`` (:data:`cluster.spec.fields.LABEL_CHARS`). Games per study,
iterations per decision and lineup entries have limits (1,000,000, 1,000,000 and 256),
which a cluster's spec raises in its ``[limits]`` table (:mod:`cluster.spec.limits`)::

    budget.iterations: 9223372036854775807, over the limit of 1000000 iterations per decision
    (raise it with [limits] iterations = 9223372036854775807 or more)

Budgets: ``[budget]`` (``ms`` or ``iterations`` per decision) is every seat's
budget unless a lineup entry has its own, ``budget = { iterations = N }`` or
``{ ms = M }`` (exactly one key; errors name ``lineup[i].budget.<key>``). The
seat's budget reaches its agent, its ``config_hash`` and the ``budget`` column
of its rows. ``[budget] per_seat = false`` ignores the seats' own budgets (one
budget for all, e.g. ``--set budget.ms=40 --set budget.per_seat=false``).
``[budget] overrun_tolerance`` (0.5) and ``overrun_policy`` (``"count"`` or
``"forfeit"``) say when a decision overran its ``ms`` budget and what that costs
(:mod:`cluster.run.conduct`); ``[study] hang_factor`` (4), ``hang_floor_seconds`` (5) and
``hang_abandons`` (2) when a host call counts as hung and when its game becomes an error
(:class:`cluster.run.scheduler.HostPool`).

Designs (see :class:`DesignSpec`):

* **seeds x games_per_seed** (default): ``seeds`` board seeds, each played
  ``games_per_seed`` times; with ``rotate_seats`` the lineup rotates over the
  seats from one game of a seed to the next. Game ``g`` is board seed
  ``g // games_per_seed``, game ``g % games_per_seed`` of that seed.
* **runs x rounds** (``runs`` and ``rounds`` given): ``runs`` independent
  series of ``rounds`` games each (learning agents carry their state from
  round to round). Round ``k`` of every run is played on board seed
  ``k % seeds`` (``seeds`` defaults to ``rounds``: a new board every round, the
  same boards in every run), with rotation ``k % players``.
  Game ``g`` is run ``g // rounds``, round ``g % rounds``.
* **sets** (``series_by = "set"`` with ``seeds_per_set``, seeds design): the
  games of ``seeds_per_set`` consecutive board seeds form one series (board
  after board, ``games_per_seed`` games each), e.g. the FEMCTS study's two
  "sets of 50 games" with one population carried through each: ``seeds = 20,
  games_per_seed = 5, seeds_per_set = 10``.

Tournaments (``design.format = "round_robin"``, ``"gauntlet"`` with ``candidates``, or
``"swiss"`` for two-slot games, :mod:`cluster.spec.swiss`;
:mod:`cluster.spec.tournament`): the lineup lists any number of entrants (at least two),
``rounds`` repeats the tables on fresh boards, and ``seeds``, ``games_per_seed``, ``runs``,
``vary`` and ``stop`` are refused; ``format = "lineup"`` (the default) is every design above,
with one lineup entry per seat, its ``spec.json`` and parameters as before.

Sequential stop (``design.stop``, :class:`StopSpec`, run by :mod:`cluster.analysis.sequential`):
``stop = { sprt = { elo0 = 0, elo1 = 20, alpha = 0.05, beta = 0.05 }, between = ["A", "B"],
max_games = 400, scoring = "pairs" }`` ends the study once an SPRT comparing lineup labels
A and B is decided. ``scoring = "pairs"`` (default) needs a two-player game whose boards
are each played with the seats swapped (seeds design, rotate_seats, even games_per_seed);
``"games"`` scores single games. Not with ``design.vary``. Errors name the field::

    design.stop.sprt.elo1: must be greater than elo0 (0), got -5
    design.stop.between[1]: no lineup label 'MCST'; labels: ['MCTS', 'Random']

``--scale F`` (:func:`cluster.spec.edits.scale_study`, the same rule as for ``arena
sweep``) scales the number of boards, i.e. ``seeds`` (or ``runs`` in a runs x rounds
design), to ``ceil(count * F)``, at least one; each board keeps all its games and seat
rotation, each run all its rounds.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.api import Budget
from agents.registry import agent_class
from cluster.spec.design import (LINEUP_FORMAT, TOURNAMENT_FORMATS, games_per_group, group_key, group_name,
                                 is_runs_design)
from cluster.spec.fields import Flag, Number, PositiveInt, SpecError, Text, config_class, one_of
from cluster.spec.limits import DEFAULT_LIMITS, Limits

__all__ = ["SECTIONS", "SpecError", "SeatSpec", "DesignSpec", "StopSpec", "SprtSpec", "RankingSpec", "TrackingSpec",
           "StudySpec", "OVERRUN_POLICIES"]

#: The sections of a study's TOML.
SECTIONS = ("study", "game", "budget", "design", "lineup", "tracking", "limits")
#: Values of ``[budget] overrun_policy`` (:mod:`cluster.run.conduct`).
OVERRUN_POLICIES = ("count", "forfeit")
DEFAULT_OVERRUN_TOLERANCE = 0.5
DEFAULT_OVERRUN_POLICY = "count"
DEFAULT_HANG_FACTOR = 4.0
DEFAULT_HANG_FLOOR_SECONDS = 5.0
DEFAULT_HANG_ABANDONS = 2
STOP_SCORING = ("pairs", "blocks", "games")
SERIES_BY = ("seed", "set", "run", "game")


@config_class
class SprtSpec:
    """The hypotheses and error rates of a sequential probability ratio test
    (:mod:`cluster.analysis.sequential`): H0 "A is at most ``elo0`` Elo stronger than B"
    against H1 "A is at least ``elo1`` stronger" (logistic Elo)."""

    elo0: Number
    """Elo difference of H0 (e.g. 0: A is no better)."""
    elo1: Number
    """Elo difference of H1, greater than ``elo0`` (e.g. 20)."""
    alpha: Number = 0.05
    """Chance of accepting H1 when H0 holds (false positive), in (0, 0.5)."""
    beta: Number = 0.05
    """Chance of accepting H0 when H1 holds (false negative), in (0, 0.5)."""

    def __post_init__(self):
        where = "design.stop.sprt"
        for key in ("elo0", "elo1", "alpha", "beta"):
            object.__setattr__(self, key, float(getattr(self, key)))
        if not -1000 < self.elo0 < 1000 or not -1000 < self.elo1 < 1000:
            raise SpecError(f"{where}.elo1: Elo bounds must lie in (-1000, 1000), got "
                            f"elo0 = {self.elo0:g}, elo1 = {self.elo1:g}")
        if self.elo1 <= self.elo0:
            raise SpecError(f"{where}.elo1: must be greater than elo0 ({self.elo0:g}), got {self.elo1:g}")
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if not 0 < value < 0.5:
                raise SpecError(f"{where}.{key}: must be in (0, 0.5), got {value:g}")


@config_class
class RankingSpec:
    """``[design] stop = { ranking = { ... } }``: an adaptive tournament, played in rounds of
    tables chosen where its leaderboard is least resolved, until every adjacent pair of the
    leaderboard is ordered, or within ``delta_elo``, at ``confidence`` (or at ``max_games``);
    :mod:`cluster.analysis.adaptive`, the guarantee in :mod:`cluster.analysis.ranking_stop`."""

    confidence: Number = 0.95
    """Per adjacent pair at least ``delta_elo`` apart: the chance that it ends in the wrong
    order, or reported within delta, is at most ``1 - confidence``; in (0.5, 1)."""
    delta_elo: Number = 20.0
    """The indifference margin in Elo: pairs closer than this need not be told apart."""
    max_games: PositiveInt | None = None
    """The cap in games (None: the round robin's, ``design.rounds`` full rounds); the last
    round takes as many whole tables as the cap leaves."""
    tables_per_round: PositiveInt | None = None
    """Tables chosen at each look (None: ``round_growth`` times the boards so far)."""
    round_growth: Number = 0.25
    """Without ``tables_per_round``: each round plays this share of the boards played so far
    (at least half the entrants), so looks come at geometric intervals; in (0, 4]."""
    seed_rounds: PositiveInt = 1
    """Rounds of the seed design (every pair of entrants at a table) before the first look."""

    def __post_init__(self):
        where = "design.stop.ranking"
        for key in ("confidence", "delta_elo", "round_growth"):
            object.__setattr__(self, key, float(getattr(self, key)))
        if not 0.5 < self.confidence < 1.0:
            raise SpecError(f"{where}.confidence: must be in (0.5, 1), got {self.confidence:g}")
        if not 0.0 < self.delta_elo < 1000.0:
            raise SpecError(f"{where}.delta_elo: must be in (0, 1000) Elo, got {self.delta_elo:g}")
        if not 0.0 < self.round_growth <= 4.0:
            raise SpecError(f"{where}.round_growth: must be in (0, 4], got {self.round_growth:g}")


@config_class
class StopSpec:
    """``[design] stop``: end a study once it is decided. Either a sequential test of two
    lineup entries (:mod:`cluster.analysis.sequential`), e.g. ``stop = { sprt = { elo0 = 0,
    elo1 = 20 }, between = ["MCTS", "Random"] }``, or a tournament's adaptive schedule,
    ``stop = { ranking = { confidence = 0.95, delta_elo = 20 } }`` (:class:`RankingSpec`)."""

    sprt: Any = None
    """The test's hypotheses and error rates (``{elo0, elo1, alpha = 0.05, beta = 0.05}``)."""
    between: Any = None
    """The two lineup labels compared, A first (H1: A is stronger)."""
    max_games: PositiveInt | None = None
    """Cap of the test in games, in plan order (None: the design's games); games after it
    are never played, and a test without a decision by then ends undecided."""
    scoring: one_of(*STOP_SCORING) = "pairs"
    """``pairs``: seat-swapped pairs of games on one board, scored as a pentanomial (a
    two-player game, rotate_seats, an even games_per_seed); ``blocks``: every board with all
    its seat rotations (``games_per_seed`` a multiple of the players), A's mean score against
    B over the block (games of more than two players, and one-sided games such as Scotland
    Yard with each entrant in each role); ``games``: every game on its own."""
    ranking: Any = None
    """An adaptive tournament's stop (:class:`RankingSpec`); not with ``sprt``."""

    def __post_init__(self):
        where = "design.stop"
        if self.ranking is not None:
            if self.sprt is not None or self.between is not None:
                raise SpecError(f"{where}.ranking: a tournament's ranking stop, not with sprt or between "
                                f"(a test of two entrants)")
            if self.max_games is not None:
                raise SpecError(f"{where}.max_games: a ranking stop's cap is design.stop.ranking.max_games")
            return
        between = self.between
        if not isinstance(between, (list, tuple)) or len(between) != 2 \
                or not all(isinstance(x, str) and x.strip() for x in between):
            raise SpecError(f"{where}.between: must be two lineup labels, e.g. [\"A\", \"B\"], got {between!r}")
        if between[0] == between[1]:
            raise SpecError(f"{where}.between: the two labels must differ, got {list(between)!r}")
        object.__setattr__(self, "between", tuple(between))
        if self.scoring == "pairs" and self.max_games is not None and self.max_games % 2:
            raise SpecError(f"{where}.max_games: must be even with scoring = 'pairs' (whole pairs), "
                            f"got {self.max_games}")


@dataclass(frozen=True)
class SeatSpec:
    """One entry of the lineup: an agent with its parameters."""

    label: str
    """Unique display name in tables and rows (default: the agent name, made unique): letters,
    digits, spaces and ``. _ - + = : , ( ) @ #``, at most 64 characters, no space at either
    end; two labels may not differ only in characters MLflow keys lack (``MCTS+R`` and
    ``MCTS_R`` would share the metrics ``W/MCTS_R``)."""
    agent: str
    """Registry name of the agent (``agents.registry.agent_names()``: built-ins and installed
    plugins) or its import path ``package.module:ClassName``."""
    params: dict
    """The parameters as given in the spec (raw; defaults not filled in)."""
    config: Any
    """The validated agent ``Config`` (``agents.registry.make_agent_config``)."""
    seed_population: str | None = None
    """Absolute path of an ``.npz`` learned state the agent starts from (checked to
    exist and load with ``allow_pickle=False``); relative paths in the TOML are
    resolved against the spec file's directory."""
    budget: Budget | None = None
    """This seat's own per-decision budget (``[[lineup]] budget = { iterations = N }``
    or ``{ ms = M }``), overriding the study's ``[budget]``; None: the study's."""


@config_class
class DesignSpec:
    """Which games are played, and how they group into series (see the module docstring)."""

    seeds: PositiveInt | None = None
    """Number of board seeds (runs x rounds: distinct boards, cycled over rounds); required
    unless the design is a tournament (whose tables each get their own board)."""
    games_per_seed: PositiveInt = 1
    """Games per board seed (seeds design; must be 1 in a runs x rounds design)."""
    runs: PositiveInt | None = None
    """Number of runs (independent series) of a runs x rounds design; None otherwise."""
    rounds: PositiveInt | None = None
    """Games per run of a runs x rounds design; in a tournament, how many times every table
    is played, each time on a fresh board (None: once); None otherwise."""
    rotate_seats: Flag = True
    """Rotate the lineup over the seats from game to game (seat i gets lineup[(i + r) % n])."""
    carry_learned_state: Flag = True
    """Games of one series share learned state (FEMCTS populations, TD weights)."""
    series_by: one_of(*SERIES_BY) = "seed"
    """``seed``: the games of a board seed form a series (seeds design); ``set``:
    the games of ``seeds_per_set`` consecutive board seeds form one series (seeds
    design; the FEMCTS study's "set of 50 games": 10 boards x 5 games, one
    population carried through); ``run``: a run is a series (runs x rounds
    design); ``game``: every game is independent."""
    seeds_per_set: PositiveInt | None = None
    """Board seeds per series when ``series_by = "set"`` (required then, unused
    otherwise). Set k holds board seeds k*seeds_per_set .. (k+1)*seeds_per_set - 1,
    each played ``games_per_seed`` times in a row; a last set may be shorter
    (when ``seeds`` is not a multiple, e.g. after ``--scale``)."""
    vary: Any = field(default_factory=dict)
    """Game options to vary, e.g. ``{view_range = [0, 1, 2, 3, 4]}``: the whole
    design is played once per combination (a *condition*), on the same boards,
    and results are reported per condition."""
    stop: Any = None
    """A sequential test that ends the study once decided (:class:`StopSpec`); None: play
    every game of the design."""
    format: one_of(LINEUP_FORMAT, *TOURNAMENT_FORMATS) = LINEUP_FORMAT
    """``lineup``: one lineup entry per seat, the designs above; ``round_robin``: every
    entrant meets every other at tables of the game's seats; ``gauntlet``: the
    ``candidates`` against the field (:mod:`cluster.spec.tournament`); ``swiss``: ``rounds``
    rounds of pairs of entrants of equal or near points, no pair twice (two-slot games,
    :mod:`cluster.spec.swiss`)."""
    candidates: Any = ()
    """A gauntlet's candidates (lineup labels); every other entrant is the field."""

    def __post_init__(self):
        if self.tournament:
            self._check_tournament()
            return
        if self.seeds is None:
            raise SpecError("design.seeds: required (number of board seeds)")
        if self.candidates:
            raise SpecError(f"design.candidates: only with format = \"gauntlet\", got format = {self.format!r}")
        if not isinstance(self.vary, dict):
            raise SpecError(f"design.vary: expected a table of option = [values], got {self.vary!r}")
        for key, values in self.vary.items():
            if not isinstance(values, list) or not values:
                raise SpecError(f"design.vary.{key}: expected a non-empty list of values, got {values!r}")
            if len(set(map(repr, values))) != len(values):
                raise SpecError(f"design.vary.{key}: repeated values in {values!r}")
        if (self.runs is None) != (self.rounds is None):
            missing = "rounds" if self.rounds is None else "runs"
            raise SpecError(f"design.{missing}: runs and rounds go together (a runs x rounds "
                            f"design); give both or neither")
        if self.runs_design:
            if self.games_per_seed != 1:
                raise SpecError("design.games_per_seed: not used in a runs x rounds design "
                                f"(every round is one game), got {self.games_per_seed}")
            if self.series_by == "seed":
                raise SpecError("design.series_by: 'seed' needs the seeds x games_per_seed design; "
                                "use 'run' or 'game' with runs x rounds")
        elif self.series_by == "run":
            raise SpecError("design.series_by: 'run' needs a runs x rounds design "
                            "(design.runs and design.rounds)")
        if self.series_by == "set":
            if self.runs_design:
                raise SpecError("design.series_by: 'set' needs the seeds x games_per_seed design; "
                                "use 'run' or 'game' with runs x rounds")
            if self.seeds_per_set is None:
                raise SpecError("design.seeds_per_set: required with series_by = 'set' "
                                "(board seeds per series, e.g. 10)")
        elif self.seeds_per_set is not None:
            raise SpecError(f"design.seeds_per_set: only used with series_by = 'set', "
                            f"got series_by = {self.series_by!r}")
        if self.stop is not None and self.stop.ranking is not None:
            raise SpecError("design.stop.ranking: ranks the entrants of a tournament; give design.format = "
                            "\"round_robin\" (a lineup study compares two entrants with stop.sprt)")
        if self.stop is not None and self.stop.scoring == "blocks" and (self.runs_design or not self.rotate_seats):
            raise SpecError("design.stop.scoring: 'blocks' needs every board played with every seat rotation: a "
                            "seeds x games_per_seed design with rotate_seats = true and games_per_seed a multiple "
                            "of the players")
        if self.stop is not None:
            if self.vary:
                raise SpecError("design.stop: a sequential test compares two agents in one condition; "
                                "not with design.vary (run one study per condition)")
            if self.stop.scoring == "pairs" and (self.runs_design or not self.rotate_seats
                                                 or self.games_per_seed % 2):
                raise SpecError("design.stop.scoring: 'pairs' needs every board played with the seats "
                                "swapped: a seeds x games_per_seed design with rotate_seats = true and an "
                                f"even games_per_seed (got games_per_seed = {self.games_per_seed}, "
                                f"rotate_seats = {str(self.rotate_seats).lower()}"
                                f"{', a runs x rounds design' if self.runs_design else ''}); "
                                "use scoring = \"games\" to score single games")

    def _check_tournament(self) -> None:
        """A tournament's design: its tables set the boards and the seat rotation."""
        where = "design"
        why = "a tournament plays every table on its own board with every seat rotation"
        if self.seeds is not None:
            raise SpecError(f"{where}.seeds: {why} (boards = tables x rounds); drop seeds and give "
                            f"design.rounds to repeat the tables on fresh boards")
        if self.runs is not None:
            raise SpecError(f"{where}.runs: not used in a tournament; design.rounds repeats its tables")
        if self.games_per_seed != 1:
            raise SpecError(f"{where}.games_per_seed: {why}; drop it, got {self.games_per_seed}")
        if not self.rotate_seats:
            raise SpecError(f"{where}.rotate_seats: {why}; it cannot be false")
        if self.series_by not in ("seed", "game"):
            raise SpecError(f"{where}.series_by: a tournament's series are its boards ('seed': a table's "
                            f"rotations share learned state) or single games ('game'), got {self.series_by!r}")
        if self.vary:
            raise SpecError(f"{where}.vary: a tournament is played in one condition; run one tournament "
                            f"per condition")
        if self.stop is not None and self.stop.ranking is None:
            raise SpecError(f"{where}.stop: a two-entrant sequential test, not with a tournament (whose own "
                            f"stop is stop = {{ ranking = {{ confidence = 0.95, delta_elo = 20 }} }})")
        if self.stop is not None and self.format == "swiss":
            raise SpecError(f"{where}.stop.ranking: not with format = \"swiss\" (a Swiss tournament pairs "
                            f"by points for its design.rounds rounds; an adaptive schedule is format = "
                            f"\"round_robin\" with stop.ranking)")
        if self.stop is not None and self.format != "round_robin":
            raise SpecError(f"{where}.stop.ranking: an adaptive schedule ranks every entrant against every "
                            f"other: format = \"round_robin\", got {self.format!r}")
        candidates = self.candidates
        if not isinstance(candidates, (list, tuple)) or not all(isinstance(c, str) and c for c in candidates):
            raise SpecError(f"{where}.candidates: must be a list of lineup labels, got {candidates!r}")
        if len(set(candidates)) != len(candidates):
            raise SpecError(f"{where}.candidates: repeated labels in {list(candidates)!r}")
        object.__setattr__(self, "candidates", tuple(candidates))
        if self.format == "gauntlet" and not candidates:
            raise SpecError(f"{where}.candidates: a gauntlet needs its candidates, e.g. candidates = "
                            f"[\"FEMCTS\"] (they meet the rest of the lineup, the field)")
        if self.format != "gauntlet" and candidates:
            raise SpecError(f"{where}.candidates: only with format = \"gauntlet\", got format = {self.format!r}")

    @property
    def tournament(self) -> bool:
        """True for a tournament (``format`` other than ``lineup``)."""
        return self.format != LINEUP_FORMAT

    @property
    def repeats(self) -> int:
        """A tournament's rounds (every table is played this many times, on fresh boards)."""
        return self.rounds if self.rounds is not None else 1

    @property
    def runs_design(self) -> bool:
        """True for a runs x rounds design (:func:`cluster.spec.design.is_runs_design`)."""
        return is_runs_design(self._shape_table)

    @property
    def _shape_table(self) -> dict:
        return {"runs": self.runs, "rounds": self.rounds, "games_per_seed": self.games_per_seed,
                "format": self.format}

    @property
    def group_key(self) -> str:
        """The field of the group count, ``runs`` or ``seeds`` (what ``--scale`` scales;
        :func:`cluster.spec.design.group_key`)."""
        return group_key(self._shape_table)

    @property
    def group_name(self) -> str:
        """What one group is called in messages: ``run`` or ``board``."""
        return group_name(self._shape_table)

    @property
    def games_per_group(self) -> int:
        """Games of one group: ``rounds`` of a run, or ``games_per_seed`` of a board."""
        return games_per_group(self._shape_table)

    @property
    def conditions(self) -> list[dict]:
        """Every combination of the varied game options ([{}] when nothing varies)."""
        keys = list(self.vary)
        return [dict(zip(keys, combo)) for combo in itertools.product(*(self.vary[k] for k in keys))]

    @property
    def games_per_condition(self) -> int:
        if self.tournament:  # set by build_spec from the plan (it depends on the lineup)
            games = getattr(self, "_tournament_games", None)
            if games is None:
                raise ValueError("a tournament's game count comes from its lineup: build the spec "
                                 "(cluster.spec.study.build_spec), not the design alone")
            return games
        if self.runs_design:
            return self.runs * self.rounds
        return self.seeds * self.games_per_seed

    @property
    def total_games(self) -> int:
        return self.games_per_condition * len(self.conditions)

    def shape(self, num_players: int) -> str:
        """One line: how the games of a condition are laid out, e.g. ``2 board seeds x
        4 games = 8 games (each agent in each of the 4 seats on every board)``."""
        if self.tournament and self.stop is not None:
            return (f"adaptive {self.format} tournament, at most {self.games_per_condition} games (every table "
                    f"on its own board, every seat rotation)")
        if self.format == "swiss":
            return (f"swiss tournament, {self.repeats} round{'s' * (self.repeats != 1)} = "
                    f"{self.games_per_condition} games (each round pairs entrants by points, every pair on "
                    f"its own board, both seat rotations)")
        if self.tournament:
            return (f"{self.format} tournament, {self.repeats} round{'s' * (self.repeats != 1)} = "
                    f"{self.games_per_condition} games (every table on its own board, every seat rotation)")
        if self.runs_design:
            text = (f"{self.runs} run{'s' * (self.runs != 1)} x {self.rounds} rounds = "
                    f"{self.games_per_condition} games (rounds cycle over {self.seeds} board seeds")
            seats = min(self.rounds, num_players) if self.rotate_seats else 1
        else:
            text = (f"{self.seeds} board seed{'s' * (self.seeds != 1)} x {self.games_per_seed} "
                    f"game{'s' * (self.games_per_seed != 1)} = {self.games_per_condition} games (")
            seats = min(self.games_per_seed, num_players) if self.rotate_seats else 1
        if seats == num_players:
            where = "every board" if not self.runs_design else "every run"
            text += f"{', ' if self.runs_design else ''}each agent in each of the {num_players} seats on {where})"
        else:
            text += f"{', ' if self.runs_design else ''}{seats} of {num_players} seat rotations per "
            text += ("run)" if self.runs_design else "board)")
        return text


@config_class
class TrackingSpec:
    """Where the study is mirrored in MLflow."""

    uri: Text = "sqlite:///mlflow.db"
    """MLflow tracking URI."""
    experiment: Text = "arena"
    """MLflow experiment name."""
    enabled: Flag = True
    """Log to MLflow at all."""


@dataclass(frozen=True)
class StudySpec:
    """A whole study: the game, the lineup, the budget, the design and tracking."""

    name: str
    """Study name: letters, digits, ``.``, ``_``, ``-``, the first a letter or a digit, at most
    100 characters (it names the study's directory: never ``.`` or ``..``)."""
    seed: int
    """Study seed: every board and agent seed derives from it and a game index."""
    results_dir: str
    """Directory holding the study directories (default ``arena-studies``)."""
    game: str
    """Registry name of the game."""
    game_config: Any
    """The validated game config (``games.registry.make_config``)."""
    lineup: tuple[SeatSpec, ...]
    """One entry per player of the game."""
    budget: Budget
    """Per-decision search budget of every agent without its own (``SeatSpec.budget``)."""
    design: DesignSpec
    """Which games are played and how they group into series."""
    tracking: TrackingSpec
    """MLflow settings."""
    max_in_flight: int | None = None
    """At most this many series in flight on the cluster (None: the scheduler decides)."""
    source: str = ""
    """Path of the TOML file the spec came from ("" if built in code)."""
    id: str | None = None
    """Study id (names the results directory and the MLflow run); default: the name."""
    condition_configs: tuple = ()
    """The game config of each condition of ``design.vary`` (one entry when nothing varies)."""
    seat_budgets: bool = True
    """``[budget] per_seat``: seats' own budgets override ``budget`` (default); false:
    every seat plays with ``budget`` (e.g. ``--set budget.ms=40 --set budget.per_seat=false``)."""
    seat_teams: tuple = ()
    """The game's team of each seat (``Game.teams()``; FFA: every seat its own), taken from
    the game when the spec is built (not stored: the game says it); a tournament seats one
    entrant per team."""
    overrun_tolerance: float = DEFAULT_OVERRUN_TOLERANCE
    """``[budget] overrun_tolerance``: a decision of a seat with an ``ms`` budget that takes
    longer than ``ms x (1 + overrun_tolerance)`` is an overrun, counted in the seat's
    ``overruns`` column (0.5: over 60 ms under a 40 ms budget); in [0, 1000]."""
    overrun_policy: str = DEFAULT_OVERRUN_POLICY
    """``[budget] overrun_policy``: ``"count"`` counts overruns and plays on; ``"forfeit"``
    makes a seat lose the game on time at its first overrun (its team loses, the others
    win; the reason in its row's ``forfeit`` column). Iteration budgets never overrun."""
    hang_factor: float = DEFAULT_HANG_FACTOR
    """``[study] hang_factor``: a host call that runs longer than this many times what its
    games should take (their number x the study's mean game time so far, at least its
    longest game) is abandoned as hung: the host is killed and its games are played again
    elsewhere; in [1, 1000]."""
    hang_floor_seconds: float = DEFAULT_HANG_FLOOR_SECONDS
    """``[study] hang_floor_seconds``: no host call is abandoned before it has run this long
    (a new host loads its caches on its first call)."""
    hang_abandons: int = DEFAULT_HANG_ABANDONS
    """``[study] hang_abandons``: a game whose host is abandoned this many times while it plays
    that game alone is recorded as an error (``result = "error"``, the reason in ``error``)
    and the study goes on."""
    limits: Limits = DEFAULT_LIMITS
    """``[limits]``: the largest sizes this spec may set (:mod:`cluster.spec.limits`)."""

    def budget_for(self, lineup_index: int) -> Budget:
        """The budget of lineup entry ``lineup_index``: its own (unless
        ``seat_budgets`` is off), else the study's."""
        own = self.lineup[lineup_index].budget
        return own if own is not None and self.seat_budgets else self.budget

    def game_config_for(self, condition: int):
        """The game config of condition ``condition`` (0 when nothing varies)."""
        return self.condition_configs[condition] if self.condition_configs else self.game_config

    def condition_label(self, condition: int) -> str:
        """``view_range=2`` style label of a condition ('' when nothing varies)."""
        if not self.design.vary:
            return ""
        values = self.design.conditions[condition]
        return ",".join(f"{k}={v}" for k, v in values.items())

    @property
    def study_id(self) -> str:
        return self.id if self.id is not None else self.name

    @property
    def study_dir(self) -> Path:
        return Path(self.results_dir) / self.study_id

    @property
    def num_players(self) -> int:
        """Seats of the game (a lineup study has one entry per seat; a tournament any number)."""
        return len(self.seat_teams) if self.seat_teams else len(self.lineup)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(seat.label for seat in self.lineup)

    def to_dict(self) -> dict:
        """A JSON-able dict in the TOML's shape (plus ``source``), which
        :func:`cluster.spec.build.spec_from_dict` builds back into an equal spec."""
        study = {"name": self.name, "seed": self.seed, "results_dir": self.results_dir}
        if self.id is not None:
            study["id"] = self.id
        if self.max_in_flight is not None:
            study["max_in_flight"] = self.max_in_flight
        for key, default in (("hang_factor", DEFAULT_HANG_FACTOR), ("hang_floor_seconds", DEFAULT_HANG_FLOOR_SECONDS),
                             ("hang_abandons", DEFAULT_HANG_ABANDONS)):
            if getattr(self, key) != default:  # a spec.json at the defaults stays as it always was
                study[key] = getattr(self, key)
        budget = _budget_dict(self.budget)
        if not self.seat_budgets:
            budget["per_seat"] = False
        if self.overrun_tolerance != DEFAULT_OVERRUN_TOLERANCE:
            budget["overrun_tolerance"] = self.overrun_tolerance
        if self.overrun_policy != DEFAULT_OVERRUN_POLICY:
            budget["overrun_policy"] = self.overrun_policy
        design = {k: v for k, v in asdict(self.design).items() if v is not None}
        if "stop" in design:  # only the kind of stop given (a test's spec.json stays as it always was)
            kind = "sprt" if self.design.stop.sprt is not None else "ranking"
            other = {"sprt": ("ranking",), "ranking": ("sprt", "between", "max_games", "scoring")}[kind]
            design["stop"] = {k: v for k, v in design["stop"].items() if k not in other}
        if not self.design.tournament:  # a lineup study's spec.json stays as it always was
            design.pop("format", None)
            design.pop("candidates", None)
        else:
            design["candidates"] = list(self.design.candidates)
        lineup = []
        for seat in self.lineup:
            entry = {"agent": seat.agent, "label": seat.label, "params": dict(seat.params)}
            if seat.seed_population is not None:
                entry["seed_population"] = seat.seed_population
            if seat.budget is not None:
                entry["budget"] = _budget_dict(seat.budget)
            lineup.append(entry)
        return {
            "study": study,
            "game": {"name": self.game, **asdict(self.game_config)},
            "budget": budget,
            "design": design,
            "lineup": lineup,
            "tracking": asdict(self.tracking),
            **({"limits": self.limits.non_default()} if self.limits.non_default() else {}),
            "source": self.source,
        }

    def flat_params(self) -> dict[str, str]:
        """The whole spec flattened with dotted keys (agent configs with their
        defaults filled in), as strings: what MLflow logs as parameters."""
        flat: dict[str, str] = {}

        def put(key: str, value) -> None:
            flat[key] = "" if value is None else str(value)

        put("study.name", self.name)
        put("study.id", self.study_id)
        put("study.seed", self.seed)
        put("study.results_dir", self.results_dir)
        put("study.max_in_flight", self.max_in_flight)
        put("study.hang_factor", self.hang_factor)
        put("study.hang_floor_seconds", self.hang_floor_seconds)
        put("study.hang_abandons", self.hang_abandons)
        put("game.name", self.game)
        for key, value in asdict(self.game_config).items():
            put(f"game.{key}", value)
        put("budget.ms", self.budget.ms)
        put("budget.iterations", self.budget.iterations)
        put("budget.per_seat", self.seat_budgets)
        put("budget.overrun_tolerance", self.overrun_tolerance)
        put("budget.overrun_policy", self.overrun_policy)
        for key, value in asdict(self.design).items():
            if key in ("format", "candidates") and not self.design.tournament:
                continue  # a lineup study's parameters stay as they always were
            put(f"design.{key}", list(value) if key == "candidates" else value)
        put("design.total_games", self.design.total_games)
        for i, seat in enumerate(self.lineup):
            put(f"lineup.{i}.label", seat.label)
            put(f"lineup.{i}.agent", seat.agent)
            put(f"lineup.{i}.seed_population", seat.seed_population)
            if seat.budget is not None:
                put(f"lineup.{i}.budget.ms", seat.budget.ms)
                put(f"lineup.{i}.budget.iterations", seat.budget.iterations)
            for key, value in asdict(seat.config).items():
                put(f"lineup.{i}.params.{key}", value)
            for key, value in agent_class(seat.agent).resolved_params(seat.config, self.game_config).items():
                put(f"lineup.{i}.params.{key}", value)  # e.g. profile "auto" as resolved for this game
        for key, value in asdict(self.tracking).items():
            put(f"tracking.{key}", value)
        for key, value in self.limits.non_default().items():
            put(f"limits.{key}", value)
        return flat


def _budget_dict(budget: Budget) -> dict:
    return {"iterations": budget.iterations} if budget.iterations is not None else {"ms": budget.ms}
