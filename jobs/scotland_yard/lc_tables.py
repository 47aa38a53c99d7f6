"""The offline Location Categorization tables job.

Plays the games of a study spec whose seekers record tables online
(``lc_update = true``; default ``jobs/scotland_yard/lc_tables.toml``) on the
cluster, sums the tables of all runs (the last saved learned state of each
series), saves them as ``.npz`` and logs them to MLflow (artifact
``lc_tables/<file>``, plus the general weights a_c / n_c as metrics)::

    python -m jobs.scotland_yard.lc_tables [--out tables/lc_tables.npz]
        [--spec lc_tables.toml] [--scale F] [--set key=value ...] [--workers N] [--no-tracking]

A study loads the result through a seekers' lineup entry:
``seed_population = "tables/lc_tables.npz"`` (or ``runs:/<run_id>/lc_tables/lc_tables.npz``).

Held-out log score (after the games; ``--no-score`` skips it): the games are split
by deal, deals k (the game's ``index_in_series``, round k of every run being played
on deal k) with ``k % 5 == 4`` held out (``--holdout-every``). Tables are rebuilt
from the game records of the other (training) games, replayed: one record per hider
move (the seekers' first decision of a round, as ``lc_record = "hider_move"``), with
the agent's own ``categorize`` / ``category_of`` / ``update_tables``. On every hider
move of the held-out games each sampler of :data:`SAMPLERS` (the agent's
``location_weights``, configured as the agent's options name) gives Mr X's true
station a probability p; the score of a game is its mean log p, against the uniform
sampler's log(1 / possible locations) at the same moves. Games are the units: the
report gives the mean over held-out games with a 95% Student t interval, and the
same for the gain log p - log p_uniform. The rebuild is checked against the summed
learned tables (all games). Written to ``<out stem>_holdout.json`` and to MLflow
(metrics ``holdout_log_p_<sampler>``, ``holdout_gain_<sampler>``, the JSON as an
artifact).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEEKERS = "sy_mcts_seekers"
SEEKERS_SEAT = 1

#: The samplers the held-out score compares, as the agent's options name them:
#: (determinization, lc_general_n, lc_detailed, lc_prior). The first two are the paper's
#: definitions with the add-one prior (the agent's defaults).
SAMPLERS = {
    "general": ("lc_general", "presence", "counts", "add_one"),
    "detailed": ("lc_detailed", "presence", "counts", "add_one"),
    "general_locations": ("lc_general", "locations", "counts", "add_one"),
    "detailed_ratio": ("lc_detailed", "presence", "ratio", "add_one"),
    "general_mean_floor": ("lc_general", "presence", "counts", "mean_floor"),
    "detailed_mean_floor": ("lc_detailed", "presence", "counts", "mean_floor"),
}
#: Held out: the deals k with k % HOLDOUT_EVERY == HOLDOUT_EVERY - 1 (one in five).
HOLDOUT_EVERY = 5


def collect_tables(spec) -> tuple[dict[str, np.ndarray], int]:
    """The summed tables of every series of a finished study, and how many series."""
    from agents.scotland_yard.mcts_seekers import TABLE_KEYS
    from cluster.results.store import ResultStore

    labels = [seat.label for seat in spec.lineup if seat.agent == SEEKERS]
    if not labels:
        raise ValueError(f"lineup: no {SEEKERS!r} entry records tables in {spec.source}")
    store = ResultStore(Path(spec.study_dir))
    total: dict[str, np.ndarray] = {}
    series = 0
    for sid in store.learned_series():
        latest = store.latest_learned_state(sid)
        if latest is None:
            continue
        for label in labels:
            arrays = latest[1].get(label)
            if not arrays:
                continue
            series += 1
            for key in TABLE_KEYS:
                total[key] = total.get(key, 0) + np.asarray(arrays[key], dtype=np.float64)
    if not total:
        raise ValueError(f"{spec.study_dir}: no learned tables found (is lc_update = true?)")
    return total, series


def general_weights(tables: dict[str, np.ndarray], rule: str = "presence") -> np.ndarray:
    """The general table's raw weights a_c / n_c (0 where n_c = 0; the agents add
    their prior): ``rule = "presence"`` (the paper's n, the records in which c held
    a possible location, from the detailed table) or ``"locations"``."""
    from agents.scotland_yard.categorization import presence_counts

    a = np.asarray(tables["lc_general_a"], dtype=np.float64)
    if rule == "presence":
        n = np.zeros_like(a)
        presence_counts(np.asarray(tables["lc_detailed_a"], dtype=np.float64), n)
    else:
        n = np.asarray(tables["lc_general_n"], dtype=np.float64)
    return np.divide(a, n, out=np.zeros_like(a), where=n > 0)


def log_to_mlflow(spec, out: Path, tables: dict, series: int, games: int,
                  score: dict | None = None, score_file: Path | None = None) -> str:
    """Log the table file, its general weights and the held-out score (metrics
    ``holdout_log_p_<sampler>`` / ``holdout_gain_<sampler>``, the JSON as an
    artifact); returns the table's artifact URI."""
    import mlflow

    mlflow.set_tracking_uri(spec.tracking.uri)
    mlflow.set_experiment(spec.tracking.experiment)
    with mlflow.start_run(run_name=f"{spec.study_id}-tables") as run:
        mlflow.log_params({"study_id": spec.study_id, "series": series, "games": games,
                           "categories": len(tables["lc_general_n"]),
                           "budget": spec.budget.describe()})
        mlflow.log_metrics({f"lc_weight_{c + 1}": float(w)
                            for c, w in enumerate(general_weights(tables))})
        mlflow.log_metrics({f"lc_weight_per_location_{c + 1}": float(w)
                            for c, w in enumerate(general_weights(tables, "locations"))})
        if score is not None:
            for name, r in score["samplers"].items():
                mlflow.log_metrics({f"holdout_log_p_{name}": r["log_p"],
                                    f"holdout_gain_{name}": r["gain"],
                                    f"holdout_gain_{name}_lo": r["gain_ci"][0],
                                    f"holdout_gain_{name}_hi": r["gain_ci"][1]})
            mlflow.log_params({"holdout_split": score["split"],
                               "holdout_games": score["heldout_games"]})
        if score_file is not None:
            mlflow.log_artifact(str(score_file), artifact_path="lc_tables")
        mlflow.log_artifact(str(out), artifact_path="lc_tables")
        return f"runs:/{run.info.run_id}/lc_tables/{out.name}"


# --- held-out log score ---------------------------------------------------------------
def hider_moves(record):
    """The hider moves of a game record, replayed: ``(observation, truth)`` at the
    seekers' first decision of every round (what ``lc_record = "hider_move"``
    records; a double move is one record), ``observation`` the seekers' view then and
    ``truth`` Mr X's true station."""
    from cluster.replay.records import replay
    from games.scotland_yard.kernels import MRX

    last = None
    for _, game in replay(record):
        if game.done or game.mover() == MRX or game.round == last:
            continue
        last = game.round
        yield game.observation(SEEKERS_SEAT), int(game.state.positions[MRX])


def add_game(tables: dict, moves, categories: int) -> int:
    """Add one game's hider moves (``(observation, truth)`` pairs) to ``tables``
    with the agent's own recording code; returns the records added."""
    from agents.scotland_yard.categorization import categorize, category_of
    from agents.scotland_yard.mcts_seekers import update_tables

    counts, combos, truth = [], [], []
    for obs, station in moves:
        c = np.zeros(categories)
        combos.append(categorize(obs, categories, c))
        counts.append(c)
        truth.append(category_of(obs, station, categories))
    if counts:
        update_tables(tables["lc_general_n"], tables["lc_general_a"], tables["lc_detailed_n"],
                      tables["lc_detailed_a"], np.stack(counts), np.asarray(combos, dtype=np.int64),
                      np.asarray(truth, dtype=np.int64))
    return len(counts)


def log_probabilities(moves, tables: dict, samplers=None) -> dict[str, np.ndarray]:
    """Per hider move, the log-probability each sampler (name -> (determinization,
    lc_general_n, lc_detailed, lc_prior), default :data:`SAMPLERS`) gives Mr X's true
    station, by the agent's ``location_weights``; key ``"uniform"``: log(1 / possible
    locations). Raises ValueError if the truth is not a possible location."""
    from agents.scotland_yard.categorization import category_of, Determinization, LcTables, location_weights
    from agents.scotland_yard.mcts_seekers import (
        DETERMINIZATIONS, LC_DETAILED, LC_GENERAL_N, LC_PRIORS,
    )

    samplers = SAMPLERS if samplers is None else samplers
    categories = len(tables["lc_general_n"])
    out: dict[str, list[float]] = {name: [] for name in ["uniform", *samplers]}
    weights = np.zeros(categories)
    lc = LcTables(tables["lc_general_n"], tables["lc_general_a"], tables["lc_detailed_n"],
                  tables["lc_detailed_a"])
    for obs, station in moves:
        s = obs.possible.shape[0]
        if not (0 < station < s and obs.possible[station]):
            raise ValueError(f"hider move: Mr X's station {station} is not a possible location")
        stations, cumulative = np.zeros(s, dtype=np.int32), np.zeros(s)
        truth = category_of(obs, station, categories) - 1
        out["uniform"].append(-math.log(int(obs.possible.sum())))
        for name, (det, general_n, detailed, prior) in samplers.items():
            rule = Determinization(DETERMINIZATIONS[det], categories, LC_GENERAL_N[general_n],
                                   LC_DETAILED[detailed], LC_PRIORS[prior])
            m = location_weights(obs, rule, lc, stations, cumulative, weights)
            out[name].append(math.log(weights[truth] / cumulative[m - 1]))
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def summarize_scores(per_game: list[dict[str, np.ndarray]]) -> dict:
    """The held-out report from per-game :func:`log_probabilities`: per sampler, the
    mean over games of the game's mean log p (``log_p``, its 95% t interval
    ``log_p_ci``), the same for the gain over uniform (``gain``, ``gain_ci``: log p -
    log p_uniform, paired move by move), ``prob_ratio`` = exp(gain) (the geometric
    mean factor on the truth's probability), ``pooled_log_p`` (the mean over all
    moves) and ``games`` / ``moves``. Games without hider moves are skipped."""
    from cluster.stats import t_half_width

    games = [g for g in per_game if len(g["uniform"])]
    if not games:
        raise ValueError("held-out games: no hider moves to score")
    report: dict = {"games": len(games), "moves": int(sum(len(g["uniform"]) for g in games)),
                    "samplers": {}}
    for name in games[0]:
        means = np.array([g[name].mean() for g in games])
        gains = np.array([(g[name] - g["uniform"]).mean() for g in games])
        lp, gp = float(means.mean()), float(gains.mean())
        hl, hg = t_half_width(means), t_half_width(gains)
        report["samplers"][name] = {
            "log_p": lp, "log_p_ci": [lp - hl, lp + hl], "gain": gp, "gain_ci": [gp - hg, gp + hg],
            "prob_ratio": math.exp(gp),
            "pooled_log_p": float(np.concatenate([g[name] for g in games]).mean())}
    return report


def split_games(df, every: int = HOLDOUT_EVERY) -> tuple[list[int], list[int]]:
    """(training, held-out) game indices of a table study's rows: held out are the
    deals k (``index_in_series``) with ``k % every == every - 1``; error games dropped."""
    rows = df[(df["seat"] == SEEKERS_SEAT) & (df["result"] != "error")]
    held = rows["index_in_series"].to_numpy() % every == every - 1
    games = rows["game_index"].to_numpy()
    return sorted(int(g) for g in games[~held]), sorted(int(g) for g in games[held])


def holdout_score(spec, categories: int, learned: dict | None = None,
                  every: int = HOLDOUT_EVERY) -> tuple[dict, dict]:
    """Rebuild the tables from the training games' records and score the held-out
    games (module docstring). Returns ``(report, training tables)``; with ``learned``
    (the summed learned tables of all games) the report says whether the rebuild
    from all games reproduces them (``rebuild_matches_learned``)."""
    from agents.scotland_yard.mcts_seekers import empty_tables
    from cluster.replay.records import load_study_record
    from cluster.results.store import ResultStore

    store = ResultStore(Path(spec.study_dir))
    train, held = split_games(store.read(), every)
    if not train or not held:
        raise ValueError(f"{spec.study_dir}: the split by deal left {len(train)} training and "
                         f"{len(held)} held-out games (need both)")
    tables = empty_tables(categories)
    records = sum(add_game(tables, hider_moves(load_study_record(spec.study_dir, g)),
                           categories) for g in train)
    held_tables = empty_tables(categories)
    per_game = []
    for g in held:
        moves = list(hider_moves(load_study_record(spec.study_dir, g)))
        add_game(held_tables, moves, categories)
        per_game.append(log_probabilities(moves, tables))
    report = summarize_scores(per_game)
    report.update({"split": f"held out: deals k (index_in_series) with k % {every} == {every - 1}",
                   "training_games": len(train), "training_records": int(records),
                   "heldout_games": len(held)})
    if learned is not None:
        rebuilt = {k: tables[k] + held_tables[k] for k in tables}
        report["rebuild_matches_learned"] = bool(all(np.allclose(rebuilt[k], learned[k])
                                                     for k in rebuilt))
    return report, tables


def score_lines(report: dict) -> list[str]:
    """The held-out report as printable lines."""
    lines = [f"held-out log score ({report['split']}; {report['heldout_games']} games, "
             f"{report['moves']} hider moves; tables from {report['training_games']} games):"]
    for name, r in report["samplers"].items():
        lines.append(f"  {name:20s} mean log p {r['log_p']:.4f} [{r['log_p_ci'][0]:.4f}, "
                     f"{r['log_p_ci'][1]:.4f}]  gain vs uniform {r['gain']:+.4f} "
                     f"[{r['gain_ci'][0]:+.4f}, {r['gain_ci'][1]:+.4f}]  x{r['prob_ratio']:.3f}")
    return lines


def main(argv=None) -> int:
    from cluster.run.driver import run_study
    from jobs.spec import SpecError, load_spec

    p = argparse.ArgumentParser(prog="python -m jobs.scotland_yard.lc_tables", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default=str(HERE / "lc_tables.toml"))
    p.add_argument("--out", default=str(HERE / "tables" / "lc_tables.npz"))
    p.add_argument("--scale", type=float, default=None)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--no-tracking", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--no-score", action="store_true", help="skip the held-out log score")
    p.add_argument("--holdout-every", type=int, default=HOLDOUT_EVERY, metavar="K",
                   help="hold out the deals k with k %% K == K - 1 (default %(default)s)")
    args = p.parse_args(argv)
    if args.holdout_every < 2:
        print(f"lc_tables: --holdout-every: must be >= 2, got {args.holdout_every}", file=sys.stderr)
        return 2
    try:
        spec = load_spec(args.spec, overrides=args.set, scale=args.scale)
    except SpecError as exc:
        print(f"lc_tables: invalid spec {args.spec}: {exc}", file=sys.stderr)
        return 2
    result = run_study(spec, num_workers=args.workers, progress=not args.no_progress,
                       tracking=not args.no_tracking)
    tables, series = collect_tables(spec)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **tables)
    print(f"tables of {series} series ({result.games_done} games): {out}")
    print("general weights a/n per category (n = records with the category present):",
          np.round(general_weights(tables), 3).tolist())
    print("  (n = possible locations, summed):",
          np.round(general_weights(tables, "locations"), 3).tolist())
    score = score_file = None
    if not args.no_score:
        from cluster.tracking import git_commit

        score, _ = holdout_score(spec, len(tables["lc_general_n"]), learned=tables,
                                 every=args.holdout_every)
        score = {"study_id": spec.study_id, "commit": git_commit(), "budget": spec.budget.describe(),
                 "study_games": score["training_games"] + score["heldout_games"], "series": series,
                 **score}
        score_file = out.with_name(f"{out.stem}_holdout.json")
        score_file.write_text(json.dumps(score, indent=2) + "\n")
        print("\n".join(score_lines(score)))
        print(f"  rebuilt tables match the learned ones: {score['rebuild_matches_learned']}; "
              f"report: {score_file}")
    if not args.no_tracking and spec.tracking.enabled:
        try:
            print("MLflow artifact:", log_to_mlflow(spec, out, tables, series, result.games_done,
                                                    score, score_file))
        except Exception as exc:  # noqa: BLE001 - the file is saved; tracking is a mirror
            print(f"lc_tables: MLflow logging failed ({type(exc).__name__}: {exc})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
