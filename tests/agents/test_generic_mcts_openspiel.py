"""mcts_generic on OpenSpiel's games through the Python path of the generic search
(games/openspiel's ``searchable`` members: copies, chance nodes, simultaneous moves,
``determinize`` for hidden information).

Known positions are solved, one per kind of game OpenSpiel brings: a win in one in
tic-tac-toe and connect four (sequential, perfect information), rolling on in pig
when holding hands the opponent the game (chance nodes), folding the jack and calling
with the king against a bet in Kuhn poker (hidden cards: the search plans over worlds
drawn from the player's view), and beating a random player at goofspiel (simultaneous
moves, decoupled UCT). The budget is honoured and a seed fixes the moves.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import agents  # noqa: E402,F401  (registers the built-in agents)
from agents.api import Budget  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from games.registry import make_config, make_game  # noqa: E402


def position(name: str, entries, options=None):
    """OpenSpiel game ``name`` after ``entries`` (OpenSpiel's history: actions and, at
    chance nodes, the outcome), played through Arena's game."""
    game = make_game(name, make_config(name, options or {}))
    game.reset(0)
    for entry in entries:
        if game.is_chance_node():
            game.apply_chance(entry)
        else:
            joint = [0] * game.num_players
            joint[game.acting_players()[0]] = entry
            game.step(joint)
    assert not game.is_chance_node()
    return game


def decide(game, iterations: int, seed: int = 1, **params):
    """mcts_generic's move (and the agent) for the player to act in ``game``."""
    seat = game.acting_players()[0]
    agent = make_agent("mcts_generic", params, Budget(iterations=iterations), game.config)
    agent.begin_game(seat, np.random.SeedSequence(seed))
    action = agent.act(game.observation(seat))
    assert agent.path == "python" and agent.last_iterations == iterations
    return action, agent


@pytest.mark.parametrize("seed", [1, 2])
def test_tic_tac_toe_win_in_one(seed):
    game = position("openspiel:tic_tac_toe", [0, 3, 1, 4])  # x: 0 1, o: 3 4, x to move
    action, agent = decide(game, 200, seed)
    assert action == 2 and agent.last_value > 0.9


def test_connect_four_win_in_one():
    game = position("openspiel:connect_four", [0, 6, 1, 6, 2, 6])  # x: three in the bottom row
    action, _ = decide(game, 300)
    assert action == 3


def test_pig_rolls_on_when_holding_hands_the_opponent_the_game():
    """Player 0 holds at 9 of 10; player 1 has a turn total of 6 and no score. Holding
    gives player 0 a roll that wins 5 times in 6; rolling on wins outright on a 4, 5 or 6."""
    # p0: roll, 5, roll, 4, stop (score 9); p1: roll, 6 (turn total 6)
    game = position("openspiel:pig", [0, 4, 0, 3, 1, 0, 5], {"winscore": 10})
    assert game.acting_players() == [1] and game.legal_actions(1).tolist() == [True, True]
    rolls = [decide(game, 300, seed)[0] for seed in (1, 2, 3)]
    assert rolls == [0, 0, 0]  # 0 = roll, 1 = stop


@pytest.mark.parametrize("card, expected", [(0, 0), (2, 1)], ids=["jack folds", "king calls"])
def test_kuhn_poker_against_a_bet(card, expected):
    """Player 1 facing player 0's bet: with the jack calling always loses 2 (fold: -1),
    with the king it always wins 2. The search sees only its own card and plans over
    worlds where player 0 holds one of the other two."""
    other = 1
    game = position("openspiel:kuhn_poker", [other, card, 1])  # deal p0, deal p1, p0 bets
    assert game.acting_players() == [1]
    action, agent = decide(game, 300)
    assert action == expected  # 0 = pass (fold), 1 = bet (call)
    assert agent.last_value == pytest.approx(-1.0 if card == 0 else 2.0)


def test_kuhn_poker_search_does_not_depend_on_the_hidden_card():
    """The opponent's card is hidden: the same view (own card, the bet) from two deals
    gives the same move and value from the same seed."""
    one = decide(position("openspiel:kuhn_poker", [0, 1, 1]), 100, seed=5)
    two = decide(position("openspiel:kuhn_poker", [2, 1, 1]), 100, seed=5)
    assert one[0] == two[0] and one[1].last_value == two[1].last_value


def test_goofspiel_decoupled_uct_beats_random_and_a_seed_fixes_the_moves():
    name, options = "openspiel:goofspiel", {"num_cards": 4}
    config = make_config(name, options)

    def match(seed, games):
        game = make_game(name, config)
        outcomes, moves = [], []
        for g in range(games):
            game.reset(np.random.SeedSequence([seed, g]))
            searcher = g % 2
            agent = make_agent("mcts_generic", {}, Budget(iterations=150), config)
            agent.begin_game(searcher, np.random.SeedSequence([seed, g, 0]))
            rng = np.random.default_rng([seed, g])
            while not game.done:
                acting = game.acting_players()
                if not acting:  # the next point card, drawn by the game's seeded generator
                    game.step([0, 0])
                    continue
                assert sorted(acting) == [0, 1]  # both bid at every step
                joint = [int(rng.choice(np.flatnonzero(game.legal_actions(p)))) for p in range(2)]
                joint[searcher] = agent.act(game.observation(searcher))
                assert agent.last_iterations == 150
                moves.append(joint[searcher])
                game.step(joint)
            outcomes.append(game.outcomes()[searcher])
        return outcomes, moves

    outcomes, moves = match(7, 12)
    wins, losses = outcomes.count("win"), outcomes.count("loss")
    # 40 games at 150 iterations: 70% won, 20% tied, 10% lost (random against random: 40/20/40)
    assert wins >= 6 and wins >= 3 * losses, outcomes
    again = match(7, 2)[1]
    assert again == moves[:len(again)]
