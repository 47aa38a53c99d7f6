"""The results store of a study: the source of truth, on disk.

Layout of a study directory::

    <study_dir>/spec.json                       the spec (StudySpec.to_dict(); read back: read_spec)
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

import io
import json
import os
import re
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from cluster.spec.stored import StoredSpec

__all__ = ["ResultStore", "GameSet", "SCHEMA", "RESULTS", "StoreError", "SpecMismatchError", "METRIC_PREFIX",
           "RESULT_RELEVANT_PREFIXES", "read_stored_spec"]

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
_LEARNED_RE = re.compile(r"^(\d+)--(.+)\.npz$")
_LABELS_KEY = "__labels__"


class StoreError(ValueError):
    """A problem with the files of a study directory (named in the message)."""


class SpecMismatchError(StoreError):
    """The spec differs from the one the study was started with; names the field."""


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

    # --- result rows --------------------------------------------------------
    def _parts(self) -> list[Path]:
        return sorted(p for p in self.results_dir.iterdir() if _PART_RE.match(p.name))

    def _read_part(self, path: Path, columns=None) -> pa.Table:
        try:
            return pq.read_table(path, columns=columns)
        except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
            raise StoreError(f"{path}: unreadable results file ({type(exc).__name__}: {exc}); "
                             f"move it away to continue") from None

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
            sink = io.BytesIO()
            pq.write_table(table, sink)
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            atomic_write(self.results_dir / f"part-{stamp}-{uuid.uuid4().hex[:12]}.parquet",
                          sink.getvalue())
            games = {key[0] for key in seen}
            finished.update(sorted(games))
            return len(games)

    def compact(self) -> int:
        """Merge the part files (one per game) into one, then remove the merged ones.

        Crash-safe: the merged file is written durably before any part is
        removed, and :meth:`read` drops duplicate (game_index, seat) rows, so a
        crash in between loses and duplicates nothing. Returns the number of
        part files merged (0 when there is nothing to do)."""
        with self._lock:
            parts = self._parts()
            if len(parts) < 2:
                return 0
            tables = [self._read_part(p) for p in parts]
            merged = pa.concat_tables(tables, promote_options="default")
            sink = io.BytesIO()
            pq.write_table(merged, sink)
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            atomic_write(self.results_dir / f"part-{stamp}-merged-{uuid.uuid4().hex[:12]}.parquet",
                          sink.getvalue())
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
        frames = [t.to_pandas() for t in tables]
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
        try:
            with np.load(path, allow_pickle=False) as npz:
                return {key[2:]: npz[key] for key in npz.files if key.startswith("a.")}
        except Exception as exc:  # noqa: BLE001 - name the file, whatever went wrong
            raise StoreError(f"{path}: corrupt learned-state file ({type(exc).__name__}: {exc}); "
                             f"delete it to restart the series from the previous game") from None

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
                return
            for key in changed:
                raise SpecMismatchError(
                    f"{key}: differs from the study in {self.study_dir} (stored "
                    f"{stored_flat.get(key, '<absent>')!r}, now {current.get(key, '<absent>')!r}); "
                    f"resume with the same spec or use a new study name / study.id")
            return
        self.study_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.spec_path,
                      json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode("utf-8"))

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
