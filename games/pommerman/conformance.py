"""Replay golden Pommerman trajectories and diff every state, field by field.

A trajectory file is gzip JSON Lines in the shape of
``pommerman/FORMAT.md`` of the golden trajectories; the ruleset comes from the line's
``scenario`` (``"rules": "java"`` selects the Java ruleset, with its
``collapse`` switch; anything else is ``canonical``).
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ._json import state_from_dict, state_to_dict

COMPARED_FIELDS = ("step_count", "board", "agents", "bombs", "flames", "items",
                   "done", "rewards", "result", "winners")
JAVA_EXTRA_FIELDS = ("results",)


@dataclass
class Mismatch:
    """The first difference in one trajectory."""

    file: str
    trajectory: int
    step: int
    field: str
    expected: object
    got: object

    def __str__(self) -> str:
        return (f"{self.file}#{self.trajectory} step {self.step}: {self.field}: "
                f"expected {self.expected!r}, got {self.got!r}")


@dataclass
class ConformanceReport:
    trajectories: int = 0
    steps: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.trajectories} trajectories, {self.steps} steps, {len(self.mismatches)} mismatches"


def scenario_rules(traj: dict) -> tuple[str, str, bool]:
    """(mode, ruleset, collapse) of a golden trajectory line."""
    sc = traj.get("scenario") or {}
    mode = sc.get("mode") or ("team" if "Team" in str(traj.get("config", "")) else "ffa")
    ruleset = "java" if sc.get("rules") == "java" else "canonical"
    return mode, ruleset, bool(sc.get("collapse", False))


def read_trajectories(path: str | Path) -> Iterator[dict]:
    """Yield the trajectories (one JSON object per line) of a gzip JSONL file."""
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _normalise(d: dict, key: str):
    v = d.get(key)
    if key == "flames" and v is not None:
        return sorted((f["position"][0], f["position"][1], f["life"]) for f in v)
    if key == "items" and v is not None:
        return sorted(tuple(x) for x in v)
    if key == "agents" and v is not None:
        return [{k: a[k] for k in ("id", "position", "alive", "ammo", "blast_strength", "can_kick")
                 if k in a} | ({"result": a["result"]} if "result" in a else {}) for a in v]
    return v


def first_difference(expected: dict, got: dict, fields) -> tuple[str, object, object] | None:
    """The first (field, expected, got) that differs, else None."""
    for key in fields:
        e, g = _normalise(expected, key), _normalise(got, key)
        if e != g:
            if key in ("board",):
                for r, (er, gr) in enumerate(zip(e, g)):
                    for c, (ev, gv) in enumerate(zip(er, gr)):
                        if ev != gv:
                            return f"board[{r}][{c}]", ev, gv
            if key in ("agents", "bombs") and isinstance(e, list) and isinstance(g, list) and len(e) == len(g):
                for i, (ea, ga) in enumerate(zip(e, g)):
                    if ea != ga:
                        for k in ea:
                            if ea.get(k) != ga.get(k):
                                return f"{key}[{i}].{k}", ea.get(k), ga.get(k)
            return key, e, g
    return None


def check_trajectory(traj: dict, name: str = "", index: int = 0):
    """Replay one trajectory; return (steps checked, first Mismatch or None)."""
    from . import _engine

    mode, ruleset, collapse = scenario_rules(traj)
    states = traj["states"]
    fields = COMPARED_FIELDS + (JAVA_EXTRA_FIELDS if ruleset == "java" else ())
    state = state_from_dict(states[0], mode=mode, ruleset=ruleset, collapse=collapse)
    steps = 0
    for t in range(1, len(states)):
        actions = np.array(states[t]["actions"], dtype=np.int64)
        _engine.step(state, actions)
        steps += 1
        diff = first_difference(states[t], state_to_dict(state), fields)
        if diff is not None:
            return steps, Mismatch(name, index, t, *diff)
    return steps, None


def check_files(paths) -> ConformanceReport:
    """Replay every trajectory of every file; collect the first mismatch of each."""
    report = ConformanceReport()
    for path in paths:
        for i, traj in enumerate(read_trajectories(path)):
            steps, mismatch = check_trajectory(traj, Path(path).name, i)
            report.trajectories += 1
            report.steps += steps
            if mismatch is not None:
                report.mismatches.append(mismatch)
    return report
