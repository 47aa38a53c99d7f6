"""Scores and point margins over boards: the games of one board (its seat-swapped pair)
averaged first, then a 95% interval over the boards.

A two-player study with ``rotate_seats`` plays every board seed once with each agent in
each seat; the two games of a board share the deal, so they are not independent and the
per-game intervals of ``arena report`` are too wide or too narrow for a paired design.
Here each board contributes one number (the mean of its games), and the interval is a
Student t interval over those numbers (SciPy)::

    arena pairs arena-studies/birds-mcts-pol-vs-single-det
    arena pairs STUDY_A STUDY_B --label MCTS-chance-pol --diff

``--diff`` adds, for each study after the first, the difference of its first label's
per-board means minus the first study's, on the boards both played (the same study seed
gives the same deals), with its paired interval.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cluster.analysis.summary import RESULT_POINTS
from cluster.analysis.tables import markdown_table
from cluster.results.store import ResultStore
from cluster.stats import t_half_width

__all__ = ["BoardSummary", "board_means", "summarise", "paired_difference", "load_study", "summary_table"]


@dataclass(frozen=True)
class BoardSummary:
    """One label's figures over boards (``*_half``: half widths of the 95% intervals)."""

    label: str
    boards: int
    games: int
    win: float
    tie: float
    loss: float
    result: float
    result_half: float
    margin: float
    margin_half: float


def board_means(df: pd.DataFrame, label: str) -> pd.DataFrame:
    """Per board (index ``(condition, board_seed)``): ``games`` of ``label`` on it, its
    mean ``result`` (win 1, tie 0.5, loss 0) and mean ``margin`` (own points minus the
    other seat's), over its games that did not end in an error."""
    rows = df[(df["label"] == label) & df["result"].isin(list(RESULT_POINTS))].copy()
    if rows.empty:
        raise ValueError(f"no finished games of {label!r}; labels: {sorted(df['label'].unique())}")
    rows["points"] = rows["result"].map(RESULT_POINTS).astype(float)
    if "condition" not in rows.columns:
        rows["condition"] = ""
    rows["condition"] = rows["condition"].fillna("").astype(str)
    margin = rows["score_margin"].astype(float) if "score_margin" in rows.columns else np.nan
    rows["margin"] = margin
    grouped = rows.groupby(["condition", "board_seed"], sort=True)
    return pd.DataFrame({"games": grouped.size(), "result": grouped["points"].mean(),
                         "margin": grouped["margin"].mean()})


def summarise(df: pd.DataFrame, label: str) -> BoardSummary:
    """``label``'s W / T / L shares (over games), mean result and mean margin with their
    95% t intervals over boards."""
    boards = board_means(df, label)
    rows = df[(df["label"] == label) & df["result"].isin(list(RESULT_POINTS))]
    games = len(rows)
    share = {k: float((rows["result"] == k).sum()) / games for k in RESULT_POINTS}
    return BoardSummary(label=label, boards=len(boards), games=games, win=share["win"],
                        tie=share["tie"], loss=share["loss"],
                        result=float(boards["result"].mean()),
                        result_half=t_half_width(boards["result"].to_numpy()),
                        margin=float(boards["margin"].mean()),
                        margin_half=t_half_width(boards["margin"].to_numpy()))


def paired_difference(df_a: pd.DataFrame, label_a: str, df_b: pd.DataFrame, label_b: str,
                      column: str = "result") -> tuple[float, float, int]:
    """(mean, 95% half width, boards) of ``label_b``'s per-board ``column`` (result or
    margin) in ``df_b`` minus ``label_a``'s in ``df_a``, on the boards both played."""
    a = board_means(df_a, label_a)[column]
    b = board_means(df_b, label_b)[column]
    common = a.index.intersection(b.index)
    if len(common) == 0:
        raise ValueError("the two studies share no board")
    d = (b.loc[common] - a.loc[common]).to_numpy(dtype=float)
    return float(d.mean()), t_half_width(d), len(common)


def load_study(study_dir) -> pd.DataFrame:
    """The result rows of a stored study (its ``results/`` Parquet parts)."""
    path = Path(study_dir)
    if not (path / "results").is_dir():
        raise ValueError(f"{path}: not a study directory (no results/ inside)")
    return ResultStore(path).read()


def summary_table(studies: list[tuple[str, pd.DataFrame, str]], diff: bool = False) -> str:
    """Markdown: a row per ``(name, rows, label)`` (see :func:`summarise`), and with
    ``diff`` a second table of each study's per-board difference from the first's."""
    lines = []
    for name, df, label in studies:
        s = summarise(df, label)
        lines.append([name, s.label, s.boards, s.games,
                      f"{100 * s.win:.1f} / {100 * s.tie:.1f} / {100 * s.loss:.1f}",
                      f"{s.result:.3f} ± {s.result_half:.3f}", f"{s.margin:+.2f} ± {s.margin_half:.2f}"])
    out = markdown_table(["study", "player", "boards", "games", "W / T / L %", "mean result (95%)",
                          "margin (95%)"], lines, ["---", "---", "---:", "---:", "---", "---", "---"])
    if diff and len(studies) > 1:
        name0, df0, label0 = studies[0]
        lines = []
        for name, df, label in studies[1:]:
            r, rh, n = paired_difference(df0, label0, df, label, "result")
            m, mh, _ = paired_difference(df0, label0, df, label, "margin")
            lines.append([name, n, f"{r:+.3f} ± {rh:.3f}", f"{m:+.2f} ± {mh:.2f}"])
        out += "\n\n" + markdown_table([f"study minus {name0}", "boards", "mean result (95%)",
                                         "margin (95%)"], lines, ["---", "---:", "---", "---"])
    return out
