"""``arena train-encoder``: train the XCOM autoencoder and log it to MLflow.

    arena train-encoder --board mini                 # 10,000 boards, 10 epochs
    arena train-encoder --board large --out enc.npz  # 60,000 boards
    ray job submit --working-dir . -- arena train-encoder --board mini

Generates the dataset (``agents.xcom.autoencoder.make_dataset``), trains with
MSE and Adam (lr 0.001, 10 epochs by default), writes the encoder ``.npz``, a
provenance ``.json`` beside it and the loss-curve plot, and logs parameters,
the per-epoch loss, the plot and both files to an MLflow run. A study takes the
encoder by path (``params.encoder``) or by the MLflow artifact URI printed at
the end (``seed_population = "runs:/<run_id>/encoder/<file>.npz"``).
Needs PyTorch: ``pip install -e ".[train]"``.
"""
from __future__ import annotations

import json
import platform
import time
from datetime import datetime, timezone
from pathlib import Path


def train_encoder_job(board: str = "mini", samples: int | None = None, epochs: int = 10,
                      lr: float = 1e-3, batch_size: int = 16, seed: int = 0, out: str | None = None,
                      tracking_uri: str | None = "sqlite:///mlflow.db", experiment: str = "arena-encoders",
                      threads: int = 1, channels: tuple[int, int] | None = None, log=print) -> dict:
    """Run the job; returns a summary dict (paths, losses, MLflow run id or None).
    ``channels``: the conv channels (C1, C2), default the board's (``default_channels``)."""
    import numpy as np

    from agents.xcom.autoencoder import (
        DEFAULT_SAMPLES, default_channels, export_encoder, make_dataset, train_autoencoder,
    )
    from games.registry import make_config

    try:
        import torch
    except ImportError:
        raise RuntimeError("train-encoder needs PyTorch: pip install -e \".[train]\"") from None
    game_config = make_config("xcom", {"board": board})
    n = game_config.size
    if samples is None:
        samples = DEFAULT_SAMPLES.get(n, 10_000)
    if samples < 1 or epochs < 1 or not lr > 0 or batch_size < 1:
        raise ValueError("samples, epochs, lr and batch_size must be positive")
    if channels is not None:
        channels = tuple(int(c) for c in channels)
        if len(channels) != 2 or min(channels) < 1:
            raise ValueError(f"channels: two positive ints (C1, C2), got {list(channels)}")
    chosen = channels if channels is not None else default_channels(n)
    out_path = Path(out) if out else Path("arena-encoders") / f"encoder_{n}x{n}.npz"
    out_path.parent.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    boards = make_dataset(game_config, samples, seed)
    log(f"dataset: {samples} boards of {n}x{n} in {time.perf_counter() - t0:.1f} s")
    t1 = time.perf_counter()
    model, losses = train_autoencoder(
        boards, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed, threads=threads,
        channels=chosen, on_epoch=lambda e, loss: log(f"epoch {e + 1}/{epochs}: mse {loss:.5f}"))
    train_seconds = time.perf_counter() - t1
    arrays = export_encoder(model, n)
    np.savez(out_path, **arrays)
    provenance = {
        "board": board, "board_size": n, "samples": samples, "epochs": epochs, "lr": lr,
        "optimizer": "Adam", "loss": "mse", "batch_size": batch_size, "seed": seed,
        "channels": list(chosen), "features": int(arrays["fc_w"].shape[0]),
        "losses": losses, "train_seconds": round(train_seconds, 1),
        "torch": torch.__version__, "python": platform.python_version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": f"arena train-encoder --board {board} --samples {samples} --epochs {epochs} "
                   f"--lr {lr} --batch-size {batch_size} --seed {seed}"
                   + ("" if channels is None else f" --channels {chosen[0]},{chosen[1]}"),
    }
    prov_path = out_path.with_suffix(".json")
    prov_path.write_text(json.dumps(provenance, indent=2) + "\n")
    plot_path = out_path.with_name(out_path.stem + "_loss.png")
    _plot_losses(losses, plot_path, f"autoencoder {n}x{n}: {samples} boards, Adam lr {lr}")
    log(f"encoder: {out_path} (provenance {prov_path.name}, plot {plot_path.name})")

    run_id = None
    if tracking_uri:
        run_id = _log_mlflow(tracking_uri, experiment, provenance, losses,
                             [out_path, prov_path, plot_path], log)
        if run_id:
            log(f"MLflow: runs:/{run_id}/encoder/{out_path.name}")
    return {"encoder": str(out_path), "provenance": str(prov_path), "plot": str(plot_path),
            "losses": losses, "run_id": run_id}


def _plot_losses(losses, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(range(1, len(losses) + 1), losses, marker="o")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training MSE")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _log_mlflow(uri: str, experiment: str, provenance: dict, losses, files, log) -> str | None:
    try:
        import mlflow

        from cluster.tracking import log_batch

        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment(experiment)
        with mlflow.start_run(run_name=f"encoder-{provenance['board_size']}x{provenance['board_size']}") as run:
            client = mlflow.tracking.MlflowClient()
            params = {k: v for k, v in provenance.items() if k not in ("losses", "created")}
            log_batch(client, run.info.run_id, params=params,
                      curve=[("train_mse", v, i + 1) for i, v in enumerate(losses)])
            for f in files:
                mlflow.log_artifact(str(f), artifact_path="encoder")
            return run.info.run_id
    except Exception as exc:  # noqa: BLE001 - tracking is a mirror; the files are written
        log(f"MLflow unavailable at {uri} ({type(exc).__name__}: {exc}); files kept locally")
        return None
