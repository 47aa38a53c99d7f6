"""games/CONTRACT.md's worked example, as a newcomer copies it: the Nim module written from the
page alone passes every clause of ``arena check-game``, ``mcts_generic`` finds the winning
move in a known position, and the page's spec builds (its game options validated)."""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _blocks(language: str) -> list[str]:
    page = (ROOT / "games" / "CONTRACT.md").read_text()
    worked = page[page.index("## Worked example"):]
    return re.findall(rf"```{language}\n(.*?)```", worked, re.S)


@pytest.fixture(scope="module")
def nim_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("newcomer")
    (folder / "nim.py").write_text(_blocks("python")[0])
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


def test_the_worked_example_passes_check_game(nim_dir, capsys, monkeypatch):
    from jobs.cli import main

    monkeypatch.chdir(nim_dir)
    assert main(["check-game", "nim:Nim"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "PASS  generic kernels" in out and out.rstrip().endswith("of 18")


def test_mcts_generic_finds_the_winning_move_of_the_worked_example(nim_dir):
    import agents  # noqa: F401  (registers mcts_generic)
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_config, make_game

    config = make_config("nim:Nim", {"piles": [1, 2, 4]})  # nim-sum 7: only 4 -> 3 makes it 0
    game = make_game("nim:Nim", config)
    game.reset(0)
    agent = make_agent("mcts_generic", {}, Budget(iterations=3000), config)
    agent.begin_game(0, np.random.SeedSequence(1))
    assert agent.act(game.observation(0)) == 2 * 7 + 0  # pile 2, take 1


def test_the_pages_spec_builds(nim_dir, tmp_path):
    from cluster.spec.build import build_spec

    data = tomllib.loads(_blocks("toml")[0])
    data["study"]["results_dir"] = str(tmp_path)
    spec = build_spec(data)
    assert spec.game_config.piles == (3, 4, 5) and [s.agent for s in spec.lineup] == ["mcts_generic", "random"]
    assert spec.design.total_games == 20
    data["game"]["piles"] = [3, 4, 9]
    with pytest.raises(ValueError, match=r"piles"):
        build_spec(data)
