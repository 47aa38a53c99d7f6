"""The command line's text of ``--set`` and ``--unset``, parsed into edits of the raw spec.

    >>> data = {"design": {"seeds": 8, "games_per_seed": 4}, "lineup": [{"agent": "mcts"}]}
    >>> apply_overrides(data, ["design.seeds=4", "lineup.0.params.exploration=0.5"])["lineup"]
    [{'agent': 'mcts', 'params': {'exploration': 0.5}}]
    >>> apply_unsets(data, ["design.games_per_seed"])["design"]
    {'seeds': 4}

``--unset`` removes a key (the spec's default then applies, e.g. ``--unset
design.seeds_per_set --set design.series_by="game"``: one series per game); it
applies after every ``--set``, and a key that is not there is refused, naming
it. The edits themselves work on the raw TOML-shaped dict
(:func:`cluster.spec.edits.set_path`, :func:`~cluster.spec.edits.unset_path`), and so
does ``--scale``, which the builders apply (``build_spec(data, scale=F)``,
``build_sweep(data, scale=F)``: :func:`cluster.spec.edits.scale_study` and
:func:`~cluster.spec.edits.scale_sweep`, one rule). The builders validate the result
(values keep their TOML types, so ``--set design.seeds=2.5`` is refused there as a
non-int, naming the field).
"""
from __future__ import annotations

import tomllib
from typing import Any, Sequence

from cluster.spec.edits import set_path, unset_path
from cluster.spec.fields import SpecError

__all__ = ["parse_value", "parse_overrides", "apply_overrides", "apply_unsets"]


def parse_value(text: str):
    """A TOML value (``4``, ``1.5``, ``true``, ``"x"``, ``[1, 2]``, ``{a = 1}``), else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_overrides(overrides: Sequence[str]) -> list[tuple[list[str], Any]]:
    """``["design.seeds=4", ...]`` as ``[(["design", "seeds"], 4), ...]``."""
    parsed = []
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise SpecError(f"--set {item!r}: expected key=value, e.g. design.seeds=4")
        key, _, value = item.partition("=")
        key = key.strip()
        parts = key.split(".")
        if not key or any(not p.strip() for p in parts):
            raise SpecError(f"--set {item!r}: expected a dotted key like design.seeds or "
                            f"lineup.0.params.exploration before '='")
        parsed.append(([p.strip() for p in parts], parse_value(value.strip())))
    return parsed


def apply_overrides(data: dict, overrides: Sequence[str]) -> dict:
    """Set ``--set`` dotted keys in the raw TOML dict (in place; returns it): see
    :func:`cluster.spec.edits.set_path`."""
    for parts, value in parse_overrides(overrides):
        set_path(data, parts, value)
    return data


def apply_unsets(data: dict, keys: Sequence[str]) -> dict:
    """Remove ``--unset`` dotted keys from the raw TOML dict (in place; returns it). A table
    key or a list entry (``lineup.3``) is removed; a key that is not there is a SpecError
    naming it and what its table holds (:func:`cluster.spec.edits.unset_path`)."""
    for item in keys:
        key = item.strip() if isinstance(item, str) else ""
        parts = [p.strip() for p in key.split(".")]
        if "=" in key:
            raise SpecError(f"--unset {item!r}: expected a dotted key without a value, e.g. "
                            f"design.seeds_per_set (--set gives a key a value)")
        if not key or any(not p for p in parts):
            raise SpecError(f"--unset {item!r}: expected a dotted key like design.seeds_per_set")
        unset_path(data, parts, where=f"--unset {key}")
    return data
