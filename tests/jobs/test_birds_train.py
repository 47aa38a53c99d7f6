"""The bird policy training job: weights, curve, plot, MLflow run; a spec loads the weights by URI."""
from __future__ import annotations

import argparse
from dataclasses import fields

import numpy as np
import pytest

from agents.birds.policy import TrainConfig
from jobs.spec import load_spec
from jobs.birds.train_policy import TRAIN_OPTIONS, add_arguments, run_training


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


def test_self_play_trainer_improves_over_its_start():
    """REINFORCE by self-play (both seats play and learn the current policy), seeded and
    small: the trained weights beat both kinds of random player far more often than the
    uniform start does."""
    from agents.birds.policy import MODEL_RANDOM, MODEL_TYPED_RANDOM, evaluate_policy, train_policy
    from games.rng import make_rng
    from games.birds import BirdsConfig

    cards = BirdsConfig().cards()
    config = TrainConfig(opponent="self", iterations=30, games_per_iteration=100, eval_every=30,
                         eval_games=100, seed=2)
    weights, curve = train_policy(config, cards)
    assert "eval_typed_win_rate" in curve[-1]
    for model in (MODEL_RANDOM, MODEL_TYPED_RANDOM):
        trained, _ = evaluate_policy(cards, 3, weights, model, 300, make_rng(5))
        start, _ = evaluate_policy(cards, 3, np.zeros_like(weights), model, 300, make_rng(5))
        assert trained[0] >= start[0] + 60, (model, trained, start)


def test_typed_random_player_picks_an_action_type_first():
    """At a deal every type is open (a free bird in hand, the tray, food): food is a third
    of the moves whatever the number of draw and play actions."""
    from agents.birds.features import typed_random_action
    from games.rng import make_rng
    from games.birds import Birds, BirdsConfig
    from games.birds import kernels as K

    game = Birds(BirdsConfig())
    for seed in range(40):
        game.reset(seed)
        s = game.state
        legal = game.legal_actions(0)
        if legal[: K.DRAW_TRAY].any():
            break
    rng = make_rng(1)
    moves = np.array([typed_random_action(s, 0, rng) for _ in range(6000)])
    assert legal[moves].all()
    assert abs((moves == K.GAIN_FOOD).mean() - 1 / 3) < 0.03
    assert abs((moves < K.DRAW_TRAY).mean() - 1 / 3) < 0.03


def test_training_on_a_card_file(tmp_path):
    """``cards_csv`` trains on a card list (here a small one with dear birds); the
    summary has the final evaluation against both kinds of random player."""
    rows = ["points,cost"] + [f"{p},{c}" for p in range(10) for c in range(4)] * 2
    (tmp_path / "cards.csv").write_text("\n".join(rows) + "\n")
    config = TrainConfig(iterations=4, games_per_iteration=20, eval_every=2, eval_games=20, seed=3,
                         cards_csv=str(tmp_path / "cards.csv"), final_eval_games=50)
    summary = run_training(config, tmp_path / "w.npz", None)
    assert set(summary["final"]) == {"flat", "typed"}
    flat = summary["final"]["flat"]
    assert flat["games"] == 50 and flat["wins"] + flat["ties"] + flat["losses"] == 50
    assert flat["win_lo"] <= flat["win_rate"] <= flat["win_hi"]
    with pytest.raises(ValueError, match="^cards_csv: "):
        TrainConfig(cards_csv="")
