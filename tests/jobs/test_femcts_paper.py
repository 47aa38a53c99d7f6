"""Issue 8: the FEMCTS study as its authors ran it.

The FEMCTS decision loop, the paper's move-weight multiplier, fast features
equal to the reference scan, java per-agent outcomes and death ticks,
per-seat budgets, study sets as series, and every TOML spec under jobs/.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.api import Budget
from agents.evolution import policy_probabilities, sample_index
from agents.pommerman._common import advance, prepare_search
from agents.pommerman.features import (
    ALL_FEATURES, C_FULL_SCAN, SUBSET_NEA2, new_feature_cache, prepare_feature_cache, state_features,
)
from agents.pommerman.femcts import (
    EvolutionParams, FEMCTSConfig, FemctsParams, evolved_rollout, femcts_decide, policy_action,
    rollout_features, RolloutPolicy,
)
from agents.registry import make_agent
from agents.search import ROOT_INDEX, new_tree
from cluster.spec.plan import plan_study
from cluster.run.play import build_agents, play_game
from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from games.rng import make_rng, rng_integer
from games.pommerman import Pommerman, PommermanConfig
from games.pommerman.kernels import (
    LAY_BOMB, M_STEP, N_ACTIONS, STOP, copy_state, empty_state,
)

ROOT = Path(__file__).resolve().parents[2]


# --- the decision loop ------------------------------------------------------------
@pytest.mark.parametrize("iterations", [24, 25, 47, 72])
def test_generations_are_iterations_over_p_times_l_and_fitness_is_mean_backup(iterations):
    """P = 4 individuals, L = 3 rollouts each: a generation is 12 iterations."""
    config = FEMCTSConfig(n_effective=2, population_size=4, elite_count=1,
                          rollouts_per_individual=3, mutation_strength=0.5)
    P, L = 4, 3
    game = Pommerman(PommermanConfig(ruleset="java"))
    game.reset(np.random.SeedSequence(5))
    agent = make_agent("femcts", config, Budget(iterations=iterations), game.config)
    agent.begin_game(0, np.random.SeedSequence(1))
    obs = game.observation(0)
    c = config
    tree = new_tree(iterations + 1, N_ACTIONS)
    params = FemctsParams(iterations, 0.0, float(c.exploration), float(c.epsilon), int(c.rollout_depth),
                          1.0, 0, 0, False)
    evolution = EvolutionParams(L, 1, 2, 0.2, 0.5, 0.5, 1, False, False)
    policy = RolloutPolicy(c.feature_index, c.softmax_scale, c.softmax_offset, 2, False, 0.0)
    action, done, generations, ticks = femcts_decide(
        obs, 0, tree, agent._root, agent._scratch, params, evolution, agent.population, agent.fitness,
        agent._pop_scratch, policy, new_feature_cache(), make_rng(3))
    assert done == iterations
    assert generations == iterations // (P * L)
    assert 0 < ticks <= iterations * c.rollout_depth
    if iterations == P * L:
        # one whole generation: the root saw every backed-up value once, and each
        # individual's fitness is the mean of its L values
        assert tree.node_visits[ROOT_INDEX] == P * L
        assert tree.node_value_sum[ROOT_INDEX] == pytest.approx(L * agent.fitness.sum())


def test_agent_counts_generations_over_decisions():
    config = FEMCTSConfig(population_size=5, elite_count=2, rollouts_per_individual=2)
    game = Pommerman(PommermanConfig(ruleset="java"))
    game.reset(np.random.SeedSequence(9))
    agent = make_agent("femcts", config, Budget(iterations=35), game.config)
    agent.begin_game(1, np.random.SeedSequence(2))
    for _ in range(3):
        agent.act(game.observation(1))
    assert agent.generations == 3 * (35 // 10)
    assert agent.ticks > 0


# --- the move-weight multiplier ------------------------------------------------------
def _probs(config, weights, features):
    out = np.empty(config.n_effective)
    policy_probabilities(weights, features, config.softmax_scale, config.softmax_offset, out)
    return out


def test_multiplier_at_zero_weights():
    f3, f2 = np.ones(8), np.ones(5)
    paper3 = _probs(FEMCTSConfig(n_effective=3), np.zeros((3, 8)), f3)
    np.testing.assert_allclose(paper3, [1 / 3] * 3)        # bomb a third of the time
    old3 = _probs(FEMCTSConfig(n_effective=3, move_weighting="log_count"), np.zeros((3, 8)), f3)
    np.testing.assert_allclose(old3, [4 / 6, 1 / 6, 1 / 6])  # bomb a sixth
    paper2 = _probs(FEMCTSConfig(n_effective=2), np.zeros((2, 5)), f2)
    np.testing.assert_allclose(paper2, [0.5, 0.5])
    old2 = _probs(FEMCTSConfig(n_effective=2, move_weighting="log_count"), np.zeros((2, 5)), f2)
    np.testing.assert_allclose(old2, [5 / 6, 1 / 6])
    # the six real actions are never rescaled
    np.testing.assert_allclose(_probs(FEMCTSConfig(), np.zeros((6, 8)), f3), [1 / 6] * 6)


def test_multiplier_at_nonzero_weights():
    rng = np.random.default_rng(0)
    w3, f = rng.normal(size=(3, 8)), rng.uniform(size=8)
    z = w3 @ f
    paper = np.exp(np.array([4 * z[0], z[1], z[2]]))
    np.testing.assert_allclose(_probs(FEMCTSConfig(n_effective=3), w3, f), paper / paper.sum())
    old = np.array([4, 1, 1]) * np.exp(z)
    np.testing.assert_allclose(_probs(FEMCTSConfig(n_effective=3, move_weighting="log_count"), w3, f),
                               old / old.sum())
    w2, f2 = rng.normal(size=(2, 5)), rng.uniform(size=5)
    z2 = w2 @ f2
    paper2 = np.exp(np.array([5 * z2[0], z2[1]]))
    np.testing.assert_allclose(_probs(FEMCTSConfig(n_effective=2), w2, f2), paper2 / paper2.sum())
    # drawn actions follow: at zero weights nEA = 3 bombs a third of the time
    r = make_rng(4)
    p = _probs(FEMCTSConfig(n_effective=3), np.zeros((3, 8)), np.ones(8))
    draws = np.array([sample_index(p, r) for _ in range(6000)])
    assert np.mean(draws == 2) == pytest.approx(1 / 3, abs=0.02)


def test_move_weighting_is_validated():
    with pytest.raises(ValueError, match="move_weighting"):
        FEMCTSConfig(move_weighting="log4")


# --- fast features -------------------------------------------------------------------
def _feature_states(ruleset, view_range, seed, collapse):
    """Roots from random play, each followed by random rollout states of up to 12 ticks."""
    config = PommermanConfig(ruleset=ruleset, view_range=view_range,
                             collapse=collapse if ruleset == "java" else False)
    game = Pommerman(config)
    game.reset(np.random.SeedSequence(seed))
    rng = make_rng(seed)
    roots = []
    while not game.done and len(roots) < 40:
        roots.append(game.observation(rng_integer(rng, 4)))
        game.step([rng_integer(rng, 5) if rng_integer(rng, 8) else LAY_BOMB for _ in range(4)])
    return roots


@pytest.mark.parametrize("ruleset,view_range,collapse", [
    ("canonical", None, False), ("java", None, True), ("java", 2, True), ("java", None, False)])
def test_cached_features_equal_the_full_scan(ruleset, view_range, collapse):
    rng = make_rng(17)
    ref, fast = np.zeros(8), np.zeros(8)
    cache = new_feature_cache()
    checked = 0
    for seed in range(6):
        for obs in _feature_states(ruleset, view_range, seed, collapse):
            player = next((p for p in range(4) if obs.agents[p, 8] and obs.agents[p, 2]), -1)
            if player < 0:
                continue
            # 495: a collapse inside the horizon; 560: between two collapses
            for start_step in (int(obs.meta[M_STEP]), 495, 560, 570):
                root = copy_state(obs)
                root.meta[M_STEP] = start_step
                model = copy_state(root)
                hidden, joint, n_hidden, _ = prepare_search(model, root)
                prepare_feature_cache(cache, model, 12, ALL_FEATURES)
                expected = collapse and any(start_step <= t < start_step + 12
                                            for t in (500, 575, 650, 725))
                assert cache.counts[C_FULL_SCAN] == expected
                state = copy_state(model)
                for _ in range(12):
                    state_features(state, player, ref)
                    rollout_features(state, player, cache, fast)
                    np.testing.assert_array_equal(fast, ref)
                    checked += 1
                    if state.meta[3] or not state.agents[player, 2]:
                        break
                    action = LAY_BOMB if rng_integer(rng, 6) == 0 else rng_integer(rng, 5)
                    advance(state, player, action, joint, hidden, n_hidden, rng)
    assert checked > 300


@pytest.mark.parametrize("n_effective,move_weighting", [(6, "multiply"), (3, "multiply"), (2, "multiply"),
                                                        (3, "log_count"), (0, "multiply")])
def test_evolved_rollout_plays_the_reference_policy_step_by_step(n_effective, move_weighting):
    """The rollout loop writes features, softmax and draw out for speed; it must
    draw exactly what policy_action (state_features-equal features, then
    evolution.policy_probabilities and sample_index) draws, step for step."""
    featured = n_effective != 0
    config = FEMCTSConfig(featured=featured, n_effective=n_effective or 6, move_weighting=move_weighting)
    feature_index = config.feature_index
    weights_rng = np.random.default_rng(n_effective)
    cache = new_feature_cache()
    compared = 0
    for seed in range(3):
        for obs in _feature_states("java", None, seed, True)[::4]:
            player = next((p for p in range(4) if obs.agents[p, 8] and obs.agents[p, 2]), -1)
            if player < 0:
                continue
            root = copy_state(obs)
            hidden, joint, n_hidden, _ = prepare_search(root, obs)
            prepare_feature_cache(cache, root, 12, feature_index)
            weights = weights_rng.normal(size=config.population_shape[1:])
            a, b = copy_state(root), copy_state(root)
            rng_a, rng_b = make_rng(seed * 101 + compared), make_rng(seed * 101 + compared)
            scratch = (np.zeros(8), np.zeros(weights.shape[1]), np.zeros(weights.shape[0]))
            policy = RolloutPolicy(feature_index, config.softmax_scale, config.softmax_offset,
                                   config.n_effective, False, 0.0)
            depth = evolved_rollout(a, player, 0, 12, weights, policy, cache, *scratch,
                                    joint.copy(), hidden, n_hidden, rng_a)
            steps = 0
            while steps < 12 and not b.meta[3]:
                action = policy_action(b, player, weights, policy, cache, *scratch, rng_b)
                advance(b, player, action, joint, hidden, n_hidden, rng_b)
                steps += 1
            assert depth == steps
            np.testing.assert_array_equal(rng_a, rng_b)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
            compared += 1
    assert compared >= 20


def test_cached_features_compute_only_the_policy_s_features():
    obs = _feature_states("java", None, 1, True)[25]
    cache = new_feature_cache()
    prepare_feature_cache(cache, obs, 12, SUBSET_NEA2)
    ref, fast = np.zeros(8), np.zeros(8)
    state_features(obs, 0, ref)
    rollout_features(obs, 0, cache, fast)
    np.testing.assert_array_equal(fast[SUBSET_NEA2], ref[SUBSET_NEA2])


def test_cached_rigid_table_sees_walls_of_an_empty_board():
    state = empty_state(0, 1, 0, 800)
    cache = new_feature_cache()
    prepare_feature_cache(cache, state, 12, ALL_FEATURES)
    assert (cache.nearest_rigid == -1).all()
    out, ref = np.zeros(8), np.zeros(8)
    state_features(state, 0, ref)
    rollout_features(state, 0, cache, out)
    np.testing.assert_array_equal(out, ref)


# --- java outcomes and death ticks ------------------------------------------------------
def _bomb_self_game(ruleset, max_steps=30):
    """Agent 1 lays a bomb and stays on it; the others stop until the time-out."""
    game = Pommerman(PommermanConfig(ruleset=ruleset, max_steps=max_steps))
    game.reset(np.random.SeedSequence(3))
    game.step([STOP, LAY_BOMB, STOP, STOP])
    while not game.done:
        game.step([STOP] * 4)
    return game


def test_java_dead_agent_is_a_loss_in_a_time_out():
    game = _bomb_self_game("java")
    assert game.step_count == 30
    assert game.outcomes() == ["tie", "loss", "tie", "tie"]
    died = game.death_ticks()
    assert died[0] is None and died[2] is None and died[3] is None
    assert 1 <= died[1] <= 12


def test_canonical_keeps_the_competition_rule_everybody_ties():
    game = _bomb_self_game("canonical")
    assert game.outcomes() == ["tie"] * 4
    died = game.death_ticks()
    assert died[1] is not None and died.count(None) == 3
    assert game.copy().death_ticks() == died


def test_java_collapse_is_on_by_default_and_can_be_turned_off():
    assert PommermanConfig(ruleset="java").collapse is True
    assert PommermanConfig(ruleset="java", collapse=False).collapse is False
    assert PommermanConfig().collapse is False
    with pytest.raises(ValueError, match="collapse"):
        PommermanConfig(ruleset="canonical", collapse=True)
    game = Pommerman(PommermanConfig(ruleset="java"))
    game.reset(1)
    assert int(game.state.meta[7]) == 1
    assert Pommerman.from_json(game.to_json()).config.collapse is True


# --- per-seat budgets ------------------------------------------------------------------
def _spec_dict(tmp_path, budgets=(None, None, None, None), study_budget=None, **design):
    lineup = []
    for agent, budget in zip(("mcts", "rhea", "osla", "random"), budgets):
        seat = {"agent": agent}
        if budget is not None:
            seat["budget"] = budget
        lineup.append(seat)
    return {
        "study": {"name": "budgets", "seed": 3, "results_dir": str(tmp_path)},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 12},
        "budget": study_budget or {"iterations": 20},
        "design": design or {"seeds": 1},
        "lineup": lineup,
        "tracking": {"enabled": False},
    }


def test_per_seat_budgets_reach_the_agents_rows_and_hashes(tmp_path):
    spec = build_spec(_spec_dict(tmp_path, ({"iterations": 7}, {"ms": 5}, None, None)))
    agents = build_agents(spec)
    assert agents[0].budget == Budget(iterations=7)
    assert agents[1].budget == Budget(ms=5.0)
    assert agents[2].budget == agents[3].budget == Budget(iterations=20)
    task = plan_study(spec)[0].games[0]
    rows, _ = play_game(spec, task, agents)
    by_label = {r["label"]: r for r in rows}
    assert by_label["mcts"]["budget"] == "7 it" and by_label["rhea"]["budget"] == "5 ms"
    assert by_label["osla"]["budget"] == "20 it"
    assert 0 < by_label["mcts"]["mean_iterations"] <= 7
    plain = build_spec(_spec_dict(tmp_path))
    rows_plain, _ = play_game(plain, plan_study(plain)[0].games[0], build_agents(plain))
    hashes = {r["label"]: r["config_hash"] for r in rows_plain}
    assert hashes["mcts"] != by_label["mcts"]["config_hash"]
    assert hashes["osla"] == by_label["osla"]["config_hash"]
    assert all("died_at" in r for r in rows)
    # the spec round-trips, and per_seat = false gives every seat the study's budget
    again = build_spec({k: v for k, v in spec.to_dict().items() if k != "source"})
    assert again.budget_for(0) == Budget(iterations=7)
    off = _spec_dict(tmp_path, ({"iterations": 7}, None, None, None), {"ms": 40, "per_seat": False})
    off_spec = build_spec(off)
    assert [a.budget for a in build_agents(off_spec)] == [Budget(ms=40.0)] * 4
    assert off_spec.flat_params()["budget.per_seat"] == "False"


@pytest.mark.parametrize("budget,message", [
    ({"iterations": 0}, r"lineup\[1\]\.budget\.iterations: must be a positive int"),
    ({"iterations": 1.5}, r"lineup\[1\]\.budget\.iterations: must be a positive int"),
    ({"ms": "fast"}, r"lineup\[1\]\.budget\.ms: must be a number"),
    ({"ms": -1}, r"lineup\[1\]\.budget\.ms: must be in"),
    ({"ms": 40, "iterations": 200}, r"lineup\[1\]\.budget: give exactly one"),
    ({}, r"lineup\[1\]\.budget: give exactly one"),
    ({"secs": 1}, r"lineup\[1\]\.budget\.secs: unknown key"),
    (7, r"lineup\[1\]\.budget: must be a table"),
])
def test_per_seat_budget_errors_name_the_field(tmp_path, budget, message):
    with pytest.raises(SpecError, match=message):
        build_spec(_spec_dict(tmp_path, (None, budget, None, None)))


# --- sets of board seeds as series -------------------------------------------------------
def test_series_by_set_groups_consecutive_board_seeds(tmp_path):
    spec = build_spec(_spec_dict(tmp_path, seeds=5, games_per_seed=2, series_by="set",
                                 seeds_per_set=2))
    series = plan_study(spec)
    assert [len(s.games) for s in series] == [4, 4, 2]  # the last set is short
    assert [g.board_seed for g in series[0].games] == [0, 0, 1, 1]
    assert [g.board_seed for g in series[1].games] == [2, 2, 3, 3]
    assert [g.index_in_series for g in series[1].games] == [0, 1, 2, 3]
    assert [g.seat_lineup[0] for g in series[0].games] == [0, 1, 0, 1]
    assert sorted(g.game_index for s in series for g in s.games) == list(range(10))


@pytest.mark.parametrize("design,message", [
    ({"seeds": 4, "series_by": "set"}, r"design\.seeds_per_set: required"),
    ({"seeds": 4, "series_by": "set", "seeds_per_set": 0}, r"design\.seeds_per_set: must be a positive int"),
    ({"seeds": 4, "seeds_per_set": 2}, r"design\.seeds_per_set: only used with series_by = 'set'"),
    ({"runs": 2, "rounds": 3, "series_by": "set", "seeds_per_set": 2}, r"design\.series_by: 'set' needs"),
])
def test_series_by_set_is_validated(tmp_path, design, message):
    with pytest.raises(SpecError, match=message):
        build_spec(_spec_dict(tmp_path, **design))


# --- every spec in jobs/ -------------------------------------------------------------------
SPECS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "jobs").rglob("*.toml"))


@pytest.mark.parametrize("path", SPECS)
def test_every_toml_spec_in_jobs_loads_and_validates(path):
    from jobs.spec import load_spec, load_sweep

    if Path(path).parts[1] == "sweeps":
        sweep = load_sweep(ROOT / path)
        assert sweep is not None
        return
    spec = load_spec(ROOT / path)
    assert spec.design.total_games >= 1
    if spec.game == "pommerman" and spec.game_config.ruleset == "java":
        assert spec.game_config.collapse, f"{path}: the study's setting has the board collapse on"


def test_the_femcts_specs_reproduce_the_study_settings():
    from jobs.spec import load_spec

    # The study's experiments (1_... to 7_...); framework_side_by_side.toml plays the
    # framework runner's 200 iterations on purpose.
    paths = sorted(p for p in (ROOT / "jobs" / "femcts").glob("*.toml") if p.name[0].isdigit())
    assert len(paths) == 12
    for path in paths:
        spec = load_spec(path)
        for i, seat in enumerate(spec.lineup):
            if seat.agent != "osla":  # six simulations whatever the budget
                expected = {"mcts": 1270, "rhea": 676, "femcts": 1270}[seat.agent]
                assert seat.budget == Budget(iterations=expected), f"{path.name}: lineup[{i}]"
            if seat.agent == "femcts" and seat.config.featured:
                assert seat.config.mutation_variant == "shared", path.name
                assert seat.config.move_weighting == "multiply", path.name
        if spec.design.series_by == "set":
            assert spec.design.seeds_per_set * spec.design.games_per_seed in (50, 200), path.name


# --- reports and MLflow metrics follow died_at ----------------------------------------------
def test_report_and_tally_show_deaths():
    import pandas as pd

    from cluster.analysis.report import result_table, to_markdown
    from cluster.run.tracker import Tally

    rows = []
    for g, (died_a, died_b) in enumerate([(None, 300), (120, None), (None, None), (50, 60)]):
        for seat, (label, died) in enumerate((("A", died_a), ("B", died_b))):
            result = "loss" if died is not None else "tie"
            rows.append({"game_index": g, "seat": seat, "label": label, "result": result,
                         "died_at": died})
    rows.append({"game_index": 4, "seat": 0, "label": "A", "result": "error", "died_at": None})
    table = result_table(pd.DataFrame(rows))
    assert (table.loc["A", "deaths"], table.loc["A", "games"]) == (2, 4)
    assert table.loc["A", "death_rate"] == 0.5 and table.loc["A", "mean_died_at"] == 85.0
    assert "| Died |" in to_markdown(table).splitlines()[0] + "|"
    tally = Tally()
    tally.add(rows)
    metrics = tally.metrics()
    assert metrics["death_rate/A"] == 0.5 and metrics["death_rate/B"] == 0.5
