"""The sizes a spec may set, and the ``[limits]`` table that raises them for a cluster.

A spec that passes validation should not go wrong later: ``budget.iterations =
9223372036854775807`` (a decision that never ends), ``design.seeds = 1000000000`` (four
billion games) or a round robin of 300 entrants at a four-seat table (a plan of 330
million tables) are refused before any game, naming the field, the limit and the way to
raise it::

    design.seeds: 1000000000 board seeds x 4 games = 4000000000 games, over the limit of
    1000000 games per study (raise it with [limits] games = 4000000000 or more)

The limits, their defaults and what each bounds (:class:`Limits`):

=============  ==========  ======================================================
``games``      1,000,000   games of a study: the design's games (every condition of
                           ``vary``), a tournament's tables x rounds x seat
                           rotations, a stop's ``max_games``; a sweep's trials x
                           games per trial (and its re-evaluation)
``iterations`` 1,000,000   search iterations per decision (``budget.iterations``,
                           ``lineup[i].budget.iterations``)
``entrants``   256         entries of ``[[lineup]]`` (a tournament's entrants)
=============  ==========  ======================================================

A spec raises any of them in its own ``[limits]`` table (``[limits] games =
50_000_000``, a positive int each; a sweep in its base study's). The table is part of
the study's ``spec.json`` (written only when given), so Ray workers and a resume read
the same limits back; it changes no result, so a resume may raise a limit.
"""
from __future__ import annotations

from cluster.spec.fields import PositiveInt, SpecError, config_class

__all__ = ["Limits", "DEFAULT_LIMITS", "LIMIT_KEYS", "check_count"]

#: The keys of ``[limits]``.
LIMIT_KEYS = ("games", "iterations", "entrants")


@config_class
class Limits:
    """``[limits]``: the largest sizes a spec may set (a cluster's spec raises them)."""

    games: PositiveInt = 1_000_000
    """Games of one study (all conditions), or of one sweep (trials x games per trial)."""
    iterations: PositiveInt = 1_000_000
    """Search iterations per decision of any seat."""
    entrants: PositiveInt = 256
    """Entries of the lineup (a tournament's entrants)."""

    def non_default(self) -> dict:
        """The limits that differ from the defaults (what ``spec.json`` keeps)."""
        return {key: getattr(self, key) for key in LIMIT_KEYS
                if getattr(self, key) != getattr(DEFAULT_LIMITS, key)}


DEFAULT_LIMITS = Limits()


def check_count(where: str, count: int, limits: Limits, key: str, what: str, detail: str = "",
                error: type[SpecError] = SpecError) -> None:
    """Raise ``error`` naming ``where`` if ``count`` exceeds ``limits.<key>`` (``what``
    says per what, ``detail`` how the count came about, default the count): e.g.
    ``budget.iterations: 9223372036854775807, over the limit of 1000000 iterations per
    decision (raise it with [limits] iterations = 9223372036854775807 or more)``."""
    limit = getattr(limits, key)
    if count > limit:
        raise error(f"{where}: {detail or count}, over the limit of {limit} {what} "
                    f"(raise it with [limits] {key} = {count} or more)")
