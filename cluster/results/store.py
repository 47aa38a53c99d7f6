"""The results store of a study: the source of truth, on disk.

Layout of a study directory::

    <study_dir>/spec.json                       the spec (StudySpec.to_dict(); read back: read_spec)
    <study_dir>/config_hashes.json              each label's agent config hashes, as every run of the
                                                 study computed them (the rows' config_hash is checked
                                                 against it)
    <study_dir>/results/part-<time>-<uuid>.parquet   one file per append (a group commit)
                                                   (merged into one by compact())
    <study_dir>/learned/series-000003/000005--<label>.npz  learned state of a seat
                                                 after game 5 of series 3
    <study_dir>/records/packs-<first>-<last>-<id>.npz   the records of a group commit's
                                                 games (older studies: game-000012.npz;
                                                 cluster/replay/records.py:
                                                 actions, values, state fingerprints)
    <study_dir>/replays/<why>-game-000012.html   replay pages of a few games (the report)

Durability: every file is written to a hidden temporary name in its final
directory, flushed and fsynced, then ``os.replace``d into place (and the
directory fsynced), so a reader never sees a partial file and a crash leaves at
worst an ignored ``.tmp-*`` file.

Integrity: nothing read from the store is trusted unchecked.

* A part file written since checksums carries the SHA-256 of its bytes in its name
  (``part-<time>-<id>-sha256-<64 hex>.parquet``, :func:`file_digest`; ``sha256sum`` prints
  the same), fixed by the same rename that makes the part visible, so it survives crashes
  and compaction (the merged file gets its own); its Parquet pages also carry CRC-32 page
  checksums, verified on read. A part whose bytes do not match its name is refused.
* Every part's rows are checked on read, vectorized (:func:`check_rows`): the result
  vocabulary (:data:`RESULTS`), required columns present, seats in range of the game's
  players and one row per seat per game (from seat 0), game indices in range of the plan,
  the per-game columns (series, index in the series, board, study, condition) equal
  across a game's seats, no two games at one place of a series, labels among the lineup's,
  and each row's ``config_hash`` one its label's agent had in a run of the study
  (``config_hashes.json``, written with the spec and extended by a run whose release hashes
  an agent differently; a store without it, from before, is not checked for hashes)
  (the expectations come from ``spec.json``; a store without one is checked for shape
  only); copies of a game in two parts (a crash during compaction) must agree.
* Learned-state ``.npz`` files hold the SHA-256 of their arrays (``__sha256__``), records
  packs their file's in their name (:mod:`cluster.replay.records`).

A file that fails any check raises :class:`StoreError` naming the file and what is wrong
(``arena`` exits 2); it is never read as data. Parts written before checksums (no
digest in the name) and learned states without ``__sha256__`` still read: their values
are checked, their bytes cannot be. Checked files are remembered by (size, mtime, inode)
for the store object's life, so a driver reading its store twice checks it once.

Idempotence: ``append`` skips the rows of games already in the store (and
duplicate (game_index, seat) rows within a batch), so replaying results after a
resume never duplicates a game; ``read`` also deduplicates defensively.

One row per seat per game, with the columns of :data:`SCHEMA` (the one
declaration of the row; ``cluster.run.play.ROW_COLUMNS`` is its names). Extra
columns are kept, with inferred types: ``vary.<option>``, ``score``,
``score_margin``, ``metric.<name>`` (:data:`METRIC_PREFIX`, the figures an agent
reports about its play) and an agent's own (``Agent.row_fields()``, e.g.
Pommerman's ``profile``; stores written before it was an agent field have a
``profile`` column in every row, which still reads and resumes). Stores written before
``overruns`` and ``forfeit`` existed lack them in their older parts: :meth:`ResultStore.read`
gives null there (the analysis reads a missing count as 0), and they resume.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Mapping
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cluster.spec.stored import StoredSpec

__all__ = ["ResultStore", "GameSet", "SCHEMA", "RESULTS", "StoreError", "SpecMismatchError", "METRIC_PREFIX", "HASHES_FILE",
           "RESULT_RELEVANT_PREFIXES", "read_stored_spec", "Expected", "check_rows", "file_digest",
           "digest_in_name"]

#: Prefix of the extra columns that hold an agent's per-game figures (``Agent.game_metrics``).
METRIC_PREFIX = "metric."

#: The outcome labels a row may carry.
RESULTS = ("win", "tie", "loss", "error")

#: Columns of a result row (one row per seat per game).
SCHEMA = pa.schema([
    pa.field("study_id", pa.string()),
    pa.field("series_id", pa.int64()),
    pa.field("game_index", pa.int64()),
    pa.field("index_in_series", pa.int64()),
    pa.field("board_seed", pa.int64()),
    pa.field("seed_entropy", pa.string()),
    pa.field("seat", pa.int64()),
    pa.field("label", pa.string()),
    pa.field("agent", pa.string()),
    pa.field("config_hash", pa.string()),
    pa.field("team", pa.int64()),
    pa.field("result", pa.string()),
    pa.field("reward", pa.float64()),
    pa.field("length", pa.int64()),
    pa.field("died_at", pa.int64()),  # tick the seat died at; null if alive at the end
    pa.field("mean_iterations", pa.float64()),
    pa.field("mean_ms", pa.float64()),
    pa.field("invalid_actions", pa.int64()),  # actions the game refused and replaced (Game.step)
    pa.field("overruns", pa.int64()),  # decisions over the ms budget's tolerance (cluster.run.conduct)
    pa.field("forfeit", pa.string()),  # why this seat lost on time (overrun_policy = "forfeit"), else null
    pa.field("budget", pa.string()),
    pa.field("error", pa.string()),
    pa.field("finished_at", pa.timestamp("us", tz="UTC")),
    pa.field("worker", pa.string()),
    pa.field("condition", pa.string()),
])
_SCHEMA_NAMES = frozenset(SCHEMA.names)  # (``Schema.names`` builds a new list at every call)
#: Columns every row must have (the others may be missing or None).
REQUIRED = ("study_id", "series_id", "game_index", "index_in_series", "board_seed", "seat",
            "label", "agent", "result")

#: Flattened spec keys (StudySpec.flat_params) whose change changes results.
RESULT_RELEVANT_PREFIXES = ("study.seed", "game.", "budget.", "design.", "lineup.")

_PART_RE = re.compile(r"^part-.*\.parquet$")
#: The SHA-256 a file's name carries before its suffix (``...-sha256-<64 hex>.parquet``).
_DIGEST_RE = re.compile(r"-sha256-([0-9a-f]{64})\.[a-z]+$")
_LEARNED_RE = re.compile(r"^(\d+)--(.+)\.npz$")
_LABELS_KEY = "__labels__"
#: Member of a learned-state ``.npz`` holding the SHA-256 of its other members (:func:`_arrays_digest`).
_DIGEST_KEY = "__sha256__"
#: Columns :func:`check_rows` looks at (those a part has: old or hand-made parts may lack some).
_CHECKED = ("game_index", "seat", "result", "label", "series_id", "index_in_series", "board_seed",
            "study_id", "condition", "config_hash")
#: The file of a study directory with each label's agent config hashes (:meth:`ResultStore.write_spec`).
HASHES_FILE = "config_hashes.json"
#: Columns that hold one value for all the seats of a game.
_PER_GAME = ("series_id", "index_in_series", "board_seed", "study_id", "condition")
#: Columns that copies of a game in two parts must agree on.
_COPY_AGREES = ("result", "label", "series_id", "index_in_series", "board_seed")


class StoreError(ValueError):
    """A problem with the files of a study directory (named in the message)."""


class SpecMismatchError(StoreError):
    """The spec differs from the one the study was started with; names the field."""


# --- checksums and value checks -----------------------------------------------
def file_digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes, hex (what a checksummed file's name carries)."""
    return hashlib.sha256(data).hexdigest()


def digest_in_name(path) -> str | None:
    """The SHA-256 a file's name carries (``...-sha256-<64 hex>.<suffix>``), None if none."""
    found = _DIGEST_RE.search(Path(path).name)
    return found.group(1) if found else None


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, write_page_checksum=True)  # CRC-32 per page, verified on read
    return sink.getvalue()


@dataclass(frozen=True)
class Expected:
    """What a study's rows may hold, from its stored spec (None: not known, not checked)."""

    seats: int | None = None
    """Seats of the game: every game has rows for seats 0 .. seats - 1."""
    games: int | None = None
    """Games of the plan: game indices are 0 .. games - 1."""
    labels: frozenset | None = None
    """The lineup's labels (a tournament's entrants)."""
    hashes: Mapping[str, frozenset] | None = None
    """label -> the agent config hashes its rows may carry (``config_hashes.json``)."""

    def with_hashes(self, hashes: Mapping[str, frozenset] | None) -> "Expected":
        return Expected(self.seats, self.games, self.labels, hashes)

    @classmethod
    def of_spec(cls, stored) -> "Expected":
        """From a :class:`StoredSpec` (None: nothing expected). A spec without a design or a
        lineup (written by hand) bounds nothing; a tournament's seats and games come from its
        game, so from the spec built through the registries (a game that is not importable
        here bounds only the labels); an adaptive tournament's game indices are not bounded."""
        if stored is None or stored.design is None or not stored.lineup:
            return cls()
        labels = frozenset(seat.label for seat in stored.lineup)
        design = stored.design
        if not design.tournament:
            return cls(seats=len(stored.lineup), games=design.total_games, labels=labels)
        try:
            spec = stored.study_spec()
        except Exception:  # noqa: BLE001 - e.g. a plugin game that is not importable here
            return cls(labels=labels)
        games = None if design.stop is not None else spec.design.total_games
        return cls(seats=spec.num_players, games=games, labels=labels)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _as_ints(column: pa.ChunkedArray, name: str) -> np.ndarray:
    try:
        return pc.cast(column, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError) as exc:
        raise _Problem(f"{name}: not integers ({exc})") from None


def _text_codes(column: pa.ChunkedArray, name: str) -> tuple[np.ndarray, list]:
    """``(codes, values)`` of a text column: one int64 per row (-1: null), equal where the
    texts are equal, and the distinct texts they index. A column read as a dictionary (as
    :meth:`ResultStore._read_part` reads them: Parquet stores them so) costs no hashing."""
    if not pa.types.is_dictionary(column.type):
        try:
            column = pc.cast(column, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise _Problem(f"{name}: not text ({exc})") from None
        column = pc.dictionary_encode(column)
    column = column.unify_dictionaries()
    if not column.num_chunks:
        return np.zeros(0, dtype=np.int64), []
    codes = np.concatenate([pc.fill_null(chunk.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
                            for chunk in column.chunks])
    return codes, column.chunk(0).dictionary.to_pylist()


def _as_codes(column: pa.ChunkedArray, name: str = "column") -> np.ndarray:
    """One integer per row, equal where the values are equal (nulls a value of their own)."""
    if pa.types.is_integer(column.type):
        return pc.fill_null(pc.cast(column, pa.int64()), -(2 ** 62)).to_numpy()
    return _text_codes(column, name)[0]


class _Problem(Exception):
    """What is wrong with a part's rows (becomes the StoreError naming the file)."""


def check_rows(table: pa.Table, expected: Expected | None = None) -> str | None:
    """What is wrong with the rows of one part file, in a few words (None: nothing).

    Vectorized (a few passes over the columns, one sort, no Python per row); looks only at
    the columns the table has (:data:`_CHECKED`; :data:`_CORE` must be there), so extra
    columns are welcome and a part written by hand without, say, ``series_id`` is checked
    for the rest."""
    try:
        _check_rows(table, expected or Expected())
    except _Problem as exc:
        return str(exc)
    return None


#: Columns every part has (a part without one, e.g. a renamed column, is refused).
_CORE = ("game_index", "seat", "label", "result")


def _check_rows(table: pa.Table, expected: Expected) -> None:
    names = set(table.column_names)
    missing = [name for name in _CORE if name not in names]
    if missing:
        raise _Problem(f"no {', '.join(missing)} column")
    n = table.num_rows
    if not n:
        return
    for name in REQUIRED:
        if name in names and table.column(name).null_count:
            row = _first(pc.is_null(table.column(name)).to_numpy(zero_copy_only=False))
            raise _Problem(f"row {row}: {name} is missing")
    for name, allowed in (("result", RESULTS), ("label", expected.labels)):
        if allowed is None:
            continue
        codes, values = _text_codes(table.column(name), name)
        unknown = np.asarray([value not in allowed for value in values] + [False])  # [-1]: null, checked above
        bad = unknown[codes]
        if bad.any():
            row = _first(bad)
            what = "one of" if name == "result" else "among the lineup's labels"
            raise _Problem(f"row {row}: {name} {values[codes[row]]!r} is not {what} {sorted(allowed)}")
    if expected.hashes is not None and "config_hash" in names:
        _check_hashes(table, expected.hashes)
    games = _as_ints(table.column("game_index"), "game_index")
    seats = _as_ints(table.column("seat"), "seat")
    for name, values, top, what in (("game_index", games, expected.games, "the plan's games"),
                                    ("seat", seats, expected.seats, "the game's seats")):
        bad = values < 0 if top is None else (values < 0) | (values >= top)
        if bad.any():
            row = _first(bad)
            span = "must be >= 0" if top is None else f"is outside {what} (0 .. {top - 1})"
            raise _Problem(f"row {row}: {name} {int(values[row])} {span}")
    if "index_in_series" in names:
        position = _as_ints(table.column("index_in_series"), "index_in_series")
        if (position < 0).any():
            row = _first(position < 0)
            raise _Problem(f"row {row}: index_in_series {int(position[row])} must be >= 0")
    # One row per seat per game, seats 0 .. k - 1: sorted by (game, seat), each game starts
    # at seat 0 and its seats count up by one. Parts are mostly in game order already: one
    # key, and no sort (nor gather) at all when it is increasing.
    key = games * (int(seats.max()) + 1) + seats
    order = None if bool((key[1:] > key[:-1]).all()) else np.argsort(key, kind="stable")
    game_sorted, seat_sorted = (games, seats) if order is None else (games[order], seats[order])
    inner = game_sorted[1:] == game_sorted[:-1]  # row i + 1 is of the same game as row i
    starts = np.flatnonzero(np.r_[True, ~inner])
    bad = np.r_[seat_sorted[0] != 0, np.where(inner, seat_sorted[1:] != seat_sorted[:-1] + 1, seat_sorted[1:] != 0)]
    if bad.any():
        i = _first(bad)
        game = int(game_sorted[i])
        held = seat_sorted[game_sorted == game].tolist()
        if len(set(held)) < len(held):
            raise _Problem(f"game {game}: two rows for one seat (seats {held})")
        raise _Problem(f"game {game}: rows for seats {held}; a game has one row per seat from seat 0")
    counts = np.diff(np.r_[starts, n])
    rows_per_game = expected.seats if expected.seats is not None else int(counts[0])
    bad = counts != rows_per_game
    if bad.any():
        j = _first(bad)
        whose = "the game has" if expected.seats is not None else "the file's first game has"
        raise _Problem(f"game {int(game_sorted[starts[j]])}: {int(counts[j])} rows (seats), {whose} {rows_per_game}")
    for name in _PER_GAME:
        if name not in names:
            continue
        codes = _as_codes(table.column(name), name)
        if order is not None:
            codes = codes[order]
        differs = inner & (codes[1:] != codes[:-1])
        if differs.any():
            raise _Problem(f"game {int(game_sorted[_first(differs) + 1])}: {name} differs between its seats")
    if "series_id" in names and "index_in_series" in names:
        heads = starts if order is None else order[starts]  # one row per game
        series = _as_ints(table.column("series_id"), "series_id")[heads]
        position = _as_ints(table.column("index_in_series"), "index_in_series")[heads]
        place = series * (int(position.max()) + 1) + position
        increasing = bool((place[1:] > place[:-1]).all())
        by_place = np.arange(len(place)) if increasing else np.argsort(place, kind="stable")
        same = place[by_place][1:] == place[by_place][:-1]
        if same.any():
            k = _first(same)
            a, b = sorted(int(game_sorted[starts[by_place[k + m]]]) for m in (0, 1))
            raise _Problem(f"games {a} and {b} are both game {int(position[by_place[k]])} of series "
                           f"{int(series[by_place[k]])}")


def _check_hashes(table: pa.Table, hashes: Mapping[str, frozenset]) -> None:
    """Every row's ``config_hash`` is one its label's agent had in a run of the study."""
    label_codes, labels = _text_codes(table.column("label"), "label")
    hash_codes, values = _text_codes(table.column("config_hash"), "config_hash")
    if not len(labels) or not len(values):
        return
    pair = label_codes * (len(values) + 1) + hash_codes  # null hashes: code -1, each its own pair
    unique, first = np.unique(pair, return_index=True)
    for code, row in zip(unique.tolist(), first.tolist()):
        label, value = labels[int(label_codes[row])], (values[int(hash_codes[row])] if hash_codes[row] >= 0 else None)
        allowed = hashes.get(label)
        if allowed is not None and value not in allowed:
            raise _Problem(f"row {row}: config_hash {value!r} of {label!r} is not its agent's in this study "
                           f"{sorted(allowed)} ({HASHES_FILE})")


def _arrays_digest(arrays: dict) -> str:
    """SHA-256 over the members of an ``.npz`` (names, dtypes, shapes and bytes, by name)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        if name == _DIGEST_KEY:
            continue
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


# --- durable file writing ---------------------------------------------------
def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    tmp = path.parent / f".tmp-{uuid.uuid4().hex}-{path.name}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


def _to_utc(value):
    if value is None:
        return datetime.now(timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, timezone.utc)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    if isinstance(value, str):
        return _to_utc(datetime.fromisoformat(value))
    raise TypeError(f"cannot read a time from {value!r}")


def _table_from_rows(rows: list[dict]) -> pa.Table:
    """Rows as an Arrow table with :data:`SCHEMA` (plus inferred extra columns)."""
    for i, row in enumerate(rows):
        for name in REQUIRED:
            if row.get(name) is None:
                raise StoreError(f"rows[{i}].{name}: required column missing")
        if row["result"] not in RESULTS:
            raise StoreError(f"rows[{i}].result: must be one of {list(RESULTS)}, got {row['result']!r}")
    arrays, names = [], []
    for fld in SCHEMA:
        values = [row.get(fld.name) for row in rows]
        if fld.name == "finished_at":
            values = [_to_utc(v) for v in values]
        try:
            arrays.append(pa.array(values, type=fld.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise StoreError(f"rows.{fld.name}: cannot store as {fld.type}: {exc}") from None
        names.append(fld.name)
    extras = []
    for row in rows:
        for key in row:
            if key not in _SCHEMA_NAMES and key not in extras:
                extras.append(key)
    for key in extras:
        try:
            arrays.append(pa.array([row.get(key) for row in rows]))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise StoreError(f"rows.{key}: cannot store this extra column: {exc}") from None
        names.append(key)
    return pa.Table.from_arrays(arrays, names=names)


class GameSet:
    """A set of game indices as a bitmap, one byte per game up to the largest index: a
    million finished games take 1 MB (a Python set of them ~60 MB) and a part file's
    ``game_index`` column is added without a Python int per row."""

    def __init__(self, indices=()):
        self._mask = np.zeros(0, dtype=bool)
        self._count = 0
        self.update(indices)

    def _grow(self, top: int) -> None:
        if top >= len(self._mask):
            mask = np.zeros(max(top + 1, 2 * len(self._mask), 1024), dtype=bool)
            mask[:len(self._mask)] = self._mask
            self._mask = mask

    def add(self, game_index: int) -> None:
        g = int(game_index)
        if g < 0:
            raise ValueError(f"game_index: must be >= 0, got {g}")
        self._grow(g)
        if not self._mask[g]:
            self._mask[g] = True
            self._count += 1

    def update(self, indices) -> None:
        array = np.asarray(indices if isinstance(indices, np.ndarray) else list(indices), dtype=np.int64)
        if not array.size:
            return
        if array.min() < 0:
            raise ValueError(f"game_index: must be >= 0, got {int(array.min())}")
        self._grow(int(array.max()))
        self._mask[array] = True
        self._count = int(np.count_nonzero(self._mask))

    def __contains__(self, game_index) -> bool:
        g = int(game_index)
        return 0 <= g < len(self._mask) and bool(self._mask[g])

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return iter(np.flatnonzero(self._mask).tolist())

    def __eq__(self, other) -> bool:
        if isinstance(other, GameSet):
            return set(self) == set(other)
        if isinstance(other, (set, frozenset)):
            return set(self) == other
        return NotImplemented

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"GameSet({self._count} games)"


def _game_seat_keys(tables: list[pa.Table]) -> np.ndarray:
    """``game_index * (max seat + 1) + seat`` of every row of ``tables`` in order."""
    games = np.concatenate([t.column("game_index").to_numpy() for t in tables]).astype(np.int64)
    seats = np.concatenate([t.column("seat").to_numpy() for t in tables]).astype(np.int64)
    return games * (int(seats.max(initial=0)) + 1) + seats


def _check_copies(tables: list[pa.Table], parts: list[Path]) -> None:
    """Rows of one (game, seat) in two parts (a crash between a compaction's write and its
    removals, or a copied file) must be the same row; raises StoreError naming both files.
    Costs one sort of the keys; compares values only where there are copies."""
    if len(tables) < 2 or not all({"game_index", "seat"} <= set(t.column_names) for t in tables):
        return
    keys = _game_seat_keys(tables)
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if not repeated.size:
        return
    source = np.repeat(np.arange(len(tables)), [t.num_rows for t in tables])
    offsets = np.r_[0, np.cumsum([t.num_rows for t in tables])]
    copy, original = order[repeated + 1], order[repeated]
    for name in _COPY_AGREES:
        if not all(name in t.column_names for t in tables):
            continue
        target = pa.int64() if pa.types.is_integer(tables[0].column(name).type) else pa.string()
        try:
            codes = _as_codes(pa.chunked_array([c for t in tables for c in pc.cast(t.column(name), target).chunks],
                                               type=target))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            continue  # columns of another type in an older part: not comparable as one
        differs = codes[copy] != codes[original]
        if differs.any():
            k = _first(differs)
            a, b = int(source[original[k]]), int(source[copy[k]])
            row = tables[a].slice(int(original[k] - offsets[a]), 1)
            raise StoreError(f"{parts[b]}: corrupt results file (game {row.column('game_index')[0].as_py()} "
                             f"seat {row.column('seat')[0].as_py()}: its {name} differs from the copy in "
                             f"{parts[a].name}; one of the two is corrupt); move the bad one away to continue")


def _to_frame(table: pa.Table, path: Path) -> pd.DataFrame:
    """A part's rows as a DataFrame; a part whose schema pandas cannot take (e.g. a flipped
    time zone name in a part without a digest) raises StoreError naming it."""
    try:
        return table.to_pandas()
    except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
        raise StoreError(f"{path}: unreadable results file ({type(exc).__name__}: {exc}); "
                         f"move it away to continue") from None


def _first_copies(table: pa.Table) -> pa.Table:
    """``table`` without repeated (game_index, seat) rows (the first copy kept, in order)."""
    if not {"game_index", "seat"} <= set(table.column_names) or not table.num_rows:
        return table
    _, first = np.unique(_game_seat_keys([table]), return_index=True)
    return table if len(first) == table.num_rows else table.take(np.sort(first))


class ResultStore:
    """Parquet rows, learned states and the spec of one study directory."""

    def __init__(self, study_dir):
        self.study_dir = Path(study_dir)
        self.results_dir = self.study_dir / "results"
        self.learned_dir = self.study_dir / "learned"
        self.spec_path = self.study_dir / "spec.json"
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._finished: GameSet | None = None
        self._expected: Expected | None = None  # from spec.json, when first needed
        self._checked: dict[str, tuple] = {}  # part name -> (size, mtime, inode) once checked

    # --- result rows --------------------------------------------------------
    def _parts(self) -> list[Path]:
        return sorted(p for p in self.results_dir.iterdir() if _PART_RE.match(p.name))

    def expected(self) -> Expected:
        """What the rows may hold, from the stored spec (:meth:`Expected.of_spec`)."""
        if self._expected is None:
            self._expected = Expected.of_spec(self.read_spec()).with_hashes(self.read_hashes())
        return self._expected

    @property
    def hashes_path(self) -> Path:
        return self.study_dir / HASHES_FILE

    def read_hashes(self) -> dict[str, frozenset] | None:
        """label -> the config hashes of its agent in the study's runs (None: no file, a study
        from before it was written). Raises StoreError naming the file when it is unreadable."""
        if not self.hashes_path.is_file():
            return None
        try:
            data = json.loads(self.hashes_path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, list)
                                                     and all(isinstance(h, str) for h in v) for k, v in data.items()):
                raise ValueError("not an object of label -> list of hashes")
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.hashes_path}: unreadable ({type(exc).__name__}: {exc}); "
                             f"move it away to continue (the rows' hashes are then not checked)") from None
        return {label: frozenset(hashes) for label, hashes in data.items()}

    def _write_hashes(self, spec) -> None:
        """Add the hashes ``spec``'s lineup has under this release to :data:`HASHES_FILE`."""
        from agents.registry import config_hash

        known = {label: set(h) for label, h in (self.read_hashes() or {}).items()}
        added = False
        for i, seat in enumerate(spec.lineup):
            value = config_hash(seat.agent, seat.config, spec.budget_for(i))
            if value not in known.setdefault(seat.label, set()):
                known[seat.label].add(value)
                added = True
        if added or not self.hashes_path.is_file():
            atomic_write(self.hashes_path, json.dumps({k: sorted(v) for k, v in sorted(known.items())},
                                                      indent=2).encode("utf-8"))
        self._expected = None

    def _remember_checked(self, path: Path) -> None:
        """A part this store just wrote from checked rows: its next read skips the checks."""
        stat = path.stat()
        self._checked[path.name] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)

    def _read_part(self, path: Path, columns=None) -> pa.Table:
        """A part's rows (``columns``: just those), its digest and values checked once
        (:func:`check_rows`); raises StoreError naming the file."""
        try:
            data = path.read_bytes()
            stat = path.stat()
        except OSError as exc:
            raise StoreError(f"{path}: unreadable results file ({type(exc).__name__}: {exc})") from None
        key = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        checked = self._checked.get(path.name) == key
        want = None if checked else digest_in_name(path)
        if want is not None and file_digest(data) != want:
            raise StoreError(f"{path}: unreadable results file (its bytes do not match the sha256 in its "
                             f"name: corrupt or truncated); move it away or restore it to continue")
        try:
            schema = pq.read_schema(pa.BufferReader(data))
            # the checked text columns as dictionaries (as Parquet stores them): the checks
            # compare codes, and columns not asked for are never materialized as strings
            text = [] if checked else [c for c in _CHECKED if c in schema.names and schema.field(c).type == pa.string()]
            parquet = pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=True, read_dictionary=text)
            wanted = None if columns is None else list(columns)
            if not checked and wanted is not None:
                wanted += [c for c in _CHECKED if c in schema.names and c not in wanted]
            table = parquet.read(columns=wanted)
            if not checked and want is None:
                # without a digest the bytes may be anything Parquet decodes: out-of-range
                # dictionary indices, offsets or invalid UTF-8 are caught here, not later
                table.validate(full=True)
            problem = None if checked else check_rows(table, self.expected())
            if columns is not None:
                table = table.select(list(columns))
            for name in text:  # back to plain strings, as the file declares them
                if name in table.column_names:
                    table = table.set_column(table.column_names.index(name), name,
                                             pc.cast(table.column(name), pa.string()))
        except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
            raise StoreError(f"{path}: unreadable results file ({type(exc).__name__}: {exc}); "
                             f"move it away to continue") from None
        if problem is not None:
            raise StoreError(f"{path}: corrupt results file ({problem}); it is not read as data: "
                             f"move it away or restore it to continue")
        if not checked:
            self._checked[path.name] = key
        return table

    def finished_games(self) -> set[int]:
        """``game_index`` of every game with rows in the store (errored games included)."""
        with self._lock:
            return set(self._finished_games())

    def finished_set(self) -> GameSet:
        """:meth:`finished_games` as a :class:`GameSet` (a copy; what a resume of a
        million-game study reads: one column per part, no Python int per row)."""
        with self._lock:
            out = GameSet()
            out.update(np.flatnonzero(self._finished_games()._mask))
            return out

    def _finished_games(self) -> GameSet:
        if self._finished is None:
            finished = GameSet()
            for part in self._parts():
                column = self._read_part(part, columns=["game_index"]).column("game_index")
                finished.update(column.to_numpy())
            self._finished = finished
        return self._finished

    def append(self, rows: list[dict]) -> int:
        """Store the rows of one or more finished games; rows of games already in the
        store are skipped. Returns the number of games written."""
        rows = list(rows)
        if not rows:
            return 0
        with self._lock:
            finished = self._finished_games()
            fresh, seen = [], set()
            for i, row in enumerate(rows):
                if row.get("game_index") is None or row.get("seat") is None:
                    raise StoreError(f"rows[{i}]: game_index and seat are required")
                key = (int(row["game_index"]), int(row["seat"]))
                if key[0] in finished or key in seen:
                    continue
                seen.add(key)
                fresh.append(row)
            if not fresh:
                return 0
            table = _table_from_rows(fresh)
            problem = check_rows(table, self.expected())  # never write what a read would refuse
            if problem is not None:
                raise StoreError(f"{self.results_dir}: refusing to append rows it could not read back ({problem})")
            data = _parquet_bytes(table)
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            path = self.results_dir / f"part-{stamp}-{uuid.uuid4().hex[:12]}-sha256-{file_digest(data)}.parquet"
            atomic_write(path, data)
            self._remember_checked(path)
            games = {key[0] for key in seen}
            finished.update(sorted(games))
            return len(games)

    def compact(self) -> int:
        """Merge the part files (one per group commit) into one, then remove the merged ones.

        Crash-safe: the merged file is written durably before any part is
        removed, and :meth:`read` drops duplicate (game_index, seat) rows, so a
        crash in between loses and duplicates nothing (the next compaction keeps one
        copy of each row). Every part is checked first, as by :meth:`read`. Returns the number of
        part files merged (0 when there is nothing to do)."""
        with self._lock:
            parts = self._parts()
            if len(parts) < 2:
                return 0
            tables = [self._read_part(p) for p in parts]
            _check_copies(tables, parts)
            merged = _first_copies(pa.concat_tables(tables, promote_options="default"))
            problem = check_rows(merged, self.expected())  # across the parts: e.g. two games at one place
            if problem is not None:
                raise StoreError(f"{self.results_dir}: the parts do not merge into a readable part ({problem}); "
                                 f"nothing was compacted")
            data = _parquet_bytes(merged)
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            path = self.results_dir / f"part-{stamp}-merged-{uuid.uuid4().hex[:12]}-sha256-{file_digest(data)}.parquet"
            atomic_write(path, data)
            self._remember_checked(path)  # its rows are those checked above, one copy of each
            for part in parts:
                part.unlink()
            _fsync_dir(self.results_dir)
            return len(parts)

    def read(self) -> pd.DataFrame:
        """All rows (deduplicated by (game_index, seat)), sorted by game and seat.
        Works while a study runs or after it was interrupted."""
        with self._lock:
            parts = self._parts()
        tables = [self._read_part(p) for p in parts]
        if not tables:
            return SCHEMA.empty_table().to_pandas()
        _check_copies(tables, parts)
        frames = [_to_frame(table, part) for table, part in zip(tables, parts)]
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        df = df.drop_duplicates(subset=["game_index", "seat"], keep="first")
        return df.sort_values(["game_index", "seat"], kind="stable").reset_index(drop=True)

    # --- learned state ----------------------------------------------------------
    def _series_dir(self, series_id: int) -> Path:
        return self.learned_dir / f"series-{int(series_id):06d}"

    def save_learned_state(self, series_id: int, index_in_series: int, seat_label: str,
                           arrays: dict) -> Path:
        """Save what the agent ``seat_label`` learned up to game ``index_in_series`` of a series."""
        directory = self._series_dir(series_id)
        directory.mkdir(parents=True, exist_ok=True)
        payload = {}
        for name, value in (arrays or {}).items():
            array = np.asarray(value)
            if array.dtype == object:
                raise StoreError(f"learned state {seat_label!r}.{name}: object arrays cannot be "
                                 f"stored (allow_pickle=False)")
            payload[f"a.{name}"] = array
        payload[_LABELS_KEY] = np.asarray([seat_label])
        payload[_DIGEST_KEY] = np.asarray(_arrays_digest(payload))
        sink = io.BytesIO()
        # compressed: learned tables are mostly zeros (an MCTS-TD table of 4^8
        # float64 entries is 512 KB raw, ~30 KB compressed, saved after every game)
        np.savez_compressed(sink, **payload)
        path = directory / f"{int(index_in_series):06d}--{quote(seat_label, safe='')}.npz"
        atomic_write(path, sink.getvalue())
        return path

    def latest_learned_state(self, series_id: int):
        """``(index_in_series, {seat_label: {name: array}})`` of the last saved game of
        the series, or None. A file that does not load raises :class:`StoreError`."""
        directory = self._series_dir(series_id)
        if not directory.is_dir():
            return None
        by_index: dict[int, list[tuple[str, Path]]] = {}
        for path in directory.iterdir():
            match = _LEARNED_RE.match(path.name)
            if match:
                by_index.setdefault(int(match.group(1)), []).append((unquote(match.group(2)), path))
        if not by_index:
            return None
        index = max(by_index)
        states = {}
        for label, path in sorted(by_index[index]):
            states[label] = self._load_npz(path)
        return index, states

    def learned_series(self) -> list[int]:
        """Series ids that have saved learned state."""
        if not self.learned_dir.is_dir():
            return []
        return sorted(int(p.name.split("-")[1]) for p in self.learned_dir.iterdir()
                      if p.is_dir() and p.name.startswith("series-"))

    def learned_state_at(self, series_id: int, index_in_series: int) -> dict | None:
        """``{seat_label: {name: array}}`` saved after game ``index_in_series`` of a series."""
        directory = self._series_dir(series_id)
        if not directory.is_dir():
            return None
        states = {}
        for path in sorted(directory.iterdir()):
            match = _LEARNED_RE.match(path.name)
            if match and int(match.group(1)) == int(index_in_series):
                states[unquote(match.group(2))] = self._load_npz(path)
        return states or None

    @staticmethod
    def _load_npz(path: Path) -> dict[str, np.ndarray]:
        """A learned-state file's arrays; its ``__sha256__`` checked when it has one (files
        written before it have not: the zip's CRC-32 per member is then all that is checked)."""
        try:
            with np.load(path, allow_pickle=False) as npz:
                members = {key: npz[key] for key in npz.files}
        except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
            raise StoreError(f"{path}: corrupt learned-state file ({type(exc).__name__}: {exc}); "
                             f"delete it to restart the series from the previous game") from None
        if _DIGEST_KEY in members and str(members[_DIGEST_KEY]) != _arrays_digest(members):
            raise StoreError(f"{path}: corrupt learned-state file (its arrays do not match the sha256 it "
                             f"holds); delete it to restart the series from the previous game")
        return {key[2:]: value for key, value in members.items() if key.startswith("a.")}

    # --- the spec ---------------------------------------------------------------
    def write_spec(self, spec) -> None:
        """Write ``spec.json``; if the study already has one (a resume), refuse a
        spec that differs in anything that changes results, naming the field. The
        stored spec is read back with this release's defaults (:meth:`read_spec`), so
        a study begun before an upgrade that only added options resumes."""
        if self.spec_path.exists():
            stored = self.read_spec()
            try:
                stored_flat = stored.study_spec().flat_params()
            except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
                raise StoreError(f"{self.spec_path}: cannot read the stored spec "
                                 f"({type(exc).__name__}: {exc})") from None
            current = spec.flat_params()
            relevant = sorted(k for k in set(stored_flat) | set(current)
                              if k.startswith(RESULT_RELEVANT_PREFIXES))
            changed = [k for k in relevant if stored_flat.get(k) != current.get(k)]
            if changed and self._extends_tournament(stored.study_spec(), spec, changed):
                atomic_write(self.spec_path,
                              json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode("utf-8"))
                self._write_hashes(spec)
                self._expected = None  # more entrants, more games: read the new spec
                return
            for key in changed:
                raise SpecMismatchError(
                    f"{key}: differs from the study in {self.study_dir} (stored "
                    f"{stored_flat.get(key, '<absent>')!r}, now {current.get(key, '<absent>')!r}); "
                    f"resume with the same spec or use a new study name / study.id")
            if self.hashes_path.is_file():  # (a study from before the file: its older rows carry
                self._write_hashes(spec)    # hashes nobody recorded, so it stays unchecked)
            return
        self.study_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.spec_path,
                      json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode("utf-8"))
        self._write_hashes(spec)
        self._expected = None

    @staticmethod
    def _extends_tournament(stored, spec, changed: list[str]) -> bool:
        """Whether ``spec`` is a tournament that only adds entrants to the stored one (then its
        ``spec.json`` is rewritten and the new games are played); raises one line naming what
        is not a pure extension (a removed entrant, a changed game); False when the change is
        not about entrants at all (the field-by-field refusal follows)."""
        if not (stored.design.tournament and spec.design.tournament):
            return False
        from cluster.spec.tournament import ExtensionError, check_extension

        entrants = len(stored.lineup)
        def about_entrants(key: str) -> bool:
            parts = key.split(".")
            return (key in ("design.candidates", "design.total_games")
                    or (parts[0] == "lineup" and parts[1].isdigit() and int(parts[1]) >= entrants))
        if not all(about_entrants(k) for k in changed):
            if len(spec.lineup) >= entrants:
                return False  # e.g. a changed budget: refused field by field
        try:
            check_extension(stored, spec)
        except ExtensionError as exc:
            raise SpecMismatchError(f"{exc} ({_entrants_hint(stored, spec)})") from None
        return True

    def read_spec(self) -> StoredSpec | None:
        """The stored ``spec.json``, typed (None if absent); see :func:`read_stored_spec`."""
        return read_stored_spec(self.study_dir)


def _entrants_hint(stored, spec) -> str:
    """``stored: N entrants, now M`` for a tournament's refusal."""
    return f"stored: {len(stored.lineup)} entrants, now {len(spec.lineup)}"


def read_stored_spec(study_dir) -> StoredSpec | None:
    """The ``spec.json`` of the study in ``study_dir`` as a :class:`StoredSpec` (None when
    there is none; creates nothing). Raises StoreError naming the file when it cannot be
    read or does not hold a spec."""
    path = Path(study_dir) / "spec.json"
    if not path.is_file():
        return None
    try:
        return StoredSpec.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # SpecError and JSONDecodeError are ValueErrors
        raise StoreError(f"{path}: cannot read the stored spec ({type(exc).__name__}: {exc})") from None
