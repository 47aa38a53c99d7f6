"""Game records: what it takes to replay a game exactly, and the replay itself.

A record is small and self-contained (one compressed ``.npz``, loaded with
``allow_pickle=False``): a ``meta`` JSON string with

    game            str                 registry name of the game
    config          dict                the game config (``dataclasses.asdict``)
    board_entropy   str                 SeedSequence entropy of the initial state (decimal)
    board_spawn_key list[int]           its spawn key: reset(SeedSequence(entropy, spawn_key), board_index)
    board_index     int | None          the board the game was played on (the plan's board seed;
                                        absent in older records, whose games read it from the
                                        last entry of the spawn key, as the plan laid it out)
    labels          list[str]           who sat at each seat (for display)
    fingerprint_version int             the game's ``fingerprint_version`` when written
                                        (absent in older records: 1)

and four arrays (``[T, n]`` in memory; on disk seat-major, ``[n, T]``, which
compresses better)::

    actions         int8|int16[T, n]    the joint action passed to ``step`` at each step
    iterations      int32[T, n]         search iterations of each decision (-1: not asked)
    values          float16[T, n]       value of the chosen action as the agent saw it (3 decimals)
                                        (NaN: not asked, or the agent has no value)
    fingerprints    uint16[T + 1]       the state's CRC-32 folded to 16 bits, before step 1
                                        and after every step (a differing state goes
                                        unnoticed at one step with probability 2**-16)

Under iteration budgets a game is a pure function of its config, agents,
learned state and seed; under time budgets it is not, so the record holds the
actions themselves. :func:`replay` re-simulates from the initial state and the
recorded actions and checks the state's fingerprint at every step: a record
that does not reproduce (tampered, or a changed engine) raises
:class:`ReplayMismatch` naming the first step that differs. A record whose
fingerprints are of another version than the game's
(:attr:`games.api.Game.fingerprint_version`, e.g. a Pommerman record written
before the per-cell flame layout) cannot be checked: :func:`replay` raises
:class:`RecordError` saying so before the first step.

A study writes one record per finished game to ``<study_dir>/records/``
(atomically, before the game's rows). ``arena replay STUDY GAME`` and
``arena play --record FILE`` use the same format; :mod:`cluster.replay.view`
renders records as PNG frames, GIF animations and self-contained HTML pages.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from cluster.results.store import atomic_write
from games.registry import make_config, make_game

__all__ = ["GameRecorder", "GameRecord", "ReplayMismatch", "RecordError", "fingerprint",
           "load_record", "record_path", "replay", "save_record"]

#: Subdirectory of a study directory holding the records.
RECORDS_DIR = "records"


class RecordError(ValueError):
    """A record file that is missing, corrupt or not a record."""


class ReplayMismatch(RuntimeError):
    """A replay that does not reproduce its record; ``step`` is the first step that differs."""

    def __init__(self, step: int, message: str):
        super().__init__(message)
        self.step = step


def fold16(crc: int) -> int:
    """A 32-bit CRC folded to the 16 bits a record keeps per step."""
    return ((crc >> 16) ^ crc) & 0xFFFF


def fingerprint(game) -> int:
    """CRC-32 of the game's whole state (:meth:`games.api.Game.fingerprint`)."""
    return int(game.fingerprint()) & 0xFFFFFFFF


@dataclass
class GameRecord:
    """One game's record (see the module docstring for the fields)."""

    game: str
    config_json: str
    board_entropy: str
    board_spawn_key: np.ndarray
    labels: np.ndarray
    actions: np.ndarray
    iterations: np.ndarray
    values: np.ndarray
    fingerprints: np.ndarray
    fingerprint_version: int = 1
    board_index: int | None = None

    @property
    def length(self) -> int:
        return int(self.actions.shape[0])

    @property
    def num_players(self) -> int:
        return int(self.actions.shape[1])

    def to_arrays(self) -> dict[str, np.ndarray]:
        meta = {"game": self.game, "config": json.loads(self.config_json),
                "board_entropy": self.board_entropy,
                "board_spawn_key": [int(k) for k in self.board_spawn_key],
                "labels": [str(x) for x in self.labels],
                "fingerprint_version": int(self.fingerprint_version),
                "board_index": None if self.board_index is None else int(self.board_index)}
        return {"meta": np.array(json.dumps(meta, sort_keys=True)),
                "actions": np.ascontiguousarray(self.actions.T),
                "iterations": np.ascontiguousarray(self.iterations.T),
                "values": np.ascontiguousarray(self.values.T), "fingerprints": self.fingerprints}

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **self.to_arrays())
        return buffer.getvalue()

    @classmethod
    def from_arrays(cls, arrays) -> "GameRecord":
        try:
            meta = json.loads(str(arrays["meta"]))
            record = cls(
                game=str(meta["game"]), config_json=json.dumps(meta["config"], sort_keys=True),
                board_entropy=str(meta["board_entropy"]),
                board_spawn_key=np.asarray(meta["board_spawn_key"], dtype=np.int64),
                labels=np.asarray(meta["labels"], dtype=str), actions=np.asarray(arrays["actions"]).T,
                iterations=np.asarray(arrays["iterations"]).T, values=np.asarray(arrays["values"]).T,
                fingerprints=np.asarray(arrays["fingerprints"]),
                fingerprint_version=int(meta.get("fingerprint_version", 1)),
                board_index=_stored_board_index(meta))
        except KeyError as exc:
            raise RecordError(f"not a game record: field {exc.args[0]!r} is missing") from None
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise RecordError(f"not a game record: unreadable meta ({exc})") from None
        t, n = record.actions.shape if record.actions.ndim == 2 else (-1, -1)
        if t < 0 or record.iterations.shape != (t, n) or record.values.shape != (t, n) \
                or record.fingerprints.shape != (t + 1,) or record.labels.shape != (n,):
            raise RecordError("not a game record: the array shapes do not agree "
                              f"(actions {record.actions.shape}, fingerprints {record.fingerprints.shape})")
        return record

    def config(self):
        """The game config object (validated by the game's config class)."""
        return make_config(self.game, json.loads(self.config_json))

    def board_seed(self) -> np.random.SeedSequence:
        return np.random.SeedSequence(int(self.board_entropy), spawn_key=tuple(int(k) for k in self.board_spawn_key))


def _stored_board_index(meta: dict) -> int | None:
    """The record's board index; for a record written before it was stored, the board the
    game was reset on then: the last entry of the board seed's spawn key (the plan's
    ``(BOARD_STREAM, board_seed)``), None without one."""
    if "board_index" in meta:
        return None if meta["board_index"] is None else int(meta["board_index"])
    spawn_key = meta["board_spawn_key"]
    return int(spawn_key[-1]) if spawn_key else None


class GameRecorder:
    """Collects a record while a game is played (see :func:`cluster.run.play.play_game`).

    Per step the play loop calls :meth:`decision` for every seat it asks and
    :meth:`step` with the joint action after ``game.step``. Python only, a few
    microseconds per step (the fingerprint is a CRC over the state arrays).
    """

    def __init__(self, game_name: str, game_config, board_seed: np.random.SeedSequence,
                 labels, num_actions: int, board_index: int | None = None):
        self.game_name = game_name
        self.board_index = board_index
        self.config_json = json.dumps(asdict(game_config), sort_keys=True)
        self.board_entropy = str(int(board_seed.entropy))
        self.board_spawn_key = np.asarray(board_seed.spawn_key, dtype=np.int64)
        self.labels = list(labels)
        n = len(self.labels)
        self._action_dtype = np.int8 if num_actions <= 127 else np.int16 if num_actions <= 32767 else np.int32
        self._actions: list[list[int]] = []
        self._iterations: list[list[int]] = []
        self._values: list[list[float]] = []
        self._pending_iterations = [-1] * n
        self._pending_values = [math.nan] * n
        self._fingerprints: list[int] = []
        self._fingerprint_version = 1

    def start(self, game) -> None:
        """After ``game.reset``: fingerprint the initial state."""
        self._fingerprint_version = int(game.fingerprint_version)
        self._fingerprints = [fold16(fingerprint(game))]

    def decision(self, seat: int, agent) -> None:
        """After ``agent.act``: its iterations and the value of its choice."""
        self._pending_iterations[seat] = int(agent.last_iterations)
        value = agent.last_value
        self._pending_values[seat] = float(value) if value is not None else math.nan

    def step(self, game, actions) -> None:
        """After ``game.step(actions)``."""
        n = len(self.labels)
        self._actions.append([int(a) for a in actions])
        self._iterations.append(self._pending_iterations)
        self._values.append(self._pending_values)
        self._pending_iterations = [-1] * n
        self._pending_values = [math.nan] * n
        self._fingerprints.append(fold16(fingerprint(game)))

    def finish(self) -> GameRecord:
        n = len(self.labels)
        return GameRecord(
            game=self.game_name, config_json=self.config_json, board_entropy=self.board_entropy,
            board_spawn_key=self.board_spawn_key, labels=np.asarray(self.labels, dtype=str),
            actions=np.asarray(self._actions, dtype=self._action_dtype).reshape(-1, n),
            iterations=np.asarray(self._iterations, dtype=np.int32).reshape(-1, n),
            # Three decimals are what a page shows; rounding first compresses better.
            values=np.round(np.asarray(self._values, dtype=np.float64), 3).astype(np.float16).reshape(-1, n),
            fingerprints=np.asarray(self._fingerprints, dtype=np.uint16),
            fingerprint_version=self._fingerprint_version, board_index=self.board_index)


def record_path(study_dir, game_index: int) -> Path:
    """Where a study keeps the record of game ``game_index``."""
    return Path(study_dir) / RECORDS_DIR / f"game-{int(game_index):06d}.npz"


def save_record(path, record: GameRecord | bytes) -> Path:
    """Write a record atomically (fsynced temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, record if isinstance(record, bytes) else record.to_bytes())
    return path


def load_record(path) -> GameRecord:
    """Read a record written by :func:`save_record` (never unpickles)."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"{path}: no such record")
    if not zipfile.is_zipfile(path):  # empty, truncated or another kind of file
        raise RecordError(f"{path}: not a readable record (not an .npz archive: empty, truncated or "
                          "another kind of file)")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            return GameRecord.from_arrays({k: arrays[k] for k in arrays.files})
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None
    except (OSError, ValueError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
        raise RecordError(f"{path}: not a readable record ({type(exc).__name__}: {exc})") from None


def replay(record: GameRecord) -> Iterator[tuple[int, object]]:
    """Re-simulate ``record``: yields ``(step, game)`` for step 0 (the initial
    state) to ``record.length``, checking the state's fingerprint at every step.

    Raises:
        RecordError: the record's fingerprints are of another version than the game's
            (nothing is replayed).
        ReplayMismatch: at the first step whose state differs from the record's.
    """
    game = make_game(record.game, record.config())
    if record.fingerprint_version != game.fingerprint_version:
        raise RecordError(
            f"the record's state fingerprints are version {record.fingerprint_version}, this Arena's "
            f"{record.game} fingerprints are version {game.fingerprint_version}: the record cannot be "
            "checked here (the game's state fingerprint changed since it was written); replay it with "
            "the Arena version that wrote it")
    game.reset(record.board_seed(), board_index=record.board_index)
    _check(record, 0, game)
    yield 0, game
    for t in range(record.length):
        if game.done:
            raise ReplayMismatch(t + 1, f"step {t + 1}: the game ended after step {t}, "
                                        f"but the record goes on to step {record.length}")
        game.step([int(a) for a in record.actions[t]])
        _check(record, t + 1, game)
        yield t + 1, game
    if not game.done:
        raise ReplayMismatch(record.length, f"step {record.length}: the record ends, but the game is not over")


def _check(record: GameRecord, step: int, game) -> None:
    got = fold16(fingerprint(game))
    want = int(record.fingerprints[step])
    if got != want:
        what = "initial state" if step == 0 else f"state after step {step}"
        raise ReplayMismatch(step, f"step {step}: the {what} does not match the record "
                                   f"(fingerprint {got:04x}, recorded {want:04x})")


def verify(record: GameRecord) -> int:
    """Replay ``record`` to its end; returns its length (raises ReplayMismatch)."""
    last = 0
    for last, _ in replay(record):
        pass
    return last
