"""The command line's ways to change a spec before it is validated: ``--set``, ``--unset`` and ``--scale``.

    >>> data = {"design": {"seeds": 8, "games_per_seed": 4}, "lineup": [{"agent": "mcts"}]}
    >>> apply_overrides(data, ["design.seeds=4", "lineup.0.params.exploration=0.5"])["lineup"]
    [{'agent': 'mcts', 'params': {'exploration': 0.5}}]
    >>> apply_scale(data, 0.25)["design"]
    {'seeds': 1, 'games_per_seed': 4}
    >>> apply_unsets(data, ["design.games_per_seed"])["design"]
    {'seeds': 1}

``--unset`` removes a key (the spec's default then applies, e.g. ``--unset
design.seeds_per_set --set design.series_by="game"``: one series per game); it
applies after every ``--set``, and a key that is not there is refused, naming
it. All three work on the raw TOML-shaped dict; :func:`cluster.spec.study.build_spec` validates
the result (values keep their TOML types, so ``--set design.seeds=2.5`` is refused
there as a non-int, naming the field).
"""
from __future__ import annotations

import tomllib
from typing import Any, Sequence

from cluster.spec.design import group_key
from cluster.spec.study import SpecError, check_scale, scale_groups, set_path

__all__ = ["parse_value", "parse_overrides", "apply_overrides", "apply_unsets", "apply_scale"]


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
    :func:`cluster.spec.study.set_path`."""
    for parts, value in parse_overrides(overrides):
        set_path(data, parts, value)
    return data


def apply_unsets(data: dict, keys: Sequence[str]) -> dict:
    """Remove ``--unset`` dotted keys from the raw TOML dict (in place; returns it). A table
    key or a list entry (``lineup.3``) is removed; a key that is not there is a SpecError
    naming it and what its table holds."""
    for item in keys:
        key = item.strip() if isinstance(item, str) else ""
        parts = [p.strip() for p in key.split(".")]
        if "=" in key:
            raise SpecError(f"--unset {item!r}: expected a dotted key without a value, e.g. "
                            f"design.seeds_per_set (--set gives a key a value)")
        if not key or any(not p for p in parts):
            raise SpecError(f"--unset {item!r}: expected a dotted key like design.seeds_per_set")
        node: Any = data
        for depth, part in enumerate(parts):
            here, parent = ".".join(parts[:depth + 1]), ".".join(parts[:depth]) or "the spec"
            if isinstance(node, dict):
                if part not in node:
                    known = ", ".join(map(str, node)) or "nothing"
                    raise SpecError(f"--unset {key}: {here}: no such key ({parent} has: {known})")
                index = part
            elif isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise SpecError(f"--unset {key}: {here}: no such entry ({parent} has "
                                    f"{len(node)} entries, 0..{len(node) - 1})")
                index = int(part)
            else:
                raise SpecError(f"--unset {key}: {parent} is not a table (it is {node!r})")
            if depth == len(parts) - 1:
                del node[index]
            else:
                node = node[index]
    return data


def apply_scale(data: dict, scale: float | None) -> dict:
    """``--scale F``: scale the number of boards of the design (in place; returns ``data``).

    Only the group count changes: ``seeds`` in a seeds x games_per_seed design,
    ``runs`` in a runs x rounds design, to ``ceil(count * F)`` and never below 1.
    Every kept board keeps all its games (``games_per_seed``: the seat rotation),
    every kept run all its rounds (and the boards they cycle over), so a scaled
    study is a prefix of the full one: the same boards, seats and seeds for the
    games it plays. ``seeds = 8, games_per_seed = 4`` at ``F = 0.25`` plays
    2 boards x 4 games = 8 games; ``runs = 10, rounds = 20`` at ``F = 0.25`` plays
    3 runs x 20 rounds = 60 games.
    """
    check_scale(scale)
    if scale is None:
        return data
    design = data.get("design")
    if not isinstance(design, dict):
        return data
    key = group_key(design)
    value = design.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        design[key] = scale_groups(value, scale)
    return data
