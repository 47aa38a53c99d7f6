"""The true-state tree (issue 25's upper bound): the bird MCTS with ``true_state = true``
searches the one state the study shows it, the true one, and the play loop shows it only
to an agent that asks for it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent, make_agent_config
from cluster.run.play import build_agents, observation_for, play_game
from games.birds import Birds, BirdsConfig
from games.birds import kernels as K

ROOT = Path(__file__).resolve().parents[2]


def mid_game():
    from test_birds_agents import mid_game as scripted

    return scripted()


def agent_for(params, game, iterations=300, seed=0):
    p = game.acting_players()[0]
    agent = make_agent("birds_mcts", params, Budget(iterations=iterations), BirdsConfig())
    agent.begin_game(p, np.random.SeedSequence(seed))
    return agent, p


def opponent_hidden(state, p):
    q = 1 - p
    return [int(state.hand[q, i]) for i in range(state.player[q, K.P_HAND])
            if state.hand_public[q, i] == 0]


def test_the_true_state_tree_searches_the_true_hand_and_deck():
    """Its one determinization is the true state (the opponent's hidden cards and the
    deck order as dealt); the single-determinization baseline given the same true state
    overwrites them with a sample of the unseen cards."""
    game = mid_game()
    truth = game.true_state_view()
    agent, p = agent_for({"chance_nodes": False, "true_state": True}, game)
    action = agent.act(observation_for(game, p, agent))
    assert game.legal_actions(p)[action]
    assert opponent_hidden(truth, p), "the scripted game should leave the opponent a hidden card"
    top = int(truth.meta[K.M_DECK_POS])
    assert np.array_equal(agent.det.deck[top:], truth.deck[top:])
    assert opponent_hidden(agent.det, p) == opponent_hidden(truth, p)
    sampled, _ = agent_for({"chance_nodes": False}, game)
    sampled.act(truth)                      # not a reader of the true state: it samples
    assert not np.array_equal(sampled.det.deck[top:], truth.deck[top:])


def test_the_true_state_tree_plays_on_what_it_is_shown():
    """Two true states that differ only in the hidden cards give the same observation but
    (generally) different true-state searches; the fair search cannot tell them apart."""
    game = mid_game()
    p = game.acting_players()[0]
    other = game.copy()
    s = other.state
    top = int(s.meta[K.M_DECK_POS])
    s.deck[top:] = s.deck[top:][::-1].copy()      # the same unseen cards, another order
    assert np.array_equal(game.observation(p).deck, other.observation(p).deck)

    def visits(params, g):
        agent, _ = agent_for(params, g, iterations=400)
        agent.act(observation_for(g, p, agent))
        return agent.tree.children[0].copy(), agent.tree.node_visits.copy()

    fair = {"chance_nodes": False}
    a, b = visits(fair, game), visits(fair, other)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    upper = {"chance_nodes": False, "true_state": True}
    a, b = visits(upper, game), visits(upper, other)
    assert not np.array_equal(a[1], b[1])


def test_the_play_loop_shows_the_true_state_only_to_an_agent_that_reads_it():
    game = mid_game()
    p = game.acting_players()[0]
    fair, _ = agent_for({"chance_nodes": False}, game)
    upper, _ = agent_for({"chance_nodes": False, "true_state": True}, game)
    assert (observation_for(game, p, fair).deck == K.HIDDEN).any()
    shown = observation_for(game, p, upper)
    assert not (shown.deck == K.HIDDEN).any() and np.array_equal(shown.deck, game.state.deck)
    shown.deck[:] = 0                               # a copy: the game is untouched
    assert not np.array_equal(shown.deck, game.state.deck)
    with pytest.raises(ValueError, match="^true_state: given an observation with hidden cards"):
        upper.act(game.observation(p))

    from games.registry import make_game

    other = make_game("scotland_yard")  # a game that offers no true-state view
    other.reset(np.random.SeedSequence(5))
    with pytest.raises(ValueError, match="has no true-state view"):
        observation_for(other, 0, upper)
    assert observation_for(other, 0, fair).__class__ is other.observation(0).__class__


def test_true_state_needs_single_determinization():
    with pytest.raises(ValueError, match=r"^params\.true_state: the true-state tree has no chance nodes"):
        make_agent_config("birds_mcts", {"true_state": True})
    with pytest.raises(ValueError, match=r"^params\.true_state: must be true or false"):
        make_agent_config("birds_mcts", {"true_state": 1, "chance_nodes": False})
    assert make_agent_config("birds_mcts", {}).true_state is False


def test_the_upper_bound_spec_plays_through_the_play_loop():
    from cluster.spec.plan import plan_study
    from cluster.spec.seed_populations import load_populations
    from jobs.spec import load_spec

    spec = load_spec(ROOT / "jobs" / "birds" / "20_true_state_vs_single_det.toml",
                     overrides=["budget.iterations=50", "design.seeds=1"])
    agents = build_agents(spec)
    assert [a.reads_true_state for a in agents] == [True, False]
    for task in [t for series in plan_study(spec) for t in series.games]:
        rows, _ = play_game(spec, task, agents, load_populations(spec))
        assert all(r["error"] is None for r in rows), rows[0]["error"]
        assert rows[0]["length"] == 20
