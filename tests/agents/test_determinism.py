"""A game is a pure function of (config, agents, seed) under iteration budgets:
the same in one process, and across two fresh processes."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent
from games.pommerman import Pommerman, PommermanConfig

LINEUP = ("mcts", "rhea", "femcts", "rule_based")


def play_hash(seed: int, ruleset: str, mode: str, view_range, max_steps: int = 80) -> str:
    """sha1 over every joint action and the final state of one seeded game."""
    config = PommermanConfig(mode=mode, ruleset=ruleset, view_range=view_range, max_steps=max_steps)
    game = Pommerman(config)
    game.reset(np.random.SeedSequence(seed, spawn_key=(0,)))
    budget = Budget(iterations=60)
    agents = [make_agent(name, {}, budget, config) for name in LINEUP]
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(seed, spawn_key=(1, seat)))
    digest = hashlib.sha1()
    while not game.done:
        actions = [a.act(game.observation(i)) if game.is_alive(i) else 0 for i, a in enumerate(agents)]
        digest.update(bytes(actions))
        game.step(actions)
    digest.update(game.to_json().encode())
    return digest.hexdigest()


CASES = [(3, "canonical", "ffa", None), (4, "java", "team", 2)]


@pytest.mark.parametrize("seed, ruleset, mode, view_range", CASES)
def test_same_seed_same_game_in_one_process(seed, ruleset, mode, view_range):
    first = play_hash(seed, ruleset, mode, view_range)
    assert play_hash(seed, ruleset, mode, view_range) == first
    assert play_hash(seed + 1, ruleset, mode, view_range) != first


def test_same_seed_same_game_across_processes():
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys; sys.path.insert(0, %r); from tests.agents.test_determinism import CASES, play_hash;"
            "print(json.dumps([play_hash(*c) for c in CASES]))" % str(root))
    runs = [subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                           timeout=600) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    hashes = [json.loads(run.stdout.strip().splitlines()[-1]) for run in runs]
    assert hashes[0] == hashes[1]
    assert hashes[0] == [play_hash(*c) for c in CASES], "and equal to this process's games"
