"""Seed populations named in a spec: local ``.npz`` files or MLflow artifacts, checked before any game.

``lineup[i].seed_population`` is a path (relative to the spec file), a
``file://`` URI or an MLflow artifact URI (``runs:/<run id>/path.npz``,
``mlflow-artifacts:/...``, ``models:/...``, downloaded once into
``<results_dir>/.seed-populations``). :func:`resolve_population` turns it into
an absolute path and checks the file opens as plain arrays
(``allow_pickle=False``); :func:`check_population_fits` lets the agent class
check the arrays against its config. Errors name the field
(``lineup[0].seed_population: file not found: x.npz (resolved to /abs/x.npz)``).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from agents.registry import agent_class
from cluster.spec.fields import SpecError

__all__ = ["MLFLOW_URI_SCHEMES", "fetch_mlflow_artifact", "resolve_population", "check_population_fits", "load_populations"]


MLFLOW_URI_SCHEMES = ("runs:/", "mlflow-artifacts:/", "models:/")


def fetch_mlflow_artifact(name: str, uri: str, tracking_uri: str | None, cache_dir: Path) -> Path:
    """Download an MLflow artifact (``runs:/<run_id>/path.npz`` ...) into ``cache_dir``."""
    import mlflow.artifacts

    target = cache_dir / hashlib.sha1(f"{tracking_uri}|{uri}".encode()).hexdigest()[:16]
    try:
        local = mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(target),
                                                    tracking_uri=tracking_uri)
    except Exception as exc:  # noqa: BLE001 - any failure: the field is unusable
        raise SpecError(f"{name}: cannot download MLflow artifact {uri!r} from "
                        f"{tracking_uri or 'the default tracking store'} "
                        f"({type(exc).__name__}: {exc})") from None
    return Path(local)


def resolve_population(name: str, text: str, base_dir: Path, check_files: bool,
                       tracking_uri: str | None = None, cache_dir: Path | None = None) -> str:
    """The absolute path (or, unchecked, the artifact URI) of the seed population ``text``
    of field ``name``; with ``check_files`` the file exists and opens as plain arrays."""
    if text.startswith(MLFLOW_URI_SCHEMES):
        if not check_files:  # a worker rebuilding the spec: the driver resolved it already
            return text
        path = fetch_mlflow_artifact(name, text, tracking_uri,
                                     cache_dir or Path("arena-studies") / ".seed-populations")
    else:
        path_text = text[len("file://"):] if text.startswith("file://") else text
        if "://" in path_text:
            raise SpecError(f"{name}: a local path, a file:// URI or an MLflow artifact URI "
                            f"({', '.join(MLFLOW_URI_SCHEMES)}...) is needed, got {text!r}")
        path = Path(path_text).expanduser()
        if not path.is_absolute():
            path = (base_dir / path).resolve()
    if check_files:
        if not path.is_file():
            raise SpecError(f"{name}: file not found: {text} (resolved to {path})")
        try:
            with np.load(path, allow_pickle=False) as npz:
                for key in npz.files:
                    npz[key]
        except Exception as exc:  # noqa: BLE001 - any failure means an unusable file
            raise SpecError(f"{name}: not a readable .npz of plain arrays: {path} "
                            f"({type(exc).__name__}: {exc})") from None
    return str(path)


def check_population_fits(name: str, agent: str, config, path: str) -> dict:
    """Let the agent class check a seed population against its config (shape, values)."""
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    try:
        agent_class(agent).check_learned_state(config, arrays)
    except ValueError as exc:
        raise SpecError(f"{name}: {path}: {exc}") from None
    return arrays


def load_populations(spec) -> dict[str, dict[str, np.ndarray]]:
    """``{label: arrays}`` from the seats' ``seed_population`` .npz files."""
    out = {}
    for seat in spec.lineup:
        if seat.seed_population:
            with np.load(seat.seed_population, allow_pickle=False) as npz:
                out[seat.label] = {k: npz[k] for k in npz.files}
    return out
