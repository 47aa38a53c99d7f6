"""A fake agent that misbehaves on purpose, for the hung-host and conduct tests
(tests/cluster/test_hung_hosts.py): it plays invalid actions, overruns its time budget,
or hangs its host on one game.

A plugin module like ``conftest`` (tests/ is on the Ray workers' PYTHONPATH): the tests
pass ``plugins=PLUGINS`` so that every host registers the agent before it builds one.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from agents.registry import register as register_agent

from conftest import FakeAgent, FakeConfig

PLUGINS = ("conftest", __name__)
#: An action the ``count`` game refuses (it has 3), counted in ``invalid_actions``.
INVALID_ACTION = 7


@dataclass(frozen=True)
class MisbehavingConfig(FakeConfig):
    """The fake agent's parameters, and what it does wrong."""

    invalid_every: int = 0
    """Play an invalid action at every decision whose number (1, 2, ...) is a multiple of
    this (0: never)."""
    slow_every: int = 0
    """Sleep ``slow_ms`` at every decision whose number is a multiple of this (0: never)."""
    slow_ms: float = 0.0
    """How long a slow decision sleeps."""
    hang_game: int = -1
    """The game index on which the agent hangs its host at its first decision (-1: none)."""
    hang_seconds: float = 120.0
    """How long a hang sleeps."""
    hang_file: str = ""
    """If given, hang only while this file exists, deleting it first (the first attempt only)."""
    stop_file: str = ""
    """If this file exists at a decision of ``hang_game``, delete it, write this process's pid
    to ``<stop_file>.pid`` and stop the process with SIGSTOP (a host frozen, not dead)."""


@register_agent
class MisbehavingAgent(FakeAgent):
    """:class:`conftest.FakeAgent` that plays invalid actions, overruns or hangs on purpose."""

    name = "fake_misbehaving"
    Config = MisbehavingConfig

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._game_index = int(seed.spawn_key[1])  # (SEAT_STREAM, game_index, seat)

    def decide(self, observation):
        cfg = self.config
        number = self.decisions + 1
        if self._game_index == cfg.hang_game and number == 1:
            self._hang()
        if cfg.slow_every and number % cfg.slow_every == 0:
            time.sleep(cfg.slow_ms / 1000.0)
        action, iterations = super().decide(observation)
        if cfg.invalid_every and number % cfg.invalid_every == 0:
            action = INVALID_ACTION
        return action, iterations

    def _hang(self) -> None:
        cfg = self.config
        if cfg.stop_file:
            if _claim(cfg.stop_file):
                with open(f"{cfg.stop_file}.pid", "w") as fh:
                    fh.write(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGSTOP)
            return
        if cfg.hang_file and not _claim(cfg.hang_file):
            return
        time.sleep(cfg.hang_seconds)


def _claim(path: str) -> bool:
    """Delete ``path`` if it exists; True if this process deleted it."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True
