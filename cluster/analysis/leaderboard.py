"""A tournament's crosstable and leaderboard, from its result rows alone.

    >>> board = leaderboard(ResultStore(study_dir).read(), seed=0)    # doctest: +SKIP
    >>> print(leaderboard_markdown(board))                            # doctest: +SKIP

**Pairwise results.** Every game counts as the pairwise results it implies, as
``arena rate`` counts them (:func:`cluster.analysis.ratings.pairwise_results`):
in a free-for-all each pair of seats is one result (the better result wins, equal
results tie), teammates are never compared, errored games count nothing. Two
seats of one entrant (a team, or a small gauntlet field repeated round a table)
are not compared with each other. An entrant is its lineup label.

**Crosstable.** For every ordered pair of entrants that met: pairwise results,
wins, ties, losses and the score of the row entrant (win 1, tie 1/2), as a long
table (``crosstable.csv``) and as a square one in Markdown (row against column).

**Leaderboard.** Bradley-Terry-Davidson ratings on the Elo scale, centred on the
entrants' mean (:func:`cluster.analysis.ratings.bootstrap_fit`), with 95% bootstrap
intervals that resample whole boards (a table's board with all its seat
rotations: the pairwise results of one game, and the rotations of one board, are
never split), and each entrant's *rank interval*: the 2.5% and 97.5% points of
its rank over the same bootstrap resamples (rank 1 is the best; ``3-5`` means
its rank is 3, 4 or 5 in 95% of the resamples). Two entrants whose rank intervals
do not overlap are ordered at about that confidence; overlapping ones are not
(a rank interval is per entrant, not a joint statement about the whole order).
With fewer than :data:`MIN_BOARDS` boards the bootstrap has too few units to mean
much (two boards gave two copies of one agent non-overlapping intervals): the
leaderboard then carries a warning, printed above the table.

:func:`leaderboard` is a function of the rows and a seed only, so the
tournament's live refresh, ``arena report`` and the adaptive schedule read the
same numbers from the same games.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from cluster.analysis.ratings import RatingError, bootstrap_fit, check_connected, pairwise_results
from cluster.analysis.tables import markdown_table

__all__ = ["Leaderboard", "crosstable", "leaderboard", "leaderboard_markdown", "crosstable_markdown",
           "write_leaderboard", "leaderboard_plot", "entrant_pairs", "MIN_BOARDS", "RANK_LEVEL"]

#: Fewer boards than this and the leaderboard warns that its intervals mean little.
MIN_BOARDS = 10
#: Coverage of the rating and rank intervals.
RANK_LEVEL = 0.95


@dataclass
class Leaderboard:
    """What :func:`leaderboard` computes."""

    table: pd.DataFrame
    """Index ``Entrant`` (best first); columns ``rank``, ``rating``, ``lo``, ``hi`` (95%
    interval), ``rank_lo``, ``rank_hi`` (95% rank interval), ``score`` (mean pairwise
    score), ``results`` (pairwise results), ``wins``, ``ties``, ``losses``, ``games``."""
    crosstable: pd.DataFrame
    """:func:`crosstable` of the same rows."""
    boards: int
    """Boards the bootstrap resampled."""
    games: int
    """Games counted (errored games left out)."""
    bootstrap: int
    """Bootstrap resamples."""
    seed: int
    """Seed of the resampling draws."""
    tie_parameter: float
    """Davidson's ``nu``."""
    warnings: list[str] = field(default_factory=list)
    """Lines to show above the table (few boards)."""


def entrant_pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """The pairwise results of ``rows`` between different entrants (labels): ``board``
    (``study_id``, ``board_seed``), ``game_index``, ``first``, ``second``, ``score``."""
    keyed = rows.assign(player=rows["label"].astype(str))
    pairs = pairwise_results(keyed)
    return pairs[pairs["first"] != pairs["second"]].reset_index(drop=True)


def crosstable(rows: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """For every ordered pair of entrants that met: ``entrant``, ``opponent``, ``results``
    (pairwise results), ``wins``, ``ties``, ``losses`` and ``score`` (of ``entrant``)."""
    pairs = entrant_pairs(rows) if pairs is None else pairs
    both = pd.concat([pairs[["first", "second", "score"]].rename(columns={"first": "entrant", "second": "opponent"}),
                      pairs[["second", "first"]].assign(score=1.0 - pairs["score"])
                      .rename(columns={"second": "entrant", "first": "opponent"})], ignore_index=True)
    grouped = both.groupby(["entrant", "opponent"], sort=True)["score"]
    out = pd.DataFrame({"results": grouped.size(),
                        "wins": grouped.apply(lambda s: int((s == 1.0).sum())),
                        "ties": grouped.apply(lambda s: int((s == 0.5).sum())),
                        "losses": grouped.apply(lambda s: int((s == 0.0).sum())),
                        "score": grouped.mean()})
    return out.reset_index()


def leaderboard(rows: pd.DataFrame, seed: int = 0, bootstrap: int = 1000,
                min_boards: int = MIN_BOARDS) -> Leaderboard:
    """The leaderboard and crosstable of a tournament's rows (``ResultStore.read()``; see
    the module docstring). Raises :class:`RatingError` when there is nothing to rate or
    the entrants fall into groups that never met."""
    if not isinstance(bootstrap, int) or bootstrap < 1:
        raise RatingError(f"bootstrap: must be a positive int, got {bootstrap!r}")
    rows = rows[rows["result"] != "error"] if len(rows) else rows
    pairs = entrant_pairs(rows) if len(rows) else pd.DataFrame()
    if pairs.empty:
        raise RatingError("no pairwise results between entrants yet (no finished game between opponents)")
    players = sorted(set(pairs["first"]) | set(pairs["second"]))
    check_connected(pairs, players)
    fit = bootstrap_fit(pairs, players, seed=seed, bootstrap=bootstrap, resample="boards")
    lo, hi = np.percentile(fit.draws, [50 * (1 - RANK_LEVEL), 50 * (1 + RANK_LEVEL)], axis=0)
    # rank in every resample: 1 + entrants rated strictly higher
    ranks = 1 + (fit.draws[:, None, :] > fit.draws[:, :, None]).sum(axis=2)
    rank_lo = np.quantile(ranks, (1 - RANK_LEVEL) / 2, axis=0, method="lower")
    rank_hi = np.quantile(ranks, (1 + RANK_LEVEL) / 2, axis=0, method="higher")
    point_rank = 1 + (fit.point[None, :] > fit.point[:, None]).sum(axis=1)
    won, lost, tied = fit.wins.sum(axis=1), fit.wins.sum(axis=0), fit.ties.sum(axis=1)
    games = rows.drop_duplicates(["label", "game_index"]).groupby("label").size()
    table = pd.DataFrame({
        "rank": point_rank.astype(int), "rating": fit.point, "lo": lo, "hi": hi,
        "rank_lo": rank_lo.astype(int), "rank_hi": rank_hi.astype(int),
        "score": (won + 0.5 * tied) / np.maximum(won + tied + lost, 1),
        "results": (won + tied + lost).astype(int), "wins": won.astype(int), "ties": tied.astype(int),
        "losses": lost.astype(int), "games": [int(games.get(p, 0)) for p in players]},
        index=pd.Index(players, name="Entrant"))
    table = table.sort_values(["rating", "results"], ascending=[False, False], kind="stable")
    warnings = []
    if fit.units < min_boards:
        warnings.append(f"only {fit.units} board{'s' * (fit.units != 1)} (fewer than {min_boards}): the "
                        f"bootstrap intervals and rank intervals are unreliable; play more rounds")
    return Leaderboard(table=table, crosstable=crosstable(rows, pairs), boards=fit.units,
                       games=int(rows["game_index"].nunique()), bootstrap=bootstrap, seed=int(seed),
                       tie_parameter=fit.tie_parameter, warnings=warnings)


def _rank_text(lo: int, hi: int) -> str:
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def leaderboard_markdown(board: Leaderboard) -> str:
    """The leaderboard in Markdown, its warnings above it and how it was computed below it."""
    rows = [[str(int(r["rank"])), entrant, f"{r['rating']:.0f}", f"{r['lo']:.0f} to {r['hi']:.0f}",
             _rank_text(int(r["rank_lo"]), int(r["rank_hi"])), f"{100 * r['score']:.1f}%",
             f"{int(r['wins'])}-{int(r['ties'])}-{int(r['losses'])}", str(int(r["games"]))]
            for entrant, r in board.table.iterrows()]
    lines = [f"**Warning:** {w}" for w in board.warnings] + ([""] if board.warnings else [])
    lines.append(markdown_table(["Rank", "Entrant", "Elo", "95% interval", "95% rank", "Score", "Pairwise W-T-L",
                                "Games"], rows, ["---:", "---", "---:", "---:", "---:", "---:", "---:", "---:"]))
    lines += ["", f"Bradley-Terry-Davidson ratings (Elo scale, mean 0; tie parameter nu = "
                  f"{board.tie_parameter:.3g}) with 95% intervals of the rating and the rank from "
                  f"{board.bootstrap} bootstrap resamples of {board.boards} boards (seed {board.seed}); "
                  f"{board.games} games."]
    return "\n".join(lines) + "\n"


def crosstable_markdown(board: Leaderboard) -> str:
    """The square crosstable: row entrant's score against the column entrant and the
    pairwise W-T-L, entrants in leaderboard order."""
    order = list(board.table.index)
    cells = {(r.entrant, r.opponent): r for r in board.crosstable.itertuples(index=False)}
    rows = []
    for a in order:
        line = [a]
        for b in order:
            cell = cells.get((a, b))
            line.append("" if a == b else "-" if cell is None else
                        f"{100 * cell.score:.0f}% {cell.wins}-{cell.ties}-{cell.losses}")
        rows.append(line)
    short = [str(i + 1) for i in range(len(order))]
    header = ["Entrant \\ opponent (rank)"] + short
    text = markdown_table(header, [[f"{i + 1}. {row[0]}"] + row[1:] for i, row in enumerate(rows)],
                          ["---"] + ["---:"] * len(order))
    return text + "\n\nA cell: the row entrant's pairwise score against the column's, and its wins-ties-losses.\n"


def leaderboard_plot(board: Leaderboard, path, title: str | None = None) -> Path:
    """Ratings with their 95% bootstrap intervals, best at the top, rank intervals in the labels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = board.table
    fig = Figure(figsize=(7, 1.2 + 0.45 * len(table)), tight_layout=True)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(table))[::-1]
    rating = table["rating"].to_numpy(dtype=float)
    err = np.clip(np.vstack([rating - table["lo"].to_numpy(float), table["hi"].to_numpy(float) - rating]), 0, None)
    ax.errorbar(rating, y, xerr=err, fmt="o", capsize=4, color="#4c78a8")
    names = [f"{e} (rank {_rank_text(int(r.rank_lo), int(r.rank_hi))})" for e, r in zip(table.index, table.itertuples())]
    ax.set_yticks(y, names)
    ax.axvline(0.0, color="#999999", lw=0.8)
    ax.set_xlabel(f"Elo (mean 0), 95% bootstrap interval over {board.boards} boards")
    ax.grid(axis="x", alpha=0.3)
    if title:
        ax.set_title(title)
    fig.savefig(path)
    return path


def write_leaderboard(board: Leaderboard, out, title: str | None = None) -> list[Path]:
    """``leaderboard.md`` (leaderboard and crosstable), ``leaderboard.csv``,
    ``crosstable.csv`` and ``leaderboard.png`` in ``out``; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, csv, cross = out / "leaderboard.md", out / "leaderboard.csv", out / "crosstable.csv"
    md.write_text((f"# {title}\n\n" if title else "") + "## Leaderboard\n\n" + leaderboard_markdown(board)
                  + "\n## Crosstable\n\n" + crosstable_markdown(board), encoding="utf-8")
    board.table.to_csv(csv)
    board.crosstable.to_csv(cross, index=False)
    files = [md, csv, cross]
    try:
        files.append(leaderboard_plot(board, out / "leaderboard.png", title=title))
    except Exception as exc:  # noqa: BLE001 - a plot must not fail a study
        import warnings

        warnings.warn(f"plot leaderboard.png not written: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
    return files


def leaderboard_metrics(board: Leaderboard) -> dict[str, float]:
    """One metric per entrant and figure (``rating/<label>``, ``rating_lo``, ``rating_hi``,
    ``rank``, ``rank_lo``, ``rank_hi``), plus ``leaderboard/boards``: what the study's MLflow
    run charts, so two tournaments compare side by side."""
    from cluster.tracking.client import metric_key

    out = {"leaderboard/boards": float(board.boards)}
    for entrant, r in board.table.iterrows():
        for key, column in (("rating", "rating"), ("rating_lo", "lo"), ("rating_hi", "hi"), ("rank", "rank"),
                            ("rank_lo", "rank_lo"), ("rank_hi", "rank_hi")):
            out[metric_key(key, str(entrant))] = float(r[column])
    return out


def order_of(board: Leaderboard) -> Sequence[str]:
    """The entrants, best first."""
    return list(board.table.index)

