"""Play one game of a study: the unit of work a :class:`~cluster.run.scheduler.GameHost` runs.

``play_game`` is a pure function of (spec, task, the agents' learned state at
its start, seeds) under iteration budgets; it never raises for a misbehaving
agent: an exception inside an agent turns every row of that game into a
``result == "error"`` row carrying the text, and the series goes on. How each
seat behaved is counted in its row (:mod:`cluster.run.conduct`): decisions over
its ``ms`` budget's tolerance (``overruns``; under ``budget.overrun_policy =
"forfeit"`` the first one loses the game on time, the reason in ``forfeit``)
and actions the game refused (``invalid_actions``).

Agents are indexed by *lineup index* (``spec.lineup[i]`` -> ``agents[i]``);
seat ``s`` of a game is played by ``agents[task.seat_lineup[s]]``. Agents live
as long as their series on one host, so learned state flows from game to game
inside the agents; ``learned`` (a ``{label: {name: array}}`` dict) is loaded
into them first when a series starts or restarts.

:func:`build_agents` returns :class:`LineupAgents`, which builds an entrant's agent
when a game first seats it: a tournament of many entrants builds only the ones at
the table. An entrant seated twice in one game (a team, or a small gauntlet
field) plays each seat with its own instance, built from the same config and
given the same learned state; the state carried on is the first instance's.
"""
from __future__ import annotations

import logging
import os
import socket
import time
import traceback
from datetime import datetime, timezone
from typing import NamedTuple

import numpy as np

from agents.registry import config_hash, make_agent
from cluster.replay.records import GameRecorder
from cluster.run.conduct import FORFEIT, forfeit_outcomes, forfeit_reason, forfeit_rewards, overrun_limit
from cluster.results.store import METRIC_PREFIX, SCHEMA
from cluster.spec.plan import board_seed_sequence, seat_seed_sequence
from games.registry import make_game

log = logging.getLogger(__name__)

#: Result label of a game that an agent (or the engine) aborted.
ERROR = "error"
#: Longest error text stored in a row.
MAX_ERROR_CHARS = 2000

#: Columns of a result row, in order (the schema is declared once, in cluster/store.py).
ROW_COLUMNS = tuple(SCHEMA.names)
#: Besides these, a study with conditions (``design.vary``) adds one ``vary.<option>``
#: column per varied game option, a game with scores (``Game.scores()``) adds
#: ``score`` and ``score_margin`` (own score minus the best other seat's), an agent
#: that reports figures about its play (``Agent.game_metrics()``) adds one
#: ``metric.<name>`` column per figure, and an agent may add columns of its own
#: (``Agent.row_fields()``, e.g. Pommerman's ``profile``); null in other seats' rows.


def observation_for(game, seat: int, agent):
    """What ``agent`` in ``seat`` sees: ``game.observation(seat)``, or the true state
    (``game.true_state_view()``, hidden cards included) for an agent whose
    ``reads_true_state`` is true: an upper bound by construction, never a fair
    player (e.g. the bird MCTS with ``true_state = true``)."""
    if agent.reads_true_state:
        return game.true_state_view()
    return game.observation(seat)


def worker_name() -> str:
    """``host:pid`` of this process (recorded in rows; excluded from determinism checks)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class LineupAgents:
    """The agents of a lineup, built through the registry when first seated, each with
    its budget (the seat's own, else the study's: ``spec.budget_for``) and the game config
    of ``condition`` (``spec.game_config_for``): under ``design.vary`` of an option that
    changes the game (connect four's ``columns``, XCOM's grid, Pommerman's ruleset) an
    agent plans on the game its series plays, not on the study's base config. A series
    lies within one condition (:func:`cluster.spec.plan.plan_study`).

    ``agents[i]`` is lineup entry ``i``'s agent (built on first use); :meth:`seated`
    gives a game's agents seat by seat, a separate instance for every further seat of
    one entrant. Learned state given before an agent is built (:meth:`load`) is loaded
    into it when it is built, in the order it was given."""

    def __init__(self, spec, condition: int = 0):
        self.spec = spec
        self.game_config = spec.game_config_for(condition)
        self._built: dict[tuple[int, int], object] = {}
        self._learned: list[dict] = []

    def __len__(self) -> int:
        return len(self.spec.lineup)

    def __getitem__(self, index: int):
        return self.instance(int(index), 0)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def instance(self, index: int, copy: int):
        """Instance ``copy`` of lineup entry ``index``'s agent (built on first use)."""
        key = (index, copy)
        agent = self._built.get(key)
        if agent is None:
            seat = self.spec.lineup[index]
            agent = make_agent(seat.agent, seat.config, self.spec.budget_for(index), self.game_config)
            for learned in self._learned:
                arrays = learned.get(seat.label)
                if arrays:
                    agent.load_learned_state({k: np.asarray(v) for k, v in arrays.items()})
            self._built[key] = agent
        return agent

    def seated(self, seat_lineup) -> list:
        """The agent of every seat (``seat_lineup``: lineup index per seat)."""
        copies: dict[int, int] = {}
        out = []
        for index in seat_lineup:
            copy = copies.get(int(index), 0)
            copies[int(index)] = copy + 1
            out.append(self.instance(int(index), copy))
        return out

    def load(self, learned: dict) -> None:
        """Load ``{label: {name: array}}`` into the built agents with those labels, and
        into those built later."""
        self._learned.append(learned)
        for (index, _), agent in self._built.items():
            arrays = learned.get(self.spec.lineup[index].label)
            if arrays:
                agent.load_learned_state({k: np.asarray(v) for k, v in arrays.items()})

    def first_instances(self) -> list[tuple[int, object]]:
        """``(lineup index, agent)`` of every entrant built so far (its first instance)."""
        return sorted((index, agent) for (index, copy), agent in self._built.items() if copy == 0)


def build_agents(spec, condition: int = 0) -> LineupAgents:
    """The lineup's agents for the games of ``condition`` (:class:`LineupAgents`: each
    built when first seated)."""
    return LineupAgents(spec, condition)


def death_ticks(game) -> list:
    """``Game.death_ticks()`` as ints, one entry per seat (None: alive at the end)."""
    n = game.num_players
    ticks = list(game.death_ticks())
    return [None if t is None else int(t) for t in ticks] + [None] * (n - len(ticks))


def load_learned(spec, agents, learned: dict | None) -> None:
    """Load ``{label: {name: array}}`` into the agents with those labels."""
    if not learned:
        return
    if isinstance(agents, LineupAgents):
        agents.load(learned)
        return
    for seat, agent in zip(spec.lineup, agents):
        arrays = learned.get(seat.label)
        if arrays:
            agent.load_learned_state({k: np.asarray(v) for k, v in arrays.items()})


def learned_state_of(spec, agents: list) -> dict[str, dict[str, np.ndarray]]:
    """``{label: arrays}`` of every agent that carries state from game to game."""
    out = {}
    pairs = ([(spec.lineup[i], agent) for i, agent in agents.first_instances()]
             if isinstance(agents, LineupAgents) else zip(spec.lineup, agents))
    for seat, agent in pairs:
        state = agent.learned_state()
        if state is not None:
            out[seat.label] = {k: np.asarray(v) for k, v in state.items()}
    return out


class LineupColumns(NamedTuple):
    """The columns of a result row that depend on the lineup entry only, computed once
    per host instead of once per game and seat (``config_hash`` alone was ~70 us of a
    one-tick game's ~210 us)."""

    label: tuple[str, ...]
    agent: tuple[str, ...]
    config_hash: tuple[str, ...]
    budget: tuple[str, ...]
    """``Budget.describe()`` of each lineup entry's budget."""
    overrun_seconds: tuple = ()
    """Seconds a decision of each lineup entry may take before it is an overrun
    (:func:`cluster.run.conduct.overrun_limit`; None: an iteration budget, no limit)."""


def lineup_columns(spec) -> LineupColumns:
    """:class:`LineupColumns` of ``spec``'s lineup."""
    budgets = [spec.budget_for(i) for i in range(len(spec.lineup))]
    return LineupColumns(
        label=tuple(seat.label for seat in spec.lineup), agent=tuple(seat.agent for seat in spec.lineup),
        config_hash=tuple(config_hash(seat.agent, seat.config, budget) for seat, budget in zip(spec.lineup, budgets)),
        budget=tuple(budget.describe() for budget in budgets),
        overrun_seconds=tuple(overrun_limit(budget, spec.overrun_tolerance) for budget in budgets))


def acting_players(game) -> list[int]:
    """The seats asked for an action this step (``Game.acting_players()``)."""
    return [int(p) for p in game.acting_players()]


def play_game(spec, task, agents: list, learned: dict | None = None,
              worker: str | None = None) -> tuple[list[dict], dict[str, dict[str, np.ndarray]]]:
    """Play ``task`` with ``agents`` (one per lineup entry) and return
    ``(rows, learned_after)``: one row per seat and the learned state of the
    agents after the game (``{label: {name: array}}``, empty if nobody learns).
    """
    rows, learned_after, _ = play_recorded_game(spec, task, agents, learned, worker, record=False)
    return rows, learned_after


def play_recorded_game(spec, task, agents: list, learned: dict | None = None,
                       worker: str | None = None, record: bool = True, columns: LineupColumns | None = None):
    """:func:`play_game` that also returns the game's record
    (:class:`cluster.replay.records.GameRecord`, or None if ``record`` is false, the
    game failed or was lost on time): ``(rows, learned_after, record)``. ``columns``: the lineup's
    :class:`LineupColumns` when the caller plays many games (computed here otherwise)."""
    worker = worker or worker_name()
    columns = columns or lineup_columns(spec)
    load_learned(spec, agents, learned)
    condition = int(task.condition)
    game = make_game(spec.game, spec.game_config_for(condition))
    board_ss = board_seed_sequence(spec.seed, task)
    seats = (agents.seated(task.seat_lineup) if isinstance(agents, LineupAgents)
             else [agents[i] for i in task.seat_lineup])
    labels = [spec.lineup[i].label for i in task.seat_lineup]
    n = game.num_players
    limits = [columns.overrun_seconds[entry] if columns.overrun_seconds else None for entry in task.seat_lineup]
    forfeits_on_time = spec.overrun_policy == FORFEIT
    overruns = [0] * n
    forfeit: list[str | None] = [None] * n
    error: str | None = None
    culprit = "game"
    recorder = None
    try:
        game.reset(board_ss, board_index=task.board_seed)
        if record:
            try:
                recorder = GameRecorder(spec.game, spec.game_config_for(condition), board_ss, labels,
                                        int(game.num_actions), board_index=task.board_seed)
                recorder.start(game)
            except Exception as exc:  # a game we cannot fingerprint is played unrecorded
                log.warning("game %d is not recorded: %s: %s", task.game_index, type(exc).__name__, exc)
                recorder = None
        for seat, agent in enumerate(seats):
            culprit = labels[seat]
            agent.begin_game(seat, seat_seed_sequence(spec.seed, task, seat))
        while not game.done:
            actions = [0] * n
            for seat in acting_players(game):
                culprit = labels[seat]
                t0 = time.perf_counter()
                actions[seat] = seats[seat].act(observation_for(game, seat, seats[seat]))
                seconds = time.perf_counter() - t0  # a clock read: never changes a move
                if limits[seat] is not None and seconds > limits[seat]:
                    overruns[seat] += 1
                    if forfeits_on_time and forfeit[seat] is None:
                        forfeit[seat] = forfeit_reason(spec.budget_for(task.seat_lineup[seat]).ms,
                                                       spec.overrun_tolerance, seconds, seats[seat].decisions)
                if recorder is not None:
                    recorder.decision(seat, seats[seat])
            if any(forfeit):  # lost on time: the step is not played (every seat of it decided first)
                break
            culprit = "game"
            game.step(actions)
            if recorder is not None:
                recorder.step(game, actions)
        if any(forfeit):
            outcomes = forfeit_outcomes(_teams(game, n), [s for s in range(n) if forfeit[s]])
            returns = forfeit_rewards(outcomes)
            scores = None  # the game did not reach its end
            recorder = None  # nor would its record (a replay checks that a record ends with its game)
        else:
            returns = np.asarray(game.returns(), dtype=np.float64)
            outcomes = list(game.outcomes())
            scores = game.scores()
        for seat, agent in enumerate(seats):
            culprit = labels[seat]
            agent.end_game(game.observation(seat), returns)
        metrics = [{f"{METRIC_PREFIX}{k}": float(v) for k, v in agent.game_metrics().items()}
                   for agent in seats]
        died_at = death_ticks(game)
    except Exception as exc:  # an agent (or the engine) failed: record it, keep the series going
        tb = traceback.format_exc(limit=4)
        error = f"{culprit}: {type(exc).__name__}: {exc}\n{tb}"[:MAX_ERROR_CHARS]
        returns = np.zeros(n, dtype=np.float64)
        outcomes = [ERROR] * n
        scores = None
        died_at = [None] * n
        metrics = [{} for _ in seats]
        forfeit = [None] * n
        recorder = None
    extras = [dict(agent.row_fields()) for agent in seats]

    try:
        learned_after = learned_state_of(spec, agents)
    except Exception:  # an agent whose state broke in the failed game: carry nothing
        learned_after = {}

    invalid = np.asarray(game.invalid_actions, dtype=np.int64)
    seat_results = [SeatResult(outcomes[seat], float(returns[seat]), died_at[seat], float(agent.mean_iterations),
                               float(agent.mean_ms), int(invalid[seat]) if seat < len(invalid) else 0,
                               overruns[seat], forfeit[seat], {**metrics[seat], **extras[seat]})
                    for seat, agent in enumerate(seats)]
    rows = game_rows(spec, task, columns, seat_results, teams=_teams(game, n), length=_safe_step_count(game),
                     error=error, worker=worker, scores=scores)
    return rows, learned_after, (recorder.finish() if recorder is not None else None)


class SeatResult(NamedTuple):
    """How one seat's game went: the columns of its row that are its own."""

    result: str
    reward: float = 0.0
    died_at: int | None = None
    mean_iterations: float = 0.0
    mean_ms: float = 0.0
    invalid_actions: int = 0
    """Actions the game refused and replaced (``Game.invalid_actions``)."""
    overruns: int = 0
    """Decisions over the time budget's tolerance (:mod:`cluster.run.conduct`)."""
    forfeit: str | None = None
    """Why the seat lost on time (``overrun_policy = "forfeit"``), else None."""
    extra: dict = {}
    """Extra columns: the agent's figures (``metric.<name>``) and its own row fields."""


def game_rows(spec, task, columns: LineupColumns, seat_results: list[SeatResult], teams, length: int,
              error: str | None, worker: str, scores=None) -> list[dict]:
    """The result rows of one game, one per seat: the columns every row has (the study, the
    game's indices and seeds, the seat's entrant, ``length``, ``error``, the time, the
    worker, the condition) and each seat's own (``seat_results[seat]``); with ``scores``,
    ``score`` and ``score_margin``."""
    finished_at = datetime.now(timezone.utc)
    entropy = f"{spec.seed}/{','.join(str(k) for k in task.spawn_key)}"
    condition = int(task.condition)
    condition_label = spec.condition_label(condition)
    varied = {f"vary.{k}": v for k, v in spec.design.conditions[condition].items()}
    rows = []
    for seat, own in enumerate(seat_results):
        entry = task.seat_lineup[seat]
        row = {
            "study_id": spec.study_id,
            "series_id": int(task.series_id),
            "game_index": int(task.game_index),
            "index_in_series": int(task.index_in_series),
            "board_seed": int(task.board_seed),
            "seed_entropy": entropy,
            "seat": seat,
            "label": columns.label[entry],
            "agent": columns.agent[entry],
            "config_hash": columns.config_hash[entry],
            "team": int(teams[seat]),
            "result": own.result,
            "reward": own.reward,
            "length": length,
            "died_at": own.died_at,
            "mean_iterations": own.mean_iterations,
            "mean_ms": own.mean_ms,
            "invalid_actions": own.invalid_actions,
            "overruns": own.overruns,
            "forfeit": own.forfeit,
            "budget": columns.budget[entry],
            "error": error,
            "finished_at": finished_at,
            "worker": worker,
            "condition": condition_label,
            **varied,
            **own.extra,
        }
        if scores is not None:
            others = [x for i, x in enumerate(scores) if i != seat]
            row["score"] = float(scores[seat])
            row["score_margin"] = float(scores[seat] - max(others)) if others else 0.0
        rows.append(row)
    return rows


def abandoned_game_rows(spec, task, reason: str, worker: str = "", columns: LineupColumns | None = None) -> list[dict]:
    """The ``result == "error"`` rows of a game that never finished because its host hung
    (:class:`cluster.run.scheduler.HostPool` abandoned it ``study.hang_abandons`` times),
    built on the driver without playing it: ``reason`` is the ``error`` text."""
    columns = columns or lineup_columns(spec)
    n = len(task.seat_lineup)
    teams = spec.seat_teams if len(spec.seat_teams) == n else tuple(range(n))
    return game_rows(spec, task, columns, [SeatResult(ERROR)] * n, teams=teams, length=0,
                     error=reason[:MAX_ERROR_CHARS], worker=worker)


def _teams(game, n: int) -> list[int]:
    """``Game.teams()`` (every seat its own team when the game cannot say)."""
    try:
        teams = [int(t) for t in game.teams()]
    except Exception:
        return list(range(n))
    return teams if len(teams) == n else list(range(n))


def _safe_step_count(game) -> int:
    try:
        return int(game.step_count)
    except Exception:
        return 0
