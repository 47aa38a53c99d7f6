"""FEMCTS: features on scripted boards, the evolved policy, population carried
across games, seed populations, determinism, strength against baselines."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.pommerman.femcts import policy_action, RolloutPolicy
from agents.pommerman.features import (
    F_BOMB_STRENGTH, F_CAN_KICK, F_NEAR_BOMB, F_NEAR_ENEMY, F_NEAR_FLAME, F_NEAR_POWERUP,
    F_NEAR_RIGID, F_NEAR_WOOD, new_feature_cache, prepare_feature_cache, state_features,
)
from agents.pommerman.femcts import FEMCTSConfig
from agents.registry import make_agent, make_agent_config
from games.rng import make_rng
from games.pommerman import Pommerman, PommermanConfig
from games.pommerman.kernels import state_from_dict
from games.pommerman.kernels import LAY_BOMB, STOP
from tests.games.test_pommerman_api import board_state

PICTURE = """
. . . . . . . . . . .
. 0 . . . . . . . 3 .
. . . # . . . . . . .
. . . . . b . . . . .
. . + . . * . . . . .
. . . . . 2 . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. 1 . . . . . . . . .
. . . . . . . . . . .
"""


def test_features_on_a_scripted_board():
    d = board_state(PICTURE)
    d["board"][5][7] = 7  # a range power-up two cells right of agent 2
    d["agents"][2].update(ammo=2, blast_strength=3, can_kick=True)
    state = state_from_dict(d)
    f = np.zeros(8)
    state_features(state, 2, f)
    assert f[F_BOMB_STRENGTH] == pytest.approx(3 * 2 / 20)
    assert f[F_CAN_KICK] == 1.0
    assert f[F_NEAR_BOMB] == pytest.approx(1 / 3)          # bomb two rows up
    assert f[F_NEAR_FLAME] == pytest.approx(1 / 2)         # flame one row up
    assert f[F_NEAR_POWERUP] == pytest.approx(1 / 3)
    assert f[F_NEAR_RIGID] == pytest.approx(1 / (np.hypot(3, 2) + 1))
    assert f[F_NEAR_WOOD] == pytest.approx(1 / (np.hypot(1, 3) + 1))
    assert f[F_NEAR_ENEMY] == pytest.approx(1 / (np.hypot(4, 4) + 1))  # agent 3 at (1, 9)
    # team mode: agent 0 is the teammate, the nearest enemy is agent 3 or 1 (both 4x4 away)
    state_team = state_from_dict(d, mode="team")
    state_features(state_team, 2, f)
    assert f[F_NEAR_ENEMY] == pytest.approx(1 / (np.hypot(4, 4) + 1))
    assert (f <= 1).all() and (f >= 0).all()


def test_policy_follows_the_weights():
    state = state_from_dict(board_state(PICTURE))
    rng = make_rng(0)
    scratch8, probs = np.zeros(8), np.zeros(6)
    # unfeatured, a huge weight on "bomb": always bomb
    weights = np.zeros((6, 1))
    weights[LAY_BOMB, 0] = 50.0
    cache = new_feature_cache()
    prepare_feature_cache(cache, state, 12, np.arange(8))
    policy = RolloutPolicy(np.zeros(0, np.int64), np.ones(6), np.zeros(6), 6, False, 0.0)
    acts = {policy_action(state, 2, weights, policy, cache, scratch8, np.zeros(1), probs, rng)
            for _ in range(50)}
    assert acts == {LAY_BOMB}
    # nEA = 3 with a huge "move" weight: only safe directions (agent 2 at (5,5): up is flames)
    weights = np.zeros((3, 8))
    weights[0, :] = 50.0
    policy = RolloutPolicy(np.arange(8), np.array([4.0, 1, 1]), np.zeros(3), 3, False, 0.0)
    acts = {policy_action(state, 2, weights, policy, cache, scratch8, np.zeros(8), np.zeros(3), rng)
            for _ in range(200)}
    assert acts == {2, 3, 4}
    # nEA = 3, "stop" dominates
    weights = np.zeros((3, 8))
    weights[1, :] = 50.0
    policy = RolloutPolicy(np.arange(8), np.ones(3), np.zeros(3), 3, False, 0.0)
    assert policy_action(state, 2, weights, policy, cache, scratch8, np.zeros(8), np.zeros(3), rng) == STOP


def test_config_validation_names_fields():
    with pytest.raises(ValueError, match="elite_count"):
        make_agent_config("femcts", {"population_size": 4, "elite_count": 6})
    with pytest.raises(ValueError, match="mutation_probability"):
        make_agent_config("femcts", {"mutation_probability": 1.5})
    with pytest.raises(ValueError, match="n_effective"):
        make_agent_config("femcts", {"featured": False, "n_effective": 3})
    assert FEMCTSConfig(n_effective=2).population_shape == (10, 2, 5)
    assert FEMCTSConfig(featured=False).population_shape == (10, 6, 1)


def _play(agents, seed, config=PommermanConfig(ruleset="java", max_steps=120)):
    game = Pommerman(config)
    game.reset(np.random.SeedSequence(seed, spawn_key=(0,)))
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(seed, spawn_key=(1, seat)))
    actions = []
    while not game.done:
        joint = [a.act(game.observation(i)) for i, a in enumerate(agents)]
        actions.append(joint)
        game.step(joint)
    for i, a in enumerate(agents):
        a.end_game(game.observation(i), game.returns())
    return game, actions


def _lineup(params, budget, config=PommermanConfig(ruleset="java", max_steps=120)):
    return [make_agent("femcts", params, budget, config)] + [
        make_agent("random", {}, budget, config) for _ in range(3)]


def test_population_is_carried_across_games_and_reproducible():
    budget = Budget(iterations=120)
    agents = _lineup({"n_effective": 3, "population_size": 6, "elite_count": 2,
                      "rollouts_per_individual": 2}, budget)
    femcts = agents[0]
    assert not femcts.population.any()
    _, first = _play(agents, 11)
    after_one = femcts.population.copy()
    assert after_one.any(), "the population evolved during the game"
    assert (after_one >= 0).all(), "nEA = 3 keeps weights positive"
    femcts.begin_game(0, np.random.SeedSequence(1))
    np.testing.assert_array_equal(femcts.population, after_one, "a new game keeps the population")
    # the same seeds and iteration budget give the same game and population
    again = _lineup({"n_effective": 3, "population_size": 6, "elite_count": 2,
                     "rollouts_per_individual": 2}, budget)
    _, second = _play(again, 11)
    assert first == second
    np.testing.assert_array_equal(again[0].population, after_one)


def test_seed_population_is_used_and_bad_ones_rejected():
    config = PommermanConfig(ruleset="java", max_steps=60)
    params = {"featured": False, "population_size": 4, "elite_count": 1}
    agent = make_agent("femcts", params, Budget(iterations=64), config)
    seed_pop = np.zeros((4, 6, 1))
    seed_pop[:, LAY_BOMB, 0] = -40.0  # never bomb
    agent.load_learned_state({"population": seed_pop})
    np.testing.assert_array_equal(agent.population, seed_pop)
    with pytest.raises(ValueError, match="shape"):
        agent.load_learned_state({"population": np.zeros((4, 3, 8))})
    with pytest.raises(ValueError, match="no array named 'population'"):
        agent.load_learned_state({"weights": seed_pop})
    with pytest.raises(ValueError, match="NaN"):
        agent.load_learned_state({"population": np.full((4, 6, 1), np.nan)})


def test_longest_winning_streak_population_is_tracked():
    agent = make_agent("femcts", {"population_size": 2, "elite_count": 1}, Budget(iterations=8),
                       PommermanConfig())
    agent.seat = 0
    for k, won in enumerate([True, False, True, True, False]):
        agent.population[:] = k
        agent.begin_game(0, np.random.SeedSequence(k))
        agent.end_game(None, np.array([1.0 if won else -1.0, 0, 0, 0]))
    assert agent.best_streak == 2
    assert (agent.best_streak_population == 3).all(), "population after the streak's last win"
    state = agent.learned_state()
    other = make_agent("femcts", {"population_size": 2, "elite_count": 1}, Budget(iterations=8),
                       PommermanConfig())
    other.load_learned_state(state)
    assert other.best_streak == 2 and (other.best_streak_population == 3).all()


@pytest.mark.slow
def test_femcts_beats_random_and_osla():
    """Over fixed seeds, FEMCTS (nEA = 3, 300 iterations) wins clearly more than
    random and OSLA seated against it (java rules, FFA, 200-tick games)."""
    config = PommermanConfig(ruleset="java", max_steps=200)
    budget = Budget(iterations=300)
    wins = {"femcts": 0, "random": 0, "osla": 0}
    names = ["femcts", "random", "osla", "random"]
    for seed in range(6):
        agents = [make_agent(n, {"n_effective": 3} if n == "femcts" else {}, budget, config)
                  for n in names]
        # rotate seats so no agent owns a corner
        order = [(k + seed) % 4 for k in range(4)]
        seated = [agents[o] for o in order]
        game, _ = _play(seated, 100 + seed, config)
        for seat, o in enumerate(order):
            if game.outcomes()[seat] == "win":
                wins[names[o]] += 1
    assert wins["femcts"] >= 3, wins
    assert wins["femcts"] > wins["osla"] and wins["femcts"] > wins["random"], wins
