"""Pommerman ``boards_file``: play recorded boards (e.g. the Java framework's)."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from games.pommerman import Pommerman, PommermanConfig, generate
from games.pommerman.kernels import state_to_dict


def write_boards(path, n=3, ruleset="java", **scenario):
    boards = []
    for seed in range(n):
        d = state_to_dict(generate(PommermanConfig(ruleset=ruleset), seed))
        boards.append({"scenario": {"rules": ruleset, "mode": "ffa", **scenario}, "states": [d]})
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as fh:
        for b in boards:
            fh.write(json.dumps(b) + "\n")
    return boards


def test_board_seed_b_plays_record_b_with_its_hidden_power_ups(tmp_path):
    path = tmp_path / "boards.jsonl.gz"
    boards = write_boards(path)
    game = Pommerman(PommermanConfig(ruleset="java", collapse=True, boards_file=str(path)))
    for b in range(3):
        # a study's plan passes its board seed as the board index (its seed is a SeedSequence)
        game.reset(np.random.SeedSequence(2019, spawn_key=(0, 2 - b)), board_index=b)
        want = boards[b]["states"][0]
        got = state_to_dict(game.state)
        assert got["board"] == want["board"] and got["items"] == want["items"]
        assert game.state.items.any()
    with pytest.raises(ValueError, match=r"^boards_file: a SeedSequence alone names no board"):
        game.reset(np.random.SeedSequence(2019, spawn_key=(0, 1)))  # the seed's layout is not read
    game.reset(1)  # an int names the record
    assert state_to_dict(game.state)["board"] == boards[1]["states"][0]["board"]
    game.step([0, 0, 0, 0])  # plays on a copy: the recorded board is untouched
    game.reset(1)
    assert game.step_count == 0


@pytest.mark.parametrize("mutate, message", [
    (lambda p: p.write_text("not json\n"), r"record 0 \(line 1\): not JSON"),
    (lambda p: p.write_text(json.dumps({"states": []}) + "\n"), "states: expected a list"),
    (lambda p: p.write_text(""), "no records"),
])
def test_bad_files_are_refused_naming_the_field(tmp_path, mutate, message):
    path = tmp_path / "boards.jsonl"
    mutate(path)
    with pytest.raises(ValueError, match=f"boards_file: .*{message}"):
        PommermanConfig(ruleset="java", boards_file=str(path))


def test_bad_state_and_wrong_ruleset_and_missing_board(tmp_path):
    path = tmp_path / "boards.jsonl"
    boards = write_boards(path)
    boards[1]["states"][0]["agents"][2]["position"] = [11, 0]
    path.write_text("".join(json.dumps(b) + "\n" for b in boards))
    with pytest.raises(ValueError, match=r"boards_file: .*record 1 \(line 2\): states\[0\]\.agents\[2\]"):
        PommermanConfig(ruleset="java", boards_file=str(path))
    write_boards(path)
    with pytest.raises(ValueError, match="scenario.rules is 'java' but the game's ruleset is 'canonical'"):
        PommermanConfig(ruleset="canonical", boards_file=str(path))
    with pytest.raises(ValueError, match="boards_file: cannot read"):
        PommermanConfig(ruleset="java", boards_file=str(tmp_path / "missing.jsonl"))
    game = Pommerman(PommermanConfig(ruleset="java", boards_file=str(path)))
    with pytest.raises(ValueError, match="board 3 requested, but .* holds 3 boards"):
        game.reset(3)


def test_spec_errors_name_game_boards_file(tmp_path):
    from cluster.spec.build import build_spec
    from cluster.spec.fields import SpecError

    with pytest.raises(SpecError, match="^game.boards_file: cannot read"):
        build_spec({"study": {"name": "b", "seed": 1},
                    "game": {"name": "pommerman", "ruleset": "java",
                             "boards_file": str(tmp_path / "nope.jsonl")},
                    "lineup": [{"agent": "random"}] * 4}, check_files=False)
