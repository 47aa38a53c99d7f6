"""Reading users' spec files: study and sweep TOML files into validated specs.

This is the only place that reads a user's spec files. The model they are
validated into lives in :mod:`cluster.spec.study` (studies, built by
:mod:`cluster.spec.build`) and :mod:`cluster.spec.sweep` (sweeps), which the cluster
runs; imports go from ``jobs`` to ``cluster``, never back.

    >>> spec = load_spec("jobs/pommerman_ffa_demo.toml", overrides=["design.seeds=4"], scale=0.5)
    >>> spec.design.seeds, spec.design.games_per_seed, spec.design.total_games
    (2, 4, 8)
"""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Mapping, Sequence

from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from cluster.spec.study import StudySpec
from cluster.spec.sweep import SweepError, SweepSpec, build_sweep

from .overrides import apply_overrides, apply_unsets

__all__ = ["load_spec", "load_sweep", "SpecError", "SweepError"]


def _read_toml(path: Path, what: str, error: type[SpecError]) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} file: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: malformed TOML: {exc}") from None


def load_spec(path, overrides: Sequence[str] = (), scale: float | None = None,
              unsets: Sequence[str] = ()) -> StudySpec:
    """Read a study spec from TOML, apply ``--set`` overrides, then ``--unset`` removals,
    then ``--scale``, validate."""
    path = Path(path)
    data = _read_toml(path, "spec", SpecError)
    apply_overrides(data, overrides)
    apply_unsets(data, unsets)
    return build_spec(data, source=str(path), check_files=True, scale=scale)


def _deep_merge(base: dict, over: Mapping) -> dict:
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _resolve_base(data: dict, base_dir: Path) -> str:
    """Replace ``data["base"]`` by the whole base study: the file named by
    ``sweep.base`` (relative to the sweep file) with inline ``[base]`` tables
    merged over it. Returns the base file's path ("" when all inline)."""
    sweep = data.get("sweep", {})
    base: dict = {}
    source = ""
    if isinstance(sweep, Mapping) and "base" in sweep:
        path = Path(str(sweep["base"])).expanduser()
        if not path.is_absolute():
            path = (base_dir / path).resolve()
        if not path.is_file():
            raise SweepError(f"sweep.base: study spec not found: {sweep['base']} (resolved to {path})")
        try:
            base = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SweepError(f"sweep.base: malformed TOML in {path}: {exc}") from None
        source = str(path)
    inline = data.get("base")
    if inline is not None:
        if not isinstance(inline, Mapping):
            raise SweepError(f"base: must be a table, got {type(inline).__name__} {inline!r}")
        _deep_merge(base, inline)
    data["base"] = base
    return source


def load_sweep(path, overrides: Sequence[str] = (), scale: float | None = None,
               unsets: Sequence[str] = ()) -> SweepSpec:
    """Read a sweep TOML and its base study, apply ``--set`` overrides (dotted keys
    into the sweep file, e.g. ``sweep.games_per_trial=8`` or ``base.budget.ms=10``),
    then ``--unset`` removals (into the sweep file with its base study resolved, e.g.
    ``base.design.seeds_per_set``) and ``--scale``, validate."""
    path = Path(path)
    data = _read_toml(path, "sweep", SweepError)
    try:
        apply_overrides(data, overrides)
    except SpecError as exc:
        raise SweepError(str(exc)) from None
    base_source = _resolve_base(data, path.resolve().parent)
    try:
        apply_unsets(data, unsets)
    except SpecError as exc:
        raise SweepError(str(exc)) from None
    return build_sweep(data, source=str(path), scale=scale, base_source=base_source)
