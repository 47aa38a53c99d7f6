"""The training job of the bird game's linear softmax policy (``arena train-birds``).

    arena train-birds --out jobs/birds/policy/birds_policy.npz
    arena train-birds --iterations 50 --out /tmp/w.npz --no-tracking      # smoke test
    arena train-birds --opponent self --cards-csv cards.csv --out w.npz   # self-play, a card list

Trains with :func:`agents.birds.policy.train_policy` (REINFORCE, see there),
writes the weights as an ``.npz`` (one float64 array ``weights``: the learned
state of ``birds_policy`` and of ``birds_mcts`` with ``opponent = "policy"``)
and a learning-curve plot, and logs to MLflow in one run: the whole
:class:`~agents.birds.policy.TrainConfig` as params, the curve as metrics
(``train_result``, ``eval_win_rate``, ``eval_score_diff`` against the flat random
player, ``eval_typed_win_rate``, ``eval_typed_score_diff`` against the action-type-first
one; step = iteration; sent in batches), the final evaluation against each kind
(``final_eval_games`` games: ``final/<kind>/win_rate``, ``win_lo``, ``win_hi``,
``result``, ``score_diff``), and the artifacts ``policy/birds_policy.npz``,
``policy/learning_curve.png`` and ``policy/learning_curve.csv``. A study
loads the weights as a seat's ``seed_population``: the file path, or the
printed ``runs:/<run_id>/policy/birds_policy.npz`` URI.
"""
from __future__ import annotations

import csv
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ARTIFACT_DIR = "policy"
WEIGHTS_FILE = "birds_policy.npz"


def learning_curve_plot(curve: list[dict], path: Path, title: str) -> Path:
    """Training result per iteration (smoothed) and the evaluation win rate against random."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = np.array([r["iteration"] for r in curve])
    train = np.array([r["train_result"] for r in curve])
    window = max(1, len(train) // 30)
    smooth = np.convolve(train, np.ones(window) / window, mode="valid")
    evals = [r for r in curve if "eval_win_rate" in r]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(it[window - 1:], smooth, label=f"training games (mean of {window})", alpha=0.7)
    ax.plot([r["iteration"] for r in evals], [r["eval_win_rate"] for r in evals], "o-",
            label="win rate against random (evaluation)")
    typed = [r for r in evals if "eval_typed_win_rate" in r]
    ax.plot([r["iteration"] for r in typed], [r["eval_typed_win_rate"] for r in typed], "s--",
            label="win rate against random, action type first")
    ax.set_xlabel("iteration (gradient step)")
    ax.set_ylabel("result (1 win, 0.5 tie, 0 loss)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


CURVE_KEYS = ("train_result", "eval_win_rate", "eval_score_diff", "eval_typed_win_rate",
              "eval_typed_score_diff")


def write_curve_csv(curve: list[dict], path: Path) -> Path:
    keys = ["iteration", *CURVE_KEYS]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        for row in curve:
            writer.writerow({k: row.get(k, "") for k in keys})
    return path


def final_evaluation(config, cards: np.ndarray, weights: np.ndarray) -> dict:
    """The policy against both kinds of random player (``flat``: uniform over the legal
    actions; ``typed``: an action type first, the public project's kind) over
    ``config.final_eval_games`` games each, seats alternating, deals from
    ``SeedSequence([seed, 3])``: wins / ties / losses, the win rate with its 95% Wilson
    interval, the mean result (win 1, tie 0.5) and the mean score difference."""
    from agents.birds.policy import MODEL_RANDOM, MODEL_TYPED_RANDOM, evaluate_policy
    from cluster.stats import wilson_interval
    from games.rng import make_rng

    out = {}
    for kind, model in (("flat", MODEL_RANDOM), ("typed", MODEL_TYPED_RANDOM)):
        n = int(config.final_eval_games)
        rng = make_rng(np.random.SeedSequence([config.seed, 3, model]))
        counts, diff = evaluate_policy(cards, config.start_food, weights, model, n, rng)
        lo, hi = wilson_interval(int(counts[0]), n)
        out[kind] = {"games": n, "wins": int(counts[0]), "ties": int(counts[1]),
                     "losses": int(counts[2]), "win_rate": counts[0] / n, "win_lo": lo, "win_hi": hi,
                     "result": (counts[0] + 0.5 * counts[1]) / n, "score_diff": float(diff)}
    return out


def _log_to_mlflow(config, curve, files: list[Path], tracking_uri: str, experiment: str,
                   run_name: str, final: dict | None = None) -> str:
    import mlflow
    from mlflow.tracking import MlflowClient

    from cluster.tracking import log_batch

    mlflow.set_tracking_uri(tracking_uri)
    experiment_id = mlflow.set_experiment(experiment).experiment_id
    client = MlflowClient(tracking_uri)
    run = client.create_run(experiment_id, run_name=run_name, tags={"arena.job": "train-birds"})
    run_id = run.info.run_id
    points = [(key, row[key], int(row["iteration"])) for row in curve for key in CURVE_KEYS if key in row]
    final_metrics = {f"final/{kind}/{key}": figures[key] for kind, figures in (final or {}).items()
                     for key in ("win_rate", "win_lo", "win_hi", "result", "score_diff")}
    log_batch(client, run_id, params=asdict(config), metrics=final_metrics, curve=points)
    for f in files:
        client.log_artifact(run_id, str(f), ARTIFACT_DIR)
    client.set_terminated(run_id)
    return run_id


def run_training(config, out: Path, tracking_uri: str | None = "sqlite:///mlflow.db",
                 experiment: str = "birds-policy", progress=None) -> dict:
    """Train, write ``out`` (.npz), the plot and the curve beside it, and log the
    run to MLflow unless ``tracking_uri`` is None. Returns a summary dict."""
    from agents.birds.policy import train_policy
    from games.birds import BirdsConfig

    cards = BirdsConfig(cards_csv=config.cards_csv, card_seed=config.card_seed,
                        start_food=config.start_food).cards()
    t0 = time.perf_counter()
    weights, curve = train_policy(config, cards, progress=progress)
    seconds = time.perf_counter() - t0
    final = final_evaluation(config, cards, weights)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, weights=weights)
    with tempfile.TemporaryDirectory() as tmp:
        weights_copy = Path(tmp) / WEIGHTS_FILE
        np.savez(weights_copy, weights=weights)
        plot = learning_curve_plot(curve, out.with_suffix(".png"),
                                   f"bird policy, REINFORCE vs {config.opponent}")
        table = write_curve_csv(curve, out.with_suffix(".csv"))
        run_id = None
        if tracking_uri:
            files = [weights_copy, Path(tmp) / "learning_curve.png", Path(tmp) / "learning_curve.csv"]
            files[1].write_bytes(plot.read_bytes())
            files[2].write_bytes(table.read_bytes())
            run_id = _log_to_mlflow(config, curve, files, tracking_uri, experiment,
                                    f"birds-policy-{config.opponent}-seed{config.seed}", final)
    last = [r for r in curve if "eval_win_rate" in r][-1]
    return {
        "weights": str(out), "plot": str(plot), "curve": str(table), "seconds": round(seconds, 2),
        "eval_win_rate": last["eval_win_rate"], "eval_score_diff": last["eval_score_diff"],
        "final": final, "run_id": run_id,
        "artifact_uri": f"runs:/{run_id}/{ARTIFACT_DIR}/{WEIGHTS_FILE}" if run_id else None,
    }


#: The ``train-birds`` options: one per TrainConfig field (absent: the field's default).
TRAIN_OPTIONS = {
    "iterations": int, "games_per_iteration": int, "learning_rate": float, "opponent": str,
    "score_weight": float, "eval_every": int, "eval_games": int, "seed": int, "card_seed": int,
    "cards_csv": str, "final_eval_games": int, "start_food": int,
}


def add_arguments(parser) -> None:
    """Add the ``train-birds`` options (no heavy imports: the CLI builds its parser eagerly)."""
    for name, kind in TRAIN_OPTIONS.items():
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None,
                            help=f"TrainConfig.{name} (see agents/birds/policy.py)")
    parser.add_argument("--out", required=True, help="output .npz (a seat's seed_population)")
    parser.add_argument("--tracking-uri", default="sqlite:///mlflow.db",
                        help="MLflow store for the curve, plot and weights (default sqlite:///mlflow.db)")
    parser.add_argument("--experiment", default="birds-policy", help="MLflow experiment (default birds-policy)")
    parser.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")


def main(args) -> int:
    """Entry point of ``arena train-birds``."""
    import json
    import sys

    from agents.birds.policy import TrainConfig

    try:
        given = {name: getattr(args, name) for name in TRAIN_OPTIONS}
        config = TrainConfig(**{k: v for k, v in given.items() if v is not None})
        if config.cards_csv is not None:
            from games.birds import BirdsConfig

            BirdsConfig(cards_csv=config.cards_csv)  # a bad file fails here, naming row and column
    except ValueError as exc:
        print(f"train-birds: {exc}", file=sys.stderr)
        return 2

    def progress(row):
        if "eval_win_rate" in row:
            print(f"iteration {row['iteration']}: win rate vs random {row['eval_win_rate']:.3f} "
                  f"(action type first {row['eval_typed_win_rate']:.3f}), "
                  f"score difference {row['eval_score_diff']:+.2f}", flush=True)

    summary = run_training(config, Path(args.out), None if args.no_tracking else args.tracking_uri,
                           args.experiment, progress)
    print(json.dumps(summary))
    return 0
