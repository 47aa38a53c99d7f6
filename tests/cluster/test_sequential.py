"""Sequential stopping (cluster.analysis.sequential, design.stop): the GSPRT, its error rates on
simulated streams, the deterministic decision, the spec field, and studies that stop."""
from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binomtest

from cluster.analysis.sequential import (GAME_SCORES, PAIR_SCORES, SequentialMonitor, elo_to_score,
                                fixed_sample_units, gsprt_llr, outcome_probabilities, simulate_sprt,
                                sprt_bounds)
from cluster.results.store import ResultStore
from cluster.run.driver import run_study
from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.fields import SpecError

from conftest import PLUGINS

REPO = Path(__file__).resolve().parents[2]


def _profile_log_likelihood(p_hat: np.ndarray, scores: np.ndarray, mean: float) -> float:
    """max sum p_hat log p over distributions p with sum p a = mean, by SciPy's SLSQP
    (an independent check of the closed form the GSPRT uses)."""
    k = len(p_hat)
    constraints = [{"type": "eq", "fun": lambda p: p.sum() - 1.0},
                   {"type": "eq", "fun": lambda p: p @ scores - mean}]
    fit = minimize(lambda p: -np.sum(p_hat * np.log(p)), np.full(k, 1.0 / k), method="SLSQP",
                   bounds=[(1e-9, 1.0)] * k, constraints=constraints, options={"ftol": 1e-14, "maxiter": 500})
    return -fit.fun


def test_llr_is_the_ratio_of_the_constrained_maximum_likelihoods():
    counts = np.array([3.0, 10.0, 25.0, 14.0, 6.0])  # a pentanomial of 58 pairs
    s0, s1 = float(elo_to_score(0)), float(elo_to_score(20))
    p_hat = counts / counts.sum()
    expected = counts.sum() * (_profile_log_likelihood(p_hat, PAIR_SCORES, s1)
                               - _profile_log_likelihood(p_hat, PAIR_SCORES, s0))
    assert gsprt_llr(counts, PAIR_SCORES, s0, s1)[0] == pytest.approx(expected, rel=1e-4)
    # A mean score between the hypotheses' favours neither much; above s1 favours H1.
    assert gsprt_llr([[0, 0, 10, 30, 10]], PAIR_SCORES, s0, s1)[0] > 0
    assert gsprt_llr([[10, 30, 10, 0, 0]], PAIR_SCORES, s0, s1)[0] < 0


def test_simulated_error_rates_are_near_alpha_and_beta_and_asn_below_fixed_size():
    """1000 simulated tests at each hypothesis. Wald's bounds keep an SPRT's error rates at
    or a little under alpha (beta); with 1000 tests the observed rate's standard error is
    0.0069, so a rate consistent with 0.05 lies in 0.05 +- 0.023 (binomial test at 0.001).
    The average sample number must be well under the fixed-size test's."""
    elo0, elo1, alpha, beta, tests = 0.0, 40.0, 0.05, 0.05, 1000
    rng = np.random.default_rng(np.random.SeedSequence(2026))
    at_h0, units_h0 = simulate_sprt(elo0, elo0, elo1, alpha, beta, tests=tests, rng=rng)
    at_h1, units_h1 = simulate_sprt(elo1, elo0, elo1, alpha, beta, tests=tests, rng=rng)
    assert (at_h0 != 0).all() and (at_h1 != 0).all(), "every test decides"
    false_h1, false_h0 = int((at_h0 == 1).sum()), int((at_h1 == -1).sum())
    assert binomtest(false_h1, tests, alpha).pvalue > 1e-3, false_h1
    assert binomtest(false_h0, tests, beta).pvalue > 1e-3, false_h0
    assert false_h1 / tests < alpha + 3.3 * math.sqrt(alpha * (1 - alpha) / tests)
    probs = outcome_probabilities(elo0, 0.3, "pairs")
    sd = math.sqrt(probs @ (PAIR_SCORES - probs @ PAIR_SCORES) ** 2)
    fixed = fixed_sample_units(sd, float(elo_to_score(elo0)), float(elo_to_score(elo1)), alpha, beta)
    assert units_h0.mean() < 0.75 * fixed and units_h1.mean() < 0.75 * fixed, (units_h0.mean(), units_h1.mean(), fixed)
    print(f"false H1 {false_h1 / tests:.3f}, false H0 {false_h0 / tests:.3f}, ASN {units_h0.mean():.0f} / "
          f"{units_h1.mean():.0f} pairs vs fixed {fixed}")


# --- the monitor: decisions from games in plan order -------------------------------------
def _spec(tmp_path, name="seq", *, stop=None, design=None, lineup=None, study=None):
    design = dict(design or {"seeds": 60, "games_per_seed": 2, "series_by": "game"})
    if stop is not False:
        design["stop"] = stop or {"sprt": {"elo0": 0, "elo1": 150}, "between": ["Strong", "Weak"]}
    data = {"study": {"name": name, "seed": 11, "results_dir": str(tmp_path / "studies"), **(study or {})},
            "game": {"name": "count", "max_steps": 6},
            "budget": {"iterations": 1},
            "design": design,
            "lineup": lineup or [{"agent": "fake", "label": "Strong", "params": {"skill": 0.9}},
                                 {"agent": "fake", "label": "Weak"}],
            "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "enabled": False}}
    return build_spec(data)


def _rows(game_index: int, a_result: str, spec) -> list[dict]:
    other = {"win": "loss", "loss": "win", "tie": "tie", "error": "error"}[a_result]
    return [{"game_index": game_index, "label": "Strong", "result": a_result},
            {"game_index": game_index, "label": "Weak", "result": other}]


def test_decision_does_not_depend_on_arrival_order(tmp_path):
    spec = _spec(tmp_path)
    rng = np.random.default_rng(np.random.SeedSequence(5))
    results = list(rng.choice(["win", "tie", "loss"], size=spec.design.total_games, p=[0.75, 0.1, 0.15]))
    results[4] = "error"  # pair 2 has an errored game: played, not scored
    outcomes = []
    for order in (np.arange(len(results)), rng.permutation(len(results)), rng.permutation(len(results))):
        monitor = SequentialMonitor.from_spec(spec)
        for g in order:
            monitor.add_game(_rows(int(g), results[g], spec))
        result = monitor.result()
        outcomes.append((result.decision, result.units_used, result.games_used, result.llr, result.counts))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    decision, units, games, llr, counts = outcomes[0]
    assert decision == "H1" and games == 2 * units and units < spec.design.total_games // 2
    assert len(llr) == units - 1 and sum(counts) == units - 1  # the errored pair counts nothing
    lower, upper = sprt_bounds(0.05, 0.05)
    assert llr[-1] >= upper and all(lower < v < upper for v in llr[:-1])


def test_a_unit_waits_for_the_games_before_it(tmp_path):
    spec = _spec(tmp_path)
    monitor = SequentialMonitor.from_spec(spec)
    for g in range(2, 40):  # everything but the first pair
        monitor.add_game(_rows(g, "win", spec))
    assert monitor.decision == "running" and monitor.llr == [] and monitor.frontier == 0
    assert monitor.admits(3, window=4) and not monitor.admits(4, window=4)
    monitor.add_game(_rows(0, "win", spec))
    monitor.add_game(_rows(1, "win", spec))
    assert monitor.decision == "H1"


def test_max_games_ends_an_undecided_test(tmp_path):
    spec = _spec(tmp_path, stop={"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"],
                                 "max_games": 10})
    monitor = SequentialMonitor.from_spec(spec)
    for g in range(10):
        monitor.add_game(_rows(g, "win" if (g // 2) % 2 == 0 else "loss", spec))
    assert monitor.finished and monitor.result().decision == "undecided"
    assert monitor.result().games_used == 10 and monitor.cap == 10


def test_games_scoring_without_seat_swap(tmp_path):
    spec = _spec(tmp_path, stop={"sprt": {"elo0": 0, "elo1": 100}, "between": ["Strong", "Weak"],
                                 "scoring": "games"},
                 design={"seeds": 40, "games_per_seed": 1, "rotate_seats": False, "series_by": "game"})
    monitor = SequentialMonitor.from_spec(spec)
    assert monitor.units[:3] == [(0,), (1,), (2,)]
    for g in range(40):
        monitor.add_game(_rows(g, "win", spec))
    result = monitor.result()
    assert result.decision == "H1" and result.counts[0] == 0 and len(result.counts) == len(GAME_SCORES)


@pytest.mark.parametrize("stop, design, message", [
    ({"sprt": {"elo0": 0, "elo1": 0}, "between": ["Strong", "Weak"]}, None,
     "design.stop.sprt.elo1: must be greater than elo0"),
    ({"sprt": {"elo0": 0, "elo1": 20, "beta": 0.6}, "between": ["Strong", "Weak"]}, None,
     "design.stop.sprt.beta: must be in (0, 0.5)"),
    ({"sprt": {"elo0": 0}, "between": ["Strong", "Weak"]}, None, "design.stop.sprt.elo1: required"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Nobody"]}, None,
     "design.stop.between[1]: no lineup label 'Nobody'"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong"]}, None, "design.stop.between: must be two"),
    ({"sprt": {"elo0": 0, "elo1": 20}}, None, "design.stop.between: required"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"], "max_games": 7}, None,
     "design.stop.max_games: must be even"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"], "scoring": "trios"}, None,
     "design.stop.scoring: must be one of"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"], "after": 3}, None,
     "design.stop.after: unknown key"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"]},
     {"seeds": 4, "games_per_seed": 3}, "design.stop.scoring: 'pairs' needs every board played"),
    ({"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"]},
     {"seeds": 4, "games_per_seed": 2, "vary": {"max_steps": [4, 6]}}, "design.stop: a sequential test"),
])
def test_stop_spec_errors_name_the_field(tmp_path, stop, design, message):
    with pytest.raises(SpecError) as info:
        _spec(tmp_path, stop=stop, design=design)
    assert str(info.value).startswith(message), str(info.value)


def test_pairs_need_two_players(tmp_path):
    lineup = [{"agent": "fake", "label": "Strong"}, {"agent": "fake", "label": "Weak"},
              {"agent": "fake", "label": "Other"}]
    data = {"study": {"name": "x", "seed": 1, "results_dir": str(tmp_path)},
            "game": {"name": "count", "num_players": 3}, "budget": {"iterations": 1},
            "design": {"seeds": 2, "games_per_seed": 2,
                       "stop": {"sprt": {"elo0": 0, "elo1": 20}, "between": ["Strong", "Weak"]}},
            "lineup": lineup}
    with pytest.raises(SpecError, match=r"^design.stop.scoring: 'pairs' needs a two-player game"):
        build_spec(data)
    data["design"]["stop"]["scoring"] = "games"
    assert build_spec(data).design.stop.scoring == "games"


def test_stop_survives_the_round_trip_through_spec_json(tmp_path):
    spec = _spec(tmp_path)
    again = spec_from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again.design == spec.design and again.flat_params() == spec.flat_params()


# --- studies that stop ------------------------------------------------------------------------
def test_study_stops_early_and_a_resume_honours_the_decision(ray_local, tmp_path):
    spec = _spec(tmp_path)
    result = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    seq = result.sequential
    assert seq.decision == "H1", seq
    assert seq.games_used < spec.design.total_games
    # nothing lost: every game played is stored; no more than the look-ahead window past the decision
    assert result.games_played == len(ResultStore(spec.study_dir).finished_games())
    assert seq.games_used <= result.games_played <= seq.games_used + 2 * 2
    assert (spec.study_dir / "report" / "sprt.md").read_text().count("H1 accepted") == 1
    from cluster.analysis.report import report_study

    assert f"Games used: {seq.games_used} " in report_study(spec.study_dir, plot=False)  # arena report
    again = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert again.games_played == 0 and again.sequential.decision == "H1"
    assert again.sequential.games_used == seq.games_used and again.sequential.llr == seq.llr


_DRIVER = """
import json, sys
import conftest  # registers the count game and the fake agent
from cluster.spec.build import spec_from_dict
from cluster.run.driver import run_study
spec = spec_from_dict(json.load(open(sys.argv[1])))
run_study(spec, address=sys.argv[2], num_workers=2, progress=False, tracking=False, plugins=["conftest"],
          warm_up=False)
"""


def test_killed_driver_resumes_to_the_same_decision_on_the_same_games(ray_local, tmp_path):
    lineup = [{"agent": "fake", "label": "Strong", "params": {"skill": 0.6, "sleep_ms": 10}},
              {"agent": "fake", "label": "Weak", "params": {"sleep_ms": 10}}]
    stop = {"sprt": {"elo0": 0, "elo1": 100}, "between": ["Strong", "Weak"]}
    spec = _spec(tmp_path / "killed", "seq-kill", lineup=lineup, stop=stop)
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec.to_dict()))
    address = ray_local.get_runtime_context().gcs_address
    # cwd: this checkout, whose code the driver and its Ray workers import (not an installed copy)
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, str(spec_file), address],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    done = 0
    while done < 4:
        assert proc.poll() is None, proc.stdout.read().decode()[-3000:]
        assert time.monotonic() < deadline, "the subprocess recorded no games"
        time.sleep(0.02)
        done = len(ResultStore(spec.study_dir).finished_games())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = len(ResultStore(spec.study_dir).finished_games())
    resumed = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert resumed.games_skipped == killed_at
    reference = run_study(_spec(tmp_path / "ref", "seq-kill", lineup=lineup, stop=stop),
                          num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    a, b = resumed.sequential, reference.sequential
    print(f"killed at {killed_at} games; decision {a.decision} on {a.games_used} games")
    assert a.decision == b.decision != "running"
    assert (a.units_used, a.games_used, a.llr, a.counts) == (b.units_used, b.games_used, b.llr, b.counts)
    assert killed_at < a.games_used, "killed before the decision"
    stored = ResultStore(spec.study_dir).read()
    assert not stored.duplicated(["game_index", "seat"]).any()
    third = run_study(spec, num_workers=2, progress=False, plugins=PLUGINS, warm_up=False)
    assert third.games_played == 0 and third.games_skipped == resumed.games_done
    assert (third.sequential.decision, third.sequential.games_used, third.sequential.llr) == \
        (b.decision, b.games_used, b.llr)


def test_real_birds_study_stops_early_with_the_right_decision(ray_local, tmp_path):
    """Chance-node MCTS (100 iterations) against random in the bird game: H1 long before
    the design's 200 games."""
    data = {"study": {"name": "birds-sprt", "seed": 2026, "results_dir": str(tmp_path / "studies")},
            "game": {"name": "birds"}, "budget": {"iterations": 100},
            "design": {"seeds": 100, "games_per_seed": 2, "series_by": "game",
                       "stop": {"sprt": {"elo0": 0, "elo1": 100}, "between": ["MCTS", "Random"]}},
            "lineup": [{"agent": "birds_mcts", "label": "MCTS"}, {"agent": "random", "label": "Random"}],
            "tracking": {"uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "t"}}
    spec = build_spec(data)
    result = run_study(spec, num_workers=2, progress=False)
    seq = result.sequential
    assert seq.decision == "H1" and seq.elo_lo > 100, seq
    assert seq.games_used <= 40 and result.games_done <= seq.games_used + 4
    from mlflow.tracking import MlflowClient

    run = MlflowClient(tracking_uri=spec.tracking.uri).get_run(result.mlflow_run_id)
    assert run.data.tags["arena.sprt_decision"] == "H1"
    assert run.data.metrics["sprt/games_used"] == seq.games_used
    history = MlflowClient(tracking_uri=spec.tracking.uri).get_metric_history(result.mlflow_run_id, "sprt/llr")
    assert len(history) == len(seq.llr)

    # arena rate on this study's store: a table, files, one MLflow run
    from jobs.cli import main

    out = tmp_path / "ratings"
    code = main(["rate", str(tmp_path / "studies"), "--anchor", "Random", "--bootstrap", "100",
                 "--out", str(out), "--tracking-uri", spec.tracking.uri])
    assert code == 0
    text = (out / "ratings.md").read_text()
    assert "| Random [" in text and "| 0 | 0 to 0 |" in text
    assert (out / "ratings.png").stat().st_size > 0
