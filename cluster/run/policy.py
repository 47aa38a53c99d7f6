"""The scheduling policy of a study: which series go first, how many run at once, and how
far past a sequential test's frontier a game may start.

The policy, all of it:

* **Order.** The series runs still to play go to the hosts longest first (better
  packing of unequal series over the hosts; ties keep plan order). Under a
  sequential test (``design.stop``) they go in plan order instead (by their first
  game), so that the prefix of the plan the test reads fills first.
* **In flight.** At most ``study.max_in_flight`` series are in flight, never more
  than one per host (default: one per host). A series is owned by one host until
  it ends, so its games are played in order.
* **Admission under a sequential test.** A series starts only when its next game
  is fewer than :func:`admission_window` games past the test's frontier (the first
  game whose unit the test still waits for): at most two games, or one whole
  series, per host past the frontier, so that a decision wastes at most that many
  games however unevenly the games finish.
* **Stop.** Once the test has decided, nothing more is submitted; games in flight
  finish and are recorded.

The mechanism that carries the policy out (actors, books, ``ray.wait``) is
:class:`cluster.run.scheduler.HostPool`; the test's statistics are
:class:`cluster.analysis.sequential.SequentialMonitor`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from cluster.analysis.sequential import SequentialMonitor
from cluster.run.scheduler import SeriesRun
from cluster.spec.plan import SeriesTask

__all__ = ["Dispatch", "order_runs", "admission_window", "dispatch_policy"]


@dataclass(frozen=True)
class Dispatch:
    """What the host pool is given: the runs in order and the rules of :func:`dispatch_policy`."""

    runs: list[SeriesRun]
    max_in_flight: int | None
    """At most this many series in flight (None: one per host)."""
    stop_when: Callable[[], bool] | None = None
    """Asked before every submission: once true, nothing more is submitted."""
    admit: Callable[[Any], bool] | None = None
    """Asked with a pending run's next game: start it now?"""
    more: Callable[[], Sequence[SeriesRun]] | None = None
    """A plan that grows (an adaptive tournament's next round): asked whenever nothing is
    pending, it gives the next runs, or nothing yet; see :meth:`HostPool.run`."""


def order_runs(runs: Sequence[SeriesRun], sequential: bool) -> list[SeriesRun]:
    """The runs in dispatch order: longest first, or plan order under a sequential test."""
    if sequential:
        return sorted(runs, key=lambda r: r.games[0].game_index)
    return sorted(runs, key=lambda r: -len(r.games))


def admission_window(hosts: int, plan: Sequence[SeriesTask]) -> int:
    """Games that may start past a sequential test's frontier: two per host, or one
    whole series per host when series are longer (the same with batches: a batch
    takes only admitted games, so this window also bounds the batches)."""
    return hosts * max(2, max(len(series.games) for series in plan))


def dispatch_policy(runs: Sequence[SeriesRun], plan: Sequence[SeriesTask], hosts: int,
                    max_in_flight: int | None, monitor: SequentialMonitor | None) -> Dispatch:
    """The :class:`Dispatch` of a study's remaining ``runs`` on ``hosts`` hosts (see the
    module docstring); ``monitor`` is the sequential test, if the study has one."""
    if monitor is None:
        return Dispatch(order_runs(runs, sequential=False), max_in_flight)
    window = admission_window(hosts, plan)
    return Dispatch(order_runs(runs, sequential=True), max_in_flight,
                    stop_when=lambda: monitor.finished,
                    admit=lambda task: monitor.admits(task.game_index, window))
