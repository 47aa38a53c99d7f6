"""``simple``: the Java framework's SimplePlayer rule by rule.

The strongest check replays the framework's own recorded games (the golden
``simple`` trajectories, four SimplePlayers at full observability): at every
decision the recorded action must be one the kernel takes for some draw of its
random numbers. The scripted tests pin the rules and the slips one by one.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from agents.api import Budget
from agents.pommerman.simple_player import DIRECTIONS, POWER_UPS, RECENT_LENGTH, simple_decide
from agents.registry import make_agent
from games.rng import make_rng
from games.pommerman import PommermanConfig
from games.pommerman.kernels import (
    DOWN, KICK, LAY_BOMB, LEFT, RIGHT, STOP, UP, observe, state_from_dict,
)

from golden_data import POMMERMAN_JAVA, requires
from test_profiles import java_state

GOLDEN = POMMERMAN_JAVA
FIXED_DIRS = np.array([UP, DOWN, LEFT, RIGHT], dtype=np.int64)


def decide(state, player=0, recent=None, dir_order=FIXED_DIRS, seed=0):
    recent = np.zeros(RECENT_LENGTH + 1, dtype=np.int64) if recent is None else recent
    return int(simple_decide(observe(state, player, -1), player, recent, dir_order, POWER_UPS,
                             make_rng(seed)))


def choices(state, player=0, view=-1, n=40):
    out = set()
    for seed in range(n):
        recent = np.zeros(RECENT_LENGTH + 1, dtype=np.int64)
        out.add(int(simple_decide(observe(state, player, view), player, recent, FIXED_DIRS,
                                  POWER_UPS, make_rng(seed))))
    return out


def board(rows: dict[int, str]) -> str:
    """An 11x11 picture: open passages except the given rows."""
    empty = " ".join(["."] * 11)
    return "\n".join(rows.get(r, empty) for r in range(11))


# --------------------------------------------------------------------- golden replay
@requires(GOLDEN / "ffa_simple_collapse.jsonl.gz")
def test_recorded_framework_decisions_are_ones_simple_takes():
    with gzip.open(GOLDEN / "ffa_simple_collapse.jsonl.gz", "rt") as fh:
        records = [json.loads(next(fh)) for _ in range(2)]
    agree = total = 0
    for record in records:
        states = record["states"]
        recent = [np.zeros(RECENT_LENGTH + 1, dtype=np.int64) for _ in range(4)]
        for t in range(len(states) - 1):
            state = state_from_dict(states[t], mode="ffa", ruleset="java", collapse=True)
            recorded = states[t + 1]["actions"]
            for i in range(4):
                if states[t]["agents"][i]["result"] != "INCOMPLETE":
                    continue
                obs = observe(state, i, -1)
                seen, after = set(), []
                for k in range(24):
                    order_rng = np.random.default_rng(k)
                    r = recent[i].copy()
                    seen.add(int(simple_decide(obs, i, r, order_rng.permutation(DIRECTIONS),
                                               order_rng.permutation(POWER_UPS), make_rng(k + 97 * t))))
                    after.append(r)
                total += 1
                agree += recorded[i] in seen
                changed = [not np.array_equal(r, recent[i]) for r in after]
                if 2 * sum(changed) > len(changed):  # the random-move rule was reached
                    recent[i] = after[changed.index(True)]
    assert total > 500
    assert agree / total >= 0.995, f"{agree}/{total} recorded decisions reproduced"


# --------------------------------------------------------------------- rules and slips
def test_stands_still_at_view_range_zero():
    state = java_state(board({1: ". 0 . . + . . . . . 3", 9: ". 1 . . . . . . . . 2"}))
    assert choices(state, view=0) == {STOP}


def test_bombs_an_adjacent_enemy():
    state = java_state(board({1: ". 0 1 . . . . . . . 3", 9: ". . . . . . . . . . 2"}))
    assert choices(state) == {LAY_BOMB}


def test_an_enemy_standing_on_a_bomb_is_not_an_enemy():
    # the framework files that cell as a bomb only: the enemy is no longer
    # "adjacent" (no bomb) and its cell counts as passable when fleeing
    state = java_state(board({1: ". 0 1 . . . . . . . 3", 9: ". . . . . . . . . . 2"}),
                       bombs=[(1, 2, 9, 2)])
    assert LAY_BOMB not in choices(state)


def test_flees_a_bomb_in_line_toward_a_safe_side():
    # bomb two cells below agent 0: DOWN is unsafe, the others are fine
    state = java_state(board({1: ". 0 . . . . . . . . 3", 3: ". b . . . . . . . . .",
                              9: ". 1 . . . . . . . . 2"}), bombs=[(3, 1, 5, 2)])
    assert choices(state) == {LEFT, RIGHT, UP}


def test_walks_to_a_power_up_two_steps_away():
    state = java_state(board({1: ". 0 . . . . . . . . 3", 9: ". 1 . . . . . . . . 2"}))
    state.board[1 * 11 + 3] = KICK
    assert choices(state) == {RIGHT}


def test_chases_an_enemy_exactly_three_steps_away():
    state = java_state(board({1: ". 0 . . 1 . . . . . 3", 9: ". . . . . . . . . . 2"}))
    assert choices(state) == {RIGHT}


def test_recently_visited_filter_keeps_every_move_when_one_is_fresh():
    # the slip: with one fresh neighbour, the recently visited ones stay candidates
    state = java_state(board({1: ". 0 . . . . . . . . 3", 9: ". 1 . . . . . . . . 2"}))
    here = 1 * 11 + 1
    recent = np.array([3, here - 11, here + 11, here - 1, 0, 0, 0], dtype=np.int64)  # up, down, left
    seen = {decide(state, recent=recent.copy(), seed=s) for s in range(40)}
    assert seen == {UP, DOWN, LEFT, RIGHT}
    recent = np.array([4, here - 11, here + 11, here - 1, here + 1, 0, 0], dtype=np.int64)  # all four
    assert decide(state, recent=recent) == STOP


def test_agent_plays_through_the_registry_and_is_deterministic():
    from games.pommerman import Pommerman

    cfg = PommermanConfig(ruleset="java", collapse=True)

    def play():
        agents = [make_agent("simple", {}, Budget(iterations=1), cfg) for _ in range(4)]
        game = Pommerman(cfg)
        game.reset(4)
        for s, a in enumerate(agents):
            a.begin_game(s, np.random.SeedSequence([9, s]))
        while not game.done:
            game.step([agents[p].act(game.observation(p)) if game.is_alive(p) else 0 for p in range(4)])
        return game.step_count, [int(x) for x in game.state.agents[:, 0]]

    assert play() == play()
