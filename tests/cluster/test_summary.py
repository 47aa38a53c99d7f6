"""cluster.analysis.summary: the one per-label summary of result rows, and the three
tallies that use it (report table, MLflow metrics, a sweep's objective) agreeing."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from cluster.analysis.report import result_table
from cluster.analysis.summary import LabelSummary, summarize
from cluster.run.tracker import Tally
from cluster.sweep.results import ObjectiveTally


def _rows():
    """Two labels over five games: a win/tie/loss mix, deaths, margins, a figure, an error."""
    results = [("win", "loss"), ("tie", "tie"), ("loss", "win"), ("win", "loss"), ("error", "error")]
    rows = []
    for g, pair in enumerate(results):
        for seat, (label, result) in enumerate(zip(("A", "B"), pair)):
            rows.append({"game_index": g, "seat": seat, "label": label, "result": result,
                         "died_at": 40.0 + g if result == "loss" else None,
                         "score_margin": {"win": 2.0, "tie": 0.0, "loss": -2.0}.get(result),
                         "reward": {"win": 1.0, "tie": 0.0, "loss": -1.0}.get(result, 0.0),
                         "metric.depth": float(g) if result != "error" else 99.0})
    return rows


def test_the_rules_which_games_count_deaths_ties_score():
    a = summarize(_rows())["A"]
    assert a.counts == {"win": 2, "tie": 1, "loss": 1, "error": 1}
    assert a.games == 4 and a.errors == 1 and a.error_rate == pytest.approx(1 / 5)
    assert a.score == pytest.approx((2 + 0.5) / 4)  # a tie is half a win; the error is not a game
    assert a.deaths == 1 and a.died_at.mean == 42.0  # died in its loss (game 2) only
    assert a.margin.mean == pytest.approx(0.5) and a.reward.mean == pytest.approx(0.25)
    assert a.figures["metric.depth"].mean == pytest.approx((0 + 1 + 2 + 3) / 4)  # the error's 99 left out
    lo, hi = a.interval("win")
    assert lo < a.rate("win") == 0.5 < hi
    empty = LabelSummary()
    assert empty.games == 0 and math.isnan(empty.score) and math.isnan(empty.rate("win"))


def test_report_mlflow_and_sweep_tally_agree():
    rows = _rows()
    table = result_table(pd.DataFrame(rows))
    tally = Tally()
    tally.add(rows)
    metrics = tally.metrics()
    objective = ObjectiveTally("A", "win_rate", games_per_board=1)
    objective.add(rows)
    for label in ("A", "B"):
        assert metrics[f"W/{label}"] == pytest.approx(table.loc[label, "win_rate"])
        assert metrics[f"score/{label}"] == pytest.approx(table.loc[label, "result_mean"])
        assert metrics[f"death_rate/{label}"] == pytest.approx(table.loc[label, "death_rate"])
        assert metrics[f"margin/{label}"] == pytest.approx(table.loc[label, "score_diff"])
        assert metrics[f"metric.depth/{label}"] == pytest.approx(table.loc[label, "metric.depth"])
    sweep = objective.metrics()
    assert (sweep["games"], sweep["wins"], sweep["ties"], sweep["errors"]) == (4, 2, 1, 1)
    assert sweep["objective"] == pytest.approx(table.loc["A", "win_rate"])
    assert (sweep["objective_lo"], sweep["objective_hi"]) == pytest.approx(
        (table.loc["A", "win_lo"], table.loc["A", "win_hi"]))
