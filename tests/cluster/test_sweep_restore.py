"""A sweep begun before the cluster floor moved into rooms (issue 36) still restores: its
Tune experiment pickled the MLflow callback under the old module ``cluster.sweep_tracking``,
and ``run_sweep(resume=True)`` restores it (``Tuner.restore``) without running a trial again."""
from __future__ import annotations

import os
import sys

import ray.cloudpickle as cloudpickle

from cluster.spec.sweep import build_sweep
from cluster.sweep import tracking as sweep_tracking
from cluster.sweep.driver import MOVED_MODULES, run_sweep

from conftest import PLUGINS
from test_sweep import sweep_data


def _pickle_under_the_old_module(path) -> None:
    """Rewrite ``tuner.pkl`` as a release before the move wrote it: the SweepTracker class
    named by its old module."""
    state = cloudpickle.loads(path.read_bytes())
    cls = sweep_tracking.SweepTracker
    sys.modules["cluster.sweep_tracking"] = sweep_tracking
    cls.__module__ = "cluster.sweep_tracking"
    try:
        blob = cloudpickle.dumps(state)
    finally:
        cls.__module__ = "cluster.sweep.tracking"
        del sys.modules["cluster.sweep_tracking"]
    assert b"cluster.sweep_tracking" in blob
    path.write_bytes(blob)


def test_a_sweep_from_before_the_move_restores(ray_local, tmp_path, capsys):
    assert "cluster.sweep_tracking" in MOVED_MODULES
    data = sweep_data(tmp_path, name="moved", search={"lineup.0.params.sleep_ms": {"grid": [0.0, 1.0]}},
                      reevaluate={"top_k": 1, "games": 2})
    sweep = build_sweep(data)
    first = run_sweep(sweep, plugins=PLUGINS, progress=False)
    assert len(first.trials) == 2 and set(first.trials["status"]) == {"COMPLETE"}

    tuner_pkl = sweep.sweep_dir.resolve() / "tune" / "tuner.pkl"
    _pickle_under_the_old_module(tuner_pkl)
    mtimes = {p: p.stat().st_mtime for p in (tmp_path / "studies").rglob("*.parquet") if "-reeval-" not in str(p)}
    capsys.readouterr()

    again = run_sweep(sweep, plugins=PLUGINS, progress=False, resume=True)
    assert "resuming sweep moved" in capsys.readouterr().out  # Tuner.restore, not a new experiment
    assert len(again.trials) == 2 and set(again.trials["status"]) == {"COMPLETE"}
    assert {p: p.stat().st_mtime for p in mtimes if os.path.exists(p)} == mtimes  # no trial played again
    assert "cluster.sweep_tracking" not in sys.modules  # the old name only while restoring
