"""What a sweep's trials score, and how the best settings are chosen and reported.

* :class:`ObjectiveTally`: the running objective of one label over completed boards;
* :func:`order_trials` / :func:`select_top`: the search trials in selection order, and
  the settings re-evaluated (complete trials first);
* :func:`rank_settings`: the re-evaluated settings ranked, each tested against the
  best (:mod:`cluster.stats`: two-proportion or Welch z-test, Holm-corrected);
* :func:`ranked_table` and :func:`report_markdown`: the printed report.

:mod:`cluster.sweep.driver` runs the trials on Ray Tune, :mod:`cluster.sweep.tracking`
mirrors them to MLflow.
"""
from __future__ import annotations

import json
import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from cluster.analysis.summary import LabelSummary
from cluster.analysis.tables import markdown_table
from cluster.spec.sweep import plain
from cluster.stats import Z95, holm, sample_variance, two_proportion_z_test, welch_z_test

__all__ = ["ObjectiveTally", "rank_settings", "order_trials", "select_top", "setting_key", "ranked_table",
           "report_markdown", "compare_to_best", "METRIC", "TIME_ATTR", "GAMES_ATTR"]

#: Tune's time attribute for ASHA: whole boards (a board seed with all its games, or a
#: run with all its rounds) the trial has completed; the objective counts only those.
TIME_ATTR = "boards_done"
#: Games of the completed boards (``boards_done * games per board``).
GAMES_ATTR = "games_done"
METRIC = "objective"


# --- the objective ----------------------------------------------------------------------
class ObjectiveTally:
    """Running objective of one label from result rows: win rate (Wilson CI) or mean reward (normal CI).

    Games come in whole boards of ``games_per_board`` games (game ``g`` is on
    board ``g // games_per_board``; see :mod:`cluster.spec.sweep`). The objective
    counts the games of *completed* boards only, so what ASHA compares at a rung
    is always whole boards (every seat rotation of each), the same boards for
    every setting of the search."""

    def __init__(self, label: str, metric: str = "win_rate", games_per_board: int = 1):
        self.label, self.metric = label, metric
        self.games_per_board = max(1, int(games_per_board))
        self.results: dict[int, list[Mapping]] = {}  # game -> the label's rows

    def add(self, rows: Iterable[Mapping]) -> None:
        for row in rows:
            entries = self.results.setdefault(int(row["game_index"]), [])
            if row["label"] == self.label:
                entries.append(row)

    def add_frame(self, df: pd.DataFrame | None) -> None:
        if df is not None and len(df):
            self.add(df.to_dict("records"))

    @property
    def games(self) -> set[int]:
        """Indices of the games recorded so far (complete boards or not)."""
        return set(self.results)

    def complete_boards(self) -> list[int]:
        per = self.games_per_board
        boards: dict[int, int] = {}
        for g in self.results:
            boards[g // per] = boards.get(g // per, 0) + 1
        return sorted(b for b, count in boards.items() if count == per)

    def summary(self) -> LabelSummary:
        """The label's rows on complete boards, summarised (:mod:`cluster.analysis.summary`
        decides which games count)."""
        per = self.games_per_board
        boards = set(self.complete_boards())
        return LabelSummary.of(row for g, rows in self.results.items() if g // per in boards for row in rows)

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.summary().counts)

    @property
    def n(self) -> int:
        """Games of the label on complete boards that ended without error."""
        return self.summary().games

    def metrics(self) -> dict[str, float]:
        summary = self.summary()
        counts, n = summary.counts, summary.games
        if self.metric == "win_rate":
            value = summary.rate("win") if n else 0.0
            lo, hi = summary.interval("win") if n else (0.0, 1.0)
        else:
            reward = summary.reward
            value = reward.mean if n else 0.0
            var = sample_variance(reward.total, reward.total_sq, n)
            half = Z95 * math.sqrt(var / n) if n else math.inf
            lo, hi = value - half, value + half
        boards = len(self.complete_boards())
        return {METRIC: float(value), "objective_lo": float(lo), "objective_hi": float(hi),
                TIME_ATTR: boards, GAMES_ATTR: boards * self.games_per_board, "games": n,
                "wins": counts["win"], "ties": counts["tie"], "losses": counts["loss"],
                "errors": counts["error"], "reward_sq_sum": summary.reward.total_sq}


# --- selection and statistics -----------------------------------------------------------
def compare_to_best(best: Mapping, other: Mapping, metric: str) -> tuple[float, float]:
    """(z, two-sided p) of best vs other: pooled two-proportion z-test (win rate) or
    Welch's z-test (mean reward)."""
    if metric == "win_rate":
        return two_proportion_z_test(best["wins"], best["games"], other["wins"], other["games"])

    def var(s):
        return sample_variance(s[METRIC] * s["games"], s["reward_sq_sum"], s["games"])

    return welch_z_test(best[METRIC], var(best), best["games"], other[METRIC], var(other), other["games"])


def rank_settings(stats: list[dict], metric: str, alpha: float = 0.05) -> pd.DataFrame:
    """Rank re-evaluated settings by objective; test each against the best (Holm-corrected).

    Ties are broken by a fixed rule, so a re-run ranks the same data the same way:
    higher re-evaluation objective, then more re-evaluation games without error, then the
    better search rank (``search_rank``: the search's objective, then the setting order of
    :func:`setting_key`)."""
    ordered = sorted(stats, key=lambda s: (-s[METRIC], -s["games"], s.get("search_rank", 0)))
    best = ordered[0]
    raw = [math.nan] + [compare_to_best(best, s, metric)[1] for s in ordered[1:]]
    adjusted = holm(raw)
    rows = []
    for rank, (s, p, p_adj) in enumerate(zip(ordered, raw, adjusted), start=1):
        row = dict(s)
        row["rank"] = rank
        row["p_vs_best"] = p
        row["p_holm"] = p_adj
        row["significant"] = "best" if rank == 1 else ("yes" if p_adj < alpha else "no")
        rows.append(row)
    return pd.DataFrame(rows).set_index("rank")


def _fmt_objective(value: float, lo: float, hi: float, metric: str) -> str:
    if metric == "win_rate":
        return f"{100 * value:.1f}% ({100 * lo:.1f}-{100 * hi:.1f})"
    return f"{value:.3f} ({lo:.3f} to {hi:.3f})"


def _value_key(value) -> tuple:
    """Numbers (and bools) by value, anything else after them by its JSON text."""
    if isinstance(value, (bool, int, float, np.integer, np.floating)) and not (
            isinstance(value, float) and math.isnan(value)):
        return (0, float(value), "")
    return (1, 0.0, json.dumps(value, sort_keys=True, default=str))


def setting_key(sweep, params: Mapping) -> tuple:
    """The fixed order of settings that breaks ties: the searched values in the order of
    ``[search]``, each compared by value (numbers ascending; other values after them, by text)."""
    return tuple(_value_key(plain(params[p.path])) for p in sweep.search)


def order_trials(trials: pd.DataFrame, sweep) -> pd.DataFrame:
    """Search trials in selection order (a pure function of their results, never of the order
    Tune returns them in): complete before stopped-early before error; then more completed
    boards; then higher search objective; then :func:`setting_key`. Adds ``search_rank`` (1 = best)."""
    status_order = {"COMPLETE": 0, "STOPPED": 1, "ERROR": 2}
    keyed = []
    for i, (_, row) in enumerate(trials.iterrows()):
        boards = row.get(TIME_ATTR, math.nan)
        objective = row.get(METRIC, math.nan)
        keyed.append(((status_order.get(row["status"], 3),
                       -(0 if pd.isna(boards) else boards),
                       math.inf if pd.isna(objective) else -objective,
                       setting_key(sweep, {p.path: row[p.path] for p in sweep.search})), i))
    order = [i for _, i in sorted(keyed)]
    out = trials.iloc[order].reset_index(drop=True)
    out["search_rank"] = range(1, len(out) + 1)
    return out


def select_top(trials: pd.DataFrame, k: int, sweep=None) -> pd.DataFrame:
    """The settings to re-evaluate: the first ``k`` trials of :func:`order_trials` that did not
    fail. Complete trials always come first; a trial ASHA stopped early is re-evaluated only when
    fewer than ``k`` trials completed (stopped trials were behind at a rung, on fewer boards, so
    their search scores are not comparable with complete trials'); the ranked report lists the
    best stopped trial anyway."""
    if sweep is not None:
        trials = order_trials(trials, sweep)
    return trials[trials["status"] != "ERROR"].head(k)


def ranked_table(ranked: pd.DataFrame, sweep) -> pd.DataFrame:
    """The printed table: settings, objective with 95% CI, W/T/L, search objective, significance."""
    metric = sweep.objective_metric
    out = pd.DataFrame(index=ranked.index)
    for p in sweep.search:
        out[p.alias] = ranked[p.alias]
    out["objective"] = [_fmt_objective(r[METRIC], r["objective_lo"], r["objective_hi"], metric)
                        for _, r in ranked.iterrows()]
    out["games"] = ranked["games"]
    out["W/T/L"] = [f"{r.wins}/{r.ties}/{r.losses}" for r in ranked.itertuples()]
    out["search"] = [_fmt_search(r, metric) for _, r in ranked.iterrows()]
    out["p_holm"] = [("" if math.isnan(p) else f"{p:.3g}") for p in ranked["p_holm"]]
    out["worse than best"] = ranked["significant"]
    return out


def _fmt_search(row: Mapping, metric: str) -> str:
    """The search score of a setting with its games; ``stopped`` when ASHA cut it short."""
    value = _fmt_objective(row["search_objective"], 0, 0, metric).split(" ")[0]
    games = row.get("search_games", 0)
    games = 0 if games is None or pd.isna(games) else int(games)
    stopped = row.get("search_status") == "stopped_early"
    return f"{value} ({games} g{', stopped' if stopped else ''})"


def report_markdown(sweep, table: pd.DataFrame, trials: pd.DataFrame, top: pd.DataFrame | None = None) -> str:
    metric = "win rate" if sweep.objective_metric == "win_rate" else "mean reward"
    counts = trials["status"].value_counts().to_dict()
    lines = [
        f"## Sweep {sweep.name}: {metric} of {sweep.objective_label}, re-evaluated top {len(table)}",
        "",
        f"Search: {len(trials)} trials ({', '.join(f'{v} {k.lower()}' for k, v in counts.items())}), "
        f"{sweep.games_per_trial} games ({sweep.boards_per_trial} boards of {sweep.games_per_board}) each "
        f"on study seed {sweep.study_seed(0)}. Re-evaluation: "
        f"{sweep.reeval_games} games per setting on study seed {sweep.study_seed(1)} (fresh boards).",
        "",
        markdown_table(["rank"] + list(table.columns),
                       [[rank] + row.tolist() for rank, row in table.iterrows()]),
        "",
        "Objective: re-evaluation estimate with 95% CI "
        + ("(Wilson)" if sweep.objective_metric == "win_rate" else "(normal approximation)")
        + "; `search`: the (selection-biased) estimate during the search. `worse than best`: "
        + ("two-proportion z-test" if sweep.objective_metric == "win_rate" else "Welch z-test")
        + f" against rank 1, Holm-corrected over {max(0, len(table) - 1)} comparisons, alpha 0.05. "
        "The comparisons are post-selection and not independent (same boards), so treat them as a guide; "
        "'no' means the data do not separate the setting from the best, not that they are equal. "
        "`search` shows the games it rests on, and `stopped` when ASHA stopped the trial early.",
        "",
        "Selection rule: the top settings are the complete trials with the highest search objective; "
        "trials stopped early fill the list only when fewer trials completed. Ties (in the search and "
        "in the re-evaluation) are broken by a fixed rule: more games, then the search ranking, then "
        "the setting's values in the order of [search], smaller first.",
    ]
    stopped = trials[trials["status"] == "STOPPED"]
    if len(stopped):
        best = stopped.iloc[0]  # trials are in selection order (order_trials)
        chosen = set(top["study_id"]) if top is not None else set()
        setting = ", ".join(f"{p.alias} {plain(best[p.path])}" for p in sweep.search)
        note = "re-evaluated" if best["study_id"] in chosen else "not re-evaluated"
        lines += ["", f"Stopped early by ASHA: {len(stopped)} trial(s); the furthest, best of them "
                      f"({setting}) scored {_fmt_search({'search_objective': best[METRIC], 'search_games': best['games'], 'search_status': 'stopped_early'}, sweep.objective_metric)} "
                      f"in the search ({note})."]
    return "\n".join(lines) + "\n"
