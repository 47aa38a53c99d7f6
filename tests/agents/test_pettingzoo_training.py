"""The PettingZoo face for training: one float32 Box per game (``observation="planes"``),
``aec_to_parallel`` on the games whose players all act at every step, SuperSuit's
``flatten_v0`` on the planes, and OpenSpiel games behind the same face."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel

from agents.pettingzoo import env, parallel_env

SHORT = {"pommerman": {"max_steps": 40}, "scotland_yard": {"rounds": 6, "reveal_rounds": (3,)}}
HAVE_OPENSPIEL = True
try:
    import pyspiel  # noqa: F401
except ImportError:
    HAVE_OPENSPIEL = False
needs_openspiel = pytest.mark.skipif(not HAVE_OPENSPIEL, reason="the arena[openspiel] extra is not installed")


@pytest.fixture(autouse=True)
def _quiet_api_advice():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation space for each agent probably")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        yield


@pytest.mark.parametrize("name", ["pommerman", "birds", "scotland_yard", "xcom"])
def test_planes_are_one_float_box_that_passes_the_api_test(name):
    aec = env(name, observation="planes", **SHORT.get(name, {}))
    space = aec.observation_space("player_0")
    assert space.dtype == np.float32 and space.shape
    api_test(aec, num_cycles=30)
    aec.reset(seed=3)
    observation = aec.observe(aec.agent_selection)
    assert observation.dtype == np.float32 and observation.shape == space.shape
    assert aec.infos[aec.agent_selection]["action_mask"].any()


def test_pommerman_planes_are_the_featurized_observation():
    from games.pommerman import PLANES

    par = parallel_env("pommerman", observation="planes")
    observations, infos = par.reset(seed=1)
    planes = observations["player_2"]
    assert planes.shape == (len(PLANES), 11, 11) and 0.0 <= planes.min() and planes.max() <= 1.0
    row, col = (int(x) for x in np.argwhere(planes[PLANES.index("self")])[0])
    assert par.game.state.agents[2, 0] == row and par.game.state.agents[2, 1] == col
    assert planes[PLANES.index("enemies")].sum() == 3  # FFA, full view: the three others
    board = par.game.state.board.reshape(11, 11)
    assert np.array_equal(planes[PLANES.index("rigid")], board == 1)
    assert np.array_equal(planes[PLANES.index("wood")], board == 2)
    assert planes[PLANES.index("ammo")][0, 0] == pytest.approx(0.1)  # one bomb of ten
    assert infos["player_2"]["action_mask"].tolist() == par.game.legal_actions(2).astype(np.int8).tolist()


def test_aec_to_parallel_works_for_pommerman_and_is_refused_for_turn_based_games():
    aec = env("pommerman", max_steps=40, mode="team")
    assert aec.metadata["is_parallelizable"]
    par = aec_to_parallel(aec)
    parallel_api_test(par, num_cycles=40)
    observations, _ = par.reset(seed=0)
    arena = parallel_env("pommerman", max_steps=40, mode="team")
    arena.reset(seed=0)
    rng = np.random.default_rng(0)
    while par.agents:  # the converted env plays Arena's own parallel game step for step
        actions = {a: int(rng.integers(6)) for a in par.agents}
        par.step(actions)
        arena.step(actions)
        assert par.unwrapped.game.fingerprint() == arena.game.fingerprint()
    assert not env("birds").metadata["is_parallelizable"]
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(env("birds"))


def test_supersuit_flatten_takes_the_planes():
    supersuit = pytest.importorskip("supersuit")
    flat = supersuit.flatten_v0(parallel_env("pommerman", observation="planes", max_steps=20))
    observations, _ = flat.reset(seed=2)
    assert observations["player_0"].shape == (20 * 11 * 11,)
    assert flat.observation_space("player_0").shape == (20 * 11 * 11,)
    observations, *_ = flat.step({a: 0 for a in flat.agents})
    assert observations["player_1"].dtype == np.float32


@needs_openspiel
@pytest.mark.parametrize("name,options", [("openspiel:kuhn_poker", {}), ("openspiel:tic_tac_toe", {}),
                                          ("openspiel:goofspiel", {"num_cards": 4})])
@pytest.mark.parametrize("observation", ["fields", "planes"])
def test_openspiel_games_pass_the_api_test(name, options, observation):
    api_test(env(name, observation=observation, **options), num_cycles=40)


@needs_openspiel
def test_openspiel_simultaneous_game_converts_and_chance_is_played_by_the_seed():
    par = aec_to_parallel(env("openspiel:goofspiel", num_cards=4, observation="planes"))
    parallel_api_test(par, num_cycles=20)
    histories = []
    for _ in range(2):
        par.reset(seed=5)
        while par.agents:
            par.step({a: int(np.flatnonzero(par.unwrapped.face.action_mask(int(a[-1])))[0]) for a in par.agents})
        histories.append(list(par.unwrapped.game.state.history()))
    assert histories[0] == histories[1]
    par.reset(seed=6)
    while par.agents:
        par.step({a: int(np.flatnonzero(par.unwrapped.face.action_mask(int(a[-1])))[0]) for a in par.agents})
    assert list(par.unwrapped.game.state.history()) != histories[0]  # other point cards drawn
