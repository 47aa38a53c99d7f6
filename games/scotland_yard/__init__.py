"""Scotland Yard: Mr X (seat 0) against five detectives (seat 1) on the 199-station board.

    >>> from games.scotland_yard import ScotlandYard, ScotlandYardConfig
    >>> game = ScotlandYard(ScotlandYardConfig())      # the built-in board by default
    >>> game.reset(seed=7)
    >>> game.acting_players()                           # Mr X moves first
    [0]

A 2-player game for the cluster: seat 0 is Mr X, seat 1 the seekers' side,
which moves its detectives one at a time (``acting_players()`` names the seat
to ask; ``observation(1)["meta"][M_TO_MOVE]`` says which detective). The
board ships with the package (``board/``: the published game's 199 stations and
468 connections, and its setup; see ``board/PROVENANCE.md``); ``board_file``
(CSV: station_a, station_b, transport) and ``setup_file`` (JSON, default:
beside the board) select a custom one. Rules: see ``_rules.py``; kernels:
``kernels.py``.
"""
from __future__ import annotations

import functools
import json
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from ..rng import make_rng
from ..api import LOSS, WIN, Game
from ..validation import config_class
from . import kernels as K

__all__ = ["ScotlandYard", "ScotlandYardConfig", "DEFAULT_BOARD_FILE", "board_for"]

#: The built-in board of the published game, shipped as package data.
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "board"
DEFAULT_BOARD_FILE = DEFAULT_DATA_DIR / "scotland_yard_edges.csv"
SETUP_FILE_NAME = "scotland_yard_setup.json"


@functools.lru_cache(maxsize=8)
def _load(board_file: str, setup_file: str, mtimes: tuple) -> tuple:
    board = K.load_board(board_file)
    stations = board.degree.shape[0] - 1
    det_cards, mrx_cards = K.read_start_cards(setup_file, stations)
    return board, np.asarray(det_cards, dtype=np.int32), np.asarray(mrx_cards, dtype=np.int32)


def Tickets(length: int):
    """The type of a ticket tuple: ``length`` non-negative ints (a TOML array)."""
    return Annotated[tuple[Annotated[int, Field(ge=0)], ...],
                     Field(strict=False, min_length=length, max_length=length)]


@config_class
class ScotlandYardConfig:
    """Options of a Scotland Yard game (defaults: the published game)."""

    board_file: str | None = None
    """Path of the board CSV (``station_a,station_b,transport``); None = the built-in
    board of the published game (``games/scotland_yard/board/``)."""
    setup_file: str | None = None
    """Path of the setup JSON with the start cards; None = ``scotland_yard_setup.json``
    beside the board file."""
    num_detectives: Annotated[int, Field(ge=1, le=K.MAX_DETECTIVES)] = 5
    """Detectives (1..5)."""
    rounds: Annotated[int, Field(ge=1, le=K.MAX_ROUNDS)] = 24
    """Mr X's moves in a game; he wins after the detectives' moves of the last round."""
    reveal_rounds: Annotated[tuple[Annotated[int, Field(ge=1)], ...], Field(strict=False)] = (3, 8, 13, 18, 24)
    """Rounds after whose move Mr X is shown."""
    detective_tickets: Tickets(3) = (10, 8, 4)
    """Taxi, bus and underground tickets of each detective."""
    mrx_tickets: Tickets(5) | None = None
    """Mr X's taxi, bus, underground, black and double-move tickets; None =
    (4, 3, 3, number of detectives, 2)."""

    @model_validator(mode="after")
    def _files_and_rounds(self):
        board = self.board_path
        if not board.is_file():
            raise ValueError(f"board_file: file not found: {board}")
        setup = self.setup_path
        if not setup.is_file():
            raise ValueError(f"setup_file: file not found: {setup}")
        reveals = self.reveal_rounds
        if not all(r <= self.rounds for r in reveals):
            raise ValueError(f"reveal_rounds: expected rounds in [1, {self.rounds}], got {reveals!r}")
        object.__setattr__(self, "reveal_rounds", tuple(sorted(set(reveals))))
        if self.mrx_tickets is None:
            object.__setattr__(self, "mrx_tickets", (4, 3, 3, self.num_detectives, 2))
        try:
            _, det_cards, mrx_cards = self.load()
        except ValueError as exc:
            field = "setup_file" if str(exc).startswith(str(setup)) else "board_file"
            raise ValueError(f"{field}: {exc}") from None
        if len(set(det_cards.tolist())) < self.num_detectives:
            raise ValueError(f"setup_file: {len(set(det_cards.tolist()))} detective start cards "
                             f"for {self.num_detectives} detectives")
        if not set(mrx_cards.tolist()) - set(det_cards.tolist()) and len(mrx_cards) <= self.num_detectives:
            raise ValueError("setup_file: Mr X's start cards may all be taken by detectives")
        return self

    @property
    def board_path(self) -> Path:
        return Path(self.board_file).expanduser() if self.board_file else DEFAULT_BOARD_FILE

    @property
    def setup_path(self) -> Path:
        return (Path(self.setup_file).expanduser() if self.setup_file
                else self.board_path.parent / SETUP_FILE_NAME)

    def load(self) -> tuple:
        """(Board, detective start cards, Mr X start cards), cached per file version."""
        b, s = self.board_path.resolve(), self.setup_path.resolve()
        return _load(str(b), str(s), (b.stat().st_mtime_ns, s.stat().st_mtime_ns))


def board_for(config: ScotlandYardConfig) -> K.Board:
    """The loaded board of ``config`` (shared, read-only arrays)."""
    return config.load()[0]


class ScotlandYard(Game):
    """The wrapper over the Scotland Yard kernels (see :class:`games.api.Game`).
    An illegal action is counted and replaced by the mover's first legal one."""

    num_players = 2
    num_actions = K.NUM_ACTIONS
    #: The board's tables (neighbours, distances) are constant, ``scratch`` a work buffer.
    observed_fields = ("positions", "tickets", "meta", "ticket_log", "mrx_path", "possible", "reveal")

    def __init__(self, config: ScotlandYardConfig | None = None, **options):
        super().__init__(config if config is not None else ScotlandYardConfig(**options))
        self.board, self._det_cards, self._mrx_cards = self.config.load()

    # --- life cycle -----------------------------------------------------
    def new_state(self, seed) -> K.ScotlandYardState:
        c = self.config
        state = K.empty_state(self.board)
        K.init(state, self._det_cards, self._mrx_cards,
               np.asarray(c.detective_tickets, dtype=np.int32),
               np.asarray(c.mrx_tickets, dtype=np.int32), c.num_detectives, c.rounds,
               np.asarray(c.reveal_rounds, dtype=np.int32), make_rng(seed))
        return state

    def mover(self) -> int:
        """The player to move: 0 = Mr X, 1..D a detective."""
        return int(self.state.meta[K.M_TO_MOVE])

    def acting_players(self) -> list[int]:
        """The seat to move: 0 for Mr X, 1 for the seekers (any detective)."""
        if self.done:
            return []
        return [0] if self.mover() == K.MRX else [1]

    def is_valid_action(self, player: int, action: int) -> bool:
        return bool(K.is_legal(self.state, self.mover(), action))

    def apply(self, joint) -> None:
        K.step(self.state, int(joint[0 if self.mover() == K.MRX else 1]))

    # --- queries --------------------------------------------------------
    def observation(self, player: int) -> K.ScotlandYardState:
        return K.observe(self.state, int(player))

    def legal_actions(self, player: int) -> np.ndarray:
        return K.legal_actions(self.state, int(player))

    @property
    def done(self) -> bool:
        return bool(K.is_terminal(self.state))

    @property
    def step_count(self) -> int:
        return int(self.state.meta[K.M_PLIES])

    @property
    def round(self) -> int:
        return int(self.state.meta[K.M_ROUND])

    def returns(self) -> np.ndarray:
        return K.returns(self.state)

    def outcomes(self) -> list[str]:
        r = self.returns()
        return [WIN if r[i] > 0 else LOSS for i in range(2)]

    def possible_locations(self) -> list[int]:
        """Stations where Mr X may be, as the seekers know it."""
        return [int(v) for v in np.flatnonzero(self.state.possible)]

    # --- copies and serialisation ---------------------------------------
    def copy(self) -> "ScotlandYard":
        other = ScotlandYard(self.config)
        other.state = K.copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    _MUTABLE = observed_fields  # what changes in play

    def to_json(self) -> str:
        d = {k: getattr(self.state, k).tolist() for k in self._MUTABLE}
        d["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self.config).items()}
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "ScotlandYard":
        d = json.loads(text)
        game = cls(ScotlandYardConfig(**d["config"]))
        game.state = K.empty_state(game.board)
        for k in cls._MUTABLE:
            getattr(game.state, k)[...] = np.asarray(d[k])
        return game

    def render(self, state: K.ScotlandYardState | None = None) -> str:
        return render_state(self.state if state is None else state)

    def render_image(self, state: K.ScotlandYardState | None = None, title: str | None = None):
        """A PIL image of the board: detectives, Mr X (when ``state`` holds him) and his
        possible locations; ``observation(1)`` draws the seekers' view
        (see :mod:`games.scotland_yard.image`)."""
        from .image import state_image

        return state_image(self.state if state is None else state, title=title)

    def fingerprint(self) -> int:
        """CRC-32 of the game's mutable arrays (the board's tables are constant):
        what a game record checks at every step (see :mod:`cluster.replay.records`)."""
        crc = 0
        for name in self._MUTABLE:
            crc = zlib.crc32(np.ascontiguousarray(getattr(self.state, name)).view(np.uint8), crc)
        return crc


def render_state(s: K.ScotlandYardState) -> str:
    """A text summary: round, positions, tickets, Mr X's log (T taxi, B bus,
    U underground, X black; ``!`` a reveal round) and the possible set."""
    meta = s.meta
    names = K.TICKET_NAMES
    lines = [f"round {int(meta[K.M_ROUND])}/{int(meta[K.M_ROUNDS])}  to move: "
             f"{'Mr X' if meta[K.M_TO_MOVE] == 0 else 'detective %d' % meta[K.M_TO_MOVE]}  "
             f"result: {['ongoing', 'Mr X wins', 'seekers win'][int(meta[K.M_RESULT])]}"]
    mrx = int(s.positions[0])
    lines.append(f"Mr X at {mrx if mrx else '?'}  tickets " +
                 " ".join(f"{names[t]}={int(s.tickets[0, t])}" for t in range(5)))
    for d in range(1, int(meta[K.M_NUM_DETECTIVES]) + 1):
        lines.append(f"detective {d} at {int(s.positions[d])}  tickets " +
                     " ".join(f"{names[t]}={int(s.tickets[d, t])}" for t in range(3)))
    log = ["TBUX"[int(s.ticket_log[r])] + ("!" if s.reveal[r] else "")
           for r in range(1, int(meta[K.M_ROUND]) + 1)]
    lines.append("log: " + " ".join(log))
    possible = np.flatnonzero(s.possible)
    lines.append(f"possible ({len(possible)}): {' '.join(map(str, possible[:30]))}"
                 + (" ..." if len(possible) > 30 else ""))
    return "\n".join(lines)
