"""The PettingZoo face (agents.pettingzoo): PettingZoo's own API and seed tests
over every registered game (the four built-in games and the tests' ``count``
game, registered the way a plugin would be), the same games as Arena's own
``reset(seed)`` step for step, the games' partial observations, rewards that add
up to the games' returns, and the layering (games/ and ``import agents`` stay
free of PettingZoo).

Runtimes are kept short: the API tests run a few dozen cycles, and Pommerman
plays with ``max_steps = 40`` where a test needs its end.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from agents.pettingzoo import env, parallel_env
from games.registry import game_names, make_game

ROOT = Path(__file__).resolve().parents[2]
GAMES = game_names()
#: Options that make a game short enough to be played to its end in a test.
SHORT = {"pommerman": {"max_steps": 40}, "scotland_yard": {"rounds": 6, "reveal_rounds": (3,)}}


@pytest.fixture(autouse=True)
def _quiet_api_advice():
    # PettingZoo's checks advise Box observations; Arena's are Dicts of the layout's arrays
    # with an action mask, PettingZoo's own convention for masked games (as its classic envs).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        yield


@pytest.mark.parametrize("name", GAMES)
def test_the_aec_env_passes_pettingzoos_api_test(name):
    api_test(env(name, **SHORT.get(name, {})), num_cycles=60)


@pytest.mark.parametrize("name", GAMES)
def test_the_parallel_env_passes_pettingzoos_parallel_api_test(name):
    parallel_api_test(parallel_env(name, **SHORT.get(name, {})), num_cycles=60)


@pytest.mark.parametrize("name", GAMES)
def test_the_aec_env_passes_pettingzoos_seed_test(name):
    seed_test(lambda: env(name), num_cycles=30)


def test_the_parallel_pommerman_env_passes_pettingzoos_parallel_seed_test():
    parallel_seed_test(lambda: parallel_env("pommerman", view_range=2), num_cycles=30)


def _random_joint(observations, rng) -> dict:
    """A uniformly random legal action per agent whose mask has one (0 otherwise)."""
    out = {}
    for agent, obs in observations.items():
        legal = np.flatnonzero(obs["action_mask"])
        out[agent] = int(rng.choice(legal)) if legal.size else 0
    return out


def _assert_observations_are_the_games(face_env, observations, arena):
    """Every agent's observation is the Arena game's ``observation(seat)`` (its
    observed fields) and its mask the legal actions when the seat is asked."""
    acting = set(arena.acting_players())
    for agent, obs in observations.items():
        seat = int(agent.split("_")[1])
        expected = arena.observation(seat)
        if isinstance(expected, np.ndarray):  # a game observing in one array (``count``)
            np.testing.assert_array_equal(obs["observation"], expected)
        else:
            for field, value in obs["observation"].items():
                np.testing.assert_array_equal(value, getattr(expected, field), err_msg=f"{agent} {field}")
        mask = arena.legal_actions(seat) if seat in acting else np.zeros(arena.num_actions, bool)
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), mask)
        assert face_env.observation_space(agent).contains(obs)


#: Every registered game in its short form, and Pommerman's other settings: teams (a dead
#: agent's team may still win), the Java rules with the FEMCTS study's fog.
CASES = [(name, SHORT.get(name, {})) for name in GAMES] + [
    ("pommerman", {"mode": "team", "max_steps": 60}),
    ("pommerman", {"ruleset": "java", "view_range": 2, "max_steps": 60}),
]


@pytest.mark.parametrize("name, options", CASES, ids=lambda c: c if isinstance(c, str) else
                         "-".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("seed", [3, 11])
def test_a_seeded_parallel_game_is_arenas_game_step_for_step(name, options, seed):
    par = parallel_env(name, **options)
    arena = make_game(name, **options)
    observations, _ = par.reset(seed=seed)
    arena.reset(seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(par.possible_agents, 0.0)
    steps = 0
    while par.agents:
        assert par.game.fingerprint() == arena.fingerprint(), f"differs after {steps} steps"
        _assert_observations_are_the_games(par, observations, arena)
        actions = _random_joint(observations, rng)
        observations, rewards, terminations, truncations, _ = par.step(actions)
        arena.step([actions[a] for a in par.possible_agents])
        steps += 1
        for agent, reward in rewards.items():
            totals[agent] += reward
        assert all(t == arena.done for t in terminations.values()) and not any(truncations.values())
    assert arena.done and par.game.fingerprint() == arena.fingerprint()
    assert par.game.step_count == arena.step_count > 0
    np.testing.assert_allclose([totals[a] for a in par.possible_agents], arena.returns())
    assert list(par.game.invalid_actions) == [0] * arena.num_players


@pytest.mark.parametrize("name", GAMES)
def test_a_seeded_aec_game_is_arenas_game_step_for_step(name):
    aec = env(name, **SHORT.get(name, {}))
    arena = make_game(name, **SHORT.get(name, {}))
    aec.reset(seed=5)
    arena.reset(5)
    rng = np.random.default_rng(5)
    joint = [0] * arena.num_players
    asked: list[int] = []
    totals = dict.fromkeys(aec.possible_agents, 0.0)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, _ = aec.last()
        totals[agent] += reward
        if terminated or truncated:
            aec.step(None)
            continue
        seat = int(agent.split("_")[1])
        if not asked:  # the first player asked in a step: the game is Arena's before it
            assert aec.game.fingerprint() == arena.fingerprint()
            _assert_observations_are_the_games(aec, {a: aec.observe(a) for a in aec.agents}, arena)
        asked.append(seat)
        mask = obs["action_mask"]  # zeros: a seat of a simultaneous game that does not act (dead)
        joint[seat] = int(rng.choice(np.flatnonzero(mask))) if mask.any() else 0
        aec.step(joint[seat])
        # the step is complete: every agent asked in a simultaneous game (one cycle, what
        # aec_to_parallel needs), the acting players in a turn-based one
        every = range(arena.num_players) if arena.simultaneous else arena.acting_players()
        if sorted(asked) == sorted(every):
            arena.step(joint)
            joint, asked = [0] * arena.num_players, []
    assert arena.done and not aec.agents and aec.game.fingerprint() == arena.fingerprint()
    np.testing.assert_allclose([totals[a] for a in aec.possible_agents], arena.returns())


def test_a_dead_pommerman_agent_stays_unasked_and_gets_its_teams_win():
    par = parallel_env("pommerman", mode="team", max_steps=60)
    observations, _ = par.reset(seed=0)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(par.possible_agents, 0.0)
    dead_before_the_end = set()
    while par.agents:
        for agent in par.agents:
            if not par.game.is_alive(int(agent.split("_")[1])):
                dead_before_the_end.add(agent)
                assert not observations[agent]["action_mask"].any()  # unasked
        observations, rewards, *_ = par.step(_random_joint(observations, rng))
        for agent, reward in rewards.items():
            totals[agent] += reward
    winners = [a for a, outcome in zip(par.possible_agents, par.game.outcomes()) if outcome == "win"]
    dead_winners = dead_before_the_end & set(winners)
    assert dead_winners, "the seed no longer plays a game a team wins with a dead member"
    assert all(totals[a] == 1.0 for a in winners)


def test_pommerman_in_aec_form_asks_every_living_agent_once_per_tick():
    aec = env("pommerman", max_steps=40)
    aec.reset(seed=2)
    asked = [aec.agent_selection]
    aec.step(0)
    for _ in range(3):
        asked.append(aec.agent_selection)
        assert aec.game.step_count == 0  # the tick waits for the last agent
        aec.step(0)
    assert asked == aec.possible_agents and aec.game.step_count == 1


def test_unseeded_resets_follow_the_last_seed_and_seeds_make_different_games():
    first, second = parallel_env("birds"), parallel_env("birds")
    first.reset(seed=9)
    second.reset(seed=9)
    first.reset()
    second.reset()
    assert first.game.fingerprint() == second.game.fingerprint()
    prints = set()
    for seed in range(4):
        first.reset(seed=seed)
        prints.add(first.game.fingerprint())
    assert len(prints) == 4


def test_observations_are_the_games_partial_views():
    pommerman = parallel_env("pommerman", view_range=1)
    observations, _ = pommerman.reset(seed=1)
    board = observations["player_0"]["observation"]["board"]
    fog = 5  # games.pommerman cell code FOG
    assert (board == fog).sum() == 121 - 9  # a 3x3 square around the agent in its corner is seen
    assert (pommerman.game.state.board != fog).all()

    scotland_yard = env("scotland_yard")
    scotland_yard.reset(seed=4)
    mr_x = scotland_yard.observe("player_0")["observation"]
    seekers = scotland_yard.observe("player_1")["observation"]
    assert mr_x["positions"][0] > 0 and seekers["positions"][0] == 0  # Mr X hidden from the seekers
    assert "dist_any" not in mr_x  # constant tables stay out (Game.observed_fields)

    birds = env("birds")
    birds.reset(seed=4)
    hand = birds.observe("player_0")["observation"]["hand"]
    hidden = -2  # games.birds HIDDEN
    assert (hand[1, :2] == hidden).all() and (hand[0, :2] >= 0).all()  # the opponent's dealt cards
    assert (birds.observe("player_0")["observation"]["deck"] == hidden).all()


def test_bad_game_names_and_options_are_refused_naming_them():
    with pytest.raises(ValueError, match="^game: unknown game 'chess'"):
        env("chess")
    with pytest.raises(ValueError, match="view_range"):
        parallel_env("pommerman", view_range=9)
    with pytest.raises(ValueError, match="^game.board_size: unknown option"):
        env("xcom", board_size=3)
    with pytest.raises(ValueError, match="^render_mode"):
        env("birds", render_mode="human")


def test_ansi_rendering_is_the_games_text_picture():
    aec = env("xcom", render_mode="ansi")
    aec.reset(seed=0)
    assert aec.render() == aec.game.render()


_CHILD = """
import importlib, json, pkgutil, sys
import agents, games
for m in pkgutil.walk_packages(games.__path__, "games."):
    importlib.import_module(m.name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pettingzoo", "gymnasium"))))
"""


def test_games_and_the_agents_package_load_without_pettingzoo():
    for path in (ROOT / "games").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] in ("pettingzoo", "gymnasium") for n in names), path
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
