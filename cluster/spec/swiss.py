"""The pairings of a Swiss tournament: who meets whom in a round, from the standings.

A Swiss tournament (``[design] format = "swiss"``, two-slot games only) plays
``design.rounds`` rounds; each round pairs the entrants two by two, each pair a table
played on its own board with both seat rotations (:mod:`cluster.analysis.swiss` runs it
from the results). This module is the pairing rule alone, a pure function of the
standings, so that it is tested on hand-made standings:

* **Order.** Entrants are ranked by points (descending), then Buchholz (the sum of the
  points of the opponents met so far, descending), then lineup index (ascending):
  :func:`standing_order`. Everything below reads this order, so ties are broken by it.
* **Bye** (N odd): the lowest-ranked entrant that has not had a bye sits out, scores
  :data:`BYE_POINTS` (a won pairing: 2 points) and plays no game; at most one bye
  per entrant per tournament. If the others cannot then be paired without a rematch, the
  next-lowest without a bye is tried, and so on.
* **Pairs** (a Dutch-like fold inside score groups, the first in a complete search): the
  highest-ranked unpaired entrant takes, among the unpaired entrants it has not met, the one
  of its own score nearest the middle of its score group (the fold: in a group of 2k the
  i-th meets the (k + i)-th), below the middle before above; then entrants of the nearest
  lower score (a *downfloat*), in rank order. The search backtracks (a depth-first search
  over these choices, in this order), so the pairing found is the first one in that order
  with **no rematch**, whenever one exists among the bye candidates; it gives up after
  :data:`SEARCH_STEPS` steps. When no rematch-free pairing exists, the search allows one
  rematch, then two, ... (so the pairing has as few as possible; ``rematches`` counts them);
  out of steps, it pairs greedily in the same order, pairs met least often first.
* **Round 1** is the same rule on zero standings: the lineup order folded (in a field of
  2k, entrant i meets entrant k + i; lineup order is the seeding, strongest first if you
  know it), the last entrant's bye when N is odd.

    >>> swiss_pairing([0.0] * 6, [0.0] * 6, {}, set()).tables
    ((0, 3), (1, 4), (2, 5))
    >>> p = swiss_pairing([2.0, 2.0, 1.0, 1.0, 0.0], [0.0] * 5, {(0, 1): 1}, had_bye={4})
    >>> p.tables, p.bye        # 0 and 1 met: 0 floats down to 2; 4 had its bye, so 3 sits out
    (((0, 2), (1, 4)), 3)
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Pairing", "swiss_pairing", "standing_order", "SWISS_TABLE_STREAM", "BYE_POINTS", "SEARCH_STEPS",
           "swiss_first_series",
           "swiss_tables", "swiss_text"]

#: First element of the spawn key of the seat orders of a Swiss round (``(stream, round)``).
SWISS_TABLE_STREAM = 4
#: Points of a bye: it scores as a won pairing, both its games won (a pairing plays two games,
#: one per seat rotation, each worth 1 point for a win and 1/2 for a draw).
BYE_POINTS = 2.0
#: Steps of the rematch-free search before it gives up (and allows rematches).
SEARCH_STEPS = 200_000


@dataclass(frozen=True)
class Pairing:
    """One round's pairing."""

    tables: tuple[tuple[int, int], ...]
    """The pairs, the higher-ranked entrant first, in rank order of that entrant."""
    bye: int | None
    """The entrant that sits out (N odd), else None."""
    rematches: int = 0
    """Pairs that met before (0 whenever a rematch-free pairing was found)."""


def standing_order(points: Sequence[float], buchholz: Sequence[float]) -> list[int]:
    """Entrants by points, then Buchholz (both descending), then lineup index."""
    return sorted(range(len(points)), key=lambda e: (-points[e], -buchholz[e], e))


class _OutOfSteps(Exception):
    pass


def _key(pair: tuple[int, int]) -> tuple[int, int]:
    a, b = pair
    return (a, b) if a < b else (b, a)


def _candidates(x: int, rest: Sequence[int], points: Sequence[float], rank: Mapping[int, int]) -> list[int]:
    """``x``'s opponents in the order of preference (module docstring): ``rest`` are the
    unpaired entrants below ``x``, in rank order."""
    group = [y for y in rest if points[y] == points[x]]
    middle = (len(group) + 1) // 2 - 1  # x is the top of its group: the fold's partner
    position = {y: i for i, y in enumerate(group)}

    def preference(y: int):
        if y in position:
            i = position[y]
            return (0.0, abs(i - middle), i < middle, rank[y])
        return (points[x] - points[y], 0, False, rank[y])

    return sorted(rest, key=preference)


def _search(order: Sequence[int], points, rank, met: Mapping[tuple[int, int], int], rematches: int,
            budget: list[int]) -> list[tuple[int, int]] | None:
    """The first pairing of ``order`` (all paired) in the order of preference with at most
    ``rematches`` pairs that met before; None if none. ``budget[0]``: steps left (raises
    :class:`_OutOfSteps` when spent)."""
    failed: set[tuple[frozenset, int]] = set()

    def solve(free: tuple[int, ...], left: int) -> list[tuple[int, int]] | None:
        if not free:
            return []
        key = (frozenset(free), left)
        if key in failed:
            return None
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfSteps
        x, rest = free[0], free[1:]
        for y in _candidates(x, rest, points, rank):
            again = bool(met.get(_key((x, y)), 0))
            if again and not left:
                continue
            sub = solve(tuple(e for e in rest if e != y), left - again)
            if sub is not None:
                return [(x, y)] + sub
        failed.add(key)
        return None

    return solve(tuple(order), int(rematches))


def _greedy(order: Sequence[int], points, rank, met) -> list[tuple[int, int]]:
    """Pairs in the order of preference, pairs met least often first, no backtracking (when
    the search runs out of steps)."""
    free, pairs = list(order), []
    while free:
        x, rest = free[0], free[1:]
        y = min(_candidates(x, rest, points, rank), key=lambda e: met.get(_key((x, e)), 0))  # stable: first
        pairs.append((x, y))
        free = [e for e in rest if e != y]
    return pairs


def swiss_pairing(points: Sequence[float], buchholz: Sequence[float], met: Mapping[tuple[int, int], int],
                  had_bye: set[int] | frozenset[int], steps: int = SEARCH_STEPS) -> Pairing:
    """The next round's pairing (module docstring) from each entrant's ``points`` and
    ``buchholz``, the pairs ``met`` so far (``(low, high)`` lineup indices: times met) and
    the entrants that ``had_bye``: the fewest rematches first (none whenever possible), then
    the lowest-ranked bye, then the first pairing in the order of preference."""
    n = len(points)
    order = standing_order(points, buchholz)
    rank = {e: i for i, e in enumerate(order)}
    if n % 2:
        byes = [e for e in reversed(order) if e not in had_bye] or list(reversed(order))
    else:
        byes = [None]
    budget = [int(steps)]
    try:
        for rematches in range(n // 2 + 1):
            for bye in byes:
                found = _search([e for e in order if e != bye], points, rank, met, rematches, budget)
                if found is not None:
                    return Pairing(tables=tuple(found), bye=bye, rematches=sum(1 for p in found if met.get(_key(p), 0)))
    except _OutOfSteps:
        pass
    found = _greedy([e for e in order if e != byes[0]], points, rank, met)
    return Pairing(tables=tuple(found), bye=byes[0], rematches=sum(1 for p in found if met.get(_key(p), 0)))


def swiss_tables(entrants: int) -> int:
    """Tables (pairs) of one Swiss round: ``entrants // 2``."""
    return entrants // 2


def swiss_text(spec) -> str:
    """One paragraph for ``arena run --check``: rounds, tables, the pairing rule, bye, tie-breaks."""
    n, rounds = len(spec.lineup), spec.design.repeats
    tables = swiss_tables(n)
    bye = (f"; {n} is odd, so each round one entrant sits out with a bye ({BYE_POINTS:g} points, the "
           f"lowest-ranked without one; at most one per entrant)" if n % 2 else "")
    first = [(spec.lineup[a].label, spec.lineup[b].label) for a, b in swiss_pairing([0.0] * n, [0.0] * n, {},
                                                                                    set()).tables]
    shown = ", ".join(f"{a} vs {b}" for a, b in first[:4]) + (", ..." if len(first) > 4 else "")
    return (f"swiss of {n} entrants: {rounds} round{'s' * (rounds != 1)} x {tables} table{'s' * (tables != 1)} "
            f"x 2 seat rotations = {spec.design.total_games} games, every table on its own board{bye}. Round 1 "
            f"folds the lineup order ({shown}); each later round pairs entrants of equal or near points "
            f"(1 a win, 1/2 a draw: up to 2 a pairing), never a pair twice while avoidable, ties in the "
            f"order broken by Buchholz, then lineup order.")


def swiss_first_series(spec) -> list:
    """The series of a Swiss tournament's round 1 (the lineup folded): what is planned before
    any result (:func:`cluster.spec.plan.plan_study` of such a spec); the rest is paired as it
    plays (:class:`cluster.analysis.swiss.SwissSchedule`, whose round 1 is this one)."""
    from cluster.spec.adaptive import round_series
    from cluster.spec.tournament import slot_of_seats

    n = len(spec.lineup)
    pairing = swiss_pairing([0.0] * n, [0.0] * n, {}, set())
    _, series = round_series(pairing.tables, slot_of_seats(spec.seat_teams), spec.seed, 0, 0,
                             spec.design.series_by == "game", stream=SWISS_TABLE_STREAM)
    return series
