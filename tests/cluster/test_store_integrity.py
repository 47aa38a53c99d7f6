"""Corruption in a study directory is detected, never read as data (issue 54, point 2).

Part files carry the SHA-256 of their bytes in their name and page checksums; their rows are
checked on read against what the store may hold; learned-state files hold a digest of their
arrays; record packs carry their file's digest in their name. Every bad file is refused with
one StoreError (RecordError for records) naming it."""
from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cluster.replay.records import RecordError, load_study_record, save_record_packs
from cluster.results.store import (SCHEMA, Expected, ResultStore, StoreError, _parquet_bytes, check_rows,
                                   digest_in_name, file_digest)

GAMES = 6


def game_rows(g: int, seats: int = 2, **changes) -> list[dict]:
    """The rows of game ``g`` of a two-seat lineup study (labels A and B)."""
    out = []
    for seat in range(seats):
        out.append(dict(study_id="s", series_id=g // 2, game_index=g, index_in_series=g % 2, board_seed=g // 2,
                        seed_entropy=f"7/1,{g}", seat=seat, label="AB"[seat % 2], agent="fake",
                        config_hash="0123456789ab", team=seat, result=("win", "loss")[seat % 2],
                        reward=(1.0, -1.0)[seat % 2], length=5 + g, died_at=None, mean_iterations=3.0,
                        mean_ms=0.25, invalid_actions=0, budget="3 it", error=None,
                        finished_at=datetime(2026, 1, 1, 0, 0, g, tzinfo=timezone.utc), worker="w1",
                        condition=""))
        out[-1].update(changes)
    return out


def write_spec(study: Path, games: int = GAMES) -> None:
    """A stored spec like the cluster writes: a lineup study of ``games`` games, labels A and B."""
    study.mkdir(parents=True, exist_ok=True)
    (study / "spec.json").write_text(json.dumps({
        "study": {"name": "s", "seed": 7}, "game": {"name": "count"},
        "design": {"seeds": games // 2, "games_per_seed": 2},
        "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}]}))


def new_store(study: Path) -> ResultStore:
    write_spec(study)
    store = ResultStore(study)
    for g in range(0, GAMES, 2):  # three group commits of two games
        store.append(game_rows(g) + game_rows(g + 1))
    return store


def put_part(store: ResultStore, rows: list[dict], name: str = "part-20260101T000000-crafted") -> Path:
    """A hand-made part (values the store's append would refuse), named with its true digest:
    the values are checked even when the bytes are exactly what was written."""
    data = _parquet_bytes(pa.Table.from_pylist(rows, schema=SCHEMA))
    path = store.results_dir / f"{name}-sha256-{file_digest(data)}.parquet"
    path.write_bytes(data)
    return path


def refused(study: Path, *needles: str) -> str:
    with pytest.raises(StoreError) as caught:
        ResultStore(study).read()
    message = str(caught.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    return message


# --- checksums ------------------------------------------------------------------------------
def test_parts_are_named_with_their_digest_and_written_with_page_checksums(tmp_path):
    store = new_store(tmp_path / "s")
    parts = sorted(store.results_dir.glob("part-*.parquet"))
    assert len(parts) == 3
    for part in parts:
        assert digest_in_name(part) == file_digest(part.read_bytes())
        assert pq.ParquetFile(part, page_checksum_verification=True).read().num_rows == 4
    assert store.compact() == 3
    (merged,) = store.results_dir.glob("part-*.parquet")
    assert "-merged-" in merged.name and digest_in_name(merged) == file_digest(merged.read_bytes())
    assert len(ResultStore(tmp_path / "s").read()) == 2 * GAMES


def _flip_every_kth_bit(tmp_path: Path, source: Path, stride: int) -> tuple[int, int]:
    """Flip bits of ``source``'s only part file (every ``stride``-th bit, so every bit position
    of a byte is hit), in place in a copy of the study, and read each flipped copy with a fresh
    store: it must be refused naming the file, or read back exactly as before. Returns (flips,
    refusals)."""
    (part,) = (source / "results").glob("part-*.parquet")
    data = part.read_bytes()
    baseline = ResultStore(source).read()
    study = tmp_path / "flipped"
    shutil.rmtree(study, ignore_errors=True)
    shutil.copytree(source, study)
    flips = refusals = 0
    fd = os.open(study / "results" / part.name, os.O_RDWR)  # one byte rewritten, not the file
    try:
        for bit in range(0, 8 * len(data), stride):
            at = bit // 8
            os.pwrite(fd, bytes([data[at] ^ (1 << (bit % 8))]), at)
            flips += 1
            try:
                df = ResultStore(study).read()
            except StoreError as exc:
                assert part.name in str(exc) and "\n" not in str(exc)
                refusals += 1
            else:
                pd.testing.assert_frame_equal(df, baseline)
            os.pwrite(fd, data[at:at + 1], at)
    finally:
        os.close(fd)
    return flips, refusals


def test_every_sampled_bit_flip_of_a_part_is_refused_naming_the_file(tmp_path):
    store = new_store(tmp_path / "s")
    source = tmp_path / "one"
    write_spec(source)
    one = ResultStore(source)
    (first,) = [p for p in store.results_dir.glob("part-*.parquet") if "sha256" in p.name][:1]
    shutil.copy(first, one.results_dir / first.name)
    flips, refusals = _flip_every_kth_bit(tmp_path, source, stride=3)
    assert flips == refusals > 10_000 // 3


def test_every_sampled_bit_flip_of_a_compacted_store_is_refused_naming_the_file(tmp_path):
    store = new_store(tmp_path / "s")
    store.compact()
    flips, refusals = _flip_every_kth_bit(tmp_path, tmp_path / "s", stride=5)
    assert flips == refusals > 10_000 // 5


# --- values -----------------------------------------------------------------------------------
@pytest.mark.parametrize("rows, needles", [
    (game_rows(6)[:1] + [dict(game_rows(6)[1], result="moss")], ["row 1: result 'moss' is not one of"]),
    (game_rows(6) + [dict(game_rows(6)[0])], ["game 6: two rows for one seat"]),
    ([dict(r, game_index=6) for r in game_rows(7)] + game_rows(6), ["game 6: two rows for one seat"]),
    (game_rows(6)[:1], ["game 6: 1 rows (seats), the game has 2"]),
    (game_rows(6, seats=3), ["row 2: seat 2 is outside the game's seats (0 .. 1)"]),
    (game_rows(6)[1:], ["game 6: rows for seats [1]; a game has one row per seat from seat 0"]),
    (game_rows(6)[:1] + [dict(game_rows(6)[1], seat=-1)], ["row 1: seat -1 is outside"]),
    (game_rows(8), ["row 0: game_index 8 is outside the plan's games (0 .. 7)"]),
    (game_rows(6)[:1] + [dict(game_rows(6)[1], label="Z")], ["row 1: label 'Z' is not among the lineup's"]),
    (game_rows(6)[:1] + [dict(game_rows(6)[1], index_in_series=1)], ["game 6: index_in_series differs"]),
    (game_rows(6) + game_rows(7, index_in_series=0), ["games 6 and 7 are both game 0 of series 3"]),
    (game_rows(6)[:1] + [dict(game_rows(6)[1], label=None)], ["row 1: label is missing"]),
])
def test_a_part_with_impossible_values_is_refused_in_one_line(tmp_path, rows, needles):
    write_spec(tmp_path / "s", games=8)
    store = ResultStore(tmp_path / "s")
    store.append(game_rows(0) + game_rows(1))
    part = put_part(store, rows)
    message = refused(tmp_path / "s", str(part), "corrupt results file", *needles)
    assert message.startswith(str(part))
    with pytest.raises(StoreError, match="corrupt results file"):  # the resume's read, too
        ResultStore(tmp_path / "s").finished_set()


def test_a_store_without_a_spec_is_checked_for_shape(tmp_path):
    store = ResultStore(tmp_path / "s")  # no spec.json: no labels, seats or plan to compare with
    store.append(game_rows(0) + game_rows(40))
    put_part(store, [dict(r, label="Z") for r in game_rows(41)])
    assert len(ResultStore(tmp_path / "s").read()) == 6
    put_part(store, game_rows(42, seats=3) + game_rows(43), name="part-20260101T000001-more")
    refused(tmp_path / "s", "game 43: 2 rows (seats), the file's first game has 3")


def test_check_rows_tolerates_extra_columns_and_reports_nothing_for_good_rows():
    table = pa.Table.from_pylist([dict(r, overruns=0, illegal_actions=0, **{"metric.depth": 2.5})
                                  for g in range(4) for r in game_rows(g)])
    assert check_rows(table, Expected(seats=2, games=4, labels=frozenset("AB"))) is None
    assert check_rows(table, Expected(seats=2, games=3)) == "row 6: game_index 3 is outside the plan's games (0 .. 2)"
    shuffled = table.take(np.random.default_rng(0).permutation(table.num_rows))  # as batches arrive
    assert check_rows(shuffled, Expected(seats=2, games=4, labels=frozenset("AB"))) is None
    broken = shuffled.set_column(shuffled.column_names.index("board_seed"), "board_seed",
                                 pa.array(np.arange(shuffled.num_rows)))
    assert check_rows(broken, Expected(seats=2)).endswith(": board_seed differs between its seats")


def test_an_old_part_without_a_digest_still_reads_and_its_values_are_checked(tmp_path):
    write_spec(tmp_path / "s")
    store = ResultStore(tmp_path / "s")
    table = pa.Table.from_pylist(game_rows(0) + game_rows(1), schema=SCHEMA)
    pq.write_table(table, store.results_dir / "part-20250101T000000-0123456789ab.parquet")  # as before checksums
    assert list(ResultStore(tmp_path / "s").read()["game_index"]) == [0, 0, 1, 1]
    moss = pa.Table.from_pylist(game_rows(2, result="moss"), schema=SCHEMA)
    pq.write_table(moss, store.results_dir / "part-20250101T000001-0123456789ab.parquet")
    refused(tmp_path / "s", "part-20250101T000001-0123456789ab.parquet", "result 'moss'")


def test_copies_of_a_game_in_two_parts_must_agree(tmp_path):
    store = new_store(tmp_path / "s")
    first = sorted(store.results_dir.glob("part-*.parquet"))[0]
    shutil.copy(first, first.with_name("part-zz-copy.parquet"))  # as a crash mid-compaction leaves
    assert len(ResultStore(tmp_path / "s").read()) == 2 * GAMES
    assert ResultStore(tmp_path / "s").compact() == 4
    (merged,) = store.results_dir.glob("part-*.parquet")
    assert pq.read_table(merged).num_rows == 2 * GAMES  # one copy of each row kept
    put_part(store, game_rows(0, result="tie"), name="part-zzz-other")
    refused(tmp_path / "s", "part-zzz-other", "game 0 seat 0: its result differs from the copy in")


# --- learned state and records ----------------------------------------------------------------
def test_a_learned_state_that_does_not_match_its_digest_is_refused(tmp_path):
    store = ResultStore(tmp_path / "s")
    path = store.save_learned_state(0, 3, "A", {"w": np.arange(6.0)})
    assert store.latest_learned_state(0)[1]["A"]["w"].tolist() == list(np.arange(6.0))
    with np.load(path, allow_pickle=False) as npz:
        members = {k: npz[k] for k in npz.files}
    members["a.w"] = members["a.w"] + 1  # a valid archive whose arrays changed
    np.savez_compressed(path.with_suffix(""), **members)
    with pytest.raises(StoreError, match=r"000003--A\.npz: corrupt learned-state file \(its arrays do not match"):
        store.latest_learned_state(0)
    path = store.save_learned_state(0, 4, "A", {"w": np.arange(6.0)})
    data = path.read_bytes()
    refusals = 0
    for i in range(len(data)):  # one bit of every byte, the bit position turning
        flipped = bytearray(data)
        flipped[i] ^= 1 << (i % 8)
        path.write_bytes(flipped)
        try:
            state = store.latest_learned_state(0)
        except StoreError as exc:
            assert "000004--A.npz: corrupt learned-state file" in str(exc)
            refusals += 1
            continue
        assert list(state[1]) == ["A"] and state[1]["A"]["w"].tolist() == list(np.arange(6.0))
    assert refusals > len(data) // 2
    del members["__sha256__"]  # as written before digests: read, unchecked
    np.savez_compressed(store.learned_dir / "series-000000" / "000004--A", **members)
    assert store.latest_learned_state(0)[1]["A"]["w"].tolist() == list(np.arange(6.0) + 1)


def test_a_record_pack_file_that_does_not_match_its_name_is_refused(tmp_path):
    from cluster.replay.records import GameRecord, pack_records

    record = GameRecord(game="count", config_json="{}", board_entropy="1", board_spawn_key=np.zeros(2, np.int64),
                        labels=np.asarray(["A", "B"]), actions=np.zeros((3, 2), np.int8),
                        iterations=np.ones((3, 2), np.int32), values=np.zeros((3, 2), np.float16),
                        fingerprints=np.arange(4, dtype=np.uint16))
    path = save_record_packs(tmp_path, pack_records([(5, record)]))
    assert digest_in_name(path) == file_digest(path.read_bytes())
    assert load_study_record(tmp_path, 5).length == 3
    data = bytearray(path.read_bytes())
    data[-30] ^= 0x01  # in the zip's central directory: the archive might still open
    path.write_bytes(data)
    with pytest.raises(RecordError, match=rf"{path.name}: its bytes do not match the sha256 in its name"):
        load_study_record(tmp_path, 5)


def test_a_config_hash_that_is_not_its_agents_is_refused_and_a_new_release_hash_is_recorded(tmp_path):
    import conftest  # noqa: F401 - registers the test plugins' game and agents
    from agents.registry import config_hash
    from cluster.results.store import HASHES_FILE
    from cluster.spec.build import build_spec

    spec = build_spec({"study": {"name": "h", "seed": 7, "results_dir": str(tmp_path)},
                       "game": {"name": "count", "max_steps": 6}, "budget": {"iterations": 3},
                       "design": {"seeds": 3, "games_per_seed": 2},
                       "lineup": [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}]})
    store = ResultStore(spec.study_dir)
    store.write_spec(spec)
    right = config_hash("fake", spec.lineup[0].config, spec.budget_for(0))
    assert json.loads((spec.study_dir / HASHES_FILE).read_text()) == {"A": [right], "B": [right]}
    store.append(game_rows(0, config_hash=right) + game_rows(1, config_hash=right))
    assert len(ResultStore(spec.study_dir).read()) == 4
    # one hex digit changed: a plausible hash, but no agent of the study had it
    wrong = ("1" if right[0] != "1" else "2") + right[1:]
    part = put_part(store, game_rows(2, config_hash=right)[:1] + [dict(game_rows(2)[1], config_hash=wrong)])
    refused(spec.study_dir, str(part), f"row 1: config_hash {wrong!r} of 'B' is not its agent's in this study")
    part.unlink()
    # a run whose release hashes the agent differently (e.g. a bumped config_version) adds its
    # hash: the older rows and the new ones both read
    (spec.study_dir / HASHES_FILE).write_text(json.dumps({"A": [wrong], "B": [wrong]}))
    with pytest.raises(StoreError, match="config_hash"):
        ResultStore(spec.study_dir).read()
    ResultStore(spec.study_dir).write_spec(spec)
    assert json.loads((spec.study_dir / HASHES_FILE).read_text()) == {"A": sorted([right, wrong]),
                                                                      "B": sorted([right, wrong])}
    assert len(ResultStore(spec.study_dir).read()) == 4
