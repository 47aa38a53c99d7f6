"""Batched dispatch and group commit (cluster.run.scheduler.BatchSizer / HostPool batches,
cluster.run.driver.Recorder, cluster.replay.records packs): results do not depend on the
batch size or the worker count, a killed driver or a killed host during a batched study
loses and duplicates nothing (real processes), and record packs hold every game's record."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from cluster.replay.records import (GameRecord, RecordError, load_study_record, pack_records, save_record_pack,
                                    save_record_packs, unpack_records)
from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.run.scheduler import BatchSizer
from cluster.spec.build import build_spec

from conftest import PLUGINS

#: Columns that may differ between two runs of the same spec (timing and placement).
NONDETERMINISTIC = ["mean_ms", "finished_at", "worker"]


def make_spec(tmp_path, name, *, lineup=None, design=None, max_steps=2):
    return build_spec({
        "study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": max_steps},
        "budget": {"iterations": 1},
        "design": design or {"seeds": 6, "games_per_seed": 5},
        "lineup": lineup or [{"agent": "fake", "label": "A", "params": {"learn": True}},
                             {"agent": "fake", "label": "B"}],
        "tracking": {"enabled": False},
    })


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=NONDETERMINISTIC).sort_values(["game_index", "seat"]).reset_index(drop=True)


def complete_once(spec) -> pd.DataFrame:
    df = ResultStore(spec.study_dir).read()
    assert sorted(df["game_index"].unique()) == list(range(spec.design.total_games))
    assert not df.duplicated(["game_index", "seat"]).any() and len(df) == 2 * spec.design.total_games
    return df


# --- the batch size -------------------------------------------------------------------------
def test_batch_sizer_fills_the_target_time_within_its_bounds():
    sizer = BatchSizer(target_seconds=0.2, max_games=500, growth=16)
    assert sizer.games == 1  # nothing measured yet
    sizer.observe([0.001])
    assert sizer.games == 16  # 200 wanted, at most 16x the previous size
    sizer.observe([0.001] * 16)
    assert sizer.games == 200
    sizer.observe([1e-6] * 200)
    assert sizer.games == 400  # smoothed: half the way to the new measure
    sizer.observe([1e-6] * 400)
    assert sizer.games == 500  # max_games
    slow = BatchSizer(target_seconds=0.2)
    slow.observe([3.0])
    assert slow.games == 1  # a game longer than the target goes alone
    with pytest.raises(ValueError):
        BatchSizer(target_seconds=0)


# --- record packs ---------------------------------------------------------------------------
def _record(length: int, seed: int) -> GameRecord:
    rng = np.random.default_rng(seed)
    return GameRecord(game="count", config_json=json.dumps({"max_steps": length, "num_players": 2}),
                      board_entropy="11", board_spawn_key=np.array([0, seed]), labels=np.array(["A", "B"]),
                      actions=rng.integers(0, 3, (length, 2)).astype(np.int8),
                      iterations=np.ones((length, 2), dtype=np.int32),
                      values=rng.random((length, 2)).astype(np.float16),
                      fingerprints=rng.integers(0, 2**16, length + 1).astype(np.uint16), fingerprint_version=2)


def test_a_record_pack_gives_back_every_record_of_the_batch(tmp_path):
    records = {7: _record(3, 7), 2: _record(1, 2), 40: _record(5, 40)}
    [(games, data)] = pack_records(list(records.items()))
    assert games == [7, 2, 40]
    path = save_record_pack(tmp_path, games, data)
    assert path.name.startswith("pack-000000002-000000040-")
    with np.load(path, allow_pickle=False) as arrays:
        unpacked = unpack_records(arrays)
    for g, record in records.items():
        for got in (unpacked[g], load_study_record(tmp_path, g)):
            assert got.to_arrays().keys() == record.to_arrays().keys()
            for key, value in record.to_arrays().items():
                np.testing.assert_array_equal(got.to_arrays()[key], value)
    with pytest.raises(RecordError, match="no record of game 3"):
        load_study_record(tmp_path, 3)  # inside the pack's range, not in the pack
    # a group commit's packs, as one file of packs (the hosts' bytes, not compressed again)
    more = {100 + g: _record(2, 100 + g) for g in range(3)}
    halves = pack_records(list(more.items())[:2]) + pack_records(list(more.items())[2:])
    path = save_record_packs(tmp_path / "commit", halves)
    assert path.name.startswith("packs-000000100-000000102-") and len(list(path.parent.iterdir())) == 1
    for g, record in more.items():
        np.testing.assert_array_equal(load_study_record(tmp_path / "commit", g).actions, record.actions)


# --- studies --------------------------------------------------------------------------------
def test_rows_do_not_depend_on_the_batch_size_or_the_worker_count(ray_local, tmp_path):
    """Series of five games carrying learned state, played one game per call on one host,
    and in batches of up to 7 games (series split across calls) on two hosts."""
    one_spec, many_spec = make_spec(tmp_path / "one", "batches"), make_spec(tmp_path / "many", "batches")
    one = run_study(one_spec, num_workers=1, progress=False, plugins=PLUGINS,
                    warm_up=False, batch_sizer=BatchSizer(max_games=1))
    many = run_study(many_spec, num_workers=2, progress=False, plugins=PLUGINS,
                     warm_up=False, batch_sizer=BatchSizer(max_games=7, target_seconds=10.0))
    assert one.batches == 30 and many.batches < 30
    pd.testing.assert_frame_equal(comparable(complete_once(one_spec)), comparable(complete_once(many_spec)))
    assert all(load_study_record(many.study_dir, g).length == 2 for g in range(30))  # every game's record


_DRIVER = """
import json, sys
import conftest  # registers the fake game and agent
from cluster.spec.build import spec_from_dict
from cluster.run.driver import run_study
spec = spec_from_dict(json.load(open(sys.argv[1])))
run_study(spec, address=sys.argv[2], num_workers=2, progress=False, tracking=False, plugins=["conftest"],
          warm_up=False)
"""


def test_a_driver_killed_during_a_batched_study_loses_and_duplicates_nothing(ray_local, tmp_path):
    """SIGKILL to a driver whose hosts play batches of short games of learning series: the
    resumed study holds every game once, with the rows of an uninterrupted run (learned state
    carried correctly over the restart)."""
    lineup = [{"agent": "fake", "label": "A", "params": {"learn": True, "sleep_ms": 0.5}},
              {"agent": "fake", "label": "B"}]
    design = {"seeds": 40, "games_per_seed": 15}
    spec = make_spec(tmp_path / "killed", "killed", lineup=lineup, design=design)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec.to_dict()))
    address = ray_local.get_runtime_context().gcs_address
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, str(spec_file), address],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while len(ResultStore(spec.study_dir).finished_games()) < 60:
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the subprocess recorded too few games"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    recorded = len(ResultStore(spec.study_dir).finished_games())
    assert recorded < spec.design.total_games, "kill the driver mid-study"
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert result.games_skipped == recorded and result.games_played == spec.design.total_games - recorded
    reference = make_spec(tmp_path / "ref", "killed", lineup=lineup, design=design)
    run_study(reference, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    pd.testing.assert_frame_equal(comparable(complete_once(spec)), comparable(complete_once(reference)))


def test_a_host_killed_during_a_batch_loses_and_duplicates_nothing(ray_local, tmp_path):
    """A host process dies (os._exit) in the middle of a batch of learning series: every
    series of the batch restarts from its last finished game elsewhere, the game that
    killed it is retried alone, and the rows equal an uninterrupted run's."""
    die = tmp_path / "die-once"
    lineup = [{"agent": "fake", "label": "A", "params": {"learn": True, "die_file": str(die)}},
              {"agent": "fake", "label": "B"}]
    design = {"seeds": 8, "games_per_seed": 6}
    reference = run_study(make_spec(tmp_path / "ref", "host", lineup=lineup, design=design), num_workers=2,
                          progress=False, plugins=PLUGINS, warm_up=False)
    spec = make_spec(tmp_path / "died", "host", lineup=lineup, design=design)
    sizer = BatchSizer(target_seconds=10.0, max_games=16)
    die_after = {"batches": 0}

    def arm(rows):  # the host dies in a batch dispatched after the first games are in (the first
        die_after["batches"] += 1  # arrival: later ones may come when every batch is already out)
        if die_after["batches"] == 1:
            die.write_text("x")

    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False, batch_sizer=sizer,
                       on_progress=arm)
    assert not die.exists() and result.host_retries >= 1
    pd.testing.assert_frame_equal(comparable(complete_once(spec)),
                                  comparable(ResultStore(reference.study_dir).read()))
