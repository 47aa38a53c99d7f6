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
   validates inputs once. A game that declares the *generic kernels*
   (:attr:`Game.generic_kernels`, :mod:`games.generic`) is searched by agents
   written for any game (``mcts_generic``); ``games/CONTRACT.md`` lists every
   member a game must or may define.

2. **A thin Python class** implementing :class:`Game` below, with the
   ergonomic API used by agents' Python glue, the cluster and the CLI.

A game is registered by name in :mod:`games.registry` with a frozen config
dataclass declared with :func:`games.validation.config_class` (each field's
rule declared, errors naming the field).
"""
from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Sequence

import numpy as np

#: Per-player outcome labels used across Arena (results tables, Parquet rows).
WIN, TIE, LOSS = "win", "tie", "loss"


def board_of(seed, board_index: int | None = None) -> int | None:
    """The board a game is reset on: ``board_index`` when given (a study's plan passes its
    board seed, the index of the board among the study's boards), else an int ``seed``
    itself (``reset(7)`` plays board 7), else None (a SeedSequence alone names no board).

        >>> board_of(np.random.SeedSequence(5), 3), board_of(7), board_of(np.random.SeedSequence(5))
        (3, 7, None)
    """
    if board_index is not None:
        if isinstance(board_index, bool) or not isinstance(board_index, (int, np.integer)) or board_index < 0:
            raise ValueError(f"board_index: must be a non-negative int, got {board_index!r}")
        return int(board_index)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed)
    return None


def _as_int(action) -> int:
    """An action entry as an int; -1 (never valid) for what is not a number."""
    try:
        return int(action)
    except (TypeError, ValueError):
        return -1


class Game(ABC):
    """What the cluster and the CLI need from any game: the base of every game.

    The base holds the shared ``step`` semantics: ``reset`` must come first,
    ``actions`` has one entry per player, stepping a finished game does
    nothing, and an invalid action of a player in :meth:`acting_players` (not
    an int, out of range, or refused by :meth:`is_valid_action`) is counted
    in ``invalid_actions`` and replaced by :meth:`replacement_action`, as the
    game's reference rules do; the entries of players not acting are ignored
    (0 is passed on). A game implements :meth:`new_state` and :meth:`apply`
    and the queries; the optional members have defaults here.

    A game is reset from a seed and, optionally, the index of its *board*
    (``reset(seed, board_index=b)``): a study's plan passes its board seed, so that a
    game whose boards are a list (Pommerman's ``boards_file``) plays board ``b`` and a
    game that alternates something by board (XCOM's first mover) alternates by it,
    without decoding the plan's seeds. The game reads it as :attr:`board_index`.
    """

    num_players: ClassVar[int]
    #: Actions of the game (a game whose count depends on its config sets it per instance).
    num_actions: int
    #: A name per action, for replay pages (None: actions are shown as numbers).
    action_names: ClassVar[tuple[str, ...] | None] = None
    #: The fields of an :meth:`observation` that carry what the player sees, for faces
    #: that hand an observation to other code at every step (the PettingZoo face,
    #: :mod:`agents.pettingzoo`); the fields left out are constant tables (a board's
    #: graph and distances, lines of sight) or work buffers. None: every field.
    observed_fields: ClassVar[tuple[str, ...] | None] = None
    #: The frozen config class of a game loaded as a plugin (an ``arena.games`` entry
    #: point, or an import path ``package.module:GameClass`` as ``[game] name``): the
    #: registry validates the spec's ``[game]`` options into it and builds
    #: ``GameClass(config)``. Built-in games register theirs in :mod:`games.registry`.
    #: Default: None (the class cannot be loaded as a plugin).
    Config: ClassVar[type | None] = None
    #: The module (or object) of the game's kernels for agents that play any game:
    #: at least ``legal_actions(observation, player) -> bool[num_actions]`` (what
    #: ``random`` calls). Default: None (only agents written for the game play it).
    kernels: ClassVar[Any] = None
    #: The scheme of :meth:`fingerprint`, stored in every game record
    #: (:mod:`cluster.replay.records`): a game raises it when what its fingerprint
    #: covers changes (say a new state layout under a raw-array fingerprint), so that a
    #: record written before says why it cannot be checked instead of failing at step 0.
    fingerprint_version: ClassVar[int] = 1
    #: Whether every player still in the game acts at every step (Pommerman; an OpenSpiel
    #: game with simultaneous moves), so that one step is one round of every player: the
    #: PettingZoo face then asks every agent at every step and converts with
    #: ``aec_to_parallel`` (``is_parallelizable``). Default: False (turn-based).
    simultaneous: ClassVar[bool] = False
    #: The game's kernels for searches that play any game (a
    #: :class:`games.generic.GenericKernels`): ``mcts_generic`` then searches it in numba.
    #: Default: None (no generic kernels; see :attr:`searchable` for the Python path).
    generic_kernels: ClassVar[Any] = None
    #: Whether searches that play any game may plan through this class's Python members
    #: (the pure-Python path of ``mcts_generic``): :meth:`copy`, :meth:`acting_players`,
    #: :meth:`legal_actions`, :meth:`apply`, :attr:`done`, :meth:`returns`, and
    #: :meth:`determinize` (hidden information) and the chance members (chance nodes)
    #: where the game has them. Default: False.
    searchable: ClassVar[bool] = False
    #: Whether :meth:`observation` is the whole state in the game's layout (nothing is
    #: hidden from anybody), so that a search may take an observation as the state
    #: (the default :meth:`determinize`). Default: False.
    perfect_information: ClassVar[bool] = False

    def __init__(self, config: Any):
        self.config = config
        self.state: Any = None
        self.invalid_actions = np.zeros(self.num_players, dtype=np.int64)
        #: The board the current game is played on (:func:`board_of` the arguments of
        #: :meth:`reset`): None until a reset, and for a SeedSequence without a board index.
        self.board_index: int | None = None

    def forward_model_kernels(self) -> tuple:
        """The numba dispatchers of this game's forward model: those agents' search kernels
        call, and so compile when those are first typed, and those :meth:`step` calls (for
        Pommerman the rules of the config's ruleset and the step around them). The parallel
        warm-up (:mod:`cluster.run.warm`) compiles them once, in its first group, while its
        other groups compile what does not need them, then load them from the first group's
        cache instead of compiling them again. Default: none (every group compiles what it
        uses)."""
        return ()

    # --- life cycle -----------------------------------------------------------
    def reset(self, seed, board_index: int | None = None) -> None:
        """Start a new game; ``seed`` is an int or a numpy SeedSequence, ``board_index``
        the board it is played on (default: an int seed names its board; a SeedSequence
        alone none). Games without boards of their own ignore the board index."""
        self.board_index = board_of(seed, board_index)
        self.state = self.new_state(seed)
        self.invalid_actions[:] = 0

    @abstractmethod
    def new_state(self, seed) -> Any:
        """The initial state of a game played from ``seed`` (on board :attr:`board_index`,
        set by :meth:`reset` just before, for a game with boards of its own)."""

    def step(self, actions: Sequence[int]) -> None:
        """Apply one joint action (one entry per player; see the class docstring)."""
        if self.state is None:
            raise RuntimeError("call reset(seed) before step()")
        if len(actions) != self.num_players:
            raise ValueError(f"actions: expected {self.num_players} actions, got {len(actions)}")
        if self.done:
            return
        joint = np.zeros(self.num_players, dtype=np.int64)
        for p in self.acting_players():
            a = _as_int(actions[p])
            if not (0 <= a < self.num_actions and self.is_valid_action(p, a)):
                self.invalid_actions[p] += 1
                a = self.replacement_action(p)
            joint[p] = a
        self.apply(joint)

    def is_valid_action(self, player: int, action: int) -> bool:
        """Whether ``action`` (in range) is accepted from ``player``. Default: legal."""
        return bool(self.legal_actions(player)[action])

    def replacement_action(self, player: int) -> int:
        """What an invalid action of ``player`` becomes. Default: its first legal action."""
        return int(np.flatnonzero(self.legal_actions(player))[0])

    @abstractmethod
    def apply(self, joint: np.ndarray) -> None:
        """Advance the state by the checked joint action (int64[num_players];
        entries of players not acting are 0)."""

    # --- queries --------------------------------------------------------------
    @abstractmethod
    def observation(self, player: int) -> Any:
        """What ``player`` may see now (a state in the game's layout)."""

    @abstractmethod
    def legal_actions(self, player: int) -> np.ndarray:
        """bool[num_actions]."""

    def observation_tensor(self, player: int) -> np.ndarray:
        """float32: what ``player`` sees as one array a network takes (the PettingZoo face's
        ``observation="planes"``). Default: the :attr:`observed_fields` of
        :meth:`observation` flattened and concatenated, booleans as 0/1, ``uint64`` words
        unpacked to their bits (a bit-packed word is no number a network can use); a game
        with a board gives planes instead (Pommerman: ``float32[C, 11, 11]``)."""
        observation = self.observation(player)
        if isinstance(observation, np.ndarray):
            arrays = [observation]
        else:
            names = self.observed_fields if self.observed_fields is not None else observation._fields
            arrays = [getattr(observation, name) for name in names]
        parts = []
        for array in arrays:
            array = np.asarray(array)
            if array.dtype == np.uint64:
                array = np.unpackbits(np.ascontiguousarray(array).view(np.uint8), bitorder="little")
            parts.append(array.astype(np.float32).ravel())
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def true_state_view(self) -> Any:
        """The whole state, hidden things included, for an agent declared to read it
        (``Agent.reads_true_state``: an upper bound, never a fair player). Default:
        the game offers no such view."""
        raise ValueError(f"{type(self).__name__} has no true-state view: an agent that "
                         f"reads the true state cannot play it")

    def is_alive(self, player: int) -> bool:
        """Whether ``player`` is still in the game (a player out of it sends action 0).
        Default: always."""
        return True

    def acting_players(self) -> Sequence[int]:
        """The players whose action this step uses. Default: simultaneous moves,
        every player still in the game (as in Pommerman); a turn-based game
        returns the one player to move (the others' entries are ignored and
        their agents are not asked). Nobody once the game is over."""
        if self.done:
            return []
        return [p for p in range(self.num_players) if self.is_alive(p)]

    @property
    @abstractmethod
    def done(self) -> bool: ...

    @property
    @abstractmethod
    def step_count(self) -> int: ...

    @abstractmethod
    def returns(self) -> np.ndarray:
        """float64[num_players]: rewards at the end (zeros before)."""

    @abstractmethod
    def outcomes(self) -> list[str]:
        """Per player WIN / TIE / LOSS once done."""

    def death_ticks(self) -> list[int | None]:
        """Per player, the step count at which it left the game (died), None if it
        is still in. Default: None for everybody (rows record no ``died_at``)."""
        return [None] * self.num_players

    def scores(self) -> list[float] | None:
        """Per player, a score besides the outcome (rows get ``score`` and
        ``score_margin``). Default: None (no score)."""
        return None

    def teams(self) -> list[int]:
        """Team id of each seat. Default: every seat its own team."""
        return list(range(self.num_players))

    def action_name(self, action: int) -> str:
        """``action_names[action]``, else the number."""
        names = self.action_names
        return str(names[action]) if names is not None and 0 <= action < len(names) else str(action)

    # --- search on any game (games/CONTRACT.md) --------------------------------
    def is_chance_node(self) -> bool:
        """Whether the game waits for a chance event (nobody acts: :meth:`acting_players`
        is empty and :meth:`step` draws the outcome from the game's own seeded generator;
        a search branches on :meth:`chance_outcomes` instead). Default: never."""
        return False

    def chance_outcomes(self) -> np.ndarray:
        """float64[K]: at a chance node, the probability of each outcome ``0 .. K-1``.
        Default: the game has no chance node (ValueError)."""
        raise ValueError(f"{type(self).__name__} declares no chance nodes")

    def apply_chance(self, outcome: int) -> None:
        """Play chance ``outcome`` (one with a positive probability). Default: ValueError."""
        raise ValueError(f"{type(self).__name__} declares no chance nodes")

    def determinize(self, observation: Any, player: int, rng: np.random.Generator) -> None:
        """Set :attr:`state` to a whole state that ``player``'s ``observation`` is
        consistent with, every hidden thing drawn from ``rng`` (what a search plans
        from when information is hidden). Default: the observation itself (copied),
        for a game that declares :attr:`perfect_information`; else ValueError."""
        if not self.perfect_information:
            raise ValueError(f"{type(self).__name__} hides information (perfect_information is "
                             f"False) and does not implement determinize()")
        if isinstance(observation, tuple):
            self.state = type(observation)(*(np.array(a, copy=True) for a in observation))
        else:
            self.state = np.array(observation, copy=True)

    # --- copies, serialisation, pictures ---------------------------------------
    @abstractmethod
    def copy(self) -> "Game": ...

    @abstractmethod
    def to_json(self) -> str:
        """The game (config and state) as JSON; :meth:`from_json` reads it back."""

    @classmethod
    @abstractmethod
    def from_json(cls, text: str) -> "Game":
        """The game ``to_json`` wrote (same state, same fingerprint)."""

    def fingerprint(self) -> int:
        """CRC-32 of the whole state, what a game record checks at every step
        (:mod:`cluster.replay.records`). Default: every array of ``state`` (a NamedTuple
        of arrays, the layout every Arena game uses) in field order, else the
        CRC of ``to_json()``. A game with constant tables in its state
        fingerprints only the arrays that change."""
        state = self.state
        if isinstance(state, tuple) and state and all(isinstance(a, np.ndarray) for a in state):
            crc = 0
            for array in state:
                crc = zlib.crc32(np.ascontiguousarray(array).view(np.uint8), crc)
            return crc
        return zlib.crc32(self.to_json().encode())

    @abstractmethod
    def render(self, state=None) -> str:
        """A text picture of the current state (or of ``state``, e.g. an observation)."""

    def render_image(self, state=None, title: str | None = None):
        """A PIL image of the current state (or of ``state``). Default: the text
        of :meth:`render` (under ``title``) drawn on white."""
        text = self.render(state) if state is not None else self.render()
        return text_image((title + "\n" if title else "") + text)


def text_image(text: str):
    """``text`` drawn black on white as a PIL image (PIL is imported on first use)."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.load_default(size=14)
    except TypeError:  # Pillow < 10.1
        font = ImageFont.load_default()
    lines = text.splitlines() or [""]
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    width = max(probe.textbbox((0, 0), ln, font=font)[2] for ln in lines) + 16
    height = 18 * len(lines) + 16
    img = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for i, ln in enumerate(lines):
        draw.text((8, 8 + 18 * i), ln, font=font, fill=(0, 0, 0))
    return img
