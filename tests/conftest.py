"""Shared fixtures for the cluster tests: a local Ray, and a tiny fake game and agent.

The fake game and agent are registered when this module is imported. Ray
workers import it too: the cluster tests pass ``plugins=("conftest",)`` to
``run_study`` and this directory is put on ``PYTHONPATH`` before Ray starts
(raylets and their workers inherit it).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from agents.api import Agent
from agents.registry import register as register_agent
from games.api import LOSS, TIE, WIN, Game
from games.registry import register as register_game

TESTS_DIR = str(Path(__file__).resolve().parent)
REPO_ROOT = str(Path(__file__).resolve().parent.parent)
PLUGINS = ("conftest",)


# --- a tiny deterministic game ---------------------------------------------------
@dataclass(frozen=True)
class CountConfig:
    """Options of the fake ``count`` game."""

    max_steps: int = 10
    """Length of a game in ticks."""
    num_players: int = 2
    """Players (2..4)."""

    def __post_init__(self):
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"max_steps: must be a positive int, got {self.max_steps!r}")
        if self.num_players not in (2, 3, 4):
            raise ValueError(f"num_players: must be 2, 3 or 4, got {self.num_players!r}")


class CountState(NamedTuple):
    t: np.ndarray
    """int64[1]: ticks played."""
    bonus: np.ndarray
    """int64[P]: each player's bonus (drawn from the board seed)."""
    points: np.ndarray
    """int64[P]: each player's score."""


class CountGame(Game):
    """Each tick every player adds ``(action + bonus[p]) % 3`` to its score; the
    highest score at the end wins (ties tie). The board seed draws the bonuses.
    An action out of range counts as invalid and becomes 0."""

    num_actions = 3

    def __init__(self, config: CountConfig):
        self.num_players = config.num_players
        super().__init__(config)

    def new_state(self, seed) -> CountState:
        rng = np.random.default_rng(seed)
        n = self.num_players
        return CountState(np.zeros(1, dtype=np.int64), rng.integers(0, 3, size=n),
                          np.zeros(n, dtype=np.int64))

    def is_valid_action(self, player, action) -> bool:
        return True

    def replacement_action(self, player) -> int:
        return 0

    def apply(self, joint) -> None:
        self.state.points[:] += (joint + self.state.bonus) % 3
        self.state.t[0] += 1

    def observation(self, player):
        return np.array([self.state.t[0], self.state.points[player]], dtype=np.int64)

    def legal_actions(self, player):
        return np.ones(3, dtype=bool)

    @property
    def done(self) -> bool:
        return int(self.state.t[0]) >= self.config.max_steps

    @property
    def step_count(self) -> int:
        return int(self.state.t[0])

    def outcomes(self):
        points = self.state.points
        best = points.max()
        winners = np.flatnonzero(points == best)
        if len(winners) > 1:
            return [TIE if s == best else LOSS for s in points]
        return [WIN if s == best else LOSS for s in points]

    def returns(self):
        if not self.done:
            return np.zeros(self.num_players)
        return np.array([{WIN: 1.0, TIE: 0.0, LOSS: -1.0}[o] for o in self.outcomes()])

    def copy(self):
        other = CountGame(self.config)
        other.state = CountState(*(a.copy() for a in self.state))
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self) -> str:
        return json.dumps({"config": asdict(self.config),
                           "state": {k: v.tolist() for k, v in self.state._asdict().items()}})

    @classmethod
    def from_json(cls, text: str) -> "CountGame":
        d = json.loads(text)
        game = cls(CountConfig(**d["config"]))
        game.state = CountState(*(np.asarray(d["state"][k], dtype=np.int64) for k in CountState._fields))
        return game

    def render(self, state=None) -> str:
        return f"t={int(self.state.t[0])} scores={self.state.points.tolist()}"


register_game("count", CountConfig, CountGame)


# --- a controllable fake agent ---------------------------------------------------
@dataclass(frozen=True)
class FakeConfig:
    """Parameters of the fake agent."""

    sleep_ms: float = 0.0
    """Sleep this long per decision (wall time without CPU)."""
    spin_ms: float = 0.0
    """Busy-loop this long per decision (CPU-bound time)."""
    fail_prob: float = 0.0
    """Chance (drawn from the seat seed) that this agent raises in a game."""
    fail_step: int = 2
    """Decision at which a failing agent raises."""
    learn: bool = False
    """Carry a games-played counter as learned state; it shifts the actions."""
    die_file: str = ""
    """If this file exists at a decision, delete it and kill the process (host death)."""
    skill: float = 0.0
    """Chance per decision of the best action of the ``count`` game, once the seat's
    bonus is known (read off the first tick's score); 0: random actions only."""

    def __post_init__(self):
        if not 0.0 <= self.fail_prob <= 1.0:
            raise ValueError(f"fail_prob: must be in [0, 1], got {self.fail_prob!r}")
        if not 0.0 <= self.skill <= 1.0:
            raise ValueError(f"skill: must be in [0, 1], got {self.skill!r}")


@register_agent
class FakeAgent(Agent):
    """Random actions from its seat seed; optionally slow, failing, learning or deadly."""

    name = "fake"
    Config = FakeConfig
    games = ("count",)

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self.games_played = np.zeros(1, dtype=np.int64)

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = np.random.default_rng(seed)
        self._fail = bool(self._rng.random() < self.config.fail_prob)
        self._last = None  # (action, score) of the previous decision, for skill


    def decide(self, observation):
        cfg = self.config
        if cfg.die_file and os.path.exists(cfg.die_file):
            os.unlink(cfg.die_file)
            os._exit(1)
        if self._fail and self.decisions == cfg.fail_step:
            raise RuntimeError("fake failure")
        if cfg.sleep_ms:
            time.sleep(cfg.sleep_ms / 1000.0)
        if cfg.spin_ms:
            end = time.perf_counter() + cfg.spin_ms / 1000.0
            while time.perf_counter() < end:
                pass
        action = int(self._rng.integers(3))
        if cfg.learn:
            action = (action + int(self.games_played[0])) % 3
        if cfg.skill:
            score = int(np.asarray(observation)[1])
            if self._last is not None and self._rng.random() < cfg.skill:
                last_action, last_score = self._last
                bonus = (score - last_score - last_action) % 3
                action = (2 - bonus) % 3  # scores (action + bonus) % 3 = 2, the most
            self._last = (action, score)
        return action, 1

    def end_game(self, observation, returns):
        self.games_played[0] += 1

    @classmethod
    def learns(cls, config):
        return config.learn

    def learned_state(self):
        return {"games_played": self.games_played.copy()} if self.config.learn else None

    def load_learned_state(self, arrays):
        self.games_played = np.asarray(arrays["games_played"], dtype=np.int64).copy()


# --- two test processes (pytest-xdist, ``-n 2 --dist loadgroup``) -----------------------
# Every test process starts its own local Ray (``ray_local``) and MLflow server (``mlflow_server``)
# when a test asks for one, so the tests that need them run in either process, beside the
# compute-only ones: pinning them all to one process (an xdist group) made that process the
# whole suite's critical path. Groups are kept for module fixtures worth computing once
# (``tests/agents/test_agent_contract.py``: every agent's kernels, compiled once).


def pytest_collection_modifyitems(config, items):
    """Run order for two test processes on a fresh clone (cold numba cache): the agent contract
    first (its fixture compiles every agent's kernels into the cache), then ``tests/cluster``
    (the fake game and agents on Ray: little to compile), then the rest, which then loads the
    kernels instead of compiling them a second time beside the contract. The order inside each
    part is the collection's."""
    def part(item) -> int:
        path = item.nodeid.replace("\\", "/")
        if path.startswith("tests/agents/test_agent_contract.py"):
            return 0
        return 1 if path.startswith("tests/cluster/") else 2

    items.sort(key=part)


def pytest_configure(config):
    """Make the plugin example visible with its entry points, installing nothing
    (tests/plugin_install.py), before collection."""
    from plugin_install import make_example_visible

    make_example_visible()


# --- fixtures -------------------------------------------------------------------------
@pytest.fixture(scope="session", autouse=True)
def _tests_on_pythonpath():
    """Ray workers (and subprocess drivers) must import this module by name, and the
    code under test (this checkout, not whichever one the environment installed)."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([TESTS_DIR, REPO_ROOT] + ([old] if old else []))
    yield
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture
def ray_local(_tests_on_pythonpath):
    """A local Ray with 2 CPUs, started once and shared (re-started after a test
    that shut it down, e.g. the multi-node test)."""
    import ray

    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray


# --- a real MLflow tracking server ------------------------------------------------------
def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(url: str, proc, timeout: float, what: str, log_path) -> None:
    """Poll ``url``/health until it answers 200; fail the test (with the end of
    ``log_path``) if ``proc`` exits or ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            try:  # its whole process group (started with start_new_session): uvicorn, job runners
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            pytest.fail(f"{what} did not come up: {Path(log_path).read_text()[-2000:]}")
        time.sleep(0.5)


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """A real MLflow tracking server on 127.0.0.1 (SQLite store), started once for the
    session: every test gives its runs its own experiment."""
    root = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    cmd = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
           "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
           "--artifacts-destination", str(root / "artifacts"), "--workers", "1"]
    log = open(root / "server.log", "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, proc, 120, "mlflow server", root / "server.log")
    yield url
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()
