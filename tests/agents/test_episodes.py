"""The shared game loop (agents/episodes.py): the same games as the hand-written loops it
replaced, only the acting seats asked, the stops and the hooks where they are documented."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Agent, Budget
from agents.episodes import (
    agent_player, agent_players, begin_game, end_game, play, random_player, random_players,
)
from agents.registry import make_agent
from games.registry import make_game


def _hand_loop(game, rng):
    """The loop the benches and probes wrote out before (pettingzoo, game_step_cpu)."""
    joints = []
    while not game.done:
        joint = [0] * game.num_players
        for p in game.acting_players():
            joint[p] = int(rng.choice(np.flatnonzero(game.legal_actions(p))))
        joints.append(joint)
        game.step(joint)
    return joints


@pytest.mark.parametrize("name", ["birds", "scotland_yard", "pommerman"])
def test_random_play_is_the_hand_written_loop_move_for_move(name):
    reference = make_game(name)
    reference.reset(3)
    expected = _hand_loop(reference, np.random.default_rng(3))
    game = make_game(name)
    game.reset(3)
    joints = []
    steps = play(game, random_players(np.random.default_rng(3), game.num_players),
                 after_step=lambda game, joint: joints.append(joint))
    assert joints == expected and steps == len(expected) == game.step_count
    assert game.done and game.fingerprint() == reference.fingerprint()


def test_only_the_acting_seats_are_asked_and_the_others_pass_zero():
    game = make_game("scotland_yard")
    game.reset(0)
    asked = []
    rng = np.random.default_rng(0)

    def choose(game, seat):
        asked.append((game.step_count, seat, list(game.acting_players())))
        return random_player(rng)(game, seat)

    joints = []
    play(game, [choose, choose], max_steps=12, after_step=lambda game, joint: joints.append(joint))
    assert [step for step, _, _ in asked] == list(range(12))  # one seat a step (turn-based)
    assert all([seat] == acting for _, seat, acting in asked)
    for (_, seat, _), joint in zip(asked, joints):
        assert joint[1 - seat] == 0


def test_stops_and_hooks():
    game = make_game("pommerman")
    game.reset(1)
    seen, played = [], []
    players = random_players(np.random.default_rng(1), 4)
    assert play(game, players, max_steps=5, before_step=lambda game: seen.append(game.step_count),
                after_step=lambda game, joint: played.append((game.step_count, joint))) == 5
    assert seen == [0, 1, 2, 3, 4]                       # each position before its step
    assert [step for step, _ in played] == [1, 2, 3, 4, 5]  # each joint after its step
    assert len({id(joint) for _, joint in played}) == 5   # a fresh list per step
    assert play(game, players, until=lambda game: game.step_count >= 8) == 3
    assert game.step_count == 8 and not game.done
    assert play(game, players) > 0 and game.done
    assert play(game, players) == 0                       # a finished game plays no step


def test_players_must_match_the_seats():
    game = make_game("birds")
    game.reset(0)
    with pytest.raises(ValueError, match="players: one per seat, expected 2, got 1"):
        play(game, [random_player(np.random.default_rng(0))])


class _Recorder(Agent):
    """Plays the first legal action and records what it was shown and how the game ended."""

    name = "episodes-recorder"

    def __init__(self, reads_true_state=False):
        super().__init__(None, Budget(iterations=1), None)
        self.reads_true_state = reads_true_state
        self.views, self.ended = [], None

    def decide(self, observation):
        self.views.append(observation)
        return 0, 1

    def end_game(self, observation, returns):
        self.ended = (observation, returns)


def test_agents_see_their_view_and_are_ended_with_float_returns():
    game = make_game("birds")
    game.reset(5)
    observer, cheat = _Recorder(), _Recorder(reads_true_state=True)
    truth_seen = []
    game_true_view = game.true_state_view

    def true_view():
        truth_seen.append(game.step_count)
        return game_true_view()

    game.true_state_view = true_view
    begin_game([observer, cheat], [np.random.SeedSequence(1), np.random.SeedSequence(2)])
    assert (observer.seat, cheat.seat) == (0, 1)
    play(game, agent_players([observer, cheat]))
    assert observer.decisions == len(observer.views) > 0 and cheat.decisions == len(truth_seen) > 0
    end_game(game, [observer, cheat])
    for agent in (observer, cheat):
        observation, returns = agent.ended
        assert returns.dtype == np.float64 and list(returns) == list(game.returns())
    assert observer.ended[0].__class__ is game.observation(0).__class__


def test_agent_player_is_act_on_the_seats_observation():
    game = make_game("birds")
    game.reset(2)
    agent = make_agent("random", {}, Budget(iterations=1), game.config)
    twin = make_agent("random", {}, Budget(iterations=1), game.config)
    agent.begin_game(0, np.random.SeedSequence(0))
    twin.begin_game(0, np.random.SeedSequence(0))
    action = agent_player(agent)(game, 0)
    assert action == twin.act(game.observation(0)) and game.legal_actions(0)[action]
    assert agent.decisions == 1  # counted, as act counts
