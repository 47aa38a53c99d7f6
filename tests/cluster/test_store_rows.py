"""One row schema (store.SCHEMA, play.ROW_COLUMNS) and agents' own row fields.

Stores written before ``profile`` became a Pommerman agent's row field have a
``profile`` column in every row; they still read, append and compact.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from cluster.run.play import ROW_COLUMNS
from cluster.results.store import SCHEMA, ResultStore


def rows(game_index: int, **extra) -> list[dict]:
    return [dict(study_id="s", series_id=game_index, game_index=game_index, index_in_series=0,
                 board_seed=game_index, seed_entropy="2026", seat=seat, label="AB"[seat],
                 agent="mcts", config_hash="abc", team=seat, result=("win", "loss")[seat],
                 reward=(1.0, -1.0)[seat], length=10, died_at=None, mean_iterations=1.0, mean_ms=0.1,
                 invalid_actions=0, budget="5 it", error=None, condition=None,
                 finished_at=datetime(2026, 1, 1, tzinfo=timezone.utc), worker="w1", **extra)
            for seat in range(2)]


def test_row_columns_are_the_schema_and_carry_no_agent_field():
    assert ROW_COLUMNS == tuple(SCHEMA.names)
    assert "profile" not in ROW_COLUMNS


def test_an_old_store_with_a_profile_column_reads_appends_and_compacts(tmp_path):
    store = ResultStore(tmp_path / "study")
    old = rows(0)
    for row in old:
        row["profile"] = "java"
    old_schema = pa.schema(list(SCHEMA) + [pa.field("profile", pa.string())])
    table = pa.Table.from_pylist(old, schema=old_schema)
    pq.write_table(table, store.results_dir / "part-20260101T000000-old.parquet")

    assert store.finished_games() == {0}
    assert store.append(rows(0) + rows(1)) == 1  # game 0 is skipped (resumed), game 1 is new
    assert store.append([{**r, "profile": "arena"} for r in rows(2)]) == 1
    df = store.read()
    assert list(df["game_index"]) == [0, 0, 1, 1, 2, 2]
    assert list(df["profile"].fillna("-")) == ["java", "java", "-", "-", "arena", "arena"]
    assert store.compact() == 3
    again = store.read()
    assert len(again) == 6 and list(again["profile"].fillna("-")) == ["java", "java", "-", "-",
                                                                       "arena", "arena"]
