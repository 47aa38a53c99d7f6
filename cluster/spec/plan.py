"""The plan of a study: its design expanded into series of games, with seeds.

The plan depends on the spec alone (never on the cluster), so a study can be
resumed, re-run or extended anywhere. Every game has a global ``game_index``
(0 .. total_games - 1) and its randomness comes from the study seed and
indices only:

* the board of a game: ``SeedSequence(study_seed, spawn_key=(0, board_seed))``
  (games on the same board seed get the same board, whatever their index);
* the agent at ``seat`` of game ``g``:
  ``SeedSequence(study_seed, spawn_key=(1, g, seat))``.

``GameTask.spawn_key`` is ``(1, game_index)``: the prefix of the seat seeds.

The board seed itself reaches the game explicitly, ``game.reset(board_seed_sequence(...),
board_index=task.board_seed)`` (:meth:`games.api.Game.reset`): a game with a list of boards
(Pommerman's ``boards_file``) plays board ``board_seed`` and one that alternates by board
(XCOM's first mover) alternates by it; no game reads this seeding layout from the seeds.

Conditions (``design.vary``): the design is repeated once per combination of
the varied game options; game ``g`` belongs to condition
``g // games_per_condition`` and is played on the same board seeds as the
matching game of every other condition (a paired comparison).

Series: the games of a board seed (``series_by = "seed"``), of a set of
``seeds_per_set`` consecutive board seeds in game order (``"set"``), of a run
(``"run"``), or each game alone (``"game"``).

Tournaments (``design.format`` other than ``lineup``) are planned by
:mod:`cluster.spec.tournament`: tables of entrants, numbered so that adding an
entrant appends games, listed round by round (not in ``series_id`` order).

Seat assignment: seat ``i`` gets ``lineup[(i + rotation) % n]``; with
``design.rotate_seats`` the rotation is the game's position among the games of
its board seed (seeds design) or its round (runs x rounds design), modulo
``n``. Rotating keeps lineup entries 0 and 2 together on one team (seats 0+2
or 1+3) in team games.
"""
from __future__ import annotations

import numpy as np

from cluster.spec.tasks import BOARD_STREAM, SEAT_STREAM, GameTask, SeriesTask
from cluster.spec.tournament import plan_tournament

__all__ = ["GameTask", "SeriesTask", "plan_study", "board_seed_sequence", "seat_seed_sequence",
           "BOARD_STREAM", "SEAT_STREAM"]

def board_seed_sequence(spec_seed: int, task: GameTask) -> np.random.SeedSequence:
    """The seed of the board of ``task``."""
    return np.random.SeedSequence(int(spec_seed), spawn_key=(BOARD_STREAM, int(task.board_seed)))


def seat_seed_sequence(spec_seed: int, task: GameTask, seat: int) -> np.random.SeedSequence:
    """The seed of the agent sitting at ``seat`` in ``task``."""
    return np.random.SeedSequence(int(spec_seed), spawn_key=(*task.spawn_key, int(seat)))


#: Games whose plan entries are built from one slice of the index arrays at a time.
_PLAN_CHUNK = 65536


def _seat_lineup(n: int, rotation: int) -> tuple[int, ...]:
    return tuple((seat + rotation) % n for seat in range(n))


def plan_study(spec) -> list[SeriesTask]:
    """The series of ``spec`` in order of ``series_id`` (a tournament's round by round; an
    adaptive tournament's seed rounds, :mod:`cluster.spec.adaptive`; a Swiss tournament's round 1,
    :mod:`cluster.spec.swiss`); games ordered within each."""
    design = spec.design
    if design.tournament and design.stop is not None:  # adaptive: the seed rounds; the rest as it plays
        from cluster.spec.adaptive import adaptive_seed_series

        return adaptive_seed_series(spec)
    if design.format == "swiss":  # round 1; the rest is paired from the results as it plays
        from cluster.spec.swiss import swiss_first_series

        return swiss_first_series(spec)
    if design.tournament:
        return plan_tournament(spec).series
    n = len(spec.lineup)
    per_condition = design.games_per_condition
    if design.runs_design:
        groups_per_condition = design.runs
    elif design.series_by == "set":
        groups_per_condition = -(-design.seeds // design.seeds_per_set)
    else:
        groups_per_condition = design.seeds
    # The index arithmetic of every game at once (numpy), then one GameTask per game with
    # shared seat tuples: a million games plan in seconds, not the ~17 s of a Python loop
    # doing the divmods and building a tuple per game.
    g = np.arange(design.total_games, dtype=np.int64)
    condition, local = np.divmod(g, per_condition)
    if design.runs_design:
        group, position = np.divmod(local, design.rounds)  # run, round
        board_seed = position % design.seeds
    else:
        group, position = np.divmod(local, design.games_per_seed)  # board seed, game of that seed
        board_seed = group
    rotation = position % n if design.rotate_seats else np.zeros_like(g)
    if design.series_by == "game":
        series_id, index_in_series = g, np.zeros_like(g)
    elif design.series_by == "set":  # consecutive board seeds, board after board
        per_set = design.seeds_per_set * design.games_per_seed
        group_set, index_in_series = np.divmod(local, per_set)
        series_id = condition * groups_per_condition + group_set
    else:  # "seed" (seeds design) or "run" (runs design): the group is the series
        series_id, index_in_series = condition * groups_per_condition + group, position
    lineups = [_seat_lineup(n, r) for r in range(n)]
    series: dict[int, list[GameTask]] = {}
    for lo in range(0, len(g), _PLAN_CHUNK):  # in chunks: no million-entry lists of ints at once
        part = slice(lo, lo + _PLAN_CHUNK)
        for gi, sid, idx, board, rot, cond in zip(g[part].tolist(), series_id[part].tolist(),
                                                   index_in_series[part].tolist(), board_seed[part].tolist(),
                                                   rotation[part].tolist(), condition[part].tolist()):
            task = GameTask(gi, sid, idx, board, lineups[rot], (SEAT_STREAM, gi), cond)
            tasks = series.get(sid)
            if tasks is None:
                series[sid] = [task]
            else:
                tasks.append(task)
    # Within a series the games come in game order, which is their order in the series
    # (every series is a run of consecutive games), so no sort per series is needed.
    return [SeriesTask(series_id=sid, games=tuple(tasks)) for sid, tasks in sorted(series.items())]
