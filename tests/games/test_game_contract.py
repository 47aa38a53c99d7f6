"""The game contract (games/contract.py, games/CONTRACT.md), checked for every registered game
(the four built-in games, the example plugin's ``tictactoe``, the tests' ``count`` game)
and the tests' plugin games that declare the generic kernels: the same clauses
``arena check-game`` runs (jobs/commands/check_game.py), one test per game; the same
random games in another process; and the command itself on a game that breaks a clause.
"""
from __future__ import annotations

import pytest

from games.contract import DEFAULT_MAX_STEPS, DEFAULT_SEED, fingerprints_in_another_process, fresh, play_random
from games.registry import game_names
from jobs.cli import main
from jobs.commands.check_game import game_checks

PLUGIN_GAMES = ["plugin_games.connect_four:ConnectFour", "plugin_games.pig:Pig", "plugin_games.dilemma:Dilemma"]
GAMES = game_names() + PLUGIN_GAMES


@pytest.mark.parametrize("name", GAMES)
def test_every_clause_of_the_game_contract_holds(name):
    checks = game_checks(name, other_process=False)
    assert {c.name for c in checks} >= {"declares", "board index", "nobody acts after the end", "copy and JSON",
                                        "record replays", "PettingZoo api_test"}
    failed = [c.line() for c in checks if c.passed is False]
    assert not failed, "\n".join(failed)


def test_a_seeded_game_is_the_same_in_another_process():
    here = {name: play_random(fresh(name, DEFAULT_SEED), DEFAULT_SEED, DEFAULT_MAX_STEPS) for name in GAMES}
    there = fingerprints_in_another_process(GAMES, DEFAULT_SEED, DEFAULT_MAX_STEPS, modules=("conftest",))
    assert there == here


def test_check_game_catches_a_player_named_after_the_end(capsys):
    assert main(["check-game", "plugin_games.broken:NamesAPlayerAfterTheEnd"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  nobody acts after the end: acting_players() names [" in out
    assert "PASS  copy and JSON" in out and out.rstrip().endswith("of 18")


def test_check_game_passes_a_plugin_game_and_refuses_what_does_not_load(capsys):
    assert main(["check-game", "plugin_games.pig:Pig"]) == 0
    out = capsys.readouterr().out
    assert "PASS  generic kernels: agree with the Python API" in out and "FAIL" not in out
    assert main(["check-game", "plugin_games.nothing_here:Game"]) == 2
    assert "does not import" in capsys.readouterr().err
    assert main(["check-game", "chess"]) == 2
