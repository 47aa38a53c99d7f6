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

A host packs the records of each batch of games it plays into one *record pack*
(:func:`pack_records`: one compressed archive per batch, so a host pays one
compression per batch), and the driver writes the packs of a group commit as one
file of packs in ``<study_dir>/records/`` (``packs-<first>-<last>-<id>.npz``,
:func:`save_record_packs`, atomically with one fsync, before the games' rows): a
study of a million short games writes hundreds of files, not a million. A pack holds ``games`` (int64[G], the game indices),
``meta`` (str[G], each game's ``meta`` as above), ``steps`` (int64[G + 1], the
offsets of each game's steps) and the four arrays of every game concatenated
along the step axis (seat-major, so ``actions[:, steps[i]:steps[i + 1]]`` is game
``i``'s; ``fingerprints[steps[i] + i : steps[i + 1] + i + 1]``); games with another
seat count or action type go into a pack of their own. :func:`load_study_record`
finds a game's record in either form (older studies wrote ``game-<index>.npz``). ``arena replay STUDY GAME`` and
``arena play --record FILE`` use the same format; :mod:`cluster.replay.view`
renders records as PNG frames, GIF animations and self-contained HTML pages.
"""
from __future__ import annotations

import io
import json
import math
import re
import uuid
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from cluster.results.store import atomic_write, digest_in_name, file_digest
from games.registry import make_config, make_game

__all__ = ["GameRecorder", "GameRecord", "ReplayMismatch", "RecordError", "fingerprint",
           "load_record", "record_path", "replay", "save_record", "pack_records", "unpack_records",
           "save_record_pack", "save_record_packs", "load_study_record", "has_study_record"]

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


#: Name of a record pack, ``pack-<first game>-<last game>-<id>.npz``, or of a file of packs,
#: ``packs-<first game>-<last game>-<id>.npz``; the id is ``<12 hex>-sha256-<64 hex>``, the
#: SHA-256 of the file's bytes checked on read (older studies: ``<12 hex>`` alone, unchecked).
_PACK_RE = re.compile(r"^packs?-(\d+)-(\d+)-[0-9a-f]+(?:-sha256-[0-9a-f]{64})?\.npz$")


def pack_records(records: list[tuple[int, GameRecord]]) -> list[tuple[list[int], bytes]]:
    """``(game_index, record)`` pairs as record packs (see the module docstring): one
    compressed ``.npz`` per group of games with the same seat count and action type,
    returned as ``(game indices, bytes)``. One compression per batch instead of one per
    game: a host pays ~0.4 ms for a pack of a thousand one-step games, where a file per
    game cost ~0.3 ms each."""
    groups: dict[tuple, list[tuple[int, GameRecord]]] = {}
    for game_index, record in records:
        groups.setdefault((record.num_players, record.actions.dtype.str), []).append((int(game_index), record))
    out = []
    for pairs in groups.values():
        steps = np.zeros(len(pairs) + 1, dtype=np.int64)
        np.cumsum([r.length for _, r in pairs], out=steps[1:])
        meta = [str(r.to_arrays()["meta"]) for _, r in pairs]  # each record's own meta, every field
        arrays = {"games": np.asarray([g for g, _ in pairs], dtype=np.int64), "meta": np.asarray(meta),
                  "steps": steps,
                  "actions": np.concatenate([r.actions.T for _, r in pairs], axis=1),
                  "iterations": np.concatenate([r.iterations.T for _, r in pairs], axis=1),
                  "values": np.concatenate([r.values.T for _, r in pairs], axis=1),
                  "fingerprints": np.concatenate([r.fingerprints for _, r in pairs])}
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        out.append(([g for g, _ in pairs], buffer.getvalue()))
    return out


def unpack_records(arrays, only: int | None = None) -> dict[int, GameRecord]:
    """The records of a pack (the arrays of :func:`pack_records`), by game index; with
    ``only``, just that game's (an empty dict if the pack does not hold it)."""
    try:
        games = np.asarray(arrays["games"])
        steps = np.asarray(arrays["steps"])
        meta = arrays["meta"]
        picks = range(len(games)) if only is None else np.flatnonzero(games == int(only))
        if not len(picks):
            return {}
        actions, iterations, values = arrays["actions"], arrays["iterations"], arrays["values"]
        fingerprints = arrays["fingerprints"]
    except KeyError as exc:
        raise RecordError(f"not a record pack: field {exc.args[0]!r} is missing") from None
    out = {}
    for i in picks:
        lo, hi = int(steps[i]), int(steps[i + 1])
        out[int(games[i])] = GameRecord.from_arrays({
            "meta": meta[i], "actions": actions[:, lo:hi], "iterations": iterations[:, lo:hi],
            "values": values[:, lo:hi], "fingerprints": fingerprints[lo + i:hi + i + 1]})
    return out


def save_record_pack(study_dir, games: list[int], data: bytes) -> Path:
    """Write a record pack (bytes of :func:`pack_records`) of ``games`` into the study's
    ``records/`` atomically (fsynced temporary file, then rename)."""
    directory = Path(study_dir) / RECORDS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (f"pack-{min(games):09d}-{max(games):09d}-{uuid.uuid4().hex[:12]}-sha256-"
                        f"{file_digest(data)}.npz")
    atomic_write(path, data)
    return path


def save_record_packs(study_dir, packs: list[tuple[list[int], bytes]]) -> Path | None:
    """Write several record packs (a group commit's: one per batch) as *one* file of packs,
    atomically with one fsync: an uncompressed ``.npz`` holding, for each pack ``i``, its
    games (``g<i>``, int64) and its compressed bytes as they came from the host (``p<i>``,
    uint8; nothing is compressed again). None when there is nothing to write."""
    packs = [(list(games), data) for games, data in packs if games]
    if not packs:
        return None
    directory = Path(study_dir) / RECORDS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for i, (games, data) in enumerate(packs):
        arrays[f"g{i}"] = np.asarray(games, dtype=np.int64)
        arrays[f"p{i}"] = np.frombuffer(data, dtype=np.uint8)
    first = min(min(games) for games, _ in packs)
    last = max(max(games) for games, _ in packs)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    path = directory / f"packs-{first:09d}-{last:09d}-{uuid.uuid4().hex[:12]}-sha256-{file_digest(data)}.npz"
    atomic_write(path, data)
    return path


def _find_in_pack_file(path: Path, game_index: int) -> GameRecord | None:
    """Game ``game_index``'s record in a pack or a file of packs (None: not there); a file
    whose bytes do not match the SHA-256 in its name raises RecordError."""
    want = digest_in_name(path)
    data = path.read_bytes()
    if want is not None and file_digest(data) != want:
        raise RecordError("its bytes do not match the sha256 in its name (corrupt or truncated)")
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        if "games" in arrays.files:  # one pack
            return unpack_records(arrays, only=game_index).get(game_index)
        for name in arrays.files:
            if name.startswith("g") and game_index in arrays[name]:
                with np.load(io.BytesIO(arrays["p" + name[1:]].tobytes()), allow_pickle=False) as pack:
                    return unpack_records(pack, only=game_index).get(game_index)
    return None


def _packs_holding(study_dir, game_index: int) -> list[Path]:
    """The record packs whose game range covers ``game_index``."""
    directory = Path(study_dir) / RECORDS_DIR
    if not directory.is_dir():
        return []
    out = []
    for path in directory.iterdir():
        found = _PACK_RE.match(path.name)
        if found and int(found.group(1)) <= game_index <= int(found.group(2)):
            out.append(path)
    return sorted(out)


def load_study_record(study_dir, game_index: int) -> GameRecord:
    """The record of game ``game_index`` of the study in ``study_dir``: its own file
    (:func:`record_path`, older studies) or its entry in a record pack."""
    game_index = int(game_index)
    path = record_path(study_dir, game_index)
    if path.is_file():
        return load_record(path)
    for pack in _packs_holding(study_dir, game_index):
        try:
            found = _find_in_pack_file(pack, game_index)
        except RecordError as exc:
            raise RecordError(f"{pack}: {exc}") from None
        except (OSError, ValueError, EOFError, KeyError, zlib.error, zipfile.BadZipFile) as exc:
            raise RecordError(f"{pack}: not a readable record pack ({type(exc).__name__}: {exc})") from None
        if found is not None:
            return found
    raise RecordError(f"{Path(study_dir)}: no record of game {game_index}")


def has_study_record(study_dir, game_index: int) -> bool:
    """Whether the study holds a record of game ``game_index`` (own file or pack)."""
    try:
        load_study_record(study_dir, game_index)
    except RecordError:
        return False
    return True


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
