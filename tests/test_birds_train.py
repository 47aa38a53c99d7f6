"""The bird policy training job: weights, curve, plot, MLflow run; a spec loads the weights by URI."""
from __future__ import annotations

import argparse
from dataclasses import fields

import numpy as np
import pytest

from agents.birds.policy import TrainConfig
from jobs.spec import load_spec
from jobs.train_birds import TRAIN_OPTIONS, add_arguments, run_training


def test_cli_options_cover_the_train_config():
    assert set(TRAIN_OPTIONS) == {f.name for f in fields(TrainConfig)}
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--out", "w.npz", "--iterations", "3", "--opponent", "self"])
    assert args.iterations == 3 and args.opponent == "self" and args.learning_rate is None


def test_training_job_logs_to_mlflow_and_a_study_loads_the_weights(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    config = TrainConfig(iterations=6, games_per_iteration=20, eval_every=3, eval_games=20, seed=3)
    summary = run_training(config, tmp_path / "out" / "w.npz", uri, "birds-test")
    with np.load(tmp_path / "out" / "w.npz") as npz:
        weights = npz["weights"]
    assert weights.shape == (16,) and np.abs(weights).sum() > 0
    assert (tmp_path / "out" / "w.png").stat().st_size > 1000
    assert summary["artifact_uri"] == f"runs:/{summary['run_id']}/policy/birds_policy.npz"

    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    run = client.get_run(summary["run_id"])
    assert run.data.params["games_per_iteration"] == "20"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "eval_win_rate")] == [3, 6]
    names = {a.path for a in client.list_artifacts(run.info.run_id, "policy")}
    assert names == {"policy/birds_policy.npz", "policy/learning_curve.png", "policy/learning_curve.csv"}

    spec_text = f"""
[study]
name = "birds-uri"
seed = 1
[game]
name = "birds"
[budget]
iterations = 10
[design]
seeds = 1
[[lineup]]
agent = "birds_policy"
seed_population = "{summary['artifact_uri']}"
[[lineup]]
agent = "random"
[tracking]
uri = "{uri}"
"""
    (tmp_path / "s.toml").write_text(spec_text)
    spec = load_spec(tmp_path / "s.toml")
    with np.load(spec.lineup[0].seed_population) as npz:
        assert np.array_equal(npz["weights"], weights)
    (tmp_path / "s.toml").write_text(spec_text.replace(summary["run_id"], "0" * 32))
    with pytest.raises(ValueError, match=r"lineup\[0\]\.seed_population: cannot download"):
        load_spec(tmp_path / "s.toml")
