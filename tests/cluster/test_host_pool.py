"""cluster.run.scheduler.HostPool on its own, with a stand-in host: a plan that grows
(``more``, how an adaptive tournament adds its rounds) is played to its end, every
game once, and the next runs are asked for only when nothing is pending."""
from __future__ import annotations

import ray

from cluster.run.scheduler import BatchResult, HostPool, PlayedGame, SeriesRun
from cluster.spec.plan import GameTask


@ray.remote(num_cpus=0)
class EchoHost:
    """Plays each "game" of a batch by returning one row naming it."""

    def ready(self) -> str:
        return "ok"

    def play_batch(self, slices):
        return BatchResult([PlayedGame(task, [{"game_index": task.game_index}], {}, 0.0)
                            for piece in slices for task in piece.tasks], [], 0.0)


def _runs(first: int, count: int) -> list[SeriesRun]:
    return [SeriesRun(series_id=g, games=[GameTask(game_index=g, series_id=g, index_in_series=0, board_seed=g,
                                                          seat_lineup=(0, 1), spawn_key=(1, g))]) for g in range(first, first + count)]


def test_more_extends_the_plan_round_by_round_until_it_gives_nothing(ray_local):
    played: list[int] = []
    asked_with_pending: list[int] = []
    rounds = iter([_runs(4, 3), [], _runs(7, 2)])  # round 2, "not yet", round 3
    pool = HostPool(lambda: EchoHost.remote(), size=2)

    def more():
        asked_with_pending.append(len(pool.pending))
        if len(played) < 4:  # round 1 not complete: nothing yet
            return []
        return next(rounds, [])

    try:
        pool.run(_runs(0, 4), lambda run, task, rows, *_: played.append(rows[0]["game_index"]), more=more)
    finally:
        pool.shutdown()
    assert sorted(played) == list(range(9))  # every game of the three rounds, once
    assert set(played[:4]) == {0, 1, 2, 3}  # round 2 started only after round 1 was in
    assert set(asked_with_pending) == {0}  # asked only when nothing was pending


def test_more_is_not_asked_once_stopped(ray_local):
    played: list[int] = []
    calls = []
    pool = HostPool(lambda: EchoHost.remote(), size=1)
    try:
        pool.run(_runs(0, 3), lambda run, task, rows, *_: played.append(task.game_index),
                 stop_when=lambda: len(played) >= 1, more=lambda: calls.append(1) or _runs(10, 1))
    finally:
        pool.shutdown()
    assert played and 10 not in played and pool.stopped
