"""MLflow plumbing, apart from what anybody logs.

Lives here: ``client`` (the one batch writer ``log_batch``, metric keys,
tracking stores and URIs, experiments, the run record of a study directory,
provenance tags, UI links). What a study logs is ``cluster.run.tracker``, what a
sweep logs ``cluster.sweep.tracking``, what ratings log
``cluster.analysis.ratings``: they all write through here.

May import: nothing of ``cluster`` (a leaf of the floor); MLflow only inside the
functions that call it.
"""
from cluster.tracking.client import *  # noqa: F401,F403 - the package's public face
from cluster.tracking.client import __all__  # noqa: F401
