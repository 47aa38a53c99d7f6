"""A study begun before an upgrade that only adds options resumes after it: config hashes
leave out fields at their defaults (agents.registry.config_hash), and the stored spec is
read back with the new defaults (cluster.results.store.ResultStore.write_spec)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from agents.api import Budget
from agents.registry import config_hash, register
from cluster.results.store import ResultStore
from cluster.run.driver import Recorder, plan_and_resume
from cluster.run.play import build_agents, play_game
from cluster.spec.study import build_spec

from conftest import FakeAgent, FakeConfig


@dataclass(frozen=True)
class FakeConfigUpgraded(FakeConfig):
    """The fake agent's parameters after a release that added one option."""

    patience: int = 0
    """A new option; its default plays as before."""


@register
class UpgradingAgent(FakeAgent):
    """The fake agent under its own name, so that the test can upgrade its Config."""

    name = "fake_upgrading"
    Config = FakeConfig


def test_config_hash_ignores_a_new_defaulted_field():
    before = config_hash("fake_upgrading", FakeConfig(), Budget(iterations=3))
    assert config_hash("fake_upgrading", FakeConfigUpgraded(), Budget(iterations=3)) == before
    assert config_hash("fake_upgrading", FakeConfigUpgraded(patience=2), Budget(iterations=3)) != before
    assert config_hash("fake_upgrading", FakeConfig(skill=0.5), Budget(iterations=3)) != before
    assert config_hash("fake_upgrading", FakeConfig(), Budget(iterations=4)) != before


def test_config_version_tells_a_changed_default_apart(monkeypatch):
    before = config_hash("fake_upgrading", FakeConfig(), Budget())
    monkeypatch.setattr(UpgradingAgent, "config_version", 1)
    assert config_hash("fake_upgrading", FakeConfig(), Budget()) != before


def _play(spec, prepared, runs):
    recorder = Recorder(spec, prepared.store, prepared.finished)
    for run in runs:
        agents = build_agents(spec)
        for task in run.games:
            rows, learned = play_game(spec, task, agents)
            recorder(run, task, rows, learned, 0.01)


def test_a_study_resumes_after_its_agent_gained_a_defaulted_option(tmp_path, monkeypatch):
    data = {
        "study": {"name": "upgrade", "seed": 5, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 6},
        "budget": {"iterations": 3},
        "design": {"seeds": 2, "games_per_seed": 2},
        "lineup": [{"agent": "fake_upgrading", "label": "A", "params": {"skill": 0.5}},
                   {"agent": "fake", "label": "B"}],
        "tracking": {"enabled": False},
    }
    spec = build_spec(data)
    prepared = plan_and_resume(spec)
    _play(spec, prepared, prepared.runs[:1])  # the study is interrupted after its first series

    monkeypatch.setattr(UpgradingAgent, "Config", FakeConfigUpgraded)  # the upgrade
    upgraded = build_spec(data)
    assert "lineup.0.params.patience" in upgraded.flat_params()
    resumed = plan_and_resume(upgraded)  # the stored spec is accepted: nothing that was set changed
    assert 0 < resumed.skipped < resumed.total
    _play(upgraded, resumed, resumed.runs)

    rows = ResultStore(upgraded.study_dir).read()
    assert sorted(rows["game_index"].unique()) == list(range(upgraded.design.total_games))
    assert rows.loc[rows["label"] == "A", "config_hash"].nunique() == 1  # one player before and after

    with pytest.raises(Exception, match="lineup.0.params.patience"):  # a set option still must match
        plan_and_resume(build_spec({**data, "lineup": [
            {"agent": "fake_upgrading", "label": "A", "params": {"skill": 0.5, "patience": 3}},
            {"agent": "fake", "label": "B"}]}))
