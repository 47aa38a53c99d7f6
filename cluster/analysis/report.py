"""Tables and plots of a study, from its result rows alone.

    >>> df = ResultStore(study_dir).read()
    >>> table = result_table(df)
    >>> print(to_markdown(table))
    | Player | Games | Win | Tie | Loss |
    |---|---:|---:|---:|---:|
    | MCTS | 40 | 45.0% (30.7-60.2) | 10.0% (4.0-23.1) | 45.0% (30.7-60.2) |

Rates are per game played by a player (a team win counts for both members);
games that ended in an error are counted apart (``errors``) and are not in the
rates. Intervals are 95% Wilson score intervals. When the rows carry
``died_at`` (the tick a seat died at, null if it survived), the table adds
``Died`` (the share of games the player died in, with ``deaths``,
``death_rate``, ``death_lo``, ``death_hi``) and ``mean_died_at`` (mean tick of
death over the games it died in); games with scores (rows with a
``score_margin``) add, side by side, ``Mean result`` (win 1, tie 0.5, loss 0:
the score of a pairing, with a 95% normal interval; ``result_mean``,
``result_lo``, ``result_hi``) and ``Score diff``: the mean margin over the best
other seat with a 95% normal interval. Rows with ``metric.<name>`` columns
(figures an agent reports about its own play, ``Agent.game_metrics``) add, per
player, the mean over its games that carry the figure (column ``metric.<name>``;
the Markdown table shows it as ``<name>``). How the players behaved is summed per player
over all its rows: ``overruns`` (decisions over the time budget's tolerance),
``invalid_actions`` (actions the game replaced) and ``forfeits`` (games lost on time);
the Markdown table shows each (``Overruns``, ``Invalid actions``, ``Forfeits``) when it
is nonzero for somebody.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cluster.analysis.leaderboard import crosstable_markdown, leaderboard, leaderboard_markdown, write_leaderboard
from cluster.analysis.learning_curves import SEGMENT, segments_markdown, write_segment_report
from cluster.analysis.ratings import RatingError
from cluster.analysis.sequential import sequential_markdown, sequential_of_study, write_sequential_report
from cluster.analysis.summary import LabelSummary, label_order
from cluster.analysis.tables import markdown_table
from cluster.replay.view import write_study_replays
from cluster.results.store import METRIC_PREFIX, ResultStore, StoreError, read_stored_spec

__all__ = ["result_table", "to_markdown", "write_tables", "win_rate_plot",
           "OUTCOMES", "TABLE_COLUMNS", "CONDUCT_COLUMNS", "NotAStudyError", "report_study"]

#: Outcome columns of the table, in paper order: (title, result value, count column).
OUTCOMES = (("Win", "win", "wins"), ("Tie", "tie", "ties"), ("Loss", "loss", "losses"))
#: Columns of :func:`result_table`, in order.
TABLE_COLUMNS = ("games", "Win", "Tie", "Loss", "Mean result", "Score diff",
                 "wins", "win_rate", "win_lo", "win_hi",
                 "ties", "tie_rate", "tie_lo", "tie_hi",
                 "losses", "loss_rate", "loss_lo", "loss_hi",
                 "errors", "Died", "deaths", "death_rate", "death_lo", "death_hi", "mean_died_at",
                 "agent", "mean_iterations", "mean_ms", "result_mean", "result_lo", "result_hi",
                 "score_diff", "score_diff_lo", "score_diff_hi", "overruns", "invalid_actions", "forfeits")
#: Conduct columns of :func:`result_table` (totals per player over all its rows), shown by
#: :func:`to_markdown` when nonzero anywhere, with their titles.
CONDUCT_COLUMNS = {"overruns": "Overruns", "invalid_actions": "Invalid actions", "forfeits": "Forfeits"}


def _runs_design_segments(study_dir: Path) -> int | None:
    """SEGMENT when the study's stored spec is a runs x rounds design, else None."""
    try:
        stored = read_stored_spec(study_dir)
    except StoreError:
        return None
    design = stored.design if stored is not None else None
    return SEGMENT if design is not None and design.runs_design else None


def _tournament_leaderboard(study_dir: Path, df: pd.DataFrame):
    """The leaderboard of a tournament's rows (None for a lineup study); seeded by the study
    seed, so ``arena report`` prints what ``arena run`` printed."""
    try:
        stored = read_stored_spec(study_dir)
    except StoreError:
        return None
    if stored is None or stored.design is None or not stored.design.tournament:
        return None
    seed = stored.data.get("study", {}).get("seed", 0)
    try:
        return leaderboard(df, seed=int(seed))
    except RatingError as exc:
        warnings.warn(f"no leaderboard: {exc}", RuntimeWarning, stacklevel=2)
        return None


def _fmt(rate: float, lo: float, hi: float) -> str:
    if math.isnan(rate):
        return "n/a"
    return f"{100 * rate:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"


def _summary(rows: pd.DataFrame) -> dict:
    """One row of :func:`result_table`: the label's :class:`LabelSummary` (the rules of
    which games count, deaths, ties and the score live there), as text and numbers."""
    summary = LabelSummary.of(rows)
    games = summary.games
    out = {"games": games}
    for title, key, count_column in OUTCOMES:
        rate = summary.rate(key)
        lo, hi = summary.interval(key)
        out[title] = _fmt(rate, lo, hi)
        out[count_column] = summary.counts[key]
        out[f"{key}_rate"] = rate
        out[f"{key}_lo"] = lo
        out[f"{key}_hi"] = hi
    out["errors"] = summary.errors
    if "died_at" in rows.columns:
        rate = summary.death_rate
        lo, hi = summary.death_interval()
        out["Died"] = _fmt(rate, lo, hi)
        out["deaths"], out["death_rate"], out["death_lo"], out["death_hi"] = summary.deaths, rate, lo, hi
        out["mean_died_at"] = summary.died_at.mean
    if "agent" in rows.columns:
        out["agent"] = ", ".join(dict.fromkeys(rows["agent"].astype(str)))
    if "mean_iterations" in rows.columns:
        out["mean_iterations"] = float(rows["mean_iterations"].mean()) if len(rows) else math.nan
    if "mean_ms" in rows.columns:
        out["mean_ms"] = float(rows["mean_ms"].mean()) if len(rows) else math.nan
    if "score_margin" in rows.columns:  # games with scores: mean result and margin, 95% normal intervals
        mean, half = summary.points.mean, summary.points.half_width
        out["result_mean"], out["result_lo"], out["result_hi"] = mean, mean - half, mean + half
        out["Mean result"] = "n/a" if not games else f"{mean:.3f} ({mean - half:.3f} to {mean + half:.3f})"
        mean, half = summary.margin.mean, summary.margin.half_width
        out["score_diff"], out["score_diff_lo"], out["score_diff_hi"] = mean, mean - half, mean + half
        out["Score diff"] = "n/a" if not summary.margin.n else \
            f"{mean:+.2f} ({mean - half:+.2f} to {mean + half:+.2f})"
    for column in metric_columns(rows):
        figure = summary.figures.get(column)
        out[column] = figure.mean if figure is not None else math.nan
    out["overruns"], out["invalid_actions"] = summary.overruns, summary.invalid_actions
    out["forfeits"] = summary.forfeits
    return out


def metric_columns(df: pd.DataFrame) -> list[str]:
    """The ``metric.<name>`` columns of the rows (agents' own figures), in order."""
    return [c for c in df.columns if c.startswith(METRIC_PREFIX)]


def result_table(df: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Per player (``label``): games, and Win / Tie / Loss as "45.0% (35.2-55.1)", with
    the numbers behind them (``wins``, ``win_rate``, ``win_lo``, ``win_hi``, ... ,
    ``errors``). Rows in lineup order; with ``by`` (a column, e.g. ``view_range``)
    the index is (by, label)."""
    records, index = [], []
    if df is None or len(df) == 0:
        table = pd.DataFrame(columns=list(TABLE_COLUMNS))
        table.index.name = "Player"
        return table
    labels = label_order(df)
    groups = [(None, df)] if by is None else [(k, g) for k, g in df.groupby(by, sort=True, dropna=False)]
    for key, group in groups:
        for label in labels:
            rows = group[group["label"] == label]
            if by is not None and rows.empty:
                continue
            records.append(_summary(rows))
            index.append(label if by is None else (key, label))
    table = pd.DataFrame.from_records(records)
    table = table[[c for c in TABLE_COLUMNS if c in table.columns]
                  + [c for c in table.columns if c.startswith(METRIC_PREFIX)]]
    if by is None:
        table.index = pd.Index(index, name="Player")
    else:
        table.index = pd.MultiIndex.from_tuples(index, names=[by, "Player"])
    return table


def _md_cell(value) -> str:
    if isinstance(value, float):
        text = "n/a" if math.isnan(value) else f"{value:.4g}"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(table: pd.DataFrame,
                columns=("games", "Win", "Tie", "Loss", "Mean result", "Score diff")) -> str:
    """A GitHub-style Markdown table (no ``tabulate`` needed): the index columns,
    then ``columns`` (numbers right-aligned); a ``Died`` column when the rows carried
    ``died_at`` and somebody died (games without deaths, e.g. card games, leave it
    null); an ``Errors`` column if any game errored; ``Overruns``, ``Invalid actions`` and
    ``Forfeits`` (:data:`CONDUCT_COLUMNS`) each when nonzero for some player."""
    columns = [c for c in columns if c in table.columns]
    if "Died" in table.columns and "Died" not in columns and len(table) \
            and table["Died"].notna().any() and table["deaths"].fillna(0).sum() > 0:
        columns.append("Died")
    if "errors" in table.columns and len(table) and int(table["errors"].sum()) > 0 \
            and "errors" not in columns:
        columns.append("errors")
    columns += [c for c in CONDUCT_COLUMNS if c in table.columns and c not in columns and len(table)
                and int(table[c].fillna(0).sum()) > 0]
    columns += [c for c in table.columns if c.startswith(METRIC_PREFIX) and c not in columns
                and table[c].notna().any()]
    index_names = [n if n is not None else "" for n in table.index.names]
    if index_names == [""]:
        index_names = ["Player"]
    titles = {"games": "Games", "errors": "Errors", **CONDUCT_COLUMNS,
              **{c: c[len(METRIC_PREFIX):] for c in columns if c.startswith(METRIC_PREFIX)}}
    header = index_names + [titles.get(c, c) for c in columns]
    align = ["---"] * len(index_names) + ["---:"] * len(columns)
    rows = []
    for key, row in table.iterrows():
        keys = list(key) if isinstance(key, tuple) else [key]
        rows.append([_md_cell(k) for k in keys] + [_md_cell(row[c]) for c in columns])
    return markdown_table(header, rows, align) + "\n"


def write_tables(table: pd.DataFrame, directory, stem: str = "results") -> tuple[Path, Path]:
    """``<stem>.csv`` (all columns) and ``<stem>.md`` in ``directory``; returns both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = directory / f"{stem}.csv", directory / f"{stem}.md"
    table.to_csv(csv_path)
    md_path.write_text(to_markdown(table), encoding="utf-8")
    return csv_path, md_path


def win_rate_plot(df: pd.DataFrame, path, by: str | None = None, title: str | None = None) -> Path:
    """Win rate per player with 95% Wilson bars; with ``by`` (a numeric or
    categorical column) one line per player over its values. Saved to ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(7, 4.2), tight_layout=True)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    table = result_table(df, by=by)
    if by is None:
        labels = list(table.index)
        rates = table["win_rate"].to_numpy(dtype=float) if len(table) else np.array([])
        lo = table["win_lo"].to_numpy(dtype=float) if len(table) else np.array([])
        hi = table["win_hi"].to_numpy(dtype=float) if len(table) else np.array([])
        x = np.arange(len(labels))
        ax.bar(x, rates, yerr=np.vstack([rates - lo, hi - rates]) if len(labels) else None,
               capsize=4, color="#4c78a8")
        ax.set_xticks(x, [str(label) for label in labels])
    else:
        keys = list(dict.fromkeys(k for k, _ in table.index))
        numeric = all(isinstance(k, (int, float, np.integer, np.floating)) and not pd.isna(k)
                      for k in keys)
        positions = {k: (float(k) if numeric else i) for i, k in enumerate(keys)}
        for label in dict.fromkeys(lbl for _, lbl in table.index):
            sub = table.xs(label, level="Player")
            x = np.array([positions[k] for k in sub.index])
            rates = sub["win_rate"].to_numpy(dtype=float)
            err = np.vstack([rates - sub["win_lo"].to_numpy(dtype=float),
                             sub["win_hi"].to_numpy(dtype=float) - rates])
            ax.errorbar(x, rates, yerr=err, marker="o", capsize=3, label=str(label))
        if not numeric:
            ax.set_xticks(list(positions.values()), [str(k) for k in keys])
        ax.set_xlabel(by)
        ax.legend()
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% Wilson CI)")
    if title:
        ax.set_title(title)
    fig.savefig(path)
    return path


def varied_columns(df: pd.DataFrame) -> list[str]:
    """The ``vary.<option>`` columns of a study with conditions (``design.vary``)."""
    return [c for c in df.columns if c.startswith("vary.") and df[c].notna().any()]


def write_study_report(df: pd.DataFrame, out, title: str | None = None,
                       segments: int | None = None, study_dir=None,
                       first_label: str | None = None) -> list[Path]:
    """Tables and plots of a study from its rows: the overall table, and for a
    study with conditions one table per varied option and a win rate plot
    against it (e.g. against the view range); for a runs x rounds study
    (``segments`` = rounds per segment) the learning curves of
    :mod:`cluster.analysis.learning_curves`. With ``study_dir``, also the study's replays
    (:func:`cluster.replay.view.write_study_replays`: the longest game, a loss
    of ``first_label``, a win) and ``replays.md`` linking them. Returns the
    files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    if df is None or not len(df):
        return files
    files += list(write_tables(result_table(df), out, "results_table"))
    _plot_or_warn(files, "win_rate.png", win_rate_plot, df, out / "win_rate.png", title=title)
    for column in varied_columns(df):
        option = column[len("vary."):]
        data = df.rename(columns={column: option})
        files += list(write_tables(result_table(data, by=option), out, f"results_by_{option}"))
        name = f"win_rate_by_{option}.png"
        _plot_or_warn(files, name, win_rate_plot, data, out / name, by=option,
                      title=f"{title}: win rate against {option}" if title else None)
    if segments:
        try:
            files += write_segment_report(df, out, segments, title)
        except Exception as exc:  # noqa: BLE001 - like a plot, never fail a study
            warnings.warn(f"segment report not written: {type(exc).__name__}: {exc}", RuntimeWarning,
                          stacklevel=2)
    if study_dir is not None:
        files += _write_replays(df, out, Path(study_dir), first_label)
    return files


def _write_replays(df: pd.DataFrame, out: Path, study_dir: Path, first_label: str | None) -> list[Path]:
    """Replay pages of the study and ``replays.md`` (relative links); a failure
    is a warning, like a failed plot."""
    try:
        pages = write_study_replays(study_dir, df, first_label=first_label)
    except Exception as exc:  # noqa: BLE001 - replays must not fail a study
        warnings.warn(f"replays not written: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)
        return []
    if not pages:
        return []
    lines = ["# Replays", "", "Self-contained pages (open in a browser): step slider, play/pause, "
             "each seat's action, search iterations and value.", ""]
    for page in pages:
        lines.append(f"- [{page.stem}](../replays/{page.name})")
    index = out / "replays.md"
    index.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [*pages, index]


def _plot_or_warn(files: list[Path], name: str, plot, *args, **kwargs) -> None:
    """Draw one plot into ``files``; a failure is a warning naming the plot and
    the reason (the tables are written either way, so the study still finishes)."""
    try:
        files.append(plot(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - a plot must not fail a study
        warnings.warn(f"plot {name} not written: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


class NotAStudyError(FileNotFoundError):
    """A path given as a study directory is not one; the message is one line saying what it is."""


def not_a_study_message(path: Path) -> str:
    """One line: what ``path`` is instead of a study directory, and what to pass instead."""
    path = Path(path)
    if not path.exists():
        return f"{path}: no such directory"
    if not path.is_dir():
        return f"{path}: not a directory; pass a study directory (it holds results/)"
    if (path / "sweep.json").is_file() or (path / "tune").is_dir():
        results = path.parent.parent if path.parent.name == "sweeps" else path.parent
        trials = sorted(p.name for p in results.glob(f"{path.name}-t*") if (p / "results").is_dir())
        example = f"; each trial is a study, e.g. arena report {results / trials[0]}" if trials else ""
        return f"{path}: a sweep directory, not a study (its ranked table: {path / 'report' / 'ranked.md'}){example}"
    if path.name == "sweeps":
        return f"{path}: the sweeps folder, not a study; see {path}/<sweep>/report/ranked.md"
    studies = sorted(p.name for p in path.iterdir() if (p / "results").is_dir())
    if studies:
        return (f"{path}: a results folder holding {len(studies)} "
                f"stud{'y' if len(studies) == 1 else 'ies'}, not a study; pass one, e.g. "
                f"arena report {path / studies[0]}")
    return f"{path}: not a study directory (no results/ inside)"


def by_condition_markdown(df: pd.DataFrame) -> list[str]:
    """Lines of one Markdown table per varied option of a study with conditions
    (``design.vary``, e.g. the view range), each preceded by ``By <option>:``;
    none for a study without conditions."""
    parts: list[str] = []
    for column in varied_columns(df):
        option = column[len("vary."):]
        parts += ["", f"By {option}:", "",
                  to_markdown(result_table(df.rename(columns={column: option}), by=option))]
    return parts


class RoundsError(ValueError):
    """``arena report --rounds`` asked of a study it does not apply to, or of rounds not played."""


def first_rounds(study_dir: Path, df: pd.DataFrame, rounds: int) -> tuple[pd.DataFrame, str]:
    """The rows of the first ``rounds`` rounds of a round robin or gauntlet, every one of
    them complete (the balanced design of a shorter tournament: what a tournament stopped
    before its last round reports, reading complete rounds only, as decisions do), and a
    line saying so. Board ``b`` of such a tournament is table ``b // R``, round ``b % R``
    (:mod:`cluster.spec.tournament`). Raises :class:`RoundsError` naming what does not fit."""
    stored = read_stored_spec(study_dir)
    design = None if stored is None else stored.design
    if design is None or design.format not in ("round_robin", "gauntlet") or design.stop is not None:
        raise RoundsError(f"--rounds: {study_dir} is not a round robin or gauntlet without a stop "
                          f"(its rounds are not fixed in advance)")
    total_rounds = int(design.rounds)
    if not 1 <= rounds <= total_rounds:
        raise RoundsError(f"--rounds: must be in 1 .. {total_rounds} (the tournament's design.rounds), got {rounds}")
    per_round = stored.study_spec().design.total_games // total_rounds
    round_of = df["board_seed"].astype("int64") % total_rounds
    games = df.drop_duplicates("game_index").assign(round=round_of).groupby("round")["game_index"].nunique()
    for r in range(rounds):
        have = int(games.get(r, 0))
        if have != per_round:
            raise RoundsError(f"--rounds: round {r + 1} has {have} of its {per_round} games; "
                              f"the complete rounds are the first {r} (resume the study to play the rest)")
    kept = df[round_of < rounds]
    return kept, f"the first {rounds} of {total_rounds} rounds ({rounds * per_round} games, every one complete)"


def report_study(study_dir, plot: bool = True, rounds: int | None = None) -> str:
    """Re-read a (finished or interrupted) study's Parquet rows, rewrite its report
    directory and return the tables as Markdown text (``rounds``: a round robin's or
    gauntlet's first complete rounds only, :func:`first_rounds`)."""
    study_dir = Path(study_dir)
    if not (study_dir / "results").is_dir():
        raise NotAStudyError(not_a_study_message(study_dir))
    df = ResultStore(study_dir).read()
    if not len(df):
        return f"{study_dir}: no finished games yet"
    scope = ""
    if rounds is not None:
        df, scope = first_rounds(study_dir, df, rounds)
        scope = f" ({scope})"
    games = df["game_index"].nunique()
    parts = [f"{study_dir.name}: {games} games{scope}", "", to_markdown(result_table(df))]
    parts += by_condition_markdown(df)
    sequential = sequential_of_study(study_dir, df)
    if sequential is not None:
        parts += ["", sequential_markdown(sequential).rstrip()]
    segments = _runs_design_segments(study_dir)
    if segments:
        parts += ["", segments_markdown(df, segments)]
    board = _tournament_leaderboard(study_dir, df)
    if board is not None:
        parts[2:2] = ["Leaderboard:", "", leaderboard_markdown(board), "Crosstable:", "", crosstable_markdown(board)]
    from cluster.analysis.adaptive import adaptive_markdown, adaptive_of_study, write_adaptive_report

    adaptive = adaptive_of_study(study_dir, df)
    if adaptive is not None:
        parts += ["", adaptive_markdown(adaptive).rstrip()]
    from cluster.analysis.swiss import swiss_markdown, swiss_of_study, write_swiss_report

    swiss = swiss_of_study(study_dir, df)
    if swiss is not None:
        parts += ["", swiss_markdown(swiss).rstrip()]
    if plot:
        files = write_study_report(df, study_dir / "report", title=study_dir.name, segments=segments,
                                   study_dir=study_dir)
        if sequential is not None:
            files += write_sequential_report(sequential, study_dir / "report", title=study_dir.name)
        if board is not None:
            files += write_leaderboard(board, study_dir / "report", title=study_dir.name)
        if adaptive is not None:
            files += write_adaptive_report(adaptive, study_dir / "report", title=study_dir.name)
        if swiss is not None:
            files += write_swiss_report(swiss, study_dir / "report", title=study_dir.name)
        parts.append("report files: " + ", ".join(str(f) for f in files))
    return "\n".join(parts)
