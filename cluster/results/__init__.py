"""The durable results of studies: the Parquet store (the source of truth) and what is
exported from it.

Lives here: ``store`` (``ResultStore``: one row per seat and game, appended
atomically in files named by their SHA-256, checked on every read (``check_rows``),
compacted at rest; the stored spec, checked against on a resume and read
back typed by ``read_stored_spec``; ``atomic_write``, the one way the cluster replaces a
file) and ``populations``
(the population an agent had in force during its longest winning streak, as a
seed-population ``.npz``).

May import: ``agents`` (registry and public API), ``cluster.stats`` and
``cluster.spec``; never the driver, tracking or reports (they read from here).
"""
from cluster.results.populations import PopulationExportError, export_population
from cluster.results.store import (METRIC_PREFIX, RESULTS, SCHEMA, ResultStore, SpecMismatchError, StoreError,
                                   atomic_write, read_stored_spec)

__all__ = ["ResultStore", "SCHEMA", "RESULTS", "StoreError", "SpecMismatchError", "METRIC_PREFIX", "atomic_write",
           "read_stored_spec", "export_population", "PopulationExportError"]
