"""The agent contract (agents/contract.py) over every registered agent on every game it
declares: the built-in agents, the tests' ``fake`` agent and the installed example plugin
(``bandit``, tests/plugin_example). Determinism across processes is checked for all of
them with one child process (``traces_in_another_process``)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import agents  # noqa: F401  (registers the built-in agents)
from agents.api import Agent
from agents.contract import (DEFAULT_ITERATIONS, DEFAULT_SEED, DEFAULT_STEPS, check_agent, declared_games,
                             play_contract_game, traces_in_another_process)
from agents.registry import agent_class, agent_names
from games.registry import game_names

#: One xdist process runs this module: the other-process traces are computed once.
pytestmark = pytest.mark.xdist_group("agent_contract")

try:
    import pyspiel  # noqa: F401  (the test extra installs OpenSpiel)
    #: mcts_generic on OpenSpiel's games (the Python path; OpenSpiel's games are an open
    #: family outside ``game_names()``): perfect information, and hidden cards.
    OPENSPIEL_PAIRS = [("mcts_generic", "openspiel:tic_tac_toe"), ("mcts_generic", "openspiel:kuhn_poker")]
except ImportError:  # pragma: no cover - without the extra
    OPENSPIEL_PAIRS = []
PAIRS = [(agent, game) for agent in agent_names() for game in declared_games(agent)] + OPENSPIEL_PAIRS
CLAUSES = {"config defaults", "begin_game", "legal actions", "iteration budget", "same seed, same moves",
           "another process", "learned state .npz"}


def test_the_example_plugin_is_installed_and_registered():
    assert "bandit" in agent_names() and "tictactoe" in game_names()
    assert agent_class("bandit").__module__ == "arena_example.agent"
    assert ("bandit", "tictactoe") in PAIRS and ("bandit", "pommerman") in PAIRS
    assert ("random", "tictactoe") in PAIRS  # random plays any game with kernels
    assert ("mcts", "pommerman") in PAIRS and ("mcts", "tictactoe") not in PAIRS  # declared games only


@pytest.fixture(scope="module")
def other_process_traces():
    cases = [(agent, game, DEFAULT_ITERATIONS, DEFAULT_STEPS, DEFAULT_SEED) for agent, game in PAIRS
             if agent_class(agent).supports_iteration_budget]
    # Play every case here first: this process compiles the kernels into the numba cache
    # once, and the child then loads them instead of compiling them a second time (on a
    # fresh clone that halves the module's compile time). The timeout stays generous for
    # a loaded machine.
    for agent, game, iterations, steps, seed in cases:
        play_contract_game(agent, game, iterations=iterations, steps=steps, seed=seed)
    return traces_in_another_process(cases, modules=("conftest",), timeout=3600)


@pytest.mark.parametrize("agent, game", PAIRS, ids=[f"{a}-{g}" for a, g in PAIRS])
def test_agent_contract(agent, game, other_process_traces):
    checks = check_agent(agent, game, other_trace=other_process_traces.get(f"{agent} @ {game}"))
    failed = [c.line() for c in checks if c.passed is False]
    assert not failed, failed
    assert {c.name for c in checks} == CLAUSES
    applies = {c.name for c in checks if c.passed}
    assert {"config defaults", "begin_game", "legal actions", "same seed, same moves", "another process"} <= applies
    learns = agent_class(agent).learns(agent_class(agent).Config())
    assert ("learned state .npz" in applies) or not learns, "an agent that learns must round-trip its state"


# --- the contract finds broken agents ----------------------------------------------------
class IllegalAgent(Agent):
    """Always action 0, legal or not (tic-tac-toe: an occupied cell sooner or later)."""

    name = "illegal"
    games = ("tictactoe",)

    def decide(self, observation):
        return 0, 0


class UnseededAgent(Agent):
    """Draws from the operating system's entropy: different moves every time."""

    name = "unseeded"
    games = ("pommerman",)  # 4 seats x 24 steps: two games cannot agree by chance

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        from games.registry import game_kernels

        self.legal_actions = game_kernels(game_config).legal_actions

    def decide(self, observation):
        legal = np.flatnonzero(self.legal_actions(observation, self.seat))
        return int(legal[int.from_bytes(os.urandom(2), "little") % len(legal)]), 0


class LossyStateAgent(UnseededAgent):
    """Claims learned state but does not restore it."""

    name = "lossy"
    games = ("tictactoe",)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self.rng = np.random.default_rng(seed)

    def decide(self, observation):
        legal = np.flatnonzero(self.legal_actions(observation, self.seat))
        return int(self.rng.choice(legal)), 0

    def learned_state(self):
        return {"games": np.array([self.decisions], dtype=np.int64)}

    @classmethod
    def check_learned_state(cls, config, arrays):
        pass


def _failed(agent: str, game: str = "tictactoe") -> set[str]:
    return {c.name for c in check_agent(agent, game, other_process=False) if c.passed is False}


def test_the_contract_fails_an_illegal_agent_an_unseeded_one_and_a_lossy_one():
    assert _failed("test_agent_contract:IllegalAgent") == {"legal actions"}
    assert _failed("test_agent_contract:UnseededAgent", "pommerman") == {"same seed, same moves"}
    assert _failed("test_agent_contract:LossyStateAgent") == {"learned state .npz"}


def test_a_contract_game_is_capped_and_ends_every_agent():
    played = play_contract_game("bandit", "pommerman", steps=5)
    assert len(played.joint_actions) == 5 and len(played.fingerprints) == 6
    assert played.own_seats == [0, 1, 2, 3]
    assert all(a.learned_state()["count"].sum() == a.decisions > 0 for a in played.agents)  # end_game ran


def test_scotland_yard_agents_take_their_side_and_random_plays_the_other():
    played = play_contract_game("sy_greedy_seekers", "scotland_yard", steps=4)
    assert played.own_seats == [1] and [a.name for a in played.agents] == ["random", "sy_greedy_seekers"]


class CrashingAgent(UnseededAgent):
    """Raises at its second decision."""

    name = "crashing"
    games = ("tictactoe",)

    def decide(self, observation):
        if self.decisions == 1:
            raise RuntimeError("out of ideas")
        return super().decide(observation)


def test_an_agent_that_raises_fails_the_clause_it_broke():
    checks = {c.name: c for c in check_agent("test_agent_contract:CrashingAgent", "tictactoe", other_process=False)}
    assert checks["begin_game"].passed and checks["legal actions"].passed is False
    assert "raised at step" in checks["legal actions"].detail and "RuntimeError: out of ideas" in \
        checks["legal actions"].detail
