"""Ray Tune sweeps over a base study: every trial a study on the same boards, the top
settings re-evaluated on fresh boards.

Lives here: ``driver`` (``run_sweep``: search, re-evaluation, population export;
``Tuner.restore`` resumes an interrupted search), ``results`` (trial scores,
selection and the ranked report) and ``tracking`` (what a sweep logs to MLflow:
a parent run, one child per trial). The sweep model itself is
``cluster.spec.sweep``.

May import every other room of ``cluster`` (the top of the floor); Ray Tune only
inside the functions that use it.
"""
from cluster.sweep.driver import SweepResult, reevaluate, run_sweep

__all__ = ["SweepResult", "run_sweep", "reevaluate"]
