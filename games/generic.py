"""The generic kernel contract: what a game declares so that searches written for any
game (``mcts_generic``, :mod:`agents.search.generic`) play it with no code of their own.

A game fills in :class:`GenericKernels` (numba ``@njit`` functions over its state
layout) and sets it as ``Game.generic_kernels``; ``games/CONTRACT.md`` is the
newcomer's page, this module is the reference. The kernels are those the built-in
games already have (``legal_actions``, ``step``, ``is_terminal``, ``returns``,
``copy_state`` / ``copy_into``), plus a player-to-move query, and what three kinds of
games need beyond that:

* **simultaneous moves**: ``current_player`` says :data:`SIMULTANEOUS` where several
  players choose at once (every player with a legal action; ``step`` takes the joint
  action); the search keeps decoupled statistics per player there (decoupled UCT);
* **chance**: ``current_player`` says :data:`CHANCE_PLAYER` at a chance node, where
  ``chance_outcomes`` gives the outcomes' probabilities and ``apply_chance`` plays
  one (the search branches on them; a game that draws chance inside ``step`` from a
  generator held in its state is deterministic to the search instead);
* **hidden information**: ``determinize`` fills a whole state that a player's
  observation is consistent with, hidden things drawn from a generator (the search
  plans over such samples). Without it the search plans on the observation as the
  state (exact for a game whose observation hides nothing).

The player numbers follow OpenSpiel's (``kChancePlayerId`` = -1,
``kSimultaneousPlayerId`` = -2), so a bridged game maps one to one.

Kernels validate nothing and raise nothing; :func:`check_generic_kernels` checks a
record once, when a search is built for the game (and ``arena check-game`` does).
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

__all__ = ["CHANCE_PLAYER", "SIMULTANEOUS", "GenericKernels", "check_generic_kernels", "kernel_names"]

#: ``current_player(state)`` at a chance node (OpenSpiel's ``kChancePlayerId``).
CHANCE_PLAYER = -1
#: ``current_player(state)`` where several players choose at once (``kSimultaneousPlayerId``).
SIMULTANEOUS = -2


class GenericKernels(NamedTuple):
    """The kernels of a game for searches that play any game (``Game.generic_kernels``).

    Every entry but the sizes is a numba ``@njit`` function (``cache=True``) over the
    game's state (a NamedTuple of fixed-dtype arrays); the search is compiled against
    them once per game and cached on disk (:mod:`agents.search.generic`), so they must
    be importable module-level functions (``module.name``), not closures or lambdas.
    """

    copy_state: Callable
    """``(state) -> state``: a new state with copies of every array."""
    copy_into: Callable
    """``(dst, src) -> None``: ``dst``'s arrays := ``src``'s (same shapes), in place."""
    current_player: Callable
    """``(state) -> int``: the player to move (>= 0), :data:`SIMULTANEOUS` or
    :data:`CHANCE_PLAYER`. Only asked of a state that is not terminal."""
    legal_actions: Callable
    """``(state, player) -> bool[num_actions]``: the legal actions of ``player`` (at a
    simultaneous node, a player with none does not act)."""
    step: Callable
    """``(state, joint) -> None``: play ``joint`` (int64[num_players]: the acting
    players' legal actions; the other entries are 0 and ignored), in place."""
    is_terminal: Callable
    """``(state) -> bool``."""
    returns: Callable
    """``(state) -> float64[num_players]``: the final rewards at the end (what the
    search backs up; zeros before the end)."""
    chance_outcomes: Callable | None = None
    """``(state) -> float64[K]``: at a chance node, the probability of each outcome
    ``0 .. K-1`` (K <= ``max_chance_outcomes``; zeros for impossible ones, summing to 1).
    None: the game has no chance node."""
    apply_chance: Callable | None = None
    """``(state, outcome) -> None``: play chance ``outcome`` (with a positive
    probability), in place. Declared with ``chance_outcomes``."""
    max_chance_outcomes: int = 0
    """The most outcomes a chance node has (0 without chance nodes)."""
    determinize: Callable | None = None
    """``(out, observation, player, rng) -> None``: fill ``out`` (a state, e.g. a
    ``copy_state`` of the observation) with a whole state that ``player``'s
    ``observation`` is consistent with, every hidden thing drawn from ``rng``
    (``uint64[2]``, :mod:`games.rng`). None: the observation is planned on as the
    state (nothing hidden, or the game accepts the approximation)."""
    heuristic: Callable | None = None
    """``(root, state, player) -> float``: a value of ``state`` for ``player`` (the
    root of the search given for games that value progress), on the scale of
    ``returns``; what a rollout cut at its depth limit backs up, and what the greedy
    rollout policy maximises. None: a cut rollout is worth ``returns`` (zeros)."""
    simultaneous: bool = False
    """Whether ``current_player`` may say :data:`SIMULTANEOUS` (the search then keeps
    per-player statistics at such nodes)."""


def kernel_names() -> tuple[str, ...]:
    """The entries of :class:`GenericKernels` that are kernels (functions)."""
    return tuple(name for name in GenericKernels._fields
                 if name not in ("max_chance_outcomes", "simultaneous"))


#: The kernels every game declaring the contract provides.
REQUIRED = ("copy_state", "copy_into", "current_player", "legal_actions", "step", "is_terminal", "returns")


def check_generic_kernels(kernels: Any, where: str) -> GenericKernels:
    """``kernels`` if it is a complete :class:`GenericKernels`, else ValueError naming
    ``where`` and the entry: a required kernel missing, a kernel that is not a numba
    dispatcher defined at module level (the search imports it by name), or chance
    declared by halves."""
    if not isinstance(kernels, GenericKernels):
        raise ValueError(f"{where}: must be a games.generic.GenericKernels, got {type(kernels).__name__}")
    for name in kernel_names():
        fn = getattr(kernels, name)
        if fn is None:
            if name in REQUIRED:
                raise ValueError(f"{where}.{name}: required (see games/CONTRACT.md)")
            continue
        if not hasattr(fn, "py_func"):
            raise ValueError(f"{where}.{name}: must be a numba @njit function, got {fn!r}")
        module = getattr(fn.py_func, "__module__", None)
        qualname = getattr(fn.py_func, "__qualname__", "")
        if not module or "<" in qualname or "." in qualname:
            raise ValueError(f"{where}.{name}: must be a module-level function (got {qualname!r}), "
                             f"which the search imports by name")
    if (kernels.chance_outcomes is None) != (kernels.apply_chance is None):
        raise ValueError(f"{where}: chance_outcomes and apply_chance are declared together")
    if kernels.chance_outcomes is not None and kernels.max_chance_outcomes < 1:
        raise ValueError(f"{where}.max_chance_outcomes: must be >= 1 with chance_outcomes, "
                         f"got {kernels.max_chance_outcomes}")
    return kernels
