"""mcts_generic (agents/generic, agents/search/generic.py): the generic UCT on plugin games
that declare the generic kernels (tests/plugin_games: connect four, pig with chance
nodes, a simultaneous-move dilemma), through its numba kernels and its pure-Python path.

Known positions are solved (a win in one, a block, holding at the target, defecting
when it is dominant); the two paths are diffed move for move and value for value; the
budget is honoured; the compiled search is served from numba's cache in a new process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents  # noqa: F401  (registers the built-in agents)
from agents.api import Budget
from agents.registry import make_agent
from games.registry import make_config, make_game

CONNECT_FOUR = "plugin_games.connect_four:ConnectFour"
PIG = "plugin_games.pig:Pig"
DILEMMA = "plugin_games.dilemma:Dilemma"
TESTS = Path(__file__).resolve().parents[1]


def agent_for(game_name, iterations, seat=0, seed=1, **params):
    config = make_config(game_name, {})
    agent = make_agent("mcts_generic", params, Budget(iterations=iterations), config)
    agent.begin_game(seat, np.random.SeedSequence(seed))
    return agent


def play(game_name, path, iterations, seed, options=None):
    """A whole game between two mcts_generic agents on ``path``: [(action, value)] and the outcomes."""
    config = make_config(game_name, options or {})
    game = make_game(game_name, config)
    game.reset(np.random.SeedSequence(seed))
    players = [make_agent("mcts_generic", {"path": path}, Budget(iterations=iterations), config) for _ in range(2)]
    for seat, player in enumerate(players):
        player.begin_game(seat, np.random.SeedSequence([seed, seat]))
    moves = []
    while not game.done:
        actions = [0, 0]
        for seat in game.acting_players():
            actions[seat] = players[seat].act(game.observation(seat))
            assert players[seat].last_iterations == iterations
            moves.append((actions[seat], players[seat].last_value))
        game.step(actions)
    return moves, game.outcomes()


def connect_four_after(columns):
    """Connect four after ``columns`` dropped alternately from the empty board."""
    game = make_game(CONNECT_FOUR, make_config(CONNECT_FOUR, {}))
    game.reset(0)
    for col in columns:
        actions = [0, 0]
        actions[game.acting_players()[0]] = col
        game.step(actions)
    return game


@pytest.mark.parametrize("path", ["kernels", "python"])
def test_connect_four_win_in_one_and_block(path):
    # x: 0 0 0 in the bottom row's first three columns, o above them: x wins in column 3
    win = connect_four_after([0, 0, 1, 1, 2, 2])
    """
    . . . . . . .
    o o o . . . .
    x x x . . . .   x to move: column 3 wins
    """
    assert agent_for(CONNECT_FOUR, 400, seat=0, path=path).act(win.observation(0)) == 3
    # o to move must block column 3 (x threatens 0 1 2 _)
    block = connect_four_after([0, 6, 1, 6, 2])
    assert agent_for(CONNECT_FOUR, 2000, seat=1, path=path).act(block.observation(1)) == 3


def test_the_python_path_plays_the_kernel_paths_moves_and_values():
    for game_name, options, iterations in ((CONNECT_FOUR, {"opening_plies": 4}, 60), (PIG, {}, 80),
                                           (DILEMMA, {}, 50)):
        kernels = play(game_name, "kernels", iterations, seed=3, options=options)
        python = play(game_name, "python", iterations, seed=3, options=options)
        assert kernels == python, game_name
        assert len(kernels[0]) > 2


def test_same_seed_same_moves_and_another_seed_differs():
    first = play(CONNECT_FOUR, "kernels", 100, seed=4)
    assert play(CONNECT_FOUR, "kernels", 100, seed=4) == first
    assert play(CONNECT_FOUR, "kernels", 100, seed=5) != first


@pytest.mark.parametrize("path", ["kernels", "python"])
def test_pig_holds_at_the_target_and_rolls_with_nothing_to_lose(path):
    game = make_game(PIG, make_config(PIG, {}))
    game.reset(0)
    state = game.state
    state.scores[:] = (15, 18)
    state.meta[1] = 6  # a turn total of 6: holding wins now, rolling risks a 1
    assert agent_for(PIG, 600, path=path).act(game.observation(0)) == 1
    state.meta[1] = 0  # nothing this turn: holding only passes the turn to a player 2 points from winning
    assert agent_for(PIG, 600, path=path).act(game.observation(0)) == 0


@pytest.mark.parametrize("path", ["kernels", "python"])
def test_decoupled_uct_defects_in_the_dilemma(path):
    game = make_game(DILEMMA, make_config(DILEMMA, {}))
    game.reset(0)
    for seat in (0, 1):
        # returns in [0, 1] (payoffs / 15): an exploration constant on their scale
        assert agent_for(DILEMMA, 3000, seat=seat, path=path, exploration=0.3).act(game.observation(seat)) == 1


@pytest.mark.parametrize("path", ["kernels", "python"])
def test_a_time_budget_stops_the_search(path):
    config = make_config(CONNECT_FOUR, {})
    game = make_game(CONNECT_FOUR, config)
    game.reset(0)
    agent = make_agent("mcts_generic", {"path": path}, Budget(ms=30), config)
    agent.begin_game(0, np.random.SeedSequence(0))
    agent.act(game.observation(0))  # loads the search
    seconds = agent.total_seconds
    agent.act(game.observation(0))
    assert 0 < agent.last_iterations and agent.total_seconds - seconds < 2.0


def test_a_game_without_the_contract_is_refused_naming_it():
    from agents.registry import agent_class

    cls = agent_class("mcts_generic")
    with pytest.raises(ValueError, match="declares neither generic_kernels nor searchable"):
        cls.check_for_game(cls.Config(), make_config("scotland_yard", {}))
    assert cls.plays_game("plugin_games.connect_four:ConnectFour") and not cls.plays_game("scotland_yard")


_CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import agents
from agents.api import Budget
from agents.registry import make_agent
from games.registry import make_config, make_game
config = make_config("plugin_games.connect_four:ConnectFour", {})
game = make_game("plugin_games.connect_four:ConnectFour", config)
game.reset(0)
agent = make_agent("mcts_generic", {}, Budget(iterations=200), config)
agent.begin_game(0, np.random.SeedSequence(9))
start = time.process_time()
action = agent.act(game.observation(0))
print(action, agent.last_value, time.process_time() - start)
"""


def test_the_search_is_served_from_numbas_cache_in_a_new_process():
    agent_for(CONNECT_FOUR, 200, seed=9).act(connect_four_after([]).observation(0))  # compiled here
    out = subprocess.run([sys.executable, "-c", _CHILD, str(TESTS)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    action, value, seconds = out.stdout.split()
    here = agent_for(CONNECT_FOUR, 200, seed=9)
    assert int(action) == here.act(connect_four_after([]).observation(0))
    assert float(value) == here.last_value
    assert float(seconds) < 2.0, f"the first decision took {seconds} s of CPU: compiled, not loaded"


def test_the_python_path_plans_over_determinizations_of_hidden_cards():
    """The bird game hides the deck and the opponent's face-down cards: the Python path
    samples them with Birds.determinize every iteration (or from fixed samples)."""
    for params in ({"path": "python"}, {"path": "python", "determinizations": 3}):
        config = make_config("birds", {})
        game = make_game("birds", config)
        game.reset(np.random.SeedSequence(2))
        agent = make_agent("mcts_generic", params, Budget(iterations=40), config)
        agent.begin_game(0, np.random.SeedSequence(3))
        first = agent.act(game.observation(0))
        assert game.legal_actions(0)[first] and agent.last_iterations == 40
        assert np.isfinite(agent.last_value)
