"""A study begun before an upgrade that only adds options resumes after it: config hashes
leave out fields at their defaults (agents.registry.config_hash), and the stored spec is
read back with the new defaults (cluster.results.store.ResultStore.read_spec, the typed
cluster.spec.stored.StoredSpec, which write_spec checks a resume against)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from agents.api import Budget
from agents.registry import config_hash, register
from cluster.results.store import ResultStore, StoreError, read_stored_spec
from cluster.run.driver import Recorder, plan_and_resume
from cluster.run.play import build_agents, play_game
from cluster.spec.build import build_spec

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


def _upgrade_study(tmp_path) -> dict:
    return {
        "study": {"name": "old-spec", "seed": 9, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 6},
        "budget": {"iterations": 3},
        "design": {"seeds": 2, "games_per_seed": 2},
        "lineup": [{"agent": "fake_upgrading", "label": "A", "params": {"skill": 0.5}},
                   {"agent": "fake", "label": "B"}],
        "tracking": {"enabled": False},
    }


def test_an_old_spec_json_without_newer_defaulted_fields_reads_back_typed_and_resumes(tmp_path):
    spec = build_spec(_upgrade_study(tmp_path))
    prepared = plan_and_resume(spec)
    _play(spec, prepared, prepared.runs[:1])
    store = ResultStore(spec.study_dir)
    old = json.loads(store.spec_path.read_text(encoding="utf-8"))
    # As an earlier release wrote it: before these design fields and [tracking]
    # experiment existed (all at their defaults here).
    for key in ("carry_learned_state", "series_by", "vary", "rotate_seats"):
        del old["design"][key]
    del old["tracking"]["experiment"]
    store.spec_path.write_text(json.dumps(old), encoding="utf-8")

    stored = store.read_spec()
    assert stored.design == spec.design  # the missing fields read as their defaults
    assert (stored.design.carry_learned_state, stored.design.series_by, stored.design.vary) == (True, "seed", {})
    assert stored.game.name == "count" and stored.game.options["max_steps"] == 6
    assert [(s.label, s.agent) for s in stored.lineup] == [("A", "fake_upgrading"), ("B", "fake")]
    assert stored.seat("A").params == {"skill": 0.5} and stored.seat("Z") is None
    assert stored.study_spec().flat_params() == spec.flat_params()

    resumed = plan_and_resume(spec)  # the old file is accepted as the same study
    assert 0 < resumed.skipped < resumed.total
    changed = build_spec({**_upgrade_study(tmp_path), "design": {"seeds": 2, "games_per_seed": 2,
                                                                  "rotate_seats": False}})
    with pytest.raises(Exception, match=r"^design\.rotate_seats: differs .*stored 'True', now 'False'"):
        plan_and_resume(changed)  # a missing field is its default, not a wildcard


def test_the_typed_reader_names_the_file_and_the_field(tmp_path):
    study = tmp_path / "study"
    assert read_stored_spec(study) is None  # no study yet: nothing, and nothing created
    assert not study.exists()
    study.mkdir()
    (study / "spec.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match=r"study/spec\.json: cannot read the stored spec \(JSONDecodeError"):
        read_stored_spec(study)
    (study / "spec.json").write_text(json.dumps({"game": {"name": "count"}, "design": {"seeds": 0}}))
    with pytest.raises(StoreError, match=r"spec\.json: cannot read the stored spec .*design\.seeds: must be a "
                                         r"positive int, got 0"):
        read_stored_spec(study)
    (study / "spec.json").write_text(json.dumps({"game": {"name": "count"}, "lineup": [{"label": "A"}]}))
    with pytest.raises(StoreError, match=r"lineup\[0\]\.agent: required"):
        read_stored_spec(study)
    (study / "spec.json").write_text(json.dumps({"game": {"name": "count", "max_steps": 4}}))
    stored = read_stored_spec(study)  # a hand-written spec: no design, no lineup
    assert (stored.game.name, stored.game.options, stored.design, stored.lineup) == ("count", {"max_steps": 4},
                                                                                      None, ())
