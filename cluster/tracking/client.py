"""MLflow plumbing: the one batch writer, tracking stores and experiments, the run record
of a study directory, provenance, UI links.

Nothing here knows what a study, sweep or rating logs (that lives with them:
``cluster.run.tracker``, ``cluster.sweep.tracking``, ``cluster.analysis.ratings``);
this module only talks to MLflow. MLflow is imported inside the functions that
call it (an optional, slow import: specs and reports load without it).
"""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import unquote, urlparse

__all__ = ["STUDY_TAG", "SERIES_TAG", "PARENT_TAG", "NOTE_TAG", "EXPERIMENT_KIND_TAG", "TRAINING_KIND",
           "RUN_FILE", "MAX_PARAM_CHARS", "MAX_PARAMS_PER_BATCH", "MAX_METRICS_PER_BATCH",
           "MAX_TAGS_PER_BATCH", "MAX_RUN_NAME", "RESULTS", "RESULT_KEYS", "log_batch", "key_safe",
           "metric_key", "sqlite_path", "normalize_uri", "is_server", "store_exists", "artifact_location",
           "ensure_experiment", "VIEW_KEY", "VIEW_TAG", "update_runs_view", "read_run_records",
           "find_run_record", "write_run_record", "git_commit", "arena_version", "filter_quote", "ui_url",
           "HTTP_LIMITS", "PROBE_SECONDS", "TrackingUnavailable", "probe_server", "bounded_http"]

STUDY_TAG = "arena.study_id"
SERIES_TAG = "arena.series_id"
PARENT_TAG = "mlflow.parentRunId"
NOTE_TAG = "mlflow.note.content"
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
TRAINING_KIND = "custom_model_development"
#: The file in a study directory that names its MLflow run(s).
RUN_FILE = "mlflow_run.json"
MAX_PARAM_CHARS = 6000
MAX_PARAMS_PER_BATCH = 100
MAX_METRICS_PER_BATCH = 1000
MAX_TAGS_PER_BATCH = 100
MAX_RUN_NAME = 200
RESULTS = ("win", "tie", "loss")
#: Metric prefix of each result (capitals: they sort before every other metric).
RESULT_KEYS = {"win": "W", "tie": "T", "loss": "L"}

#: MLflow's client retries a failed request 7 times with exponential backoff (about 4 minutes)
#: and waits 120 s for each answer (``MLFLOW_HTTP_REQUEST_*``, read at every request). A
#: study's tracker, whose results store has every game anyway, uses these while it talks to a
#: server, each only where the user has not set it: a dead server costs seconds, not minutes.
HTTP_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
               "MLFLOW_HTTP_REQUEST_TIMEOUT": "20"}
#: How long the probe of a tracking server waits for ``/health`` to answer.
PROBE_SECONDS = 5.0


class TrackingUnavailable(RuntimeError):
    """The tracking server did not answer (the study runs untracked)."""


_KEY_OK = re.compile(r"[^0-9A-Za-z_\-. /]")


def log_batch(client, run_id: str, metrics: Mapping[str, float] | None = None,
              params: Mapping[str, Any] | None = None, tags: Mapping[str, Any] | None = None,
              step: int = 0, timestamp: int | None = None,
              curve: Iterable[tuple[str, float, int]] = ()) -> None:
    """Log ``metrics`` (at ``step``), a ``curve`` of ``(key, value, step)`` points,
    ``params`` (values cut to MLflow's 6000 characters) and ``tags`` in as few
    ``log_batch`` requests as MLflow allows (1000 metrics, 100 params, 100 tags each).
    The one MLflow batch writer of studies, sweeps, ratings and training jobs;
    values that are not finite numbers are left out (MLflow cannot chart them)."""
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000) if timestamp is None else int(timestamp)
    points = [(k, v, step) for k, v in (metrics or {}).items()] + list(curve)
    ms = [Metric(str(k), float(v), now, int(s)) for k, v, s in points if _finite(v)]
    ps = [Param(str(k), str(v)[:MAX_PARAM_CHARS]) for k, v in sorted((params or {}).items())]
    ts = [RunTag(str(k), str(v)) for k, v in (tags or {}).items()]
    while ms or ps or ts:
        client.log_batch(run_id, metrics=ms[:MAX_METRICS_PER_BATCH], params=ps[:MAX_PARAMS_PER_BATCH],
                         tags=ts[:MAX_TAGS_PER_BATCH])
        ms, ps, ts = ms[MAX_METRICS_PER_BATCH:], ps[MAX_PARAMS_PER_BATCH:], ts[MAX_TAGS_PER_BATCH:]


def _finite(value) -> bool:
    try:
        return not isinstance(value, str) and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def key_safe(text: str) -> str:
    """``text`` with the characters MLflow refuses in keys replaced by ``_`` (MLflow allows
    alphanumerics, _ - . space /)."""
    return _KEY_OK.sub("_", text)


def metric_key(name: str, label: str) -> str:
    """An MLflow-safe key ``name/label``."""
    return f"{name}/{key_safe(label)}"


# --- tracking stores -------------------------------------------------------------------
def sqlite_path(uri: str) -> Path | None:
    """The absolute database path of a ``sqlite:///`` URI (None for other stores)."""
    if not uri.startswith("sqlite:///"):
        return None
    rest = uri[len("sqlite:///"):].split("?", 1)[0]
    if not rest or rest == ":memory:":
        return None
    return Path(rest).expanduser().resolve()


def normalize_uri(uri: str) -> str:
    """The tracking URI with a ``sqlite:`` database made absolute (the same store from any
    directory, e.g. inside ``ray job submit``'s copy of the working directory)."""
    path = sqlite_path(uri)
    if path is None:
        return uri
    query = uri.split("?", 1)[1] if "?" in uri else ""
    return f"sqlite:///{path}" + (f"?{query}" if query else "")


def is_server(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def probe_server(uri: str, timeout: float = PROBE_SECONDS) -> None:
    """Raise :class:`TrackingUnavailable` (with the reason) when the tracking server at
    ``uri`` does not answer ``GET /health`` within ``timeout`` seconds. Any HTTP answer
    counts as up (e.g. a proxy's 404); other stores are not probed."""
    if not is_server(uri):
        return
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout):
            return
    except urllib.error.HTTPError:
        return
    except (OSError, ValueError) as exc:  # refused, unknown host, timed out, bad URL
        reason = getattr(exc, "reason", exc)
        raise TrackingUnavailable(f"no answer to GET /health: {reason}") from None


@contextmanager
def bounded_http(uri: str):
    """Within the block, MLflow's HTTP requests to a server use :data:`HTTP_LIMITS` (each
    only where the environment does not set it already); restored afterwards."""
    if not is_server(uri):
        yield
        return
    unset = [key for key in HTTP_LIMITS if key not in os.environ]
    for key in unset:
        os.environ[key] = HTTP_LIMITS[key]
    try:
        yield
    finally:
        for key in unset:
            os.environ.pop(key, None)


def store_exists(uri: str) -> bool:
    """Whether the tracking store behind ``uri`` exists (a server is assumed to)."""
    path = sqlite_path(uri)
    if path is not None:
        return path.is_file()
    if uri.startswith("file:"):
        return Path(unquote(urlparse(uri).path)).is_dir()
    if "://" not in uri:  # a plain directory (MLflow's file store)
        return Path(uri).is_dir()
    return True


def artifact_location(uri: str, experiment: str) -> str | None:
    """Where a new experiment's artifacts go: beside the database for a ``sqlite:`` store
    (an absolute path, so ``ray job submit`` and any working directory find them); None
    (the store's or server's default) otherwise."""
    path = sqlite_path(uri)
    if path is None:
        return None
    # the name as a directory name: no separators, and no leading dot ('..' would be the parent)
    safe = re.sub(r"[^0-9A-Za-z_.-]", "_", experiment).lstrip(".") or "experiment"
    return str(path.parent / "mlartifacts" / safe)


def ensure_experiment(client, name: str, uri: str) -> str:
    """The id of experiment ``name``, created (artifact location, model-training kind) if
    absent; an existing experiment without a kind gets the model-training kind."""
    exp = client.get_experiment_by_name(name)
    if exp is None:
        try:
            return client.create_experiment(name, artifact_location=artifact_location(uri, name),
                                            tags={EXPERIMENT_KIND_TAG: TRAINING_KIND})
        except Exception:
            exp = client.get_experiment_by_name(name)  # created concurrently by another driver
            if exp is None:
                raise
    if exp.lifecycle_stage == "deleted":
        raise ValueError(f"tracking.experiment: the MLflow experiment {name!r} is deleted at {uri}; "
                         f"restore it (mlflow experiments restore) or use another name")
    if not exp.tags.get(EXPERIMENT_KIND_TAG, "").startswith(TRAINING_KIND):
        if EXPERIMENT_KIND_TAG not in exp.tags or exp.tags[EXPERIMENT_KIND_TAG].endswith("_inferred"):
            client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND_TAG, TRAINING_KIND)
    return exp.experiment_id


#: MLflow's UI reads a runs-table view from the experiment tag ``mlflow.sharedViewState.<key>``
#: when the URL says ``?viewStateShareKey=<key>``: Arena's view shows W/T/L per label first.
VIEW_KEY = "arena-wtl"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"


def update_runs_view(client, experiment_id: str, labels: Sequence[str], ratings: bool = False) -> None:
    """Add ``labels`` to the experiment's W/T/L runs-table view (labels of earlier
    studies stay, in their order); with ``ratings`` (a tournament), each label's
    ``rating/<label>`` too, ahead of its W/T/L, so that tournaments compare at a glance."""
    exp = client.get_experiment(experiment_id)
    known: list[str] = []
    rated = False
    try:
        stored = json.loads(exp.tags.get(VIEW_TAG, "{}"))
        known = list(stored.get("arenaLabels", []))
        rated = bool(stored.get("arenaRatings", False))
    except (ValueError, AttributeError):
        known = []
    merged = known + [label for label in labels if label not in known]
    if merged == known and VIEW_TAG in exp.tags and rated >= ratings:
        return
    rated = rated or ratings
    columns = [f"metrics.`{metric_key(key, label)}`" for label in merged
               for key in (["rating"] if rated else []) + [RESULT_KEYS[r] for r in RESULTS]]
    view = {"selectedColumns": columns, "columnOrder": ["attributes.`Run Name`"] + columns,
            "arenaLabels": merged, **({"arenaRatings": True} if rated else {})}
    client.set_experiment_tag(experiment_id, VIEW_TAG, json.dumps(view))


# --- the study directory's run record -------------------------------------------------------
def read_run_records(study_dir) -> list[dict]:
    """The entries of ``<study_dir>/mlflow_run.json`` (tracking_uri, experiment,
    experiment_id, run_id, run_name); [] when there is none."""
    path = Path(study_dir) / RUN_FILE
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [dict(r) for r in data.get("runs", [])]
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError(f"{path}: unreadable MLflow run record ({exc}); delete it to start a new run") from None


def find_run_record(study_dir, uri: str, experiment: str) -> dict | None:
    uri = normalize_uri(uri)
    for record in read_run_records(study_dir):
        if record.get("tracking_uri") == uri and record.get("experiment") == experiment:
            return record
    return None


def write_run_record(study_dir, record: dict) -> None:
    """Add (or replace) the entry of ``record``'s store and experiment, atomically."""
    study_dir = Path(study_dir)
    study_dir.mkdir(parents=True, exist_ok=True)
    records = [r for r in read_run_records(study_dir)
               if (r.get("tracking_uri"), r.get("experiment")) != (record["tracking_uri"], record["experiment"])]
    records.append(record)
    path = study_dir / RUN_FILE
    tmp = study_dir / f".tmp-{uuid.uuid4().hex}-{RUN_FILE}"
    tmp.write_text(json.dumps({"runs": records}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --- provenance -------------------------------------------------------------------------
def git_commit() -> str:
    """The git commit of the code (``unknown`` outside a git checkout, e.g. in
    ``ray job submit``'s copy; set ``ARENA_GIT_COMMIT`` to pass it in)."""
    if os.environ.get("ARENA_GIT_COMMIT"):
        return os.environ["ARENA_GIT_COMMIT"]
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def arena_version() -> str:
    try:
        return version("arena")
    except PackageNotFoundError:
        return "unknown"


def filter_quote(text: str) -> str:
    """``text`` inside a single-quoted MLflow search filter."""
    return text.replace("'", "\\'")


def ui_url(base: str, experiment_id: str, run_id: str | None = None) -> str:
    """The MLflow UI URL of an experiment's runs page (model-training view, the W/T/L
    columns of :func:`update_runs_view`) or of one run."""
    base = base.rstrip("/")
    if run_id:
        return f"{base}/#/experiments/{experiment_id}/runs/{run_id}?workflowType=machine_learning"
    return (f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
            f"&viewStateShareKey={VIEW_KEY}")
