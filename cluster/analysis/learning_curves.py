"""Learning curves of a runs x rounds study: win rates per segment of rounds,
paired t-tests between the two lineup entries, and the win ratio.

From the result rows alone (``series_id`` = run, ``index_in_series`` = round)::

    >>> seg = segment_table(df, segment=10)        # one row per (segment, label)
    >>> tests = segment_tests(df, segment=10)      # one row per segment

* win rate of a label in a segment of a run = its wins / the segment's games
  (a tie is not a win); mean and standard deviation (ddof 1) over runs;
* per segment, a paired two-tailed t-test of the first two labels' per-run
  win rates (H0: equal means), significant at 95% when p < 0.05;
* ``win_ratio`` = the second label's wins / the first label's wins over the
  whole study (below 1: the first label, e.g. Conv-AE+FA, is stronger).

The t-test is :func:`cluster.stats.paired_t_test` (SciPy's ``ttest_rel``).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from cluster.analysis.tables import markdown_table
from cluster.stats import paired_t_test

__all__ = ["run_win_rates",
           "segment_table", "segment_tests", "win_ratio", "segment_plot", "ratio_plot",
           "write_segment_report", "SEGMENT"]

#: Rounds per segment in the studies (40 rounds -> 4 segments).
SEGMENT = 10


def _labels(df: pd.DataFrame) -> list[str]:
    ordered = df.sort_values(["game_index", "seat"], kind="stable")
    first = ordered[ordered["game_index"] == ordered["game_index"].min()]
    labels = list(dict.fromkeys(first.sort_values("seat")["label"]))
    return labels + [lab for lab in dict.fromkeys(df["label"]) if lab not in labels]


def run_win_rates(df: pd.DataFrame, segment: int = SEGMENT) -> pd.DataFrame:
    """One row per (run, segment, label): ``games``, ``wins``, ``win_rate``
    (error games excluded)."""
    ok = df[df["result"] != "error"].copy()
    ok["segment"] = ok["index_in_series"] // segment
    ok["win"] = (ok["result"] == "win").astype(int)
    grouped = ok.groupby(["series_id", "segment", "label"], sort=True)
    out = grouped.agg(games=("win", "size"), wins=("win", "sum")).reset_index()
    out["win_rate"] = out["wins"] / out["games"]
    return out.rename(columns={"series_id": "run"})


def _segment_name(k: int, segment: int, df: pd.DataFrame) -> str:
    last = int(df["index_in_series"].max())
    return f"{k * segment + 1}-{min((k + 1) * segment, last + 1)}"


def segment_table(df: pd.DataFrame, segment: int = SEGMENT) -> pd.DataFrame:
    """Per (segment, label): rounds, runs, mean and sd over runs of the win rate."""
    rates = run_win_rates(df, segment)
    rows = []
    for (k, label), g in rates.groupby(["segment", "label"], sort=True):
        rows.append({"segment": int(k), "rounds": _segment_name(int(k), segment, df), "label": label,
                     "runs": int(len(g)), "mean": float(g["win_rate"].mean()),
                     "sd": float(g["win_rate"].std(ddof=1)) if len(g) > 1 else math.nan})
    table = pd.DataFrame(rows)
    order = {lab: i for i, lab in enumerate(_labels(df))}
    return table.sort_values(["segment", "label"], key=lambda s: s.map(order) if s.name == "label" else s,
                             kind="stable").reset_index(drop=True)


def segment_tests(df: pd.DataFrame, segment: int = SEGMENT) -> pd.DataFrame:
    """Per segment: paired two-tailed t-test of the first two labels' per-run win rates."""
    labels = _labels(df)
    if len(labels) < 2:
        return pd.DataFrame()
    a, b = labels[:2]
    rates = run_win_rates(df, segment)
    rows = []
    for k, g in rates.groupby("segment", sort=True):
        wide = g.pivot(index="run", columns="label", values="win_rate").dropna()
        if a not in wide or b not in wide:
            continue
        t, p, dof = paired_t_test(wide[a], wide[b])
        rows.append({"segment": int(k), "rounds": _segment_name(int(k), segment, df),
                     "a": a, "b": b, "mean_a": float(wide[a].mean()), "mean_b": float(wide[b].mean()),
                     "mean_diff": float((wide[a] - wide[b]).mean()), "t": t, "df": dof, "p": p,
                     "significant_95": bool(p < 0.05) if not math.isnan(p) else False})
    return pd.DataFrame(rows)


def win_ratio(df: pd.DataFrame) -> dict:
    """Wins of the second label / wins of the first over the whole study."""
    labels = _labels(df)
    ok = df[df["result"] != "error"]
    wins = {lab: int(((ok["label"] == lab) & (ok["result"] == "win")).sum()) for lab in labels}
    games = int(ok["game_index"].nunique())
    a, b = labels[0], labels[1] if len(labels) > 1 else labels[0]
    ratio = wins[b] / wins[a] if wins[a] else (math.inf if wins[b] else math.nan)
    return {"learner": a, "opponent": b, "games": games, "learner_wins": wins[a],
            "opponent_wins": wins[b], "draws": games - sum(wins.values()), "ratio": ratio}


def _fmt(x, digits=3):
    if isinstance(x, float):
        if math.isnan(x):
            return "n/a"
        return f"{_unsigned_zero(x, digits):.{digits}f}"
    return str(x)


def _unsigned_zero(x: float, digits: int) -> float:
    """``x``, with values that print as zero made +0.0 (no "-0.0" in tables)."""
    return 0.0 if abs(x) < 0.5 * 10 ** -digits else x


def segments_markdown(df: pd.DataFrame, segment: int = SEGMENT) -> str:
    """The three tables as Markdown: win rates per segment, t-tests, ratio."""
    seg = segment_table(df, segment)
    tests = segment_tests(df, segment)
    labels = _labels(df)
    rows = []
    for k, g in seg.groupby("segment", sort=True):
        cells = [g["rounds"].iloc[0]]
        for lab in labels:
            row = g[g["label"] == lab]
            cells.append("n/a" if row.empty else
                         f"{100 * row['mean'].iloc[0]:.1f}% +- {100 * row['sd'].iloc[0]:.1f}"
                         if not math.isnan(row['sd'].iloc[0]) else f"{100 * row['mean'].iloc[0]:.1f}%")
        rows.append(cells)
    lines = ["Win rate per segment (mean +- sd over runs):", "",
             markdown_table(["Rounds"] + labels, rows, ["---"] + ["---:"] * len(labels))]
    if len(tests):
        rows = [[r["rounds"], f"{_unsigned_zero(100 * r['mean_diff'], 1):+.1f} pp", _fmt(r["t"], 2), r["df"],
                 _fmt(r["p"], 4), "yes" if r["significant_95"] else "no"] for _, r in tests.iterrows()]
        lines += ["", f"Paired two-tailed t-tests per segment ({tests['a'].iloc[0]} vs {tests['b'].iloc[0]}):",
                  "", markdown_table(["Rounds", "mean diff", "t", "df", "p", "95%"], rows,
                                     ["---", "---:", "---:", "---:", "---:", ":---:"])]
    ratio = win_ratio(df)
    lines += ["", f"Win ratio {ratio['opponent']} / {ratio['learner']}: "
                  f"{ratio['opponent_wins']} / {ratio['learner_wins']} = {_fmt(float(ratio['ratio']))} "
                  f"({ratio['draws']} draws in {ratio['games']} games)"]
    return "\n".join(lines)


def _figure():
    """A 6 x 3.6 inch figure with one axes, drawn off-screen (Agg)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.6))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot(1, 1, 1)


def _save(fig, ax, path, title: str | None) -> Path:
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    return path


def segment_plot(df: pd.DataFrame, path, segment: int = SEGMENT, title: str | None = None) -> Path:
    """Error-bar plot of the mean win rate per segment (sd over runs) per label."""
    seg = segment_table(df, segment)
    fig, ax = _figure()
    labels = _labels(df)
    for i, lab in enumerate(labels):
        g = seg[seg["label"] == lab]
        x = g["segment"].to_numpy() + (i - (len(labels) - 1) / 2) * 0.06
        ax.errorbar(x, 100 * g["mean"], yerr=100 * g["sd"].fillna(0), marker="o", capsize=4, label=lab)
    names = seg.drop_duplicates("segment")
    ax.set_xticks(names["segment"].to_numpy(), names["rounds"].tolist())
    ax.set_xlabel("rounds")
    ax.set_ylabel("win rate (%)")
    ax.set_ylim(-5, 105)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, ax, path, title)


def ratio_plot(ratios: list[dict], path, title: str | None = None) -> Path:
    """Bar plot of ``opponent wins / learner wins`` across studies (one bar per
    opponent, ``ratios`` from :func:`win_ratio` plus a ``study`` key), with the
    parity line at 1."""
    fig, ax = _figure()
    names = [f"{r['opponent']}\n({r['study']})" for r in ratios]
    values = [r["ratio"] if math.isfinite(r["ratio"]) else np.nan for r in ratios]
    ax.bar(range(len(values)), values, color="tab:blue")
    ax.axhline(1.0, color="k", lw=1, ls="--")
    ax.set_xticks(range(len(values)), names, fontsize=7)
    ax.set_ylabel(f"opponent wins / {ratios[0]['learner'] if ratios else 'learner'} wins")
    return _save(fig, ax, path, title)


def write_segment_report(df: pd.DataFrame, out, segment: int = SEGMENT, title: str | None = None) -> list[Path]:
    """CSV tables (segments, t-tests, ratio), Markdown and the error-bar plot under ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    seg = segment_table(df, segment)
    seg.to_csv(out / "segments.csv", index=False)
    files.append(out / "segments.csv")
    tests = segment_tests(df, segment)
    tests.to_csv(out / "segment_tests.csv", index=False)
    files.append(out / "segment_tests.csv")
    pd.DataFrame([win_ratio(df)]).to_csv(out / "win_ratio.csv", index=False)
    files.append(out / "win_ratio.csv")
    (out / "segments.md").write_text(segments_markdown(df, segment) + "\n")
    files.append(out / "segments.md")
    files.append(segment_plot(df, out / "segments.png", segment, title))
    return files
