"""Bird game agents: chance nodes, information sets, strength over fixed seeds, the trained policy."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.birds.features import MODEL_GREEDY, MODEL_RANDOM
from agents.birds.mcts import (
    TREE_WIDTH, determinize, outcome_map, pool_outcome_counts, unseen_class_counts,
    unseen_outcome_counts, unseen_pool,
)
from agents.birds.policy import TrainConfig, evaluate_policy, train_policy
from agents.registry import make_agent, make_agent_config
from agents.search import CHANCE, DECISION, ROOT_INDEX, new_tree, sample_outcome
from games.rng import make_rng
from games.birds import Birds, BirdsConfig
from games.birds import kernels as K


def mid_game(seed=4, turns=7) -> Birds:
    """A game after ``turns`` scripted turns with face-up and blind draws on both sides."""
    game = Birds(BirdsConfig())
    game.reset(seed)
    script = [K.DRAW_TRAY + 1, K.DRAW_DECK, K.GAIN_FOOD, K.DRAW_TRAY, K.PLAY, K.DRAW_DECK, K.DRAW_DECK]
    for a in script[:turns]:
        p = game.acting_players()[0]
        if not game.legal_actions(p)[a]:
            a = K.GAIN_FOOD
        joint = [0, 0]
        joint[p] = a
        game.step(joint)
    return game


def unseen_by(game: Birds, player: int) -> list[int]:
    """Cards ``player`` has not seen, computed from the true state in Python."""
    s = game.state
    q = 1 - player
    hidden = list(s.deck[s.meta[K.M_DECK_POS]:])
    hidden += [int(c) for c, pub in zip(s.hand[q, : s.player[q, K.P_HAND]],
                                        s.hand_public[q, : s.player[q, K.P_HAND]]) if not pub]
    return sorted(int(c) for c in hidden)


def mcts(params=None, iterations=1000, seed=0, seat=0):
    agent = make_agent("birds_mcts", params or {}, Budget(iterations=iterations), BirdsConfig())
    agent.begin_game(seat, np.random.SeedSequence(seed))
    return agent


def test_nth_legal_action_agrees_with_the_legal_mask():
    rng = np.random.default_rng(0)
    game = Birds(BirdsConfig())
    for seed in range(30):
        game.reset(seed)
        while not game.done:
            p = game.acting_players()[0]
            mask = game.legal_actions(p)
            legal = list(np.flatnonzero(mask))
            assert K.nth_legal_action(game.state, p, -1) == len(legal)
            assert [K.nth_legal_action(game.state, p, k) for k in range(len(legal))] == legal
            assert K.nth_legal_action(game.state, 1 - p, -1) == 0
            joint = [0, 0]
            joint[p] = int(rng.choice(legal))
            game.step(joint)


def test_unseen_pool_and_chance_counts_are_the_unseen_card_frequencies():
    game = mid_game()
    p = game.acting_players()[0]
    obs = game.observation(p)
    pool = np.zeros(obs.cards.shape[0], dtype=np.int16)
    n = unseen_pool(obs, p, pool)
    assert sorted(pool[:n].tolist()) == unseen_by(game, p)
    sim = K.empty_state(obs.cards)
    counts = np.zeros(K.N_CLASSES, dtype=np.int64)
    expected = np.bincount([K.card_class(obs.cards, c) for c in unseen_by(game, p)],
                           minlength=K.N_CLASSES)
    rng = make_rng(3)
    for _ in range(5):
        determinize(sim, obs, p, pool, n, rng)
        assert (sim.hand[p] == game.state.hand[p]).all()
        assert unseen_class_counts(sim, p, counts) == n
        assert (counts == expected).all()


@pytest.mark.parametrize("grouping", ["class", "coarse"])
def test_incremental_outcome_counts_match_a_recount_along_played_lines(grouping):
    """The search's chance counts (the root's unseen counts less the root-unseen cards
    seen since) equal a recount of the rest of the deck and the opponent's hidden
    cards, grouped or not, at every turn of lines played from determinizations."""
    game = mid_game()
    p = game.acting_players()[0]
    obs = game.observation(p)
    n_cards = obs.cards.shape[0]
    pool = np.zeros(n_cards, dtype=np.int16)
    n = unseen_pool(obs, p, pool)
    grouped = grouping == "coarse"
    outcome_of = outcome_map(grouping)
    in_pool = np.zeros(n_cards, dtype=np.bool_)
    pool_counts = np.zeros(K.N_CLASSES, dtype=np.int64)
    pool_outcome_counts(obs.cards, pool, n, grouped, outcome_of, in_pool, pool_counts)
    sim = K.empty_state(obs.cards)
    fast = np.zeros(K.N_CLASSES, dtype=np.int64)
    recount = np.zeros(K.N_CLASSES, dtype=np.int64)
    rng = make_rng(5)
    choice = np.random.default_rng(5)
    checked = 0
    for _ in range(30):
        determinize(sim, obs, p, pool, n, rng)
        while True:
            total = unseen_outcome_counts(sim, p, grouped, outcome_of, in_pool, pool_counts, n, fast)
            assert unseen_class_counts(sim, p, recount) == total
            expected = np.bincount(outcome_of[np.flatnonzero(recount).repeat(recount[recount > 0])],
                                   minlength=K.N_CLASSES) if grouped else recount
            assert (fast == expected).all()
            checked += 1
            if K.is_terminal(sim):
                break
            mover = sim.meta[K.M_TO_MOVE]
            legal = np.flatnonzero(K.legal_actions(sim, mover))
            K.step(sim, int(choice.choice(legal)))
    assert checked > 30 * 10


def test_sample_outcome_follows_the_weights():
    weights = np.array([0, 3, 1, 0, 6], dtype=np.int64)
    rng = make_rng(0)
    draws = np.array([sample_outcome(weights, 10, rng) for _ in range(20000)])
    freq = np.bincount(draws, minlength=5) / draws.size
    assert freq[0] == 0 and freq[3] == 0
    assert np.allclose(freq, weights / 10, atol=0.015)


@pytest.mark.parametrize("selection", ["sample", "proportional"])
def test_chance_node_outcomes_follow_unseen_card_probabilities(selection):
    game = mid_game()
    p = game.acting_players()[0]
    agent = mcts({"exploration": 5.0, "chance_selection": selection}, iterations=20000, seat=p)
    agent.act(game.observation(p))
    tree = agent.tree
    chance = tree.children[ROOT_INDEX, K.DRAW_DECK]
    assert chance > 0 and tree.node_kind[chance] == CHANCE
    hidden = unseen_by(game, p)
    prob = np.bincount([K.card_class(game.state.cards, c) for c in hidden],
                       minlength=K.N_CLASSES) / len(hidden)
    visits = np.zeros(K.N_CLASSES)
    for k in range(K.N_CLASSES):
        child = tree.children[chance, k]
        if child >= 0:
            visits[k] = tree.node_visits[child]
            assert tree.node_kind[child] == DECISION
    assert (visits[prob == 0] == 0).all()
    n = visits.sum()  # every visit of the chance node but the expanding one
    assert n == tree.node_visits[chance] - 1
    freq = visits / n
    assert n > 1000
    tolerance = 4 * np.sqrt(prob * (1 - prob) / n) + 0.005
    assert (np.abs(freq - prob) <= tolerance).all(), (freq, prob)


def swap_hidden_cards(game: Birds, p: int, seed: int) -> Birds:
    """A copy of ``game`` in which the cards ``p`` has not seen are rearranged
    (deck order and the opponent's blind cards): same information set for ``p``."""
    other = game.copy()
    s = other.state
    q = 1 - p
    slots = [("deck", i) for i in range(s.meta[K.M_DECK_POS], s.deck.shape[0])]
    slots += [("hand", i) for i in range(s.player[q, K.P_HAND]) if not s.hand_public[q, i]]
    cards = [int(s.deck[i]) if kind == "deck" else int(s.hand[q, i]) for kind, i in slots]
    perm = np.random.default_rng(seed).permutation(len(cards))
    for (kind, i), j in zip(slots, perm):
        if kind == "deck":
            s.deck[i] = cards[j]
        else:
            s.hand[q, i] = cards[j]
    return other


@pytest.mark.parametrize("params", [{}, {"chance_nodes": False}, {"chance_grouping": "none"},
                                    {"chance_grouping": "coarse", "chance_selection": "pw_ucb"},
                                    {"closed_loop": True, "backup": "margin", "widening_alpha": 0.5}],
                         ids=["class", "single", "none", "coarse-pw_ucb", "closed-margin-widening"])
def test_information_set_search_ignores_hidden_cards(params):
    game = mid_game()
    p = game.acting_players()[0]
    twin = swap_hidden_cards(game, p, seed=1)
    q = 1 - p
    assert not np.array_equal(twin.state.deck, game.state.deck)
    assert not np.array_equal(twin.state.hand[q], game.state.hand[q])
    assert K.observe(twin.state, p).deck.tolist() == game.observation(p).deck.tolist()
    trees = []
    actions = []
    for state in (game.state, twin.state, game.observation(p), twin.observation(p)):
        agent = mcts(params, iterations=3000, seed=7, seat=p)
        actions.append(agent.act(state))
        n = agent.tree.num_nodes[0]
        trees.append((agent.tree.node_visits[:n].copy(), agent.tree.node_value_sum[:n].copy(),
                      agent.tree.children[:n].copy()))
    assert len(set(actions)) == 1
    for other in trees[1:]:
        for a, b in zip(trees[0], other):
            assert np.array_equal(a, b)


def test_single_determinization_has_no_chance_nodes():
    game = mid_game()
    p = game.acting_players()[0]
    agent = mcts({"chance_nodes": False}, iterations=2000, seat=p)
    agent.act(game.observation(p))
    n = agent.tree.num_nodes[0]
    assert (agent.tree.node_kind[:n] == DECISION).all()
    agent = mcts({}, iterations=2000, seat=p)
    agent.act(game.observation(p))
    assert (agent.tree.node_kind[: agent.tree.num_nodes[0]] == CHANCE).any()
    assert agent.tree.children.shape[1] == TREE_WIDTH


def play(a0, a1, seed: int, iterations=1000):
    game = Birds(BirdsConfig())
    agents = [make_agent(name, params, Budget(iterations=iterations), game.config)
              for name, params in (a0, a1)]
    game.reset(seed)
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence([seed, seat]))
    moves = []
    while not game.done:
        p = game.acting_players()[0]
        joint = [0, 0]
        joint[p] = agents[p].act(game.observation(p))
        moves.append(joint[p])
        game.step(joint)
    assert game.invalid_actions.sum() == 0
    return game.returns(), game.scores(), moves


def match(a, b, games, iterations=1000):
    """Mean reward and score difference of ``a`` against ``b``, seats alternating."""
    rewards, diffs = [], []
    for g in range(games):
        seat = g % 2
        pair = (a, b) if seat == 0 else (b, a)
        r, scores, _ = play(*pair, seed=500 + g, iterations=iterations)
        rewards.append(r[seat])
        diffs.append(scores[seat] - scores[1 - seat])
    return float(np.mean(rewards)), float(np.mean(diffs))


def test_mcts_beats_random_and_greedy_over_fixed_seeds():
    reward, diff = match(("birds_mcts", {}), ("random", {}), 20)
    assert reward >= 0.9 and diff > 4
    reward, _ = match(("birds_mcts", {}), ("birds_greedy", {}), 40)
    assert reward >= 0.6  # MCTS maximises the chance to win, not the margin


def test_determinism():
    a = play(("birds_mcts", {}), ("birds_mcts", {"chance_nodes": False}), seed=3, iterations=300)
    b = play(("birds_mcts", {}), ("birds_mcts", {"chance_nodes": False}), seed=3, iterations=300)
    assert a[2] == b[2] and a[1] == b[1]


def test_trained_policy_beats_random(tmp_path):
    cards = BirdsConfig().cards()
    weights, curve = train_policy(TrainConfig(iterations=80, games_per_iteration=200, eval_every=40,
                                              eval_games=200, seed=1), cards)
    assert len(curve) == 80 and "eval_win_rate" in curve[-1]
    counts, diff = evaluate_policy(cards, 3, weights, MODEL_RANDOM, 600, make_rng(5))
    assert counts[0] / 600 >= 0.8 and diff > 4
    uniform, _ = evaluate_policy(cards, 3, np.zeros_like(weights), MODEL_RANDOM, 600, make_rng(5))
    assert counts[0] > uniform[0] + 100
    # the player and the MCTS opponent model load it as learned state
    np.savez(tmp_path / "w.npz", weights=weights)
    with np.load(tmp_path / "w.npz") as npz:
        arrays = dict(npz)
    player = make_agent("birds_policy", {}, Budget(iterations=1), BirdsConfig())
    player.load_learned_state(arrays)
    assert np.array_equal(player.learned_state()["weights"], weights)
    searcher = make_agent("birds_mcts", {"opponent": "policy"}, Budget(iterations=200), BirdsConfig())
    assert searcher.learned_state() is None  # the shipped policy until learned state comes
    searcher.load_learned_state(arrays)
    assert np.array_equal(searcher.learned_state()["weights"], weights)
    searcher.begin_game(0, np.random.SeedSequence(0))
    game = mid_game()
    assert game.legal_actions(game.acting_players()[0])[searcher.act(game.observation(game.acting_players()[0]))]
    with pytest.raises(ValueError, match="'weights' must be 16 finite numbers"):
        player.load_learned_state({"weights": np.zeros(3)})
    counts, _ = evaluate_policy(cards, 3, weights, MODEL_GREEDY, 200, make_rng(5))
    assert counts.sum() == 200


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match=r"^params\.chance_selection: "):
        make_agent_config("birds_mcts", {"chance_selection": "x"})
    with pytest.raises(ValueError, match=r"^params\.opponent: "):
        make_agent_config("birds_mcts", {"opponent": "oracle"})
    with pytest.raises(ValueError, match=r"^params\.exploration: "):
        make_agent_config("birds_mcts", {"exploration": -1})
    with pytest.raises(ValueError, match=r"^opponent: "):
        TrainConfig(opponent="x")
    assert new_tree(2, TREE_WIDTH).children.shape == (2, TREE_WIDTH)


def test_time_budget_and_init():
    game = mid_game()
    p = game.acting_players()[0]
    agent = make_agent("birds_mcts", {}, Budget(ms=30), BirdsConfig())
    agent.begin_game(p, np.random.SeedSequence(0))
    action = agent.act(game.observation(p))
    assert game.legal_actions(p)[action] and agent.total_iterations > 10
    state = K.init(BirdsConfig().cards(), 3, make_rng(1))
    game.reset(np.random.SeedSequence(1))
    assert K.to_move(state) == 0 and state.player[0, K.P_HAND] == 2 and state.meta[K.M_DECK_POS] == 7
