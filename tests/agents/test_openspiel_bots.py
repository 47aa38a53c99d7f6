"""OpenSpiel's bots as agents (agents/openspiel): the C++ MCTS on a known position, its
budget in simulations, and the edge of one simulation (the root left unexpanded)."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import agents  # noqa: E402,F401  (registers the built-in agents)
from agents.api import Budget  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from games.registry import make_config, make_game  # noqa: E402


def tic_tac_toe_after(moves):
    game = make_game("openspiel:tic_tac_toe", make_config("openspiel:tic_tac_toe", {}))
    game.reset(0)
    for move in moves:
        joint = [0, 0]
        joint[game.acting_players()[0]] = move
        game.step(joint)
    return game


def bot(game, iterations, **params):
    seat = game.acting_players()[0]
    agent = make_agent("openspiel_mcts", params, Budget(iterations=iterations), game.config)
    agent.begin_game(seat, np.random.SeedSequence(3))
    return agent, game.observation(seat)


def test_openspiel_mcts_wins_in_one_with_its_budget_and_value():
    agent, observation = bot(tic_tac_toe_after([0, 3, 1, 4]), 300, solve=False)
    assert agent.act(observation) == 2
    assert agent.last_iterations == 300 and agent.last_value > 0.9


def test_openspiel_mcts_at_one_simulation_plays_a_legal_move_regression():
    """One simulation leaves OpenSpiel's root unexpanded (no best child): the agent takes
    OpenSpiel's own step instead of failing (the warm-up decides at one simulation)."""
    game = tic_tac_toe_after([4])
    agent, observation = bot(game, 1)
    action = agent.act(observation)
    assert observation.legal[action] and math.isnan(agent.last_value)
