"""Issue 27: how each FEMCTS piece sees fog, on scripted fogged states, and
games at full observability (and with ``fog_moves = "open"`` under fog) played
exactly as before the fog options existed."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from agents.api import Budget
from agents.pommerman._common import (
    QUIRK_STOP_AT_OWN_END, QUIRK_TIE_DEATH_SCORED, advance, prepare_search,
)
from agents.pommerman.features import (
    ALL_FEATURES, F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_FLAME, F_NEAR_POWERUP, F_NEAR_RIGID,
    F_NEAR_WOOD, SUBSET_NEA2, new_feature_cache, prepare_feature_cache, state_features,
)
from agents.pommerman.femcts import (
    FEMCTSConfig, evolved_rollout, policy_action, resolve_fog_moves, rollout_features, RolloutPolicy,
    safe_move_on,
)
from agents.registry import make_agent, resolved_params
from games.rng import make_rng
from games.pommerman import Pommerman, PommermanConfig
from games.pommerman.kernels import (
    A_ALIVE, A_COL, A_ROW, BOARD_SIZE, DOWN, FOG, LAY_BOMB, LEFT, M_DONE, RIGHT, STOP, UP, copy_state,
    observe, step,
)
from tests.agents.test_profiles import java_state

#: agent 0 in the middle of an open board, a rigid wall two cells up, wood
#: two cells right, agent 1 three cells down
MIDDLE = """
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . # . . . . .
. . . . . . . . . . .
. . . . . 0 . + . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . 1 . . . . .
. . . . . . . . . . 2
3 . . . . . . . . . .
"""


def _draws(board, row, col, include_stop, fog_blocks, n=4000):
    rng = make_rng(3)
    return {int(safe_move_on(board, row, col, include_stop, rng, fog_blocks)) for _ in range(n)}


# --------------------------------------------------------------------- safe movement
def test_view_range_0_blocked_fog_leaves_only_stop():
    """At range 0 the agent sees its own cell: its four neighbours are FOG. The
    framework's passability test does not count FOG, so "movement" (nEA = 2) can
    only stop and "move" (nEA = 3) has no direction (stop)."""
    obs = observe(java_state(MIDDLE), 0, 0)
    r, c = int(obs.agents[0, A_ROW]), int(obs.agents[0, A_COL])
    assert all(obs.board[(r + dr) * BOARD_SIZE + c + dc] == FOG for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)))
    assert _draws(obs.board, r, c, True, True) == {STOP}
    assert _draws(obs.board, r, c, False, True) == {STOP}
    # "open" (Arena's earlier rule): fog is a target like a passage
    assert _draws(obs.board, r, c, True, False) == {STOP, UP, DOWN, LEFT, RIGHT}
    assert _draws(obs.board, r, c, False, False) == {UP, DOWN, LEFT, RIGHT}


def test_blocked_fog_keeps_a_rollout_inside_the_view_square():
    """At range 1 the neighbours are seen; one step right, the next cell right is
    fog and is no longer a safe direction (but the seen cells still are)."""
    obs = observe(java_state(MIDDLE), 0, 1)
    r, c = int(obs.agents[0, A_ROW]), int(obs.agents[0, A_COL])
    assert _draws(obs.board, r, c, True, True) == {STOP, UP, DOWN, LEFT, RIGHT}
    assert _draws(obs.board, r, c + 1, True, True) == {STOP, UP, DOWN, LEFT}
    assert _draws(obs.board, r, c + 1, True, False) == {STOP, UP, DOWN, LEFT, RIGHT}


def test_full_observability_is_unchanged_by_fog_moves():
    state = java_state(MIDDLE)
    obs = observe(state, 0, -1)
    r, c = int(obs.agents[0, A_ROW]), int(obs.agents[0, A_COL])
    for include_stop in (True, False):
        rng_a, rng_b = make_rng(5), make_rng(5)
        a = [int(safe_move_on(obs.board, r, c, include_stop, rng_a, True)) for _ in range(300)]
        b = [int(safe_move_on(obs.board, r, c, include_stop, rng_b, False)) for _ in range(300)]
        assert a == b
        np.testing.assert_array_equal(rng_a, rng_b)


def test_forward_model_lets_an_agent_into_fog():
    """Rollouts: the search's forward model, like the framework's, blocks only
    rigid and wood: a move into a FOG cell of the model succeeds."""
    obs = observe(java_state(MIDDLE), 0, 0)
    model = copy_state(obs)
    prepare_search(model, obs)
    r, c = int(model.agents[0, A_ROW]), int(model.agents[0, A_COL])
    step(model, np.array([RIGHT, 0, 0, 0], dtype=np.int64))
    assert (int(model.agents[0, A_ROW]), int(model.agents[0, A_COL])) == (r, c + 1)


def _rollout_positions(view_range, fog_blocks, n_rollouts=40):
    """The cells agent 0 visits in evolved rollouts (nEA = 2, movement dominant)."""
    obs = observe(java_state(MIDDLE), 0, view_range)
    root = copy_state(obs)
    hidden, joint, n_hidden, _ = prepare_search(root, obs)
    cache = new_feature_cache()
    prepare_feature_cache(cache, root, 12, SUBSET_NEA2)
    weights = np.zeros((2, 5))
    weights[0, :] = 20.0  # movement
    weights[1, :] = -20.0  # never bomb
    config = FEMCTSConfig(n_effective=2)
    rng = make_rng(11)
    cells = set()
    for _ in range(n_rollouts):
        state = copy_state(root)
        for _ in range(12):
            policy = RolloutPolicy(SUBSET_NEA2, config.softmax_scale, config.softmax_offset, 2, fog_blocks, 0.0)
            evolved_rollout(state, 0, 0, 1, weights, policy, cache, np.zeros(8), np.zeros(5), np.zeros(2),
                            joint, hidden, n_hidden, rng, False)
            cells.add((int(state.agents[0, A_ROW]), int(state.agents[0, A_COL])))
    return cells


def test_rollout_movement_under_blocked_and_open_fog():
    home = (5, 5)
    assert _rollout_positions(0, True) == {home}, "range 0, blocked: the rollouts never move"
    assert len(_rollout_positions(0, False)) > 5, "range 0, open: they wander into fog"
    inside = _rollout_positions(2, True)
    assert len(inside) > 5 and all(abs(r - 5) <= 2 and abs(c - 5) <= 2 for r, c in inside), \
        "range 2, blocked: only the seen 5 x 5 square"
    assert any(abs(r - 5) > 2 or abs(c - 5) > 2 for r, c in _rollout_positions(2, False))


# --------------------------------------------------------------------- features
def test_features_under_fog_see_only_the_view_square():
    """Range 0: no wall, wood, bomb, power-up or enemy is seen: every closeness
    feature is the absent value (0 by default); range 2: the wall (2 up) and the
    wood (2 right) are seen, agent 1 (3 down) is not."""
    state = java_state(MIDDLE)
    out = np.zeros(8)
    for absent in (0.0, 1.0):
        obs = observe(state, 0, 0)
        state_features(obs, 0, out, absent)
        for f in (F_NEAR_BOMB, F_NEAR_POWERUP, F_NEAR_ENEMY, F_NEAR_RIGID, F_NEAR_FLAME, F_NEAR_WOOD):
            assert out[f] == absent
        obs = observe(state, 0, 2)
        state_features(obs, 0, out, absent)
        assert out[F_NEAR_RIGID] == pytest.approx(1 / 3)
        assert out[F_NEAR_WOOD] == pytest.approx(1 / 3)
        assert out[F_NEAR_ENEMY] == absent
    full = observe(state, 0, -1)
    state_features(full, 0, out)
    assert out[F_NEAR_ENEMY] == pytest.approx(1 / 4)


@pytest.mark.parametrize("view_range", [0, 1, 2, 4])
@pytest.mark.parametrize("absent", [0.0, 1.0])
def test_cached_rollout_features_equal_the_scan_under_fog(view_range, absent):
    state = java_state(MIDDLE)
    obs = observe(state, 0, view_range)
    root = copy_state(obs)
    hidden, joint, n_hidden, _ = prepare_search(root, obs)
    cache = new_feature_cache()
    prepare_feature_cache(cache, root, 12, ALL_FEATURES)
    rng = make_rng(view_range)
    ref, fast = np.zeros(8), np.zeros(8)
    s = copy_state(root)
    for k in range(12):
        state_features(s, 0, ref, absent)
        rollout_features(s, 0, cache, fast, absent)
        np.testing.assert_array_equal(fast, ref)
        advance(s, 0, int(k % 5), joint, hidden, n_hidden, rng)


def test_policy_action_at_view_range_0():
    """At range 0 every nEA = 2 feature is 0 (nothing is seen, no kick), so W f = 0
    whatever the weights: "movement" and "bomb" are drawn half the time each
    (the paper's multiplier scales a zero). "Movement" is then stop under
    ``blocked`` fog and a random direction into fog under ``open``."""
    obs = observe(java_state(MIDDLE), 0, 0)
    cache = new_feature_cache()
    prepare_feature_cache(cache, obs, 12, SUBSET_NEA2)
    weights = np.random.default_rng(0).normal(size=(2, 5)) * 10
    config = FEMCTSConfig(n_effective=2)
    for fog_blocks, expected in ((True, {STOP, LAY_BOMB}), (False, {STOP, UP, DOWN, LEFT, RIGHT, LAY_BOMB})):
        rng = make_rng(2)
        policy = RolloutPolicy(SUBSET_NEA2, config.softmax_scale, config.softmax_offset, 2, fog_blocks, 0.0)
        acts = [int(policy_action(obs, 0, weights, policy, cache, np.zeros(8), np.zeros(5), np.zeros(2), rng))
                for _ in range(2000)]
        assert set(acts) == expected
        assert np.mean(np.array(acts) == LAY_BOMB) == pytest.approx(0.5, abs=0.04)


# --------------------------------------------------------------------- the option
def test_fog_moves_resolves_by_profile_and_is_validated():
    budget = Budget(iterations=5)
    java, canonical = PommermanConfig(ruleset="java"), PommermanConfig(ruleset="canonical")
    assert make_agent("femcts", {}, budget, java).fog_moves == "blocked"
    assert make_agent("femcts", {}, budget, canonical).fog_moves == "open"
    assert make_agent("femcts", {"fog_moves": "open"}, budget, java).fog_moves == "open"
    assert make_agent("femcts", {"profile": "arena"}, budget, java).fog_moves == "open"
    assert resolve_fog_moves("blocked", "arena") == "blocked"
    agent = make_agent("femcts", {}, budget, java)
    assert resolved_params("femcts", agent.config, java) == {"profile": "java", "fog_moves": "blocked"}
    with pytest.raises(ValueError, match="fog_moves"):
        FEMCTSConfig(fog_moves="fogged")
    with pytest.raises(ValueError, match="absent_closeness"):
        FEMCTSConfig(absent_closeness=2.0)


# --------------------------------------------------------------------- mcts_switches
#: agent 0 on a bomb about to explode in a corridor it cannot leave: it dies next tick
TRAPPED = """
# # # . . . . . . . .
# 0 # . . . . . . . .
# # # . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . 1 . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . 2
. . . . . . . . . . .
3 . . . . . . . . . .
"""


def _rollout_depth_reached(quirks):
    root = java_state(TRAPPED, bombs=[(1, 1, 1, 2)])
    hidden, joint, n_hidden, _ = prepare_search(root, root)
    config = FEMCTSConfig(n_effective=2)
    state = copy_state(root)
    policy = RolloutPolicy(SUBSET_NEA2, config.softmax_scale, config.softmax_offset, 2, True, 0.0)
    depth = evolved_rollout(state, 0, 0, 12, np.zeros((2, 5)), policy, new_feature_cache(), np.zeros(8),
                            np.zeros(5), np.zeros(2), joint, hidden, n_hidden, make_rng(5), False, quirks)
    return depth, state


def test_mcts_switches_stop_a_rollout_at_the_searchers_death():
    """``mcts_switches = "java"``: a rollout ends the tick its searcher dies (the
    framework's isTerminal for an agent's copy); ``off``: it runs on to the depth
    limit while the others play (the game is not over)."""
    depth, state = _rollout_depth_reached(QUIRK_STOP_AT_OWN_END | QUIRK_TIE_DEATH_SCORED)
    assert depth == 1 and not state.agents[0, A_ALIVE]
    depth, state = _rollout_depth_reached(0)
    assert depth == 12 and not state.agents[0, A_ALIVE] and not state.meta[M_DONE]


def test_mcts_switches_resolve_and_validate():
    cfg = PommermanConfig(ruleset="java")
    budget = Budget(iterations=10)
    assert make_agent("femcts", {}, budget, cfg).search_quirks == 0
    assert make_agent("femcts", {"mcts_switches": "java"}, budget, cfg).search_quirks == (
        QUIRK_STOP_AT_OWN_END | QUIRK_TIE_DEATH_SCORED)
    with pytest.raises(ValueError, match="mcts_switches"):
        FEMCTSConfig(mcts_switches="on")


def test_mcts_switches_change_play_only_when_on():
    """Off (the default) is the recorded behaviour (``test_games_play_as_before``);
    on, the same blind game is played differently."""
    off = _game_hash(0, 0, {"fog_moves": "open"})
    assert off == BEFORE[(0, 0)]
    assert _game_hash(0, 0, {"fog_moves": "open", "mcts_switches": "java"}) != off


# --------------------------------------------------------------------- games unchanged
def _game_hash(view_range, seed, params, metrics=False):
    """The joint actions of one short java game (two FEMCTS seats, MCTS, RHEA), hashed
    (``metrics``: and the two FEMCTS seats' ``game_metrics()``)."""
    cfg = PommermanConfig(ruleset="java", max_steps=120, view_range=view_range)
    b = Budget(iterations=60)
    agents = [make_agent("femcts", {"n_effective": 2, "mutation_variant": "shared", **params}, b, cfg),
              make_agent("mcts", {"rollout_depth": 12}, b, cfg),
              make_agent("femcts", {"n_effective": 3, "mutation_variant": "shared", **params}, b, cfg),
              make_agent("rhea", {}, b, cfg)]
    seated = [agents[(k + seed) % 4] for k in range(4)]
    game = Pommerman(cfg)
    game.reset(np.random.SeedSequence(seed, spawn_key=(0,)))
    for s, a in enumerate(seated):
        a.begin_game(s, np.random.SeedSequence(seed, spawn_key=(1, s)))
    actions = []
    while not game.done:
        joint = [int(a.act(game.observation(i))) for i, a in enumerate(seated)]
        actions.append(joint)
        game.step(joint)
    digest = hashlib.sha1(json.dumps(actions).encode()).hexdigest()[:16]
    return (digest, [agents[0].game_metrics(), agents[2].game_metrics()]) if metrics else digest


#: Recorded on main at 69cbfb1, before the fog options (the same function).
BEFORE = {(None, 0): "37778ac0b2b00ef3", (None, 1): "0ac96cc9716da479",
          (0, 0): "1ee1aa14dfe2ae64", (2, 1): "439bb83766f4184a"}


@pytest.mark.parametrize("view_range,seed", sorted(BEFORE, key=str))
def test_games_play_as_before(view_range, seed):
    """Full observability with the new defaults, and fog with ``fog_moves = "open"``
    (the earlier behaviour), give the recorded games move for move."""
    params = {} if view_range is None else {"fog_moves": "open"}
    assert _game_hash(view_range, seed, params) == BEFORE[(view_range, seed)]


# --------------------------------------------------------------------- the diagnostics command
def test_fog_diagnostics_reports_per_view_range():
    """jobs.femcts.fog_diagnostics on a tiny spec: every view range asked for,
    rollout action shares that sum to 1, FEMCTS's moves into fog 0 under
    ``blocked``, deaths and results counted."""
    from cluster.spec.build import build_spec
    from jobs.femcts.fog_diagnostics import run

    spec = build_spec({
        "study": {"name": "fog-diag", "seed": 3, "results_dir": "/tmp/unused"},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 40},
        "budget": {"iterations": 24},
        "design": {"seeds": 2, "games_per_seed": 4, "vary": {"view_range": [0, 2]}},
        "lineup": [{"agent": "femcts", "label": "FEMCTS", "params": {"n_effective": 2}},
                   {"agent": "mcts", "label": "MCTS"}, {"agent": "random"}, {"agent": "osla"}],
        "tracking": {"enabled": False},
    })
    import io
    report = run(spec, [0, 2], boards=1, games_per_board=1, sample_every=5, n_rollouts=3, log=io.StringIO())
    assert set(report) == {"0", "2"}
    for rep in report.values():
        assert rep["games"] == 1
        for label in ("FEMCTS", "MCTS"):
            shares = rep["rollouts"][label]["action_share"]
            assert sum(shares.values()) == pytest.approx(1, abs=1e-3)
            assert rep["results"][label]["games"] == 1
        assert rep["rollouts"]["FEMCTS"]["moves_into_fog_share_of_moves"] == 0
    assert rep["rollouts"]["FEMCTS"]["feature_mean"].keys() == {
        "near_bomb", "near_enemy", "near_powerup", "near_rigid", "can_kick"}
    assert report["0"]["rollouts"]["MCTS"]["moves_into_fog_share_of_moves"] > 0
    # issue 38: root statistics, the features of the agent's own view, the drift
    for rep in report.values():
        assert rep["decisions"]["FEMCTS"]["decisions"] > 0
        assert 0 < rep["decisions"]["FEMCTS"]["chosen_visit_share"] <= 1
        view = rep["view"]["FEMCTS"]
        assert 0 <= view["p_bomb_at_root"] <= 1
        assert view["can_kick"]["in_view_share"] == 1  # always known
        assert set(rep["survival"]["FEMCTS"]) == {"100", "300", "500", "575", "650", "725"}
        # 24 iterations a decision complete no generation (P x L = 10 x 4 = 40 iterations):
        # the population the series carried has not moved
        assert rep["population_drift"]["FEMCTS"] == [{"max_abs": 0.0, "mean_abs": 0.0}]
    # blind, nothing but the agent's own cell is seen: no enemy is ever in view
    assert report["0"]["view"]["FEMCTS"]["near_enemy"]["in_view_share"] == 0
    assert report["0"]["view"]["FEMCTS"]["near_enemy"]["entries_per_100"] == 0


# --------------------------------------------------------------------- issue 38 options
def test_recommendation_best_mean_plays_the_best_mean_root_child():
    """``recommendation = "best_mean"``: the action played is the root child with
    the best mean value; the default plays the most visited child, as before
    (``test_games_play_as_before``)."""
    from agents.search import ROOT_INDEX

    cfg = PommermanConfig(ruleset="java", view_range=2)
    state = java_state(MIDDLE)
    for recommendation in ("most_visited", "best_mean"):
        agent = make_agent("femcts", {"n_effective": 2, "recommendation": recommendation},
                           Budget(iterations=200), cfg)
        agent.begin_game(0, np.random.SeedSequence(4))
        action = int(agent.act(observe(state, 0, 2)))
        tree = agent.search_tree
        children = [int(c) for c in tree.children[ROOT_INDEX]]
        visits = [tree.node_visits[c] if c >= 0 else -1 for c in children]
        means = [tree.node_value_sum[c] / tree.node_visits[c] if c >= 0 and tree.node_visits[c] else -np.inf
                 for c in children]
        if recommendation == "best_mean":
            assert means[action] == pytest.approx(max(means))
        else:
            assert visits[action] == max(visits)
    with pytest.raises(ValueError, match="recommendation"):
        FEMCTSConfig(recommendation="robust")


def test_zero_seed_file_plays_as_unseeded():
    """jobs/femcts/seeds/zero_nea2.npz (all weights 0) is the unseeded population:
    a seat loaded from it plays the same game as one never seeded."""
    from pathlib import Path

    seed_file = Path(__file__).resolve().parents[2] / "jobs" / "femcts" / "seeds" / "zero_nea2.npz"
    cfg = PommermanConfig(ruleset="java", max_steps=40, view_range=4)
    played = []
    for seeded in (False, True):
        agents = [make_agent("femcts", {"n_effective": 2, "mutation_variant": "shared"},
                             Budget(iterations=40), cfg) for _ in range(2)]
        agents += [make_agent("mcts", {}, Budget(iterations=40), cfg) for _ in range(2)]
        if seeded:
            with np.load(seed_file, allow_pickle=False) as npz:
                for a in agents[:2]:
                    a.load_learned_state({k: npz[k] for k in npz.files})
        game = Pommerman(cfg)
        game.reset(np.random.SeedSequence(7))
        for s, a in enumerate(agents):
            a.begin_game(s, np.random.SeedSequence(7, spawn_key=(s,)))
        actions = []
        while not game.done:
            joint = [int(a.act(game.observation(i))) for i, a in enumerate(agents)]
            actions.append(joint)
            game.step(joint)
        played.append(actions)
    assert played[0] == played[1]


def test_fog_diagnostics_pools_the_series_of_a_view_range():
    """With the population reset per game (``series_by = "game"``: one series a game) the
    diagnostics count every series of a view range into one report (they once stopped
    at the second series)."""
    import io

    from cluster.spec.build import build_spec
    from jobs.femcts.fog_diagnostics import run

    spec = build_spec({
        "study": {"name": "fog-diag-reset", "seed": 3, "results_dir": "/tmp/unused"},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 30},
        "budget": {"iterations": 24},
        "design": {"seeds": 1, "games_per_seed": 2, "series_by": "game", "vary": {"view_range": [0]}},
        "lineup": [{"agent": "femcts", "label": "FEMCTS", "params": {"n_effective": 2}},
                   {"agent": "random"}, {"agent": "random"}, {"agent": "random"}],
        "tracking": {"enabled": False},
    })
    one = run(spec, [0], boards=1, games_per_board=1, sample_every=5, n_rollouts=2, log=io.StringIO())["0"]
    both = run(spec, [0], boards=1, games_per_board=2, sample_every=5, n_rollouts=2, log=io.StringIO())["0"]
    assert (one["games"], both["games"]) == (1, 2)
    assert len(both["population_drift"]["FEMCTS"]) == 2  # one entry a series
    assert both["decisions"]["FEMCTS"]["decisions"] > one["decisions"]["FEMCTS"]["decisions"]
    assert both["results"]["FEMCTS"]["games"] == 2


def test_fog_diagnostics_drift_is_what_the_study_game_evolves():
    """The population drift of a series is the change the cluster's own play of that game
    makes to the population (P x L = 4 iterations a generation: six generations a decision),
    and the diagnostics' rollouts, drawn from a generator of their own, leave the game as
    the cluster plays it (the same result)."""
    import io

    from cluster.run.play import build_agents, load_learned, play_game
    from cluster.spec.plan import plan_study
    from cluster.spec.seed_populations import load_populations
    from cluster.spec.build import build_spec
    from jobs.femcts.fog_diagnostics import run

    spec = build_spec({
        "study": {"name": "fog-diag-drift", "seed": 3, "results_dir": "/tmp/unused"},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 30},
        "budget": {"iterations": 24},
        "design": {"seeds": 1, "games_per_seed": 1, "vary": {"view_range": [2]}},
        "lineup": [{"agent": "femcts", "label": "FEMCTS", "params": {
                        "n_effective": 2, "population_size": 2, "rollouts_per_individual": 2,
                        "elite_count": 1}},
                   {"agent": "random"}, {"agent": "random"}, {"agent": "random"}],
        "tracking": {"enabled": False},
    })
    rep = run(spec, [2], boards=1, games_per_board=1, sample_every=5, n_rollouts=2, log=io.StringIO())["2"]
    assert rep["games"] == 1
    agents = build_agents(spec)
    load_learned(spec, agents, load_populations(spec))
    start = agents[0].population.copy()
    (task,) = plan_study(spec)[0].games
    rows, _ = play_game(spec, task, agents)
    change = np.abs(agents[0].population - start)
    assert change.max() > 0
    assert rep["population_drift"]["FEMCTS"] == [{"max_abs": float(change.max()),
                                                  "mean_abs": float(change.mean())}]
    femcts_row = next(r for r in rows if r["label"] == "FEMCTS")
    assert rep["results"]["FEMCTS"][femcts_row["result"].upper()] == 1


@pytest.mark.parametrize("argv, needle", [
    (["{tmp}/missing.toml"], "missing.toml: spec file not found"),
    (["jobs/femcts/7_po_ffa.toml", "--view-range", "0..x"], "--view-range: expected ranges"),
    (["jobs/xcom/mini_convae_vs_mcts.toml"], "game: fog_diagnostics plays Pommerman specs only"),
    (["summary", "{tmp}/missing.json"], "missing.json: not a report of this program"),
    (["summary", "{tmp}/other.json"], "other.json: not a report of this program (KeyError"),
])
def test_fog_diagnostics_refuses_bad_input_in_one_line_before_any_game(tmp_path, capsys, monkeypatch,
                                                                        argv, needle):
    from pathlib import Path

    from jobs.femcts.fog_diagnostics import main

    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the specs' relative paths
    (tmp_path / "other.json").write_text('{"spec": "x"}', encoding="utf-8")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("fog_diagnostics") and needle in captured.err


def test_fog_diagnostics_collapse_counts():
    """The collapse table: an agent on a doomed ring 12 ticks before a collapse
    either gets off it (escaped) or dies in that collapse."""
    import io

    from cluster.spec.build import build_spec
    from jobs.femcts.fog_diagnostics import run

    spec = build_spec({
        "study": {"name": "fog-diag", "seed": 3, "results_dir": "/tmp/unused"},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 520},
        "budget": {"iterations": 8},
        "design": {"seeds": 1, "games_per_seed": 4, "vary": {"view_range": [2]}},
        "lineup": [{"agent": "femcts", "label": "FEMCTS", "params": {"n_effective": 2}},
                   {"agent": "rule_based", "label": "R1"}, {"agent": "rule_based", "label": "R2"},
                   {"agent": "rule_based", "label": "R3"}],
        "tracking": {"enabled": False},
    })
    rep = run(spec, [2], boards=1, games_per_board=1, sample_every=100, n_rollouts=1, log=io.StringIO())["2"]
    assert rep["collapse"], "someone is alive 12 ticks before tick 500"
    for label, stages in rep["collapse"].items():
        for t, c in stages.items():
            assert c["escaped"] <= c["at_risk"] <= c["alive_before"]
    stage = [c for stages in rep["collapse"].values() for t, c in stages.items() if t == "500"]
    assert sum(c["alive_before"] for c in stage) == 4 - sum(
        sum(d < 488 for d in ticks) for ticks in rep["death_ticks"].values())


def test_fog_readings_table(tmp_path, capsys):
    """jobs.femcts.fog_readings: the FEMCTS seat's W/T/L per view range with a
    Wilson interval; a team's two FEMCTS seats count once per game."""
    from datetime import datetime, timezone

    from cluster.results.store import ResultStore
    from jobs.femcts.fog_readings import main

    rows = []
    for g, (vr, res) in enumerate([(0, "win"), (0, "loss"), (0, "win"), (4, "tie")]):
        for seat, label in enumerate(("FEMCTS-A", "FEMCTS-B", "MCTS-A")):
            rows.append({"study_id": "x", "series_id": g, "game_index": g, "index_in_series": 0, "board_seed": g,
                         "seed_entropy": f"1/{g}", "seat": seat, "label": label, "agent": "femcts",
                         "config_hash": "0123456789ab", "team": 0 if seat < 2 else 1, "budget": "10 it",
                         "result": res if label.startswith("FEMCTS") else "loss", "reward": 0.0, "length": 800,
                         "died_at": 700 if res == "loss" else None, "mean_iterations": 10.0, "mean_ms": 1.0,
                         "invalid_actions": 0, "error": None, "worker": "w", "condition": f"view_range={vr}",
                         "finished_at": datetime(2026, 1, 1, tzinfo=timezone.utc), "vary.view_range": vr})
    ResultStore(tmp_path).append(rows)  # the store checks what it reads: the readings read it through the store
    assert main([f"x={tmp_path}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("| x | 0 | 3 | 2/0/1 | 1 | 67% (21-94) |")
    assert out[3].startswith("| x | 4 | 1 | 0/1/0 | 0 | 0% (0-79) |")
    # the trend: 0/1 at range 4 minus 2/3 blind, Newcombe's interval from the two Wilson ones
    assert out[-1] == "| x | 67% (2/3) | 0% (0/1) | -67 (-94 to +25) |"
    with pytest.raises(SystemExit, match="x: no games at view range 2 \\(has 0, 4\\)"):
        main([f"x={tmp_path}", "--trend", "0,2"])
    assert main([f"x={tmp_path}", "--trend", "4"]) == 2
    assert main(["no-equals-sign"]) == 2
