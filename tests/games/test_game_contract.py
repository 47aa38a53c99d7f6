"""The game contract (games.api.Game), checked once for every registered game
(the four built-in games and the tests' ``count`` game; pgx's api_test is the
model): reset / step / copy / JSON round trip, legal masks, terminal
behaviour, invalid actions, determinism across two processes, record and replay.

A game here is played by a seeded random player that picks uniformly among the
legal actions of each acting player (``play``).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cluster.replay.records import GameRecorder, ReplayMismatch, fold16, verify
from games.api import LOSS, TIE, WIN, Game
from games.registry import game_names, make_config, make_game

GAMES = game_names()
SEED = 11
ROOT = Path(__file__).resolve().parents[2]


def play(game: Game, seed: int, max_steps: int = 2000, on_step=None) -> list[int]:
    """Play ``game`` (already reset) to its end with random legal actions;
    returns the fingerprint after every step (the first: the initial state)."""
    rng = np.random.default_rng(seed)
    prints = [game.fingerprint()]
    while not game.done and len(prints) <= max_steps:
        actions = [0] * game.num_players
        for p in game.acting_players():
            mask = game.legal_actions(p)
            assert mask.dtype == np.bool_ and mask.shape == (game.num_actions,)
            assert mask.any(), f"player {p} to act has no legal action"
            actions[p] = int(rng.choice(np.flatnonzero(mask)))
        game.step(actions)
        if on_step is not None:
            on_step(game, actions)
        prints.append(game.fingerprint())
    return prints


#: The board index a study's plan would pass for board seed 3 (SeedSequence(SEED, spawn_key=(0, 3))).
BOARD = 3


def fresh(name: str) -> Game:
    game = make_game(name, make_config(name, {}))
    game.reset(np.random.SeedSequence(SEED, spawn_key=(0, BOARD)), board_index=BOARD)
    return game


@pytest.mark.parametrize("name", GAMES)
def test_the_base_constructor_ran_and_step_checks_its_input(name):
    config = make_config(name, {})
    game = make_game(name, config)
    # Game.__init__ ran (a game that skips super().__init__ lacks what step and the records use)
    assert game.config == config and game.state is None and game.board_index is None
    assert game.invalid_actions.dtype == np.int64 and list(game.invalid_actions) == [0] * game.num_players
    with pytest.raises(RuntimeError, match="reset"):
        game.step([0] * game.num_players)
    game.reset(SEED)
    assert not game.done and game.step_count == 0
    assert list(game.invalid_actions) == [0] * game.num_players
    with pytest.raises(ValueError, match=r"^actions: expected"):
        game.step([0] * (game.num_players + 1))
    assert len(game.teams()) == len(game.death_ticks()) == game.num_players
    assert 1 <= len(game.acting_players()) <= game.num_players
    assert isinstance(game.render(), str) and game.render_image().size[0] > 0


@pytest.mark.parametrize("name", GAMES)
def test_reset_takes_the_board_index_explicitly(name):
    """The board a game is played on comes from ``reset``'s argument (a study's plan passes
    its board seed), never from the seed's spawn key; an int seed names its board."""
    game = make_game(name, make_config(name, {}))
    seed = np.random.SeedSequence(SEED, spawn_key=(0, 5))
    game.reset(seed, board_index=2)
    assert game.board_index == 2
    game.reset(seed)
    assert game.board_index is None
    game.reset(7)
    assert game.board_index == 7
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match=r"^board_index: must be a non-negative int"):
            game.reset(seed, board_index=bad)


@pytest.mark.parametrize("name", GAMES)
def test_a_legal_game_ends_with_outcomes_and_stepping_after_it_changes_nothing(name):
    game = fresh(name)
    prints = play(game, SEED)
    assert game.done, "the random game did not end"
    assert game.acting_players() == []
    assert list(game.invalid_actions) == [0] * game.num_players
    assert set(game.outcomes()) <= {WIN, TIE, LOSS} and len(game.outcomes()) == game.num_players
    assert np.asarray(game.returns()).shape == (game.num_players,)
    length, last = game.step_count, game.to_json()
    game.step([0] * game.num_players)
    assert game.step_count == length and game.to_json() == last and game.fingerprint() == prints[-1]
    assert list(game.invalid_actions) == [0] * game.num_players


@pytest.mark.parametrize("name", GAMES)
def test_an_invalid_action_is_counted_and_replaced(name):
    game = fresh(name)
    player = list(game.acting_players())[0]
    reference = game.copy()
    replacement = game.replacement_action(player)
    actions = [0] * game.num_players
    actions[player] = -1
    game.step(actions)
    assert game.invalid_actions[player] == 1 and game.invalid_actions.sum() == 1
    actions[player] = replacement
    reference.step(actions)
    assert game.fingerprint() == reference.fingerprint()
    assert reference.invalid_actions.sum() == 0


@pytest.mark.parametrize("name", GAMES)
def test_copy_and_json_round_trip_are_independent_equal_games(name):
    game = fresh(name)
    rng = np.random.default_rng(3)
    for _ in range(3):  # a few steps in
        actions = [0] * game.num_players
        for p in game.acting_players():
            actions[p] = int(rng.choice(np.flatnonzero(game.legal_actions(p))))
        game.step(actions)
    copy = game.copy()
    again = type(game).from_json(game.to_json())
    assert copy.fingerprint() == again.fingerprint() == game.fingerprint()
    assert again.to_json() == game.to_json()
    before = copy.fingerprint()
    play(game, 5)
    assert copy.fingerprint() == before, "a copy shares state with its original"
    assert play(copy, 5) == play(again, 5)


@pytest.mark.parametrize("name", GAMES)
def test_record_replays_identically(name):
    game = fresh(name)
    config = make_config(name, {})
    seed = np.random.SeedSequence(SEED, spawn_key=(0, BOARD))
    recorder = GameRecorder(name, config, seed, [f"p{i}" for i in range(game.num_players)],
                            game.num_actions, board_index=BOARD)
    recorder.start(game)
    prints = play(game, SEED, on_step=recorder.step)
    record = recorder.finish()
    assert record.length == len(prints) - 1 > 0
    assert verify(record) == record.length
    assert list(record.fingerprints) == [fold16(x) for x in prints]
    broken = record.fingerprints.copy()
    broken[-1] ^= 1
    record.fingerprints = broken
    with pytest.raises(ReplayMismatch):
        verify(record)


_CHILD = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests", sys.argv[1] + "/tests/games"]
import conftest  # registers the tests' game
from test_game_contract import fresh, play
print(json.dumps({name: play(fresh(name), int(sys.argv[2])) for name in json.loads(sys.argv[3])}))
"""


def test_a_seeded_game_is_the_same_in_another_process():
    here = {name: play(fresh(name), SEED) for name in GAMES}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(SEED), json.dumps(GAMES)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    there = json.loads(out.stdout.strip().splitlines()[-1])
    for name in GAMES:
        assert [fold16(x) for x in there[name]] == [fold16(x) for x in here[name]], name
