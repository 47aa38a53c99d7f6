"""Pommerman: 11x11 board, 4 agents, FFA or teams, two rulesets of one engine.

    >>> from games.pommerman import Pommerman, PommermanConfig
    >>> game = Pommerman(PommermanConfig(mode="ffa", ruleset="canonical"))
    >>> game.reset(seed=7)
    >>> game.step([0, 1, 2, 5])
    >>> game.step_count
    1

Rulesets: ``canonical`` (the NeurIPS 2018 competition package, default) and
``java`` (the Java framework of the FEMCTS study; its board collapse is on
by default, as in the framework, and can be turned off). Other packages use the
kernels through ``kernels.py`` (the public surface); privately, ``_layout.py``
holds the state layout, ``_engine.py`` the kernels of the one engine over both
rulesets (a tick under the state's ruleset, the end, returns, legal actions,
observations, the heuristic), ``_canonical.py`` / ``_java.py`` the rules of a
tick and ``_board_generation.py`` a fresh game's board under each ruleset.
"""
from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import asdict
from typing import Annotated

import numpy as np
from pydantic import Field, field_validator, model_validator

from ..api import LOSS, TIE, WIN, Game, board_of
from ..validation import NonBlank, config_class, one_of
from . import _engine
from .generic import GENERIC_KERNELS
from ._canonical import step_canonical
from ._java import step_java
from ._json import StateFormatError, state_from_dict, state_to_dict
from ._layout import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_STATUS, A_VISIBLE, B_BLAST, B_COL, B_DIR, B_LIFE, B_ROW,
    BOARD_SIZE, DEFAULT_MAX_STEPS,
    FLAME_MASK, FULL_VIEW, M_MAX_STEPS, M_N_BOMBS, MAX_FLAME_LIFE, M_RESULT, M_RULESET, M_STEP, MODES, N_ACTIONS, N_AGENTS, N_CELLS,
    RESULT_TIE, RULESET_CANONICAL, RULESET_JAVA, RULESETS, STATUS_LOSS, STATUS_TIE, STATUS_WIN, PommermanState, copy_state,
)

__all__ = ["PLANES", "Pommerman", "PommermanConfig", "PommermanState", "StateFormatError", "observation_planes"]

VIEW_RANGES = (0, 1, 2, 3, 4)


@config_class
class PommermanConfig:
    """Options of a Pommerman game."""

    mode: Annotated[str, one_of(MODES)] = "ffa"
    """``ffa`` (four players) or ``team`` (agents 0+2 against 1+3)."""
    ruleset: Annotated[str, one_of(RULESETS)] = "canonical"
    """``canonical`` (NeurIPS 2018 package) or ``java`` (the Java framework)."""
    collapse: bool | None = None
    """Java ruleset only: the board collapses at ticks 500, 575, 650 and 725.
    Default (None): the ruleset's default, on for ``java`` (the framework's
    ``Types.COLLAPSE_BOARD = true``), off for ``canonical`` (which has none)."""
    view_range: int | str | None = None
    """Chebyshev radius 0..4 each agent sees around itself; None (or "full") = full observability."""
    max_steps: Annotated[int, Field(ge=1, le=100_000)] = DEFAULT_MAX_STEPS
    """Game length limit in ticks (the references use 800)."""
    boards_file: NonBlank | None = None
    """Play recorded boards instead of generating them: a JSON Lines file
    (``.jsonl``, or ``.jsonl.gz``) of records in the golden-trajectory format
    (``{"states": [state, ...], ...}``; only ``states[0]`` is used, hidden
    power-ups included), e.g. boards dumped from the Java framework to compare
    with it on the same boards. ``reset(seed, board_index=b)`` plays record ``b``
    (a study passes its board seed ``b`` = 0, 1, ...); ``reset(seed)`` with an int
    plays record ``seed``. A relative
    path is relative to the working directory. None: boards come from the seed."""

    @field_validator("view_range", mode="before")
    @classmethod
    def _view_range(cls, value):
        if value == "full":
            return None
        if value is not None and (isinstance(value, bool) or value not in VIEW_RANGES):
            raise ValueError(f"must be one of {VIEW_RANGES}, 'full' or absent (full), got {value!r}")
        return value

    @model_validator(mode="after")
    def _collapse_and_boards(self):
        if self.collapse is None:
            object.__setattr__(self, "collapse", self.ruleset == "java")
        if self.collapse and self.ruleset != "java":
            raise ValueError("collapse: board collapse exists only in the 'java' ruleset")
        if self.boards_file is not None:
            load_boards(self)  # validates the file (cached per path and modification time)
        return self

    @property
    def view(self) -> int:
        """The view range as the kernels take it (-1 = full)."""
        return FULL_VIEW if self.view_range is None else int(self.view_range)


_BOARDS_CACHE: dict[tuple, list[PommermanState]] = {}


def load_boards(config: PommermanConfig) -> list[PommermanState]:
    """The boards of ``config.boards_file`` as states for ``config`` (cached).

    Raises ValueError naming ``boards_file``, the record and the field when the
    file is missing, empty, not JSON Lines, or a record's ``states[0]`` is not a
    valid state (or its ``scenario.rules`` / ``scenario.mode`` contradicts the
    config's ruleset / mode).
    """
    path = config.boards_file
    if not isinstance(path, str) or not path:
        raise ValueError(f"boards_file: must be a path (string), got {path!r}")
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError as exc:
        raise ValueError(f"boards_file: cannot read {path!r}: {exc.strerror}") from None
    key = (os.path.abspath(path), stamp, config.mode, config.ruleset, config.collapse, config.max_steps)
    if key in _BOARDS_CACHE:
        return _BOARDS_CACHE[key]
    opener = gzip.open if path.endswith(".gz") else open
    boards = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"boards_file: {path}: record {len(boards)} (line {line_no})"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{where}: not JSON: {exc.msg}") from None
                states = record.get("states") if isinstance(record, dict) else None
                if not isinstance(states, list) or not states or not isinstance(states[0], dict):
                    raise ValueError(f"{where}: states: expected a list whose first entry is a state")
                scenario = record.get("scenario") or {}
                rules = scenario.get("rules") if isinstance(scenario, dict) else None
                if rules is not None and rules != config.ruleset:
                    raise ValueError(f"{where}: scenario.rules is {rules!r} but the game's ruleset is "
                                     f"{config.ruleset!r}")
                mode = scenario.get("mode") if isinstance(scenario, dict) else None
                if mode is not None and mode != config.mode:
                    raise ValueError(f"{where}: scenario.mode is {mode!r} but the game's mode is {config.mode!r}")
                try:
                    state = state_from_dict(states[0], mode=config.mode, ruleset=config.ruleset,
                                            collapse=config.collapse, max_steps=config.max_steps)
                except StateFormatError as exc:
                    raise ValueError(f"{where}: states[0].{exc}") from None
                if state.meta[M_STEP] != 0:
                    raise ValueError(f"{where}: states[0].step_count: a board must start at step 0")
                boards.append(state)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"boards_file: cannot read {path!r}: {exc}") from None
    if not boards:
        raise ValueError(f"boards_file: {path}: no records")
    _BOARDS_CACHE[key] = boards
    return boards


def generate(config: PommermanConfig, seed, board_index: int | None = None) -> PommermanState:
    """A fresh board for ``config`` from ``seed`` (int or SeedSequence); with
    ``config.boards_file``, a copy of recorded board ``board_index`` (a study's board
    seed; default: an int ``seed`` itself, :func:`games.api.board_of`)."""
    if config.boards_file is not None:
        boards = load_boards(config)
        index = board_of(seed, board_index)
        if index is None:
            raise ValueError("boards_file: a SeedSequence alone names no board; pass the board's index "
                             "(reset(seed, board_index=b), or an int seed)")
        if not 0 <= index < len(boards):
            raise ValueError(f"boards_file: board {index} requested, but {config.boards_file} holds "
                             f"{len(boards)} boards (0..{len(boards) - 1})")
        return copy_state(boards[index])
    mode = MODES[config.mode]
    if config.ruleset == "java":
        from ._board_generation import generate_java
        state = generate_java(seed, mode, bool(config.collapse))
    else:
        from ._board_generation import generate_canonical
        state = generate_canonical(seed, mode)
    state.meta[M_MAX_STEPS] = config.max_steps
    return state


#: The rules by ruleset, called from Python one tick at a time: each compiles only its own
#: rules on a fresh numba cache (``_engine.step``, which decides by the state's ruleset,
#: compiles both).
_STEP = {RULESET_CANONICAL: step_canonical, RULESET_JAVA: step_java}


#: The planes of :meth:`Pommerman.observation_tensor`, in order.
PLANES = ("passage", "rigid", "wood", "bomb", "flames", "fog", "extra_bomb", "incr_range", "kick",
          "self", "teammates", "enemies", "bomb_blast_strength", "bomb_life", "bomb_moving",
          "flame_life", "ammo", "blast_strength", "can_kick", "step")
_CAP = 10.0  # blast strength and ammo above this read as 1
_BOMB_LIFE = 10.0  # a fresh bomb's life in both rulesets


def observation_planes(obs: PommermanState, player: int, teams: list[int]) -> np.ndarray:
    """:meth:`Pommerman.observation_tensor` of observation ``obs`` (numpy, once per decision)."""
    planes = np.zeros((len(PLANES), BOARD_SIZE, BOARD_SIZE), dtype=np.float32)
    flat = planes.reshape(len(PLANES), -1)
    board = obs.board.astype(np.int64)
    for code in range(9):  # passage .. kick: the cell codes 0-8
        flat[code] = board == code
    agents = obs.agents
    for other in range(N_AGENTS):
        if not (agents[other, A_ALIVE] and agents[other, A_VISIBLE]):
            continue
        cell = int(agents[other, A_ROW]) * BOARD_SIZE + int(agents[other, A_COL])
        plane = 9 if other == player else 10 if teams[other] == teams[player] else 11
        flat[plane, cell] = 1.0
    n_bombs = int(obs.meta[M_N_BOMBS])
    for bomb in obs.bombs[:n_bombs]:
        cell = int(bomb[B_ROW]) * BOARD_SIZE + int(bomb[B_COL])
        flat[12, cell] = max(flat[12, cell], min(float(bomb[B_BLAST]) / _CAP, 1.0))
        flat[13, cell] = max(flat[13, cell], float(bomb[B_LIFE]) / _BOMB_LIFE)
        flat[14, cell] = float(bomb[B_DIR] != 0)
    counts = obs.flames[:N_CELLS].view(np.uint8).reshape(N_CELLS, 8)  # byte l: flames of life l
    lives = np.where(counts > 0, np.arange(1, 9), 0).max(axis=1)
    flat[15] = lives / 8.0
    me = agents[player]
    planes[16] = min(float(me[A_AMMO]) / _CAP, 1.0)
    planes[17] = min(float(me[A_BLAST]) / _CAP, 1.0)
    planes[18] = float(me[A_KICK] != 0)
    planes[19] = float(obs.meta[M_STEP]) / max(1, int(obs.meta[M_MAX_STEPS]))
    return planes


class Pommerman(Game):
    """The ergonomic wrapper over the Pommerman kernels (see :class:`games.api.Game`).
    Simultaneous moves; an action out of range is counted and becomes stop, as
    in the reference (a move into a wall is legal: the agent stays)."""

    num_players = N_AGENTS
    num_actions = N_ACTIONS
    action_names = ("stop", "up", "down", "left", "right", "bomb")
    simultaneous = True
    #: mcts_generic searches it in numba, decoupled UCT over the simultaneous moves
    #: (games/pommerman/generic.py).
    generic_kernels = GENERIC_KERNELS

    def __init__(self, config: PommermanConfig | None = None, **options):
        super().__init__(config if config is not None else PommermanConfig(**options))
        self._died_at = np.full(N_AGENTS, -1, dtype=np.int64)

    def forward_model_kernels(self) -> tuple:
        """The rules of the config's ruleset (``_step_at``), which every search kernel calls,
        and the step that applies them to this game's state (``step_java`` /
        ``step_canonical`` called from Python)."""
        from . import _canonical, _java
        if self.config.ruleset == "java":
            return (_java._step_at, _java.step_java)
        return (_canonical._step_at, _canonical.step_canonical)

    # --- life cycle -----------------------------------------------------
    def new_state(self, seed) -> PommermanState:
        self._died_at[:] = -1
        return generate(self.config, seed, self.board_index)

    def is_valid_action(self, player: int, action: int) -> bool:
        return True  # in range is valid

    def replacement_action(self, player: int) -> int:
        return 0  # stop

    def apply(self, joint) -> None:
        alive_before = self.state.agents[:, A_ALIVE].copy()
        _STEP[int(self.state.meta[M_RULESET])](self.state, joint)
        died = (alive_before != 0) & (self.state.agents[:, A_ALIVE] == 0) & (self._died_at < 0)
        self._died_at[died] = int(self.state.meta[M_STEP])

    # --- queries --------------------------------------------------------
    def observation(self, player: int) -> PommermanState:
        return _engine.observe(self.state, int(player), self.config.view)

    def legal_actions(self, player: int) -> np.ndarray:
        return _engine.legal_actions(self.state, int(player))

    def observation_tensor(self, player: int) -> np.ndarray:
        """float32[PLANES, 11, 11] (:data:`PLANES` names them): ``player``'s observation as
        the planes of the playground's featurized observation (board one-hot, bombs' blast
        strength and life, own position, teammates, enemies, ammo, range, kick), plus the
        flames' remaining life and the step as a fraction of ``max_steps``; values in
        [0, 1] (counts and strengths scaled by their caps), fog hides what it hides."""
        return observation_planes(self.observation(player), int(player), self.teams())

    def is_alive(self, player: int) -> bool:
        return bool(self.state.agents[int(player), A_ALIVE])

    @property
    def done(self) -> bool:
        return bool(_engine.is_terminal(self.state))

    @property
    def step_count(self) -> int:
        return int(self.state.meta[M_STEP])

    def returns(self) -> np.ndarray:
        return _engine.returns(self.state)

    def outcomes(self) -> list[str]:
        """WIN / TIE / LOSS per seat at the end (a team win counts for both members).

        ``java``: each agent's own result as the framework scores it (its
        ``A_STATUS``): a dead agent keeps its LOSS; at the time-out only the
        agents still alive TIE; agents dying in the same tick as the last
        others TIE. ``canonical``: the competition's rule: the winners WIN,
        and when nobody wins everybody TIES (dead or alive), else the others LOSE.
        """
        agents = self.state.agents
        if self.config.ruleset == "java":
            labels = {STATUS_WIN: WIN, STATUS_TIE: TIE, STATUS_LOSS: LOSS}
            # STATUS_INCOMPLETE cannot remain at the end of a java game; an
            # unfinished game reports it as a tie
            return [labels.get(int(agents[i, A_STATUS]), TIE) for i in range(N_AGENTS)]
        tie = self.state.meta[M_RESULT] == RESULT_TIE
        return [WIN if agents[i, A_STATUS] == STATUS_WIN else TIE if tie else LOSS
                for i in range(N_AGENTS)]

    def death_ticks(self) -> list[int | None]:
        """Per seat, the tick (steps played, 1-based) in whose step the agent
        died, or None if it is alive (or its death was not seen: a game restored
        from JSON with agents already dead)."""
        return [None if t < 0 else int(t) for t in self._died_at]

    def teams(self) -> list[int]:
        return [0, 1, 0, 1] if self.config.mode == "team" else super().teams()

    # --- copies and serialisation ---------------------------------------
    def copy(self) -> "Pommerman":
        other = Pommerman(self.config)
        other.state = copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        other._died_at = self._died_at.copy()
        return other

    #: 2 (since the per-cell flames of issue 37): layout-free, see :meth:`fingerprint`;
    #: 1: the CRC of the raw state arrays of the flame-list layout (the list's capacity,
    #: rows past the live counts and all), which no later layout can reproduce.
    fingerprint_version = 2

    def fingerprint(self) -> int:
        """CRC-32 of the state's content, independent of how it is laid out in memory:
        ``board``, ``items`` (int8[121]), ``agents`` (int16[4, 9]), the live bomb rows
        (int16[n, 6]), the flames as int16 (row, col, life) rows in cell-then-life order
        (as the JSON lists them) and ``meta`` (int32[12]), in that order."""
        s = self.state
        n_bombs = int(s.meta[M_N_BOMBS])
        crc = zlib.crc32(np.ascontiguousarray(s.board, dtype=np.int8))
        crc = zlib.crc32(np.ascontiguousarray(s.items, dtype=np.int8), crc)
        crc = zlib.crc32(np.ascontiguousarray(s.agents, dtype=np.int16), crc)
        crc = zlib.crc32(np.ascontiguousarray(s.bombs[:n_bombs], dtype=np.int16), crc)
        crc = zlib.crc32(flame_rows(s.flames), crc)
        return zlib.crc32(np.ascontiguousarray(s.meta, dtype=np.int32), crc)

    def to_json(self) -> str:
        d = state_to_dict(self.state)
        d["config"] = asdict(self.config)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "Pommerman":
        d = json.loads(text)
        cfg = PommermanConfig(**d.get("config", {}))
        game = cls(cfg)
        game.state = state_from_dict(d, mode=cfg.mode, ruleset=cfg.ruleset,
                                     collapse=cfg.collapse, max_steps=cfg.max_steps)
        return game

    def render(self, state: PommermanState | None = None) -> str:
        return render_state(self.state if state is None else state)

    def render_image(self, state: PommermanState | None = None, cell: int = 32, title: str | None = None):
        """A PIL image of the current state, or of ``state`` (e.g. ``observation(p)``:
        the board as agent ``p`` sees it, fog included); see :mod:`games.pommerman.image`."""
        from .image import state_image

        return state_image(self.state if state is None else state, cell=cell, title=title)


_GLYPHS = {0: ".", 1: "#", 2: "+", 3: "b", 4: "*", 5: "?", 6: "a", 7: "r", 8: "k", 9: "@"}


_LIFE_SHIFTS = np.arange(MAX_FLAME_LIFE + 1, dtype=np.uint64) * np.uint64(8)


def flame_rows(flames: np.ndarray) -> np.ndarray:
    """The flames of a state's per-cell words (uint64[FLAME_WORDS], see ``_layout``) as
    int16[n, 3] (row, col, life) rows, by cell then life (numpy, no Python loop per cell)."""
    cells = np.flatnonzero(flames[:FLAME_MASK])
    counts = ((flames[cells][:, None] >> _LIFE_SHIFTS) & np.uint64(0xFF)).astype(np.int64)
    per_cell = np.repeat(cells, counts.sum(axis=1))
    lives = np.repeat(np.tile(np.arange(MAX_FLAME_LIFE + 1), len(cells)), counts.ravel())
    return np.stack([per_cell // BOARD_SIZE, per_cell % BOARD_SIZE, lives], axis=1).astype(np.int16)


def render_state(state: PommermanState) -> str:
    """ASCII picture: ``#`` rigid, ``+`` wood, ``b`` bomb, ``*`` flames, ``?`` fog,
    ``a``/``r``/``k`` power-ups (ammo, range, kick), ``0``-``3`` agents."""
    rows = []
    for r in range(BOARD_SIZE):
        line = []
        for c in range(BOARD_SIZE):
            v = int(state.board[r * BOARD_SIZE + c])
            line.append(str(v - 10) if v >= 10 else _GLYPHS.get(v, "?"))
        rows.append(" ".join(line))
    status = []
    for i in range(N_AGENTS):
        a = state.agents[i]
        if not a[A_VISIBLE]:
            status.append(f"{i}: unseen")
        else:
            status.append(f"{i}: {'alive' if a[A_ALIVE] else 'dead'} ({a[A_ROW]},{a[A_COL]})")
    bombs = ", ".join(f"({b[B_ROW]},{b[B_COL]})" for b in state.bombs[: state.meta[M_N_BOMBS]])
    rows.append(f"step {int(state.meta[M_STEP])} | " + " | ".join(status) + (f" | bombs {bombs}" if bombs else ""))
    return "\n".join(rows)
