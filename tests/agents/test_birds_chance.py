"""Issue 25's search options of the bird MCTS: the seed's probability-weighted UCB at a
chance node, the point-differential backup, outcome grouping at chance nodes, and today's
options under their names replaying the games recorded before the options existed."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recorded_games import records_script

from cluster.replay.records import load_record, verify

DATA = Path(__file__).resolve().parents[1] / "data" / "birds_main"


RECORDS = records_script("birds_main")


@pytest.mark.parametrize("name", sorted(RECORDS.SERIES))
def test_todays_options_replay_games_recorded_before_the_new_options(name):
    """Games of main at 69cbfb1: with today's options under their names (``opponent =
    "random"`` now that the policy is the default, ``chance_selection = "proportional"``
    for what was ``pw_ucb``) the agents make the recorded decisions, state for state."""
    recorded = [load_record(p) for p in sorted(DATA.glob(f"{name}-*.npz"))]
    assert len(recorded) == 2
    for want, got in zip(recorded, RECORDS.play_series(name, "now")):
        assert verify(want) == want.length == 20
        assert np.array_equal(got.actions, want.actions)
        assert np.array_equal(got.fingerprints, want.fingerprints)


# --- the seed's probability-weighted UCB ---------------------------------------------------
def chance_node_tree(q1: float):
    """A chance node (the root) with outcome weights 5 / 3 / 2 / 0 (p = .5, .3, .2, 0) and
    children: outcome 0 with 6 visits and mean .5, outcome 1 with 3 visits and mean ``q1``,
    outcome 2 with 1 visit and mean 0; the node has 10 visits."""
    from agents.search import CHANCE, ROOT_INDEX, expand, new_tree

    tree = new_tree(8, 4)
    tree.node_kind[ROOT_INDEX] = CHANCE
    tree.node_visits[ROOT_INDEX] = 10
    for k, (n, mean) in enumerate([(6, 0.5), (3, q1), (1, 0.0)]):
        child = expand(tree, ROOT_INDEX, k)
        tree.node_visits[child] = n
        tree.node_value_sum[child] = n * mean
    return tree, np.array([5, 3, 2, 0], dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_pw_ucb_selects_the_outcome_maximising_probability_times_ucb(seed):
    """By hand, c = 1, ln 10 = 2.3026:
    q1 = .8: .5 (.5 + sqrt(2.3026 / 6)) = .5597, .3 (.8 + sqrt(2.3026 / 3)) = .5028,
             .2 (0 + sqrt(2.3026)) = .3035: outcome 0;
    q1 = 1.0: outcome 1 scores .3 (1 + .8761) = .5628 > .5597: outcome 1.
    The value-free proportional rule picks outcome 2 either way (its visit share .1 lags
    furthest behind its probability .2), and an untried outcome with cards comes first."""
    from agents.search import ROOT_INDEX, select_outcome_proportional, select_outcome_pw_ucb
    from games.rng import make_rng

    rng = make_rng(seed)
    tree, weights = chance_node_tree(0.8)
    assert select_outcome_pw_ucb(tree, ROOT_INDEX, weights, 10, 1.0, rng) == 0
    assert select_outcome_proportional(tree, ROOT_INDEX, weights, 10, 1.0, rng) == 2
    tree, weights = chance_node_tree(1.0)
    assert select_outcome_pw_ucb(tree, ROOT_INDEX, weights, 10, 1.0, rng) == 1
    assert select_outcome_proportional(tree, ROOT_INDEX, weights, 10, 1.0, rng) == 2
    assert select_outcome_pw_ucb(tree, ROOT_INDEX, weights, 10, 0.0, rng) == 1  # .3 > .25 > 0
    untried = np.array([5, 3, 2, 1], dtype=np.int64)  # outcome 3 has cards but no child
    assert select_outcome_pw_ucb(tree, ROOT_INDEX, untried, 11, 1.0, rng) == 3
    assert select_outcome_pw_ucb(tree, ROOT_INDEX, np.zeros(4, dtype=np.int64), 0, 1.0, rng) == -1


# --- agents -----------------------------------------------------------------------------
def mid_game():
    from test_birds_agents import mid_game as scripted

    return scripted()


def searched(params, iterations=600, game=None, seed=0):
    from agents.api import Budget
    from agents.registry import make_agent
    from games.birds import BirdsConfig

    game = game or mid_game()
    p = game.acting_players()[0]
    agent = make_agent("birds_mcts", params, Budget(iterations=iterations), BirdsConfig())
    agent.begin_game(p, np.random.SeedSequence(seed))
    action = agent.act(game.observation(p))
    assert game.legal_actions(p)[action]
    return agent


def test_none_grouping_draws_a_new_determinization_each_iteration():
    from agents.birds.mcts import STAT_CHANCE_VISITS, STAT_DETERMINIZATIONS
    from agents.search import CHANCE

    none = searched({"chance_grouping": "none"})
    n = none.tree.num_nodes[0]
    assert none.stats[STAT_DETERMINIZATIONS] == 600 and none.stats[STAT_CHANCE_VISITS] == 0
    assert not (none.tree.node_kind[:n] == CHANCE).any()          # no split
    single = searched({"chance_nodes": False})
    assert single.stats[STAT_DETERMINIZATIONS] == 1              # one for the whole search
    split = searched({})
    assert split.stats[STAT_DETERMINIZATIONS] == 600 and split.stats[STAT_CHANCE_VISITS] > 0
    assert (split.tree.node_kind[: split.tree.num_nodes[0]] == CHANCE).any()


def test_coarse_grouping_branches_on_eight_wider_outcomes():
    from agents.birds.mcts import outcome_map
    from agents.search import CHANCE, ROOT_INDEX
    from games.birds import kernels as K

    coarse = outcome_map("coarse")
    assert sorted(set(coarse.tolist())) == list(range(8))
    assert coarse[9 * K.N_COSTS + 3] == 7 and coarse[2 * K.N_COSTS + 1] == 0 and coarse[3 * K.N_COSTS + 2] == 3
    assert (outcome_map("class") == np.arange(K.N_CLASSES)).all()
    agent = searched({"chance_grouping": "coarse"}, iterations=3000)
    tree = agent.tree
    chance = tree.children[ROOT_INDEX, K.DRAW_DECK]
    assert chance > 0 and tree.node_kind[chance] == CHANCE
    outcomes = [k for k in range(tree.children.shape[1]) if tree.children[chance, k] >= 0]
    assert 3 <= len(outcomes) and max(outcomes) < 8


def test_progressive_widening_caps_the_outcomes_of_a_chance_node():
    from agents.search import CHANCE

    agent = searched({"widening_alpha": 0.3}, iterations=3000)
    tree = agent.tree
    n = tree.num_nodes[0]
    chance = np.flatnonzero(tree.node_kind[:n] == CHANCE)
    assert len(chance)
    for node in chance:
        children = int((tree.children[node] >= 0).sum())
        assert children <= max(1, np.ceil(max(tree.node_visits[node], 1) ** 0.3)), node
    unlimited = searched({}, iterations=3000).tree
    root_draw = unlimited.children[0, 15]
    assert (unlimited.children[root_draw] >= 0).sum() > (tree.children[tree.children[0, 15]] >= 0).sum()


# --- the point-differential backup -------------------------------------------------------
def last_turn_game():
    """A game played by random legal moves up to its last turn (player 1 to move)."""
    from games.birds import Birds, BirdsConfig
    from games.birds import kernels as K

    game = Birds(BirdsConfig())
    game.reset(21)
    rng = np.random.default_rng(4)
    while game.step_count < K.TOTAL_TURNS - 1:
        p = game.acting_players()[0]
        joint = [0, 0]
        joint[p] = int(rng.choice(np.flatnonzero(game.legal_actions(p))))
        game.step(joint)
    return game


@pytest.mark.parametrize("backup,scale", [("margin", 20.0), ("margin", 3.0), ("result", 20.0)])
def test_point_differential_backup_on_a_scripted_end_state(backup, scale):
    """On the last turn every move ends the game: each root child's mean is exactly the
    backed-up value of its end state, (1 + clip(d / scale, -1, 1)) / 2 for the
    differential d (or the result 1 / 0.5 / 0)."""
    from games.birds import kernels as K

    game = last_turn_game()
    p = game.acting_players()[0]
    s = game.state
    base = int(s.player[p, K.P_SCORE] - s.player[1 - p, K.P_SCORE])
    agent = searched({"backup": backup, "margin_scale": scale}, iterations=300, game=game)
    tree = agent.tree
    legal = np.flatnonzero(game.legal_actions(p))

    def value(d):
        if backup == "result":
            return 1.0 if d > 0 else 0.5 if d == 0 else 0.0
        return 0.5 * (1.0 + min(1.0, max(-1.0, d / scale)))

    checked = 0
    for a in legal:
        if a >= K.DRAW_TRAY:  # a draw or food: the board does not change
            d = base
        else:
            d = base + int(s.cards[s.hand[p, a], K.C_POINTS])
        child = tree.children[0, a]
        assert child > 0 and tree.node_visits[child] > 0
        assert tree.node_value_sum[child] / tree.node_visits[child] == pytest.approx(value(d), abs=1e-12)
        checked += 1
    assert checked == len(legal) >= 2


def test_new_options_check_their_fields():
    from agents.registry import make_agent_config

    for field, bad in (("chance_grouping", "cards"), ("backup", "points"), ("margin_scale", 0),
                       ("widening_alpha", 1.5), ("chance_selection", "ucb")):
        with pytest.raises(ValueError, match=rf"^params\.{field}: "):
            make_agent_config("birds_mcts", {field: bad})
    config = make_agent_config("birds_mcts", {})
    assert (config.opponent, config.chance_grouping, config.chance_selection, config.backup) == \
        ("policy", "class", "sample", "result")


# --- closed loop: the opponent's move and the refill after it as chance nodes --------------
def test_closed_loop_makes_the_opponents_move_a_chance_node_over_what_the_searcher_sees():
    from agents.birds.mcts import OPP_DECK, OPP_FOOD, OPP_TRAY
    from agents.search import CHANCE, DECISION, ROOT_INDEX
    from games.birds import kernels as K

    game = mid_game()
    p = game.acting_players()[0]
    agent = searched({"closed_loop": True, "opponent": "random"}, iterations=4000, game=game)
    tree = agent.tree
    opp = tree.children[ROOT_INDEX, K.GAIN_FOOD]       # food ends the turn: the opponent moves
    assert opp > 0 and tree.node_kind[opp] == CHANCE
    outcomes = [k for k in range(tree.children.shape[1]) if tree.children[opp, k] >= 0]
    assert OPP_FOOD in outcomes and OPP_DECK in outcomes
    assert all(k < OPP_TRAY or k <= OPP_FOOD for k in outcomes)
    # a bird the opponent may play is one of its hidden or public cards' classes
    q = 1 - p
    hidden = [int(c) for c in game.state.deck[game.state.meta[K.M_DECK_POS]:]]
    hidden += [int(c) for c in game.state.hand[q, : game.state.player[q, K.P_HAND]]]
    possible = {int(K.card_class(game.state.cards, c)) for c in hidden}
    assert {k for k in outcomes if k < OPP_TRAY} <= possible
    # after the opponent's food the searcher moves again: a decision node
    assert tree.node_kind[tree.children[opp, OPP_FOOD]] == DECISION
    # after a tray take by the opponent comes the refill: a chance node over card classes
    taken = [k for k in outcomes if OPP_TRAY <= k < OPP_DECK]
    assert taken and all(tree.node_kind[tree.children[opp, k]] == CHANCE for k in taken)
    open_loop = searched({"opponent": "random"}, iterations=4000, game=game).tree
    assert open_loop.node_kind[open_loop.children[ROOT_INDEX, K.GAIN_FOOD]] == DECISION
