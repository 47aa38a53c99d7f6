"""Rules of the bird card game: scripted scenarios on small hand-made decks."""
from __future__ import annotations

import numpy as np
import pytest

from games.birds import Birds, BirdsConfig
from games.birds import kernels as K
from games.registry import make_config, make_game


def scripted_game(seed=0, **options) -> Birds:
    game = Birds(BirdsConfig(**options))
    game.reset(seed)
    return game


def act(game: Birds, action: int) -> None:
    p = game.acting_players()[0]
    joint = [K.GAIN_FOOD] * 2
    joint[p] = action
    game.step(joint)


def set_cards(game: Birds, cards) -> None:
    """Give the state a known card table: card ``c`` is ``cards[c]`` = (points, cost)."""
    n = game.state.cards.shape[0]
    table = np.asarray(cards, dtype=np.int16)
    game.state.cards[:] = np.resize(table, (n, 2))


def test_generated_card_set_resembles_the_published_one():
    cards = BirdsConfig().cards()
    assert cards.shape == (180, 2)
    assert abs(cards[:, K.C_POINTS].mean() - 3.94) < 0.01
    assert cards[:, K.C_POINTS].min() == 0 and cards[:, K.C_POINTS].max() == 9
    assert set(np.unique(cards[:, K.C_COST])) <= {0, 1, 2, 3}
    assert np.array_equal(cards, BirdsConfig(card_seed=2026).cards())
    assert not np.array_equal(cards, BirdsConfig(card_seed=1).cards())


def test_deal():
    game = scripted_game(1)
    s = game.state
    assert list(s.player[:, K.P_HAND]) == [2, 2] and list(s.player[:, K.P_FOOD]) == [3, 3]
    assert s.meta[K.M_FEEDER] == 5 and s.meta[K.M_DECK_POS] == 7
    seen = list(s.hand[0, :2]) + list(s.hand[1, :2]) + list(s.tray)
    assert sorted(seen + list(s.deck[7:])) == list(range(180))
    assert game.acting_players() == [0]


def test_feeder_refills_when_empty():
    game = scripted_game()
    feeder = []
    for _ in range(6):
        act(game, K.GAIN_FOOD)
        feeder.append(int(game.state.meta[K.M_FEEDER]))
    # players alternate, both take from the one feeder: 4, 3, 2, 1, empty -> 5, 4
    assert feeder == [4, 3, 2, 1, 5, 4]
    assert list(game.state.player[:, K.P_FOOD]) == [6, 6]


def test_tray_refills_from_the_deck_after_the_turn():
    game = scripted_game(2)
    s = game.state
    top = int(s.deck[s.meta[K.M_DECK_POS]])
    taken = int(s.tray[1])
    act(game, K.DRAW_TRAY + 1)
    assert s.hand[0, 2] == taken and s.hand_public[0, 2] == 1
    assert s.tray[1] == top and s.meta[K.M_DECK_POS] == 8
    top = int(s.deck[8])
    act(game, K.DRAW_DECK)
    assert s.hand[1, 2] == top and s.hand_public[1, 2] == 0
    assert s.meta[K.M_DECK_POS] == 9  # nothing to refill


def test_costs_and_scores():
    game = scripted_game()
    set_cards(game, [(5, 3)])     # every card: 5 points, cost 3
    s = game.state
    s.player[0, K.P_FOOD] = 2
    assert not game.legal_actions(0)[K.PLAY + 0]
    s.player[0, K.P_FOOD] = 3
    assert game.legal_actions(0)[K.PLAY + 0] and game.legal_actions(0)[K.PLAY + 1]
    card = int(s.hand[0, 0]), int(s.hand[0, 1])
    act(game, K.PLAY + 0)
    assert s.player[0, K.P_FOOD] == 0 and s.player[0, K.P_SCORE] == 5
    assert s.board[0, 0] == card[0] and s.hand[0, 0] == card[1] and s.player[0, K.P_HAND] == 1
    assert not game.legal_actions(1)[K.PLAY + 0] or s.player[1, K.P_FOOD] >= 3
    # an illegal action (play without food) becomes GAIN_FOOD and is counted
    act(game, K.GAIN_FOOD)
    act(game, K.PLAY + 0)
    assert game.invalid_actions[0] == 1 and s.player[0, K.P_FOOD] == 1


def test_full_board_blocks_playing():
    game = scripted_game()
    set_cards(game, [(1, 0)])
    s = game.state
    for _ in range(5):
        act(game, K.PLAY + 0)     # player 0 plays a free bird
        act(game, K.DRAW_DECK)    # player 1 draws
        if game.state.player[0, K.P_HAND] == 0:
            act(game, K.DRAW_DECK)
            act(game, K.DRAW_DECK)
    assert s.player[0, K.P_BOARD] == 5 and s.player[0, K.P_SCORE] == 5
    if s.meta[K.M_TO_MOVE] != 0:
        act(game, K.DRAW_DECK)
    assert s.player[0, K.P_HAND] > 0
    legal = game.legal_actions(0)
    assert not legal[K.PLAY: K.DRAW_TRAY].any() and legal[K.GAIN_FOOD]


def test_game_ends_after_ten_turns_each():
    game = scripted_game(5)
    for turn in range(20):
        assert not game.done and game.acting_players() == [turn % 2]
        act(game, K.DRAW_DECK)
    assert game.done and game.acting_players() == [] and game.step_count == 20
    assert list(game.state.player[:, K.P_HAND]) == [12, 12]
    assert list(game.returns()) == [0.5, 0.5] and game.outcomes() == ["tie", "tie"]
    assert not game.legal_actions(0).any() and not game.legal_actions(1).any()


def test_returns_and_outcomes():
    game = scripted_game(5)
    for _ in range(20):
        act(game, K.GAIN_FOOD)
    game.state.player[1, K.P_SCORE] = 4
    assert list(game.returns()) == [0.0, 1.0] and game.outcomes() == ["loss", "win"]


def test_observation_hides_deck_order_and_opponent_hand():
    game = scripted_game(3)
    act(game, K.DRAW_TRAY)       # p0 takes a face-up card: p1 knows it
    act(game, K.DRAW_DECK)       # p1 draws blind
    obs = game.observation(0)
    assert (obs.deck == K.HIDDEN).all() and obs.meta[K.M_DECK_POS] == game.state.meta[K.M_DECK_POS]
    assert (obs.hand[1, :3] == K.HIDDEN).all() and obs.player[1, K.P_HAND] == 3
    assert np.array_equal(obs.hand[0], game.state.hand[0])
    obs1 = game.observation(1)
    assert list(obs1.hand[0, :3] == K.HIDDEN) == [True, True, False]
    assert obs1.hand[0, 2] == game.state.hand[0, 2]
    assert obs.meta[K.M_OBSERVER] == 0 and game.state.meta[K.M_OBSERVER] == K.FULL_STATE


def play_random(seed: int) -> tuple[list[int], str]:
    game = make_game("birds")
    game.reset(seed)
    rng = np.random.default_rng(seed)
    while not game.done:
        p = game.acting_players()[0]
        joint = [0, 0]
        joint[p] = int(rng.choice(np.flatnonzero(game.legal_actions(p))))
        game.step(joint)
    return game.scores(), game.to_json()


def test_determinism_and_json_round_trip():
    a, b = play_random(11), play_random(11)
    assert a == b
    game = Birds.from_json(a[1])
    assert game.done and game.scores() == a[0] and game.to_json() == a[1]
    assert play_random(12)[1] != a[1]


def test_cards_csv(tmp_path):
    good = tmp_path / "cards.csv"
    good.write_text("name,points,cost\n" + "".join(f"b{i},{i % 10},{i % 4}\n" for i in range(40)))
    config = make_config("birds", {"cards_csv": str(good)})
    assert config.cards().shape == (40, 2) and config.cards()[13].tolist() == [3, 1]
    game = make_game("birds", config)
    game.reset(0)
    assert game.state.deck.shape == (40,)

    bad = tmp_path / "bad.csv"
    bad.write_text("name,points,cost\n" + "".join(f"b{i},{i % 10},{i % 4}\n" for i in range(40))
                   .replace("b5,5,1", "b5,5,x"))
    with pytest.raises(ValueError, match=r"cards_csv: .*bad.csv: row 7, column 'cost': expected an int in 0..3, got 'x'"):
        make_config("birds", {"cards_csv": str(bad)})
    bad.write_text("name,points\nb,1\n")
    with pytest.raises(ValueError, match=r"row 1, column 'cost': missing"):
        BirdsConfig(cards_csv=str(bad))
    bad.write_text("points,cost\n" + "12,0\n" * 40)
    with pytest.raises(ValueError, match=r"row 2, column 'points': expected an int in 0..9, got 12"):
        BirdsConfig(cards_csv=str(bad))
    bad.write_text("points,cost\n" + "1,0\n" * 5)
    with pytest.raises(ValueError, match=r"needs 27\.\.10000 cards"):
        BirdsConfig(cards_csv=str(bad))
    with pytest.raises(ValueError, match=r"start_food: "):
        BirdsConfig(start_food=-1)
