"""Ratings of agents across studies: Bradley–Terry with ties (Davidson), bootstrap intervals.

    >>> pooled = load_rows(["arena-studies/pommerman-ffa-demo"])   # doctest: +SKIP
    >>> table = rate(pooled.rows, seed=0)                              # doctest: +SKIP
    >>> print(ratings_markdown(table))                                 # doctest: +SKIP

**Players.** A player is an agent label together with its ``config_hash`` (the
agent, its parameters and its budget; :func:`agents.registry.config_hash`), as
the result rows of :mod:`cluster.results.store` carry them: ``MCTS [3f2a1b9]``. The
same label with other parameters or another budget is another player.

**Pairwise results.** Every game counts as the pairwise results it implies
between the seats on different teams: a seat whose ``result`` ranks higher
(win > tie > loss) beats the other, equal results are a tie. A two-player game
is one result; a four-player free-for-all is six (a win over the three losers,
ties among them); teammates are never compared. Errored games count nothing.
(The per-game ranking is the one the rows record; in Pommerman's java ruleset
two agents that both died are both "loss", hence a tie.)

**Model.** Davidson's extension of Bradley–Terry: with strengths
``pi_i = exp(theta_i)`` and a tie parameter ``nu``,
``P(i beats j) = pi_i / D``, ``P(tie) = nu sqrt(pi_i pi_j) / D``,
``D = pi_i + pi_j + nu sqrt(pi_i pi_j)``. ``theta`` and ``log nu`` are fitted by
maximum likelihood (``scipy.optimize.minimize``, L-BFGS-B, analytic gradient)
with a weak normal prior on every rating (SD :data:`PRIOR_SD_ELO` Elo), which
only matters for a player that won (or lost) every game: its rating is then
large but finite, and the table says so. Ratings are on the Elo scale
(``400 / ln 10 * theta``): 100 points is a 64% expected score. They are shown
relative to ``anchor`` (its rating is ``anchor_rating``), or centred on their
mean when there is no anchor.

**Connected.** Players that never met, not even through other players, cannot
be rated on one scale: such a set of studies is refused, naming the groups.

**Intervals.** 95% percentile intervals from a bootstrap that resamples whole
boards (a study's board seed with all its games: every seat rotation stays
together, and the pairwise results of one FFA game are never split), or single
games (``resample = "games"``). The resampling draws come from
``numpy.random.default_rng(SeedSequence(seed))``: a fixed seed gives the same
table.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from cluster.analysis.tables import markdown_table
from cluster.results.store import ResultStore, StoreError, read_stored_spec
from cluster.spec.stored import StoredGame
from cluster.tracking.client import (NOTE_TAG, arena_version, ensure_experiment, git_commit, log_batch, metric_key,
                                     normalize_uri, read_run_records)

__all__ = ["RatingError", "PooledRows", "load_rows", "pairwise_results", "fit_davidson", "rate", "BootstrapFit",
           "bootstrap_fit", "check_connected",
           "ratings_markdown", "ratings_plot", "RESULT_RANK", "ELO_PER_NATURAL", "PRIOR_SD_ELO",
           "player_key", "RESAMPLE_UNITS"]

#: How a result ranks a seat against another (higher beats lower, equal is a tie).
RESULT_RANK = {"win": 2, "tie": 1, "loss": 0}
#: Elo points per natural-log unit of strength (10^(Elo/400) is the odds ratio).
ELO_PER_NATURAL = 400.0 / math.log(10.0)
#: SD of the normal prior on each rating, in Elo (weak: it keeps perfect records finite).
PRIOR_SD_ELO = 1000.0
#: Bounds of log(nu), the Davidson tie parameter (nu = e^-20: no ties at all).
LOG_NU_BOUNDS = (-20.0, 5.0)
#: What the bootstrap resamples.
RESAMPLE_UNITS = ("boards", "games")


class RatingError(ValueError):
    """Studies that cannot be rated together, or a bad option (one line, naming what is wrong)."""


def player_key(label: str, config_hash: str | None) -> str:
    """``MCTS [3f2a1b9]``: the label and the first 7 characters of its config hash."""
    return f"{label} [{(config_hash or 'unknown')[:7]}]"


# --- reading studies --------------------------------------------------------------------
@dataclass
class PooledRows:
    """The result rows of several studies of one game and condition."""

    rows: pd.DataFrame
    """Rows of every study, errored games dropped, with ``player`` added and ``study_id``
    set to the study directory (the id itself moves to ``study_name``): two stores may
    hold studies of one id."""
    studies: list[str]
    """Study directories, in the order read."""
    game: StoredGame
    """The game the studies share, with its options (the condition's applied)."""
    condition: str
    """The condition label rated ('' for a study without ``design.vary``)."""


def _study_dirs(paths: Sequence) -> list[Path]:
    """Study directories from study directories and results folders (stores) holding studies."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / "results").is_dir():
            out.append(path)
        elif path.is_dir():
            inner = sorted(p for p in path.iterdir() if (p / "results").is_dir())
            if not inner:
                raise RatingError(f"{path}: neither a study directory (results/ inside) nor a "
                                  f"results folder holding studies")
            out.extend(inner)
        else:
            raise RatingError(f"{path}: no such directory")
    seen, unique = set(), []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique


def _game_of(study: Path) -> StoredGame:
    """The study's game and its options, from its stored spec."""
    spec_path = study / "spec.json"
    try:
        stored = read_stored_spec(study)
    except StoreError as exc:
        raise RatingError(f"{spec_path}: cannot read the study's game "
                          f"({str(exc).removeprefix(f'{spec_path}: ')})") from None
    if stored is None:
        raise RatingError(f"{spec_path}: cannot read the study's game (no such file)")
    return stored.game


def load_rows(paths: Sequence, condition: str | None = None, game: str | None = None) -> PooledRows:
    """Pool the rows of the studies under ``paths`` (study directories or results
    folders). Refuses studies of different games or game options, and a study with
    several conditions unless ``condition`` names one (e.g. ``view_range=2``);
    ``game`` keeps only the studies of that game (useful on a whole results folder)."""
    studies = _study_dirs(paths)
    frames, kept, reference = [], [], None
    for study in studies:
        played = _game_of(study)
        if game is not None and played.name != game:
            continue
        df = ResultStore(study).read()
        if not len(df):
            continue
        conditions = sorted(set(df["condition"].fillna("").astype(str))) if "condition" in df else [""]
        if condition is not None:
            if condition not in conditions:
                raise RatingError(f"{study}: no games in condition {condition!r}; its conditions: "
                                  f"{conditions}")
            df = df[df["condition"].fillna("").astype(str) == condition]
        elif len(conditions) > 1:
            raise RatingError(f"{study}: games of {len(conditions)} conditions {conditions}; rate one "
                              f"at a time with --condition (e.g. --condition {conditions[0]})")
        for column in (c for c in df.columns if c.startswith("vary.") and df[c].notna().any()):
            value = df[column].dropna().iloc[0]  # the condition's option over the base game's
            played = played.with_options(**{column[len("vary."):]: value.item() if hasattr(value, "item") else value})
        if reference is None:
            reference = (study, played)
        else:
            ref_study, ref_game = reference
            difference = ref_game.first_difference(played)
            if difference is not None:
                what, theirs, ours = difference
                hint = " (--game NAME keeps one game's studies)" if what == "games" else ""
                raise RatingError(f"{what}: {ref_study} has {theirs!r}, {study} has "
                                  f"{ours!r}; rate studies of one game and condition{hint}")
        # games are told apart by study directory (two stores may hold studies of one id)
        frames.append(df.assign(study_name=df["study_id"], study_id=str(study)))
        kept.append(str(study))
    if not frames:
        which = f" of game {game!r}" if game else ""
        raise RatingError(f"no finished games{which} in {', '.join(str(p) for p in paths)}")
    rows = pd.concat(frames, ignore_index=True)
    rows = rows[rows["result"] != "error"].copy()
    hashes = rows["config_hash"] if "config_hash" in rows else pd.Series([None] * len(rows))
    rows["player"] = [player_key(lbl, h) for lbl, h in zip(rows["label"], hashes)]
    return PooledRows(rows=rows.reset_index(drop=True), studies=kept, game=reference[1],
                      condition=condition or "")


# --- pairwise results -------------------------------------------------------------------
def pairwise_results(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per pair of opposing seats of every game: ``study_id``, ``board_seed``,
    ``game_index``, ``first``, ``second`` (players) and ``score`` of the first
    (1 win, 0.5 tie, 0 loss), see the module docstring. ``rows`` need ``player``
    (or ``label``), ``result``, ``seat``, ``game_index`` and optionally ``team``."""
    keyed = rows.assign(player=rows["player"] if "player" in rows else rows["label"])
    if "study_id" not in keyed:
        keyed = keyed.assign(study_id="")
    if "team" not in keyed:
        keyed = keyed.assign(team=keyed["seat"])
    errored = keyed.loc[keyed["result"] == "error", ["study_id", "game_index"]].drop_duplicates()
    if len(errored):
        keyed = keyed.merge(errored.assign(_error=True), how="left", on=["study_id", "game_index"])
        keyed = keyed[keyed["_error"].isna()]
    keyed = keyed.assign(rank=keyed["result"].map(RESULT_RANK))
    columns = ["study_id", "game_index", "board_seed", "seat", "team", "player", "rank"]
    pairs = keyed[columns].merge(keyed[columns], on=["study_id", "game_index"], suffixes=("_a", "_b"))
    pairs = pairs[(pairs["seat_a"] < pairs["seat_b"])
                  & ~(pairs["team_a"].notna() & (pairs["team_a"] == pairs["team_b"]))]  # teammates
    score = np.where(pairs["rank_a"] > pairs["rank_b"], 1.0, np.where(pairs["rank_a"] < pairs["rank_b"], 0.0, 0.5))
    out = pd.DataFrame({"study_id": pairs["study_id"].to_numpy(),
                        "board_seed": pairs["board_seed_a"].astype(np.int64).to_numpy(),
                        "game_index": pairs["game_index"].astype(np.int64).to_numpy(),
                        "first": pairs["player_a"].to_numpy(), "second": pairs["player_b"].to_numpy(),
                        "score": score})
    return out.sort_values(["study_id", "game_index", "first", "second"], kind="stable").reset_index(drop=True)


# --- the model --------------------------------------------------------------------------
def _negative_log_posterior(params: np.ndarray, wins: np.ndarray, ties: np.ndarray,
                            prior_precision: float) -> tuple[float, np.ndarray]:
    """Davidson negative log-likelihood plus the normal prior, and its gradient.

    ``wins[i, j]``: results where i beat j; ``ties[i, j]`` (symmetric): ties of i and j.
    ``params``: ``theta`` (one per player) then ``log nu``."""
    theta, log_nu = params[:-1], params[-1]
    games = wins + wins.T + ties
    ti, tj = theta[:, None], theta[None, :]
    tie_term = log_nu + 0.5 * (ti + tj)
    log_d = np.logaddexp(np.logaddexp(ti, tj), tie_term)
    off = ~np.eye(len(theta), dtype=bool)
    log_lik = (np.sum(wins * ti, where=off)
               + 0.5 * np.sum(ties * tie_term, where=off)
               - 0.5 * np.sum(games * log_d, where=off))
    p_win = np.exp(ti - log_d)
    p_tie = np.exp(tie_term - log_d)
    share = np.where(off, games * (p_win + 0.5 * p_tie), 0.0)
    grad_theta = wins.sum(axis=1) + 0.5 * ties.sum(axis=1) - share.sum(axis=1)
    grad_nu = 0.5 * np.sum(ties, where=off) - 0.5 * np.sum(games * p_tie, where=off)
    value = -log_lik + 0.5 * prior_precision * float(theta @ theta)
    grad = np.concatenate([-grad_theta + prior_precision * theta, [-grad_nu]])
    return float(value), grad


def fit_davidson(wins: np.ndarray, ties: np.ndarray, start: np.ndarray | None = None,
                 prior_sd_elo: float = PRIOR_SD_ELO) -> tuple[np.ndarray, float, np.ndarray]:
    """Maximum a posteriori ratings (Elo scale, as fitted: shift them yourself), the
    tie parameter ``nu`` of the Davidson model and the optimum (``theta``, ``log nu``;
    a warm start for a refit) for the result counts ``wins`` (L x L, i beat j) and
    ``ties`` (L x L, symmetric). ``start``: an optimum of a similar fit."""
    from scipy.optimize import minimize

    n = wins.shape[0]
    wins = np.asarray(wins, dtype=np.float64)
    ties = np.asarray(ties, dtype=np.float64)
    x0 = np.zeros(n + 1) if start is None else np.asarray(start, dtype=np.float64)
    if start is None:
        x0[-1] = -1.0
    prior_precision = (ELO_PER_NATURAL / prior_sd_elo) ** 2
    bounds = [(None, None)] * n + [LOG_NU_BOUNDS]
    fit = minimize(_negative_log_posterior, x0, args=(wins, ties, prior_precision), jac=True,
                   method="L-BFGS-B", bounds=bounds, options={"maxiter": 1000, "gtol": 1e-9})
    return fit.x[:-1] * ELO_PER_NATURAL, float(math.exp(fit.x[-1])), fit.x


def _count_matrices(pairs: pd.DataFrame, players: list[str], units: np.ndarray):
    """Per resampling unit: wins (U x L x L) and ties (U x L x L) of its pairwise results."""
    index = {p: i for i, p in enumerate(players)}
    n_units = int(units.max()) + 1 if len(units) else 0
    wins = np.zeros((n_units, len(players), len(players)))
    ties = np.zeros_like(wins)
    a = pairs["first"].map(index).to_numpy()
    b = pairs["second"].map(index).to_numpy()
    score = pairs["score"].to_numpy()
    np.add.at(wins, (units[score == 1.0], a[score == 1.0], b[score == 1.0]), 1.0)
    np.add.at(wins, (units[score == 0.0], b[score == 0.0], a[score == 0.0]), 1.0)
    tie = score == 0.5
    np.add.at(ties, (units[tie], a[tie], b[tie]), 1.0)
    np.add.at(ties, (units[tie], b[tie], a[tie]), 1.0)
    return wins, ties


def rate(rows: pd.DataFrame, anchor: str | None = None, anchor_rating: float = 0.0, seed: int = 0,
         bootstrap: int = 1000, resample: str = "boards") -> pd.DataFrame:
    """The rating table of the players in ``rows`` (see the module docstring):
    index ``Player``, columns ``rating``, ``lo``, ``hi`` (95% bootstrap interval),
    ``games`` (games the player played), ``wins``, ``ties``, ``losses`` (its
    pairwise results), ``label``, ``config_hash`` and ``note``; best first."""
    if resample not in RESAMPLE_UNITS:
        raise RatingError(f"--resample: must be one of {list(RESAMPLE_UNITS)}, got {resample!r}")
    if not isinstance(bootstrap, int) or bootstrap < 0:
        raise RatingError(f"--bootstrap: must be a non-negative int, got {bootstrap!r}")
    if "player" not in rows:
        rows = rows.assign(player=[player_key(lbl, h) for lbl, h in
                                   zip(rows["label"], rows.get("config_hash", [None] * len(rows)))])
    pairs = pairwise_results(rows)
    if pairs.empty:
        raise RatingError("no pairwise results to rate (no finished games between opponents)")
    players = sorted(set(pairs["first"]) | set(pairs["second"]))
    check_connected(pairs, players)
    if anchor is not None:
        anchor = _resolve_anchor(anchor, players)
    fit = bootstrap_fit(pairs, players, anchor=anchor, anchor_rating=anchor_rating, seed=seed,
                        bootstrap=bootstrap, resample=resample)
    point, draws, nu, n_units = fit.point, fit.draws, fit.tie_parameter, fit.units
    wins, ties = fit.wins, fit.ties
    lo, hi = (np.percentile(draws, [2.5, 97.5], axis=0) if bootstrap else
              (np.full(len(players), np.nan), np.full(len(players), np.nan)))
    games = rows.drop_duplicates(["player", "study_id", "game_index"]).groupby("player").size()
    won = wins.sum(axis=1)
    lost = wins.sum(axis=0)
    tied = ties.sum(axis=1)
    first = rows.drop_duplicates("player").set_index("player")
    records = []
    for i, p in enumerate(players):
        note = ""
        if won[i] > 0 and lost[i] == 0 and tied[i] == 0:
            note = "won every result: a lower bound"
        elif won[i] == 0 and tied[i] == 0 and lost[i] > 0:
            note = "lost every result: an upper bound"
        records.append({"Player": p, "rating": float(point[i]), "lo": float(lo[i]), "hi": float(hi[i]),
                        "games": int(games.get(p, 0)), "wins": int(won[i]), "ties": int(tied[i]),
                        "losses": int(lost[i]), "label": first.loc[p, "label"],
                        "config_hash": first.loc[p, "config_hash"] if "config_hash" in first else None,
                        "note": note})
    table = pd.DataFrame.from_records(records).set_index("Player")
    table = table.sort_values(["rating", "games"], ascending=[False, False], kind="stable")
    table.attrs.update({"tie_parameter": nu, "anchor": anchor, "anchor_rating": anchor_rating,
                        "seed": int(seed), "bootstrap": int(bootstrap), "resample": resample,
                        "resampling_units": int(n_units), "pairwise_results": int(len(pairs))})
    return table


@dataclass
class BootstrapFit:
    """A Davidson fit of pairwise results and its bootstrap (what :func:`rate` and the
    tournament leaderboard, :mod:`cluster.analysis.leaderboard`, are computed from)."""

    players: list[str]
    """The players, in the order of every array below."""
    point: np.ndarray
    """Ratings of the whole sample (Elo scale, relative to the anchor or the mean)."""
    draws: np.ndarray
    """``bootstrap x players``: the ratings of every resample, on the same scale."""
    tie_parameter: float
    """Davidson's ``nu`` of the whole sample."""
    units: int
    """Resampling units (boards, or games) in the sample."""
    wins: np.ndarray
    """``players x players``: results where i beat j."""
    ties: np.ndarray
    """``players x players`` (symmetric): ties of i and j."""


def bootstrap_fit(pairs: pd.DataFrame, players: list[str], anchor: str | None = None,
                  anchor_rating: float = 0.0, seed: int = 0, bootstrap: int = 1000,
                  resample: str = "boards") -> BootstrapFit:
    """Fit the pairwise results ``pairs`` (:func:`pairwise_results`) of ``players`` and
    refit ``bootstrap`` resamples of whole boards (or games), drawn from
    ``default_rng(SeedSequence(seed))`` (see the module docstring)."""
    unit_keys = (["study_id", "board_seed"] if resample == "boards" else ["study_id", "game_index"])
    units = pairs.groupby(unit_keys, sort=True).ngroup().to_numpy()
    wins_by_unit, ties_by_unit = _count_matrices(pairs, players, units)
    wins, ties = wins_by_unit.sum(axis=0), ties_by_unit.sum(axis=0)
    ratings, nu, optimum = fit_davidson(wins, ties)

    def relative(r: np.ndarray) -> np.ndarray:
        base = r[players.index(anchor)] if anchor is not None else r.mean()
        return r - base + anchor_rating

    rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
    n_units = wins_by_unit.shape[0]
    draws = np.empty((bootstrap, len(players)))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # tiny fits: BLAS threads only add overhead (10-30x here)
        for k in range(bootstrap):
            weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units)).astype(np.float64)
            w = np.tensordot(weights, wins_by_unit, axes=1)
            t = np.tensordot(weights, ties_by_unit, axes=1)
            draws[k] = relative(fit_davidson(w, t, start=optimum)[0])
    return BootstrapFit(players=list(players), point=relative(ratings), draws=draws, tie_parameter=nu,
                        units=int(n_units), wins=wins, ties=ties)


def check_connected(pairs: pd.DataFrame, players: list[str]) -> None:
    """Refuse players that fall into groups that never met (directly or through others):
    the likelihood says nothing about how such groups compare, only the prior would."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    index = {p: i for i, p in enumerate(players)}
    a = pairs["first"].map(index).to_numpy()
    b = pairs["second"].map(index).to_numpy()
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(players), len(players)))
    count, labels = connected_components(graph, directed=False)
    if count > 1:
        groups = [[p for p, g in zip(players, labels) if g == k] for k in range(count)]
        raise RatingError(f"the players fall into {count} groups that never played each other "
                          f"(not even through others): {groups}; their ratings are not comparable, "
                          f"rate each group's studies on their own")


def _resolve_anchor(anchor: str, players: list[str]) -> str:
    """A player key from ``--anchor`` (the full ``label [hash]`` or a label that names one player)."""
    if anchor in players:
        return anchor
    matches = [p for p in players if p.rsplit(" [", 1)[0] == anchor]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise RatingError(f"--anchor: {anchor!r} names {len(matches)} players {matches}; give one in full")
    raise RatingError(f"--anchor: no player {anchor!r}; players: {players}")


# --- output -----------------------------------------------------------------------------
def ratings_markdown(table: pd.DataFrame) -> str:
    """The table in Markdown: Player, Rating, 95% interval, Games, pairwise W-T-L, Note."""
    rows = [[player, f"{r['rating']:.0f}", "n/a" if math.isnan(r["lo"]) else f"{r['lo']:.0f} to {r['hi']:.0f}",
             int(r["games"]), f"{int(r['wins'])}-{int(r['ties'])}-{int(r['losses'])}", r["note"]]
            for player, r in table.iterrows()]
    lines = [markdown_table(["Player", "Rating", "95% interval", "Games", "Pairwise W-T-L", "Note"], rows,
                            ["---", "---:", "---:", "---:", "---:", "---"])]
    attrs = table.attrs
    where = (f"{attrs['anchor']} at {attrs['anchor_rating']:g}" if attrs.get("anchor")
             else f"mean at {attrs.get('anchor_rating', 0):g}")
    lines += ["", f"Bradley-Terry-Davidson (Elo scale, {where}; tie parameter nu = "
                  f"{attrs.get('tie_parameter', float('nan')):.3g}), 95% intervals from "
                  f"{attrs.get('bootstrap')} bootstrap resamples of {attrs.get('resampling_units')} "
                  f"{attrs.get('resample')} (seed {attrs.get('seed')}); "
                  f"{attrs.get('pairwise_results')} pairwise results."]
    return "\n".join(lines) + "\n"


def ratings_plot(table: pd.DataFrame, path, title: str | None = None) -> Path:
    """Ratings with their 95% bootstrap intervals as error bars (best at the top)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(7, 1.2 + 0.45 * len(table)), tight_layout=True)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(table))[::-1]
    rating = table["rating"].to_numpy(dtype=float)
    lo = table["lo"].to_numpy(dtype=float)
    hi = table["hi"].to_numpy(dtype=float)
    err = None if np.isnan(lo).all() else np.clip(np.vstack([rating - lo, hi - rating]), 0.0, None)
    ax.errorbar(rating, y, xerr=err, fmt="o", capsize=4, color="#4c78a8")
    ax.set_yticks(y, [str(p) for p in table.index])
    ax.set_xlabel("rating (Elo scale, 95% bootstrap interval)")
    ax.grid(axis="x", alpha=0.3)
    if title:
        ax.set_title(title)
    fig.savefig(path)
    return path


def write_ratings(table: pd.DataFrame, out, title: str | None = None) -> list[Path]:
    """``ratings.md``, ``ratings.csv`` and ``ratings.png`` in ``out``; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, csv = out / "ratings.md", out / "ratings.csv"
    md.write_text((f"# {title}\n\n" if title else "") + ratings_markdown(table), encoding="utf-8")
    table.to_csv(csv)
    return [md, csv, ratings_plot(table, out / "ratings.png", title=title)]


def default_tracking_uri(studies: Sequence) -> str:
    """The MLflow store the first study was tracked in, else ``sqlite:///mlflow.db``."""
    for study in studies:
        try:
            records = read_run_records(study)
        except ValueError:
            continue
        if records:
            return records[-1]["tracking_uri"]
    return "sqlite:///mlflow.db"


def log_ratings(table: pd.DataFrame, files: Sequence[Path], pooled: PooledRows, tracking_uri: str,
                experiment: str, command: str = "") -> tuple[str, str]:
    """One MLflow run holding the table (description, metrics ``rating/<player>``,
    ``rating_lo/…``, ``rating_hi/…``, ``games/…``), the options as params and the
    files as artifacts (``ratings/``). Returns (run id, experiment id)."""
    from mlflow.tracking import MlflowClient

    uri = normalize_uri(tracking_uri)
    client = MlflowClient(tracking_uri=uri)
    experiment_id = ensure_experiment(client, experiment, uri)
    names = [Path(s).name for s in pooled.studies]
    name = ("ratings: " + " + ".join(names))[:200]
    tags = {"arena.kind": "ratings", "arena.game": pooled.game.name,
            "arena.git_commit": git_commit(), "arena.version": arena_version(),
            "mlflow.source.type": "LOCAL", "mlflow.source.name": "arena rate"}
    if command:
        tags["arena.command"] = command[:5000]
    run = client.create_run(experiment_id, run_name=name, tags=tags)
    run_id = run.info.run_id
    attrs = table.attrs
    params = {"studies": ", ".join(pooled.studies)[:6000], "game": json.dumps(pooled.game.table(), sort_keys=True)[:6000],
              "condition": pooled.condition, "anchor": attrs.get("anchor") or "",
              "anchor_rating": attrs.get("anchor_rating"), "seed": attrs.get("seed"),
              "bootstrap": attrs.get("bootstrap"), "resample": attrs.get("resample"),
              "prior_sd_elo": PRIOR_SD_ELO}
    metrics = {"tie_parameter": attrs.get("tie_parameter", math.nan)}
    for player, r in table.iterrows():
        for key, column in (("rating", "rating"), ("rating_lo", "lo"), ("rating_hi", "hi"), ("games", "games")):
            metrics[metric_key(key, str(player))] = float(r[column])
    note = (f"**Ratings** of {len(table)} players over "
            f"{len(pooled.studies)} stud{'y' if len(pooled.studies) == 1 else 'ies'}"
            f" of `{pooled.game.name}`.\n\n" + ratings_markdown(table)
            + ("\n\nCommand:\n\n```\n" + command + "\n```" if command else ""))
    log_batch(client, run_id, metrics=metrics, params=params, tags={NOTE_TAG: note})
    for path in files:
        client.log_artifact(run_id, str(path), artifact_path="ratings")
    client.set_terminated(run_id, "FINISHED")
    return run_id, experiment_id
