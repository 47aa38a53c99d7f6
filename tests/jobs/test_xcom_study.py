"""XCOM studies: every spec validates, the segment statistics, and TD weights
carried across the rounds of a run and reset between runs through the cluster."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cluster.spec.plan import plan_study
from cluster.run.play import build_agents, play_game
from cluster.analysis.learning_curves import segment_table, segment_tests, win_ratio
from cluster.spec.build import build_spec
from cluster.stats import paired_t_test
from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from jobs.spec import load_spec

SPECS = sorted((Path(__file__).resolve().parents[2] / "jobs" / "xcom").glob("*.toml"))


#: Each board's study family: (humans, aliens) labels of its specs; the learner against the
#: three opponents and the reward-only control, plus the two controls against MCTS.
PAIRINGS = {("Conv-AE+FA", "MCTS"), ("Conv-AE+FA", "MCTS-TD"), ("Conv-AE+FA", "MF+FA"),
            ("Conv-AE+FA", "MCTS+R"), ("MCTS+R", "MCTS"), ("MCTS-10x", "MCTS")}


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_every_xcom_spec_validates(path):
    spec = load_spec(path)
    assert spec.game == "xcom" and spec.labels in PAIRINGS
    assert spec.design.rounds == 40 and spec.design.series_by == "run"
    assert spec.design.runs == (20 if spec.game_config.board == "mini" else 10)
    assert not spec.design.rotate_seats and spec.budget.iterations == 100
    # the 10x reference has its own budget; every other seat plays 100 iterations
    budgets = [spec.budget_for(i).iterations for i in range(2)]
    assert budgets == ([1000, 100] if spec.labels[0] == "MCTS-10x" else [100, 100])
    # rounds of a run are one series; round k plays board seed k (first mover alternates)
    plan = plan_study(spec)
    assert len(plan) == spec.design.runs
    assert [g.board_seed for g in plan[0].games] == list(range(40))


def test_every_board_has_the_whole_study_family():
    for board in ("mini", "large"):
        family = [load_spec(p) for p in SPECS if p.name.startswith(f"{board}_")]
        assert {s.labels for s in family} == PAIRINGS
        assert {s.game_config.board for s in family} == {board}
    assert len(SPECS) == 2 * len(PAIRINGS)


# --- statistics ---------------------------------------------------------------
def test_paired_t_test_hand_computed():
    x = [0.5, 0.6, 0.7, 0.4]
    y = [0.3, 0.5, 0.4, 0.4]
    # d = [0.2, 0.1, 0.3, 0.0]: mean 0.15, sd 0.1290994, t = 0.15 / (0.1290994 / 2) = 2.32379
    t, p, dof = paired_t_test(x, y)
    assert dof == 3 and t == pytest.approx(2.323790, rel=1e-6)
    # two-tailed p of t = 2.32379 with 3 df (tables: t_{0.95, 3} = 2.353, so p just above 0.1)
    assert p == pytest.approx(0.10273, abs=1e-4)
    assert paired_t_test([1, 1], [1, 1])[:2] == (0.0, 1.0)
    assert paired_t_test([1, 2], [0, 1])[:2] == (math.inf, 0.0)
    assert math.isnan(paired_t_test([1], [0])[1])


def _rows(results):
    """Rows of a fake 2-run x 4-round study: results[run][round] = winner label or None."""
    rows = []
    g = 0
    for run, rounds in enumerate(results):
        for k, winner in enumerate(rounds):
            for seat, label in enumerate(("A", "B")):
                result = "tie" if winner is None else ("win" if winner == label else "loss")
                rows.append({"game_index": g, "seat": seat, "label": label, "series_id": run,
                             "index_in_series": k, "result": result})
            g += 1
    return pd.DataFrame(rows)


def test_segment_table_tests_and_ratio():
    df = _rows([["A", "A", "B", None], ["A", "B", "B", "B"]])
    seg = segment_table(df, segment=2)
    first = seg[(seg["segment"] == 0) & (seg["label"] == "A")].iloc[0]
    assert first["mean"] == pytest.approx(0.75) and first["sd"] == pytest.approx(math.sqrt(0.125))
    assert first["rounds"] == "1-2"
    late_b = seg[(seg["segment"] == 1) & (seg["label"] == "B")].iloc[0]
    assert late_b["mean"] == pytest.approx(0.75)
    tests = segment_tests(df, segment=2)
    assert list(tests["rounds"]) == ["1-2", "3-4"] and tests["df"].tolist() == [1, 1]
    ratio = win_ratio(df)
    assert (ratio["learner_wins"], ratio["opponent_wins"], ratio["draws"]) == (3, 4, 1)
    assert ratio["ratio"] == pytest.approx(4 / 3)


# --- through the cluster --------------------------------------------------------
def _tiny_spec(tmp_path, name="xcom-carry"):
    return build_spec({
        "study": {"name": name, "seed": 5, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "xcom", "board": "mini", "max_moves": 8},
        "budget": {"iterations": 8},
        "design": {"runs": 2, "rounds": 3, "rotate_seats": False},
        "lineup": [{"agent": "xcom_convae_fa", "label": "Conv-AE+FA"},
                   {"agent": "xcom_mf_fa", "label": "MF+FA"}],
        "tracking": {"enabled": False},
    })


def test_weights_carried_across_rounds_and_reset_between_runs(tmp_path, ray_local):
    spec = _tiny_spec(tmp_path)
    result = run_study(spec, num_workers=2, progress=False)
    assert result.games_done == 6 and result.error_games == 0
    store = ResultStore(spec.study_dir)
    saved = {(r, k): store.learned_state_at(r, k) for r in range(2) for k in range(3)}
    for label, size in (("Conv-AE+FA", 16), ("MF+FA", 5)):
        w = [saved[(0, k)][label]["weights"] for k in range(3)]
        assert all(x.shape == (size,) for x in w)
        assert not np.array_equal(w[0], w[2])

    # the stored states are what one agent pair learning through a run in order produces
    # (carried), and each run starts from fresh agents (reset): replay in-process
    plan = plan_study(spec)
    for run in range(2):
        agents = build_agents(spec)
        for k, task in enumerate(plan[run].games):
            _, learned = play_game(spec, task, agents)
            for label in ("Conv-AE+FA", "MF+FA"):
                assert np.array_equal(learned[label]["weights"], saved[(run, k)][label]["weights"])
    # fresh agents playing round 2 of run 0 alone do not reach the carried weights
    _, alone = play_game(spec, plan[0].games[2], build_agents(spec))
    assert not np.array_equal(alone["MF+FA"]["weights"], saved[(0, 2)]["MF+FA"]["weights"])

    # the report has the learning curves
    report = spec.study_dir / "report"
    assert (report / "segments.csv").is_file() and (report / "segments.png").is_file()
    assert (report / "segment_tests.csv").is_file() and (report / "win_ratio.csv").is_file()


def test_train_encoder_job_writes_a_checked_encoder_and_logs_to_mlflow(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional 'train' extra")
    from agents.xcom.encoder import check_encoder_arrays, load_encoder_arrays
    from jobs.cli import main

    out = tmp_path / "enc.npz"
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(["train-encoder", "--board", "mini", "--samples", "64", "--epochs", "2",
                 "--out", str(out), "--tracking-uri", uri]) == 0
    assert check_encoder_arrays(load_encoder_arrays(out), 6) == 6
    assert out.with_suffix(".json").is_file() and (tmp_path / "enc_loss.png").is_file()
    import mlflow

    client = mlflow.tracking.MlflowClient(uri)
    experiment = client.get_experiment_by_name("arena-encoders")
    run = client.search_runs([experiment.experiment_id])[0]
    assert len(client.get_metric_history(run.info.run_id, "train_mse")) == 2
    names = {a.path for a in client.list_artifacts(run.info.run_id, "encoder")}
    assert names == {"encoder/enc.npz", "encoder/enc.json", "encoder/enc_loss.png"}


def test_train_encoder_job_takes_wider_channels(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is the optional 'train' extra")
    import json

    from agents.xcom.encoder import check_encoder_arrays, load_encoder_arrays
    from jobs.cli import main

    out = tmp_path / "wide.npz"
    assert main(["train-encoder", "--board", "mini", "--samples", "32", "--epochs", "1",
                 "--channels", "12,24", "--out", str(out), "--no-tracking"]) == 0
    arrays = load_encoder_arrays(out)
    assert check_encoder_arrays(arrays, 6) == 6 and arrays["conv2_w"].shape[:2] == (24, 12)
    provenance = json.loads(out.with_suffix(".json").read_text())
    assert provenance["channels"] == [12, 24] and provenance["command"].endswith("--channels 12,24")
    with pytest.raises(SystemExit):
        main(["train-encoder", "--channels", "12", "--no-tracking"])


def test_compare_plots_the_ratio_across_studies(tmp_path, capsys):
    from jobs.cli import main

    study = tmp_path / "s1"
    (study / "results").mkdir(parents=True)
    _rows([["A", "B", "B", None], ["A", "B", "A", "B"]]).assign(
        study_id="s1", agent="x").to_parquet(study / "results" / "part-0.parquet")
    assert main(["compare", str(study), "--out", str(tmp_path / "cmp")]) == 0
    assert "| s1 | B | 4 | 3 | 1 | 1.333 |" in capsys.readouterr().out
    assert (tmp_path / "cmp" / "win_ratios.png").is_file()


SWEEPS = sorted((Path(__file__).resolve().parents[2] / "jobs" / "sweeps").glob("xcom_*_value.toml"))
WEIGHT_SWEEPS = sorted((Path(__file__).resolve().parents[2] / "jobs" / "sweeps").glob(
    "xcom_*_weight.toml")) + sorted((Path(__file__).resolve().parents[2] / "jobs" / "sweeps").glob(
    "xcom_*_reward.toml"))


@pytest.mark.parametrize("path", SWEEPS, ids=[p.name for p in SWEEPS])
def test_xcom_value_sweeps_validate(path):
    from jobs.spec import load_sweep

    sweep = load_sweep(path)
    board = path.name.split("_")[1]
    assert sweep.objective_label == "Conv-AE+FA" and sweep.grid_size == 36
    assert {p.path for p in sweep.search} == {f"lineup.0.params.{k}" for k in
                                              ("value_weight", "alpha", "gamma")}
    # each grid starts with the default, so --scale keeps the default setting
    assert [p.values[0] for p in sweep.search] == [0.05, 5e-4, 0.9]
    spec = sweep.trial_spec({p.path: p.values[0] for p in sweep.search})
    assert spec.labels == ("Conv-AE+FA", "MCTS") and spec.game_config.board == board
    assert spec.design.runs == 4 and spec.design.rounds == 40
    assert load_sweep(path, scale=0.5).grid_size == 8
    assert len(SWEEPS) == 2


@pytest.mark.parametrize("path", WEIGHT_SWEEPS, ids=[p.name for p in WEIGHT_SWEEPS])
def test_xcom_weight_sweeps_validate_on_one_grid_and_one_board_stream(path):
    """Conv-AE+FA's value_weight x gamma and the reward-only control's value_weight share
    the weight grid and the sweep seed (so the trials of a weight play the same boards)."""
    from jobs.spec import load_sweep

    sweep = load_sweep(path)
    board, kind = path.stem.split("_")[1:3]
    weights = [0.05, 0.1, 0.2, 0.5, 1.0]
    axes = {p.path: list(p.values) for p in sweep.search}
    assert axes["lineup.0.params.value_weight"] == weights and sweep.seed == 2323
    if kind == "weight":
        assert sweep.objective_label == "Conv-AE+FA" and sweep.grid_size == 10
        assert axes["lineup.0.params.gamma"] == [0.9, 0.5]
        labels = ("Conv-AE+FA", "MCTS")
    else:
        assert sweep.objective_label == "MCTS+R" and sweep.grid_size == 5
        labels = ("MCTS+R", "MCTS")
    spec = sweep.trial_spec({p.path: p.values[0] for p in sweep.search})
    assert spec.labels == labels and spec.game_config.board == board
    assert spec.design.runs == 4 and spec.design.rounds == 40
    assert sweep.reeval_games == (400 if board == "mini" else 240)
    assert len(WEIGHT_SWEEPS) == 4
