"""The built-in Scotland Yard board (``games/scotland_yard/board/``) holds the published
game's facts, as its PROVENANCE.md says: stations, connections per transport,
connectivity, the underground stations, the start cards."""
from __future__ import annotations

import csv
import json
from collections import Counter, deque

import pytest

from games.scotland_yard import DEFAULT_BOARD_FILE, DEFAULT_DATA_DIR, SETUP_FILE_NAME, ScotlandYardConfig
from games.scotland_yard import kernels as K

UNDERGROUND = [1, 13, 46, 67, 74, 79, 89, 93, 111, 128, 140, 153, 163, 185]


@pytest.fixture(scope="module")
def edges() -> list[tuple[int, int, str]]:
    with open(DEFAULT_BOARD_FILE, newline="") as fh:
        return [(int(r["station_a"]), int(r["station_b"]), r["transport"]) for r in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def setup() -> dict:
    return json.loads((DEFAULT_DATA_DIR / SETUP_FILE_NAME).read_text())


def components(edges, transports) -> int:
    neighbours: dict[int, set[int]] = {s: set() for s in range(1, 200)}
    for a, b, t in edges:
        if t in transports:
            neighbours[a].add(b)
            neighbours[b].add(a)
    seen, count = set(), 0
    for start in neighbours:
        if start in seen:
            continue
        count += 1
        queue = deque([start])
        seen.add(start)
        while queue:
            for n in neighbours[queue.popleft()] - seen:
                seen.add(n)
                queue.append(n)
    return count


def test_stations_and_connections_per_transport(edges):
    stations = {s for a, b, _ in edges for s in (a, b)}
    assert stations == set(range(1, 200))
    assert len(edges) == 468 and len({(a, b, t) for a, b, t in edges}) == 468
    assert all(a < b for a, b, _ in edges)
    assert Counter(t for _, _, t in edges) == {"taxi": 346, "bus": 99, "underground": 20, "ferry": 3}
    assert sorted((a, b) for a, b, t in edges if t == "ferry") == [(108, 115), (115, 157), (157, 194)]


def test_connected_with_all_without_the_ferry_and_by_taxi_alone(edges):
    assert components(edges, {"taxi", "bus", "underground", "ferry"}) == 1
    assert components(edges, {"taxi", "bus", "underground"}) == 1
    assert components(edges, {"taxi"}) == 1


def test_the_14_underground_stations(edges, setup):
    stations = sorted({s for a, b, t in edges if t == "underground" for s in (a, b)})
    assert stations == UNDERGROUND == setup["underground_stations"]
    assert setup["ferry_stations"] == [108, 115, 157, 194]


def test_the_longest_shortest_path_for_a_detective_is_10_moves():
    board = ScotlandYardConfig().load()[0]
    dist = board.dist_detective[1:, 1:]
    assert int(dist.max()) == 10


def test_the_setup_the_game_reads(setup):
    assert setup["rounds"] == 24 and setup["reveal_rounds"] == [3, 8, 13, 18, 24]
    det, mrx = K.read_start_cards(DEFAULT_DATA_DIR / SETUP_FILE_NAME, 199)
    assert len(det) == 18 and len(mrx) == 13 and len(set(det)) == 18 and len(set(mrx)) == 13
    assert set(det) & set(mrx) == {132}
    config = ScotlandYardConfig()
    assert config.rounds == setup["rounds"] and list(config.reveal_rounds) == setup["reveal_rounds"]
    assert config.detective_tickets == (10, 8, 4) and config.mrx_tickets == (4, 3, 3, 5, 2)
