"""Loading and validating a Scotland Yard board (private to ``games.scotland_yard``).

A board file is a CSV with the header ``station_a,station_b,transport`` and one
row per undirected connection; stations are numbered ``1..S``; transports are
``taxi``, ``bus``, ``underground`` and ``ferry``. The setup file (JSON, by
default ``scotland_yard_setup.json`` beside the board) gives the start cards.
Every problem is reported as one ``ValueError`` naming the file, line and
problem, before any game starts.

The loaded :class:`Board` is a NamedTuple of flat arrays that the kernels take
as part of every state (shared, never copied)::

    neighbours     int32[S + 1, MAX_DEGREE]  station at the other end of slot k
                                             (row 0 unused; -1 past the degree)
    transport      int32[S + 1, MAX_DEGREE]  TAXI, BUS, UNDERGROUND or FERRY
    degree         int32[S + 1]              slots in use per station
    black_ok       bool[S + 1, MAX_DEGREE]   a black ticket may use slot k (the
                                             first slot to its station: black
                                             moves to one station are one move)
    dist_detective int32[S + 1, S + 1]       shortest paths by taxi, bus and
                                             underground (the detectives' set)
    dist_any       int32[S + 1, S + 1]       shortest paths by any connection,
                                             ferry included (Mr X with black tickets)
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import NamedTuple

import numba as nb
import numpy as np

MAX_DEGREE = 16
MAX_STATIONS = 1000
TAXI, BUS, UNDERGROUND, FERRY = 0, 1, 2, 3
TRANSPORTS = {"taxi": TAXI, "bus": BUS, "underground": UNDERGROUND, "ferry": FERRY}
UNREACHABLE = 1 << 20


class Board(NamedTuple):
    """The board graph and its distance tables (see the module docstring)."""

    neighbours: np.ndarray      # int32[S + 1, MAX_DEGREE]
    transport: np.ndarray       # int32[S + 1, MAX_DEGREE]
    degree: np.ndarray          # int32[S + 1]
    black_ok: np.ndarray        # bool[S + 1, MAX_DEGREE]
    dist_detective: np.ndarray  # int32[S + 1, S + 1]
    dist_any: np.ndarray        # int32[S + 1, S + 1]


@nb.njit(cache=True)
def all_pairs_distances(neighbours, transport, degree, allow_ferry):
    """Breadth-first shortest path lengths between all stations.

    Args: neighbours, transport (int32[S + 1, MAX_DEGREE]), degree (int32[S + 1]);
        allow_ferry (bool): whether ferry connections count.
    Returns: int32[S + 1, S + 1], UNREACHABLE where no path exists (row and
        column 0 unused).
    """
    n = degree.shape[0]
    dist = np.full((n, n), UNREACHABLE, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    for source in range(1, n):
        dist[source, source] = 0
        head = 0
        tail = 0
        queue[tail] = source
        tail += 1
        while head < tail:
            u = queue[head]
            head += 1
            for k in range(degree[u]):
                if not allow_ferry and transport[u, k] == FERRY:
                    continue
                v = neighbours[u, k]
                if dist[source, v] == UNREACHABLE:
                    dist[source, v] = dist[source, u] + 1
                    queue[tail] = v
                    tail += 1
    return dist


def _fail(path: Path, message: str) -> None:
    raise ValueError(f"{path}: {message}")


def read_edges(path) -> tuple[int, list[tuple[int, int, int]]]:
    """(number of stations, [(a, b, transport)]) from a board CSV, validated."""
    path = Path(path)
    if not path.is_file():
        _fail(path, "board file not found")
    edges: list[tuple[int, int, int]] = []
    seen: dict[tuple[int, int, int], int] = {}
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or [h.strip() for h in header] != ["station_a", "station_b", "transport"]:
            _fail(path, f"line 1: expected the header station_a,station_b,transport, got {header!r}")
        for line, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != 3:
                _fail(path, f"line {line}: expected 3 columns, got {len(row)}")
            try:
                a, b = int(row[0]), int(row[1])
            except ValueError:
                _fail(path, f"line {line}: station numbers must be integers, got {row[0]!r}, {row[1]!r}")
            name = row[2].strip().lower()
            if name not in TRANSPORTS:
                _fail(path, f"line {line}: unknown transport {row[2]!r}; known: {sorted(TRANSPORTS)}")
            for s in (a, b):
                if not 1 <= s <= MAX_STATIONS:
                    _fail(path, f"line {line}: station {s} out of range 1..{MAX_STATIONS}")
            if a == b:
                _fail(path, f"line {line}: station {a} connected to itself")
            key = (min(a, b), max(a, b), TRANSPORTS[name])
            if key in seen:
                _fail(path, f"line {line}: duplicate connection {key[0]}-{key[1]} ({name}), "
                            f"first on line {seen[key]}")
            seen[key] = line
            edges.append(key)
    if not edges:
        _fail(path, "no connections")
    stations = max(max(a, b) for a, b, _ in edges)
    present = {a for a, _, _ in edges} | {b for _, b, _ in edges}
    missing = sorted(set(range(1, stations + 1)) - present)
    if missing:
        _fail(path, f"station {missing[0]} out of range: stations must be numbered 1..{stations} "
                    f"without gaps ({len(missing)} missing)")
    return stations, edges


def build_board(stations: int, edges: list[tuple[int, int, int]], path="board") -> Board:
    """The :class:`Board` arrays of a validated edge list (checks degree and connectivity)."""
    path = Path(path)
    neighbours = np.full((stations + 1, MAX_DEGREE), -1, dtype=np.int32)
    transport = np.full((stations + 1, MAX_DEGREE), -1, dtype=np.int32)
    degree = np.zeros(stations + 1, dtype=np.int32)
    for a, b, t in sorted(edges):
        for u, v in ((a, b), (b, a)):
            if degree[u] >= MAX_DEGREE:
                _fail(path, f"station {u} has more than {MAX_DEGREE} connections")
            neighbours[u, degree[u]] = v
            transport[u, degree[u]] = t
            degree[u] += 1
    black_ok = np.zeros((stations + 1, MAX_DEGREE), dtype=np.bool_)
    for u in range(1, stations + 1):
        first = set()
        for k in range(degree[u]):
            if neighbours[u, k] not in first:
                black_ok[u, k] = True
                first.add(neighbours[u, k])
    dist_any = all_pairs_distances(neighbours, transport, degree, True)
    if (dist_any[1:, 1:] >= UNREACHABLE).any():
        far = int(np.argwhere(dist_any[1, 1:] >= UNREACHABLE)[0][0]) + 1
        _fail(path, f"disconnected board: station {far} cannot be reached from station 1")
    dist_det = all_pairs_distances(neighbours, transport, degree, False)
    return Board(neighbours, transport, degree, black_ok, dist_det, dist_any)


def load_board(path) -> Board:
    """Read, validate and index a board CSV."""
    stations, edges = read_edges(path)
    return build_board(stations, edges, path)


def read_start_cards(setup_path, stations: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(detective start cards, Mr X start cards) from a setup JSON."""
    path = Path(setup_path)
    if not path.is_file():
        _fail(path, "setup file not found")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        _fail(path, f"not valid JSON ({exc})")
    out = []
    for key in ("detective_start_cards_18", "mrx_start_cards_13"):
        cards = data.get(key)
        if not isinstance(cards, list) or not cards or not all(isinstance(c, int) for c in cards):
            _fail(path, f"{key}: expected a list of station numbers")
        bad = [c for c in cards if not 1 <= c <= stations]
        if bad:
            _fail(path, f"{key}: station {bad[0]} out of range 1..{stations}")
        out.append(tuple(cards))
    return out[0], out[1]
