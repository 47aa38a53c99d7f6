"""The command line's edits of a raw spec: ``--set``, ``--unset`` and ``--scale``, before validation.

Every edit works on the raw TOML-shaped dict (a study's, or a sweep's with its base
study resolved), in place, and leaves validating the result to the builders
(:func:`cluster.spec.build.build_spec`, :func:`cluster.spec.sweep.build_sweep`), so an
edited value is checked like any other and errors name the field
(``--set design.seeds=2.5`` is refused there as a non-int). Parsing the command
line's text (``key=value``) is ``jobs.overrides``'s job.

``--scale F`` is one rule for ``arena run`` and ``arena sweep``, applied here only
(:func:`scale_study`, :func:`scale_sweep`): scale a count of whole *groups* (boards:
a board seed with its ``games_per_seed`` games, i.e. its seat rotation; or runs of
a runs x rounds design, with all their rounds) to ``ceil(count * F)``, at least one
(:func:`scale_groups`)::

    >>> study = {"design": {"seeds": 8, "games_per_seed": 4}}
    >>> scale_study(study, 0.25)["design"]
    {'seeds': 2, 'games_per_seed': 4}
    >>> sweep = {"sweep": {"games_per_trial": 40}, "base": {"design": {"seeds": 1, "games_per_seed": 4}},
    ...          "search": {"lineup.0.params.c": {"grid": [1, 2, 3, 4, 5]}}}
    >>> scale_sweep(sweep, 0.25)["sweep"], sweep["search"]["lineup.0.params.c"]["grid"]
    ({'games_per_trial': 12, 'num_samples': 1}, [1, 2])

Only values of the right shape are scaled (a positive int count, a whole number of
boards, a grid list of distinct values); anything else is left as it is for the
builder to refuse, naming the field with the value as given.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from cluster.spec.design import default_seeds, games_per_group, group_key
from cluster.spec.fields import SpecError, is_int
from cluster.spec.search_space import DEFAULT_NUM_SAMPLES, distinct_values, flatten_search

__all__ = ["set_path", "unset_path", "scale_groups", "check_scale", "scale_study", "scale_sweep"]


# --- --set and --unset --------------------------------------------------------------
def set_path(data: dict, parts: Sequence[str], value, where: str | None = None) -> dict:
    """Set ``value`` at the dotted path ``parts`` of a raw TOML-shaped dict (in place;
    returns it). List entries are addressed by index (``lineup.0.params.exploration``);
    missing tables are created. Errors start with ``where`` (default ``--set <path>``)."""
    dotted = ".".join(parts)
    where = where or f"--set {dotted}"
    node: Any = data
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        here = ".".join(parts[:depth + 1])
        if isinstance(node, list):
            if not part.isdigit():
                raise SpecError(f"{where}: {here}: expected a list index, got {part!r}")
            index = int(part)
            if index >= len(node):
                raise SpecError(f"{where}: {here}: index out of range "
                                f"({'.'.join(parts[:depth])} has {len(node)} entries)")
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise SpecError(f"{where}: {'.'.join(parts[:depth])} is not a table (it is {node!r})")
    return data


def unset_path(data: dict, parts: Sequence[str], where: str | None = None) -> dict:
    """Remove the key or list entry at the dotted path ``parts`` (in place; returns
    ``data``); the spec's default then applies. A path that is not there is a SpecError
    naming it and what its table holds. Errors start with ``where`` (default
    ``--unset <path>``)."""
    where = where or f"--unset {'.'.join(parts)}"
    node: Any = data
    for depth, part in enumerate(parts):
        here, parent = ".".join(parts[:depth + 1]), ".".join(parts[:depth]) or "the spec"
        if isinstance(node, dict):
            if part not in node:
                known = ", ".join(map(str, node)) or "nothing"
                raise SpecError(f"{where}: {here}: no such key ({parent} has: {known})")
            index = part
        elif isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise SpecError(f"{where}: {here}: no such entry ({parent} has "
                                f"{len(node)} entries, 0..{len(node) - 1})")
            index = int(part)
        else:
            raise SpecError(f"{where}: {parent} is not a table (it is {node!r})")
        if depth == len(parts) - 1:
            del node[index]
        else:
            node = node[index]
    return data


# --- --scale --------------------------------------------------------------------------
def scale_groups(count: int, scale: float | None) -> int:
    """The number of groups (board seeds, or runs) a design keeps under ``--scale``:
    ``ceil(count * scale)``, at least 1 (one whole group: one full seat rotation)."""
    if scale is None:
        return count
    return max(1, math.ceil(count * scale - 1e-9))


def check_scale(scale) -> None:
    """Raise SpecError unless ``scale`` is None or a finite positive number."""
    if scale is None:
        return
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (scale > 0) \
            or not math.isfinite(scale):
        raise SpecError(f"--scale: must be a positive number, got {scale!r}")


def _positive_int(value) -> bool:
    return is_int(value) and value >= 1


def _scale_whole_groups(games, group: int, scale: float):
    """``games`` given in games of whole groups of ``group`` games, with its groups scaled;
    a value that is not a positive multiple of ``group`` is returned as given."""
    if not _positive_int(games) or games % group:
        return games
    return scale_groups(games // group, scale) * group


def scale_study(data: dict, scale: float | None) -> dict:
    """``--scale F`` on a raw study dict (in place; returns ``data``).

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
    if _positive_int(design.get(key)):
        design[key] = scale_groups(design[key], scale)
    return data


def scale_sweep(data: dict, scale: float | None) -> dict:
    """``--scale F`` on a raw sweep dict whose ``base`` is the whole base study (in place;
    returns ``data``): the boards of the search scaled as :func:`scale_study` scales a
    study's, each board keeping all its games, and its other axes shrunk alike.

    * ``sweep.games_per_trial`` (default: the base design's games) and
      ``reevaluate.games`` (default: ``games_per_trial``, so scaled with it): whole
      boards of the base design, ``ceil(boards * F)`` of them;
    * ``scheduler.grace_period``: ``ceil(boards * F)`` whole boards (the builder keeps
      it within the trial; its default, a quarter of the trial's boards, follows);
    * ``sweep.num_samples`` (default 1): ``ceil(n * F)``;
    * every ``grid`` of ``[search]``: its first ``ceil(n * F)`` values.

    The base study itself is not scaled: a trial's design gets its group count from
    ``games_per_trial``, and the sweep's stored spec (compared when a sweep resumes)
    keeps the base as written.
    """
    check_scale(scale)
    if scale is None:
        return data
    sweep = data.get("sweep")
    base = data.get("base")
    design = base.get("design") if isinstance(base, Mapping) else None
    if isinstance(sweep, dict) and isinstance(design, Mapping):
        design = default_seeds(dict(design))
        group = games_per_group(design)
        games = sweep.get("games_per_trial")
        if games is None:  # the base design's games: its groups, scaled like a study's
            count = design.get(group_key(design))
            if _positive_int(count):
                sweep["games_per_trial"] = scale_groups(count, scale) * group
        else:
            sweep["games_per_trial"] = _scale_whole_groups(games, group, scale)
        for table, key in (("reevaluate", "games"), ("scheduler", "grace_period")):
            section = data.get(table)
            if isinstance(section, dict) and key in section:
                section[key] = _scale_whole_groups(section[key], group, scale)
    samples = sweep.get("num_samples", DEFAULT_NUM_SAMPLES) if isinstance(sweep, dict) else None
    if _positive_int(samples):  # a scale above 1 samples more than once
        sweep["num_samples"] = scale_groups(samples, scale)
    search = data.get("search")
    if isinstance(search, Mapping):
        for entry in flatten_search(search).values():
            grid = entry.get("grid") if isinstance(entry, dict) else None
            if isinstance(grid, list) and distinct_values(grid):
                entry["grid"] = grid[:scale_groups(len(grid), scale)]
    return data
