"""XCOM-like tactics: two squads on a grid with walls as cover, turn-based.

    >>> from games.xcom import Xcom, XcomConfig
    >>> game = Xcom(XcomConfig(board="mini"))
    >>> game.reset(seed=0)
    >>> game.acting_players()
    [0]

Seat 0 commands the humans, seat 1 the aliens; one command per turn (move up
to ``max_move`` steps, shoot a visible enemy, or move then shoot). A kill is
+10 for the shooter's side and -10 for the other; eliminating the other squad
wins; after ``max_moves`` commands the round is a draw. Boards: ``mini`` (6x6,
2 units per side, Max-Move 4), ``large`` (18x18, 4 per side, Max-Move 6), or
the path of a layout file (one row per line, cells -2 wall, -1 alien, 0
empty, 1 human). See ``kernels.py`` for the kernels and the action encoding.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from ..api import LOSS, TIE, WIN, Game
from ..validation import NonBlank, config_class, one_of
from ._layout import (
    ALIENS, BUILTIN_LAYOUTS, DEFAULT_MAX_MOVES, HUMANS, LayoutError, MAX_MOVE, M_DONE, M_FIRST,
    M_MOVES, M_TO_MOVE, M_WINNER, NO_WINNER, U_ALIVE, U_COL, U_ROW, XcomState, copy_state, grid_of,
    load_layout, num_actions, render_state, state_from_grid,
)
from . import _rules
from .generic import GENERIC_KERNELS

__all__ = ["Xcom", "XcomConfig", "XcomState", "LayoutError", "first_mover_for"]

FIRST_MOVERS = ("alternate", "humans", "aliens")


@lru_cache(maxsize=16)
def _layout_grid(board: str) -> np.ndarray:
    if board in BUILTIN_LAYOUTS:
        return load_layout(BUILTIN_LAYOUTS[board][0])
    return load_layout(board)


@lru_cache(maxsize=16)
def _fresh_state(board: str, max_move: int, max_moves: int) -> XcomState:
    return state_from_grid(_layout_grid(board), max_move, max_moves, HUMANS)


@config_class
class XcomConfig:
    """Options of an XCOM round."""

    board: NonBlank = "mini"
    """``mini`` (6x6, 2 units a side), ``large`` (18x18, 4 a side) or the path of a
    layout file (rows of -2 wall / -1 alien / 0 empty / 1 human; ``#`` comments)."""
    max_move: Annotated[int, Field(ge=1, le=MAX_MOVE)] | None = None
    """Most steps of one move; default 4 on ``mini``, 6 on ``large``, and for a
    layout file 4 below 12 cells a side, else 6."""
    max_moves: Annotated[int, Field(ge=1, le=10_000)] = DEFAULT_MAX_MOVES
    """Commands (both sides together) after which the round is a draw."""
    first_mover: Annotated[str, one_of(FIRST_MOVERS)] = "alternate"
    """``alternate``: humans move first on even boards (``reset(seed, board_index=k)``;
    round k of a runs x rounds design plays board seed k, so a 40-round run gives each
    side 20 starts), aliens on odd ones; or always ``humans`` / ``aliens``."""

    @model_validator(mode="after")
    def _layout(self):
        if self.board not in BUILTIN_LAYOUTS and not Path(self.board).expanduser().is_file():
            raise ValueError(f"board: not 'mini', 'large' or an existing layout file: {self.board!r}")
        try:
            grid = _layout_grid(self.board)
        except LayoutError as exc:
            raise ValueError(f"board: {exc}") from None
        if self.max_move is None:
            default = BUILTIN_LAYOUTS[self.board][1] if self.board in BUILTIN_LAYOUTS else (
                4 if grid.shape[0] < 12 else 6)
            object.__setattr__(self, "max_move", default)
        return self

    @property
    def grid(self) -> np.ndarray:
        """int8[n, n] layout."""
        return _layout_grid(self.board).copy()

    @property
    def size(self) -> int:
        return int(_layout_grid(self.board).shape[0])

    @property
    def units(self) -> int:
        return int((_layout_grid(self.board) == 1).sum())

    @property
    def num_actions(self) -> int:
        return num_actions(self.units, self.max_move)


def first_mover_for(config: XcomConfig, board_index: int) -> int:
    """HUMANS (0) or ALIENS (1): who opens the round played on board ``board_index``
    (``alternate``: humans on even boards)."""
    if config.first_mover == "humans":
        return HUMANS
    if config.first_mover == "aliens":
        return ALIENS
    return HUMANS if board_index % 2 == 0 else ALIENS


class Xcom(Game):
    """The wrapper over the XCOM kernels (see :class:`games.api.Game`). Turn-based:
    the command of the side to move is applied (the other entry is ignored); an
    invalid or illegal command is replaced by the first legal one and counted."""

    num_players = 2
    #: mcts_generic searches it in numba (games/xcom/generic.py).
    generic_kernels = GENERIC_KERNELS
    #: The line-of-sight table (``sight``, cells x cells) is constant in a round.
    observed_fields = ("board", "units", "rewards", "meta")

    def __init__(self, config: XcomConfig | None = None, **options):
        config = config if config is not None else XcomConfig(**options)
        self.num_actions = config.num_actions
        super().__init__(config)
        self.last_shot = None  # ((row, col) shooter, (row, col) victim) of the last command, for pictures

    # --- life cycle -----------------------------------------------------
    def new_state(self, seed) -> XcomState:
        """A fresh round on the configured layout (the layout itself is fixed). With
        ``first_mover = "alternate"`` the board index decides who opens
        (:func:`first_mover_for`): a study's board seed, an int seed, or for a SeedSequence
        alone the parity of its entropy."""
        c = self.config
        state = copy_state(_fresh_state(c.board, c.max_move, c.max_moves))
        board = self.board_index if self.board_index is not None else int(seed.entropy or 0)
        first = first_mover_for(c, board)
        state.meta[M_TO_MOVE] = first
        state.meta[M_FIRST] = first
        self.last_shot = None
        return state

    def apply(self, joint) -> None:
        side = int(self.state.meta[M_TO_MOVE])
        a = int(joint[side])
        self.last_shot = self._shot_of(side, a)
        _rules.apply_action(self.state, a)

    def _shot_of(self, side: int, action: int):
        """((row, col) of the shooter after its move, (row, col) of its victim), or None."""
        unit, dr, dc, target = (int(x) for x in _rules.decode_action(self.state, action))
        if target < 0:  # decode_action: -1 = no shot, else the enemy unit's index
            return None
        shooter = self.state.units[side, unit]
        victim = self.state.units[1 - side, target]
        return ((int(shooter[U_ROW]) + dr, int(shooter[U_COL]) + dc), (int(victim[U_ROW]), int(victim[U_COL])))

    # --- queries --------------------------------------------------------
    def acting_players(self) -> list[int]:
        """The side to move (turn-based); nobody once the round is over."""
        return [] if self.done else [int(self.state.meta[M_TO_MOVE])]

    def observation(self, player: int) -> XcomState:
        return _rules.observe(self.state, int(player))

    def legal_actions(self, player: int) -> np.ndarray:
        return _rules.legal_actions(self.state, int(player))

    def is_alive(self, player: int) -> bool:
        return bool(self.state.units[int(player), :, U_ALIVE].any())

    @property
    def done(self) -> bool:
        return bool(self.state.meta[M_DONE])

    @property
    def step_count(self) -> int:
        return int(self.state.meta[M_MOVES])

    @property
    def to_move(self) -> int:
        return int(self.state.meta[M_TO_MOVE])

    @property
    def winner(self) -> int:
        """HUMANS, ALIENS or -1 (none yet, or a draw)."""
        return int(self.state.meta[M_WINNER])

    def returns(self) -> np.ndarray:
        return _rules.returns(self.state)

    def outcomes(self) -> list[str]:
        w = self.winner
        if w == NO_WINNER:
            return [TIE, TIE]
        return [WIN if p == w else LOSS for p in range(2)]

    # --- copies and serialisation ---------------------------------------
    def copy(self) -> "Xcom":
        other = Xcom(self.config)
        other.state = copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        other.last_shot = self.last_shot
        return other

    def to_json(self) -> str:
        s = self.state
        return json.dumps({"config": asdict(self.config), "grid": grid_of(s).tolist(),
                           "units": s.units.tolist(), "rewards": s.rewards.tolist(),
                           "meta": s.meta.tolist()})

    @classmethod
    def from_json(cls, text: str) -> "Xcom":
        d = json.loads(text)
        game = cls(XcomConfig(**d["config"]))
        c = game.config
        state = copy_state(_fresh_state(c.board, c.max_move, c.max_moves))  # same walls, same sight
        state.board[:] = np.array(d["grid"], dtype=np.int8).reshape(-1)
        state.units[:] = np.array(d["units"], dtype=np.int16)
        state.rewards[:] = np.array(d["rewards"], dtype=np.float64)
        state.meta[:] = np.array(d["meta"], dtype=np.int64)
        game.state = state
        return game

    def render_image(self, state: XcomState | None = None, title: str | None = None):
        """A PIL image of the board (walls, units, and the line of the last shot when
        drawing the current state); see :mod:`games.xcom.image`."""
        from .image import state_image

        if state is None:
            return state_image(self.state, shot=self.last_shot, title=title)
        return state_image(state, title=title)

    def fingerprint(self) -> int:
        """CRC-32 of the board, units, rewards and meta (the line-of-sight table is
        constant): what a game record checks at every step (see :mod:`cluster.replay.records`)."""
        crc = 0
        for array in (self.state.board, self.state.units, self.state.rewards, self.state.meta):
            crc = zlib.crc32(np.ascontiguousarray(array).view(np.uint8), crc)
        return crc

    def render(self, state: XcomState | None = None) -> str:
        return render_state(self.state if state is None else state)
