"""The game interface every Arena game follows.

A game has two layers (see ``games/pommerman`` for the reference example):

1. **Kernels** (numba, ``@njit(cache=True)``), pure functions over a *state
   layout*: a NamedTuple of fixed-capacity, fixed-dtype numpy arrays, its layout
   drawn in the docstring of the game's ``_layout.py``. The kernels are

   ==========================  ================================================
   ``init``                    a fresh state from a config and a seed
   ``legal_actions(s, p)``     bool[num_actions] mask for player ``p``
   ``step(s, actions)``        advance ``s`` in place (callers copy first)
   ``is_terminal(s)``          bool
   ``returns(s)``              float64[num_players], final rewards at the end
   ``observe(s, p, ...)``      the state as player ``p`` may know it, in the
                               same layout (hidden things removed), which is
                               what searching agents plan from
   ``heuristic(root, s, p)``   a value of ``s`` for ``p`` relative to ``root``,
                               where agents need one
   ``copy_state / copy_into``  copying a state is copying its arrays
   ==========================  ================================================

   Kernels validate nothing and raise nothing in the hot path; the wrapper
   validates inputs once.

2. **A thin Python class** implementing :class:`Game` below, with the
   ergonomic API used by agents' Python glue, the cluster and the CLI.

A game is registered by name in :mod:`games.registry` with a frozen config
dataclass whose ``__post_init__`` validates every field and raises
``ValueError`` naming the field.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

#: Per-player outcome labels used across Arena (results tables, Parquet rows).
WIN, TIE, LOSS = "win", "tie", "loss"


@runtime_checkable
class Game(Protocol):
    """What the cluster and the CLI need from any game."""

    config: Any
    num_players: int
    num_actions: int

    def reset(self, seed) -> None:
        """Start a new game; ``seed`` is an int or a numpy SeedSequence."""

    def step(self, actions: Sequence[int]) -> None:
        """Apply one joint action (one entry per player). Invalid actions are
        replaced as the reference rules do and counted in ``invalid_actions``."""

    def observation(self, player: int) -> Any:
        """What ``player`` may see now (a state in the game's layout)."""

    def legal_actions(self, player: int) -> np.ndarray:
        """bool[num_actions]."""

    def is_alive(self, player: int) -> bool:
        """Whether ``player`` is still in the game (a player out of it sends action 0)."""

    def acting_players(self) -> Sequence[int]:
        """The players whose action this step uses. Optional: a game without it is
        simultaneous-move (every player still in the game acts, as in Pommerman);
        a turn-based game returns the one player to move (the others' entries of
        the joint action are ignored by ``step`` and their agents are not asked)."""

    @property
    def done(self) -> bool: ...

    @property
    def step_count(self) -> int: ...

    def returns(self) -> np.ndarray:
        """float64[num_players]: rewards at the end (zeros before)."""

    def outcomes(self) -> list[str]:
        """Per player WIN / TIE / LOSS once done."""

    def death_ticks(self) -> Sequence[int | None]:
        """Per player, the step count at which it left the game (died), None if it
        is still in. Optional: a game without it records no ``died_at`` (rows get None)."""

    def teams(self) -> list[int]:
        """Team id of each seat (FFA: the seat itself)."""

    def copy(self) -> "Game": ...

    def to_json(self) -> str: ...

    def render(self) -> str:
        """A text picture of the current state."""
