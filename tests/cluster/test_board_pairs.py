"""cluster.analysis.board_pairs: scores and margins averaged per board (its seat-swapped games)
before the interval, and paired differences between two studies on the same boards."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cluster.analysis.board_pairs import board_means, paired_difference, summarise
from jobs.cli import main


def rows(label_results):
    """Result rows of a two-seat study: ``label_results`` is, per board, the results
    and margins of player A in its two games; B's rows mirror them."""
    out = []
    for board, games in enumerate(label_results):
        for g, (result, margin) in enumerate(games):
            other = {"win": "loss", "loss": "win", "tie": "tie"}[result]
            out.append({"label": "A", "board_seed": board, "game_index": 2 * board + g,
                        "condition": "", "seat": g,
                        "result": result, "score_margin": margin})
            out.append({"label": "B", "board_seed": board, "game_index": 2 * board + g,
                        "condition": "", "seat": 1 - g,
                        "result": other, "score_margin": -margin})
    return pd.DataFrame(out)


BOARDS = [[("win", 4), ("loss", -2)], [("win", 3), ("win", 1)], [("tie", 0), ("loss", -5)],
          [("win", 6), ("tie", 0)]]


def test_games_of_a_board_are_averaged_before_the_interval():
    df = rows(BOARDS)
    per_board = board_means(df, "A")
    assert per_board["result"].tolist() == [0.5, 1.0, 0.25, 0.75]
    assert per_board["margin"].tolist() == [1.0, 2.0, -2.5, 3.0]
    s = summarise(df, "A")
    assert (s.boards, s.games) == (4, 8)
    assert (s.win, s.tie, s.loss) == (4 / 8, 2 / 8, 2 / 8)
    assert s.result == pytest.approx(0.625)
    # by hand: sd of (.5, 1, .25, .75) = .3227; t(.975, 3) = 3.1824; / sqrt(4)
    assert s.result_half == pytest.approx(3.18245 * 0.322749 / 2, rel=1e-4)
    assert s.margin == pytest.approx(0.875)
    assert s.margin_half == pytest.approx(stats.t.ppf(0.975, 3) * np.std([1, 2, -2.5, 3], ddof=1) / 2)
    b = summarise(df, "B")
    assert b.result == pytest.approx(1 - s.result) and b.margin == pytest.approx(-s.margin)
    assert b.result_half == pytest.approx(s.result_half)


def test_errors_are_left_out_and_an_unknown_label_is_named():
    df = rows(BOARDS)
    df.loc[0, "result"] = "error"
    assert board_means(df, "A")["games"].tolist() == [1, 2, 2, 2]
    with pytest.raises(ValueError, match="no finished games of 'C'"):
        summarise(df, "C")
    one = summarise(rows(BOARDS[:1]), "A")
    assert math.isnan(one.result_half)


def test_paired_difference_on_the_common_boards():
    a = rows(BOARDS)
    better = [[("win", 5), ("win", 1)], [("win", 3), ("win", 2)], [("win", 1), ("loss", -1)]]
    b = rows(better)                                 # 3 boards: the first three of a's
    mean, half, n = paired_difference(a, "A", b, "A")
    d = np.array([1.0 - 0.5, 1.0 - 1.0, 0.5 - 0.25])
    assert n == 3 and mean == pytest.approx(d.mean())
    assert half == pytest.approx(stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3))
    m, _, _ = paired_difference(a, "A", b, "A", "margin")
    assert m == pytest.approx(np.mean([3 - 1, 2.5 - 2, 0 + 2.5]))
    far = rows(BOARDS)
    far["board_seed"] += 100
    with pytest.raises(ValueError, match="share no board"):
        paired_difference(a, "A", far, "A")


def test_the_command_prints_a_row_per_study(tmp_path, capsys):
    from cluster.results.store import ResultStore

    for name, data in (("one", BOARDS), ("two", BOARDS[:2])):
        df = rows(data)
        store = ResultStore(tmp_path / name)          # makes results/
        df.to_parquet(tmp_path / name / "results" / "part-x.parquet")
        assert len(store.read()) == len(df)
    assert main(["pairs", str(tmp_path / "one"), str(tmp_path / "two"), "--label", "A", "--diff"]) == 0
    out = capsys.readouterr().out
    assert "| one | A | 4 | 8 | 50.0 / 25.0 / 25.0 | 0.625 ± " in out
    assert "| two | 2 | +0.000 ± 0.000 |" in out
    assert main(["pairs", str(tmp_path / "missing")]) == 2
