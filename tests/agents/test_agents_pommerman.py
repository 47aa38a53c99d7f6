"""Pommerman search agents: legality, determinism, strength, known positions."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import agent_names, make_agent
from games.pommerman import Pommerman, PommermanConfig
from games.pommerman.kernels import (
    A_ALIVE, A_COL, A_ROW, AGENT0, BOARD_SIZE, BOMB, DEFAULT_MAX_STEPS, LAY_BOMB, M_INITIAL_WOOD,
    M_N_BOMBS, MODES, PASSAGE, RIGID, RULESETS, STOP, WOOD, empty_state,
)

SEARCHERS = ("rule_based", "osla", "mcts", "rhea")


def play(names, seed, budget, config, params=None, max_decisions=None):
    """Play one game; returns (game, agents, joint actions per tick)."""
    game = Pommerman(config)
    seeds = np.random.SeedSequence(seed).spawn(5)
    game.reset(seeds[0])
    params = params or {}
    agents = [make_agent(n, params.get(n, {}), budget, config) for n in names]
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, seeds[seat + 1])
    log = []
    while not game.done and (max_decisions is None or len(log) < max_decisions):
        actions = [agent.act(game.observation(seat)) for seat, agent in enumerate(agents)]
        log.append(actions)
        game.step(actions)
    return game, agents, log


def test_registered():
    assert set(SEARCHERS) | {"random"} <= set(agent_names())


@pytest.mark.parametrize("name,params,field", [
    ("mcts", {"rollout_depth": 0}, "params.rollout_depth"),
    ("mcts", {"exploration": -1.0}, "params.exploration"),
    ("rhea", {"mutation_rate": 1.5}, "params.mutation_rate"),
    ("rhea", {"evaluate_act": "mean"}, "params.evaluate_act"),
    ("osla", {"epsilon": 1.0}, "params.epsilon"),
])
def test_config_validation(name, params, field):
    with pytest.raises(ValueError, match=field):
        make_agent(name, params, Budget(iterations=10), PommermanConfig())


@pytest.mark.parametrize("ruleset", ["canonical", "java"])
@pytest.mark.parametrize("mode,view_range", [("ffa", None), ("team", None), ("ffa", 2), ("team", 1)])
def test_actions_are_legal(ruleset, mode, view_range):
    config = PommermanConfig(mode=mode, ruleset=ruleset, view_range=view_range, max_steps=60)
    game, agents, log = play(list(SEARCHERS), 11, Budget(iterations=30), config)
    assert log, "the game ended before the first decision"
    assert all(0 <= a <= 5 and isinstance(a, int) for joint in log for a in joint)
    for agent in agents:
        assert agent.decisions == len(log)


def test_time_budget_is_respected():
    config = PommermanConfig(max_steps=50)
    game, agents, log = play(["mcts", "rhea", "random", "random"], 5, Budget(ms=10), config,
                             max_decisions=10)
    for agent in agents[:2]:
        assert agent.mean_iterations > 1
        assert agent.mean_ms < 10 * 1.5 + 5  # the kernel stops on time


@pytest.mark.parametrize("ruleset", ["canonical", "java"])
def test_deterministic_with_iteration_budget(ruleset):
    config = PommermanConfig(ruleset=ruleset, max_steps=40)
    first = play(list(SEARCHERS), 3, Budget(iterations=25), config)[2]
    second = play(list(SEARCHERS), 3, Budget(iterations=25), config)[2]
    assert first == second
    other = play(list(SEARCHERS), 4, Budget(iterations=25), config)[2]
    assert other != first


def _team_wins(searcher, opponent, seeds, budget, max_steps=300):
    """(wins, losses) of ``searcher`` in seats 0+2 against ``opponent`` in 1+3."""
    config = PommermanConfig(mode="team", max_steps=max_steps)
    wins = losses = 0
    for seed in seeds:
        game = play([searcher, opponent, searcher, opponent], seed, budget, config)[0]
        outcome = game.outcomes()[0]
        wins += outcome == "win"
        losses += outcome == "loss"
    return wins, losses


@pytest.mark.parametrize("opponent", ["random", "osla"])
def test_mcts_beats_weak_agents(opponent):
    wins, losses = _team_wins("mcts", opponent, range(6), Budget(iterations=150))
    assert wins >= 4 and losses <= 1, (wins, losses)


# ---------------------------------------------------------------- known positions
def _position(picture, ruleset, bombs=()):
    """A state from an 11-line picture ('.' passage, '#' rigid, 'w' wood,
    '0'..'3' agents); bombs are (row, col, life, blast), ownerless."""
    lines = [ln.strip() for ln in picture.strip().splitlines()]
    s = empty_state(MODES["ffa"], RULESETS[ruleset], 0, DEFAULT_MAX_STEPS)
    s.agents[:, A_ALIVE] = 0
    codes = {".": PASSAGE, "#": RIGID, "w": WOOD}
    for r, ln in enumerate(lines):
        for c, ch in enumerate(ln):
            if ch.isdigit():
                a = int(ch)
                s.agents[a, A_ROW], s.agents[a, A_COL], s.agents[a, A_ALIVE] = r, c, 1
                s.board[r * BOARD_SIZE + c] = AGENT0 + a
            else:
                s.board[r * BOARD_SIZE + c] = codes[ch]
    for k, (r, c, life, blast) in enumerate(bombs):
        s.bombs[k] = (r, c, -1, life, blast, 0)
        if s.board[r * BOARD_SIZE + c] < AGENT0:
            s.board[r * BOARD_SIZE + c] = BOMB
    s.meta[M_N_BOMBS] = len(bombs)
    s.meta[M_INITIAL_WOOD] = max(1, int(np.count_nonzero(s.board == WOOD)))
    return s


# Agent 0 stands on a bomb in a cross-shaped clearing: only a diagonal cell
# (two moves away) is out of the blast. Enemies are walled into the corners.
ON_A_BOMB = """
1#.......#2
##.......##
...........
...........
...........
.....0.....
...........
...........
...........
##.......##
3#.......##
"""


def _run_position(ruleset, agent_name, life, ticks=8, seed=0, view_range=None):
    config = PommermanConfig(ruleset=ruleset, view_range=view_range)
    game = Pommerman(config)
    game.state = _position(ON_A_BOMB, ruleset, bombs=[(5, 5, life, 4)])
    agent = make_agent(agent_name, {}, Budget(iterations=300), config)
    agent.begin_game(0, np.random.SeedSequence(seed))
    first = None
    for _ in range(ticks):
        if game.done or not game.state.agents[0, A_ALIVE]:
            break
        action = agent.act(game.observation(0))
        first = action if first is None else first
        game.step([action, STOP, STOP, STOP])
    return bool(game.state.agents[0, A_ALIVE]), first


@pytest.mark.parametrize("ruleset", ["canonical", "java"])
@pytest.mark.parametrize("name", ["mcts", "rhea", "rule_based"])
def test_escapes_a_bomb_about_to_explode(ruleset, name):
    life = 2  # two moves to safety, and the bomb goes off on the second tick
    # the position is deadly for an agent that stays...
    game = Pommerman(PommermanConfig(ruleset=ruleset))
    game.state = _position(ON_A_BOMB, ruleset, bombs=[(5, 5, life, 4)])
    for _ in range(8):
        game.step([STOP, STOP, STOP, STOP])
    assert not game.state.agents[0, A_ALIVE]
    # ...and the searchers get out of it
    for seed in range(3):
        alive, first = _run_position(ruleset, name, life, seed=seed)
        assert alive, (name, seed)
        assert first not in (STOP, LAY_BOMB)


@pytest.mark.parametrize("ruleset", ["canonical", "java"])
@pytest.mark.parametrize("name", ["mcts", "rhea"])
def test_escapes_under_fog(ruleset, name):
    """Every enemy is out of sight: the searcher must not believe it has won
    (fogged agents are absent from its model, not dead)."""
    for seed in range(3):
        alive, first = _run_position(ruleset, name, 2, seed=seed, view_range=1)
        assert alive, (name, seed)
        assert first not in (STOP, LAY_BOMB)
