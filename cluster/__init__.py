"""Arena's cluster layer: run studies on Ray and keep their results.

Imports go one way: ``jobs -> cluster -> agents -> games``. ``cluster`` knows
games and agents through their registries (``games.registry``,
``agents.registry``) and their public modules; it never imports ``jobs``. The
validated study and sweep model it runs lives here (``cluster.spec``); reading
users' TOML files is ``jobs``'s job.

The floor is rooms by concept, lowest first; a room imports only the rooms
before it (``tests/test_layers.py`` holds the order and forbids circles and
private imports across rooms):

* ``stats``: every interval and test, on SciPy (a leaf module).
* ``tracking/``: MLflow plumbing (the one batch writer, stores, run records),
  knowing nothing of what is logged.
* ``spec/``: the validated study and sweep models, their field rules, seed
  populations, the CLI edits (``--set``, ``--unset``, ``--scale``), the builders, the plan.
* ``results/``: the Parquet results store (the source of truth) and population export.
* ``replay/``: game records, their re-simulation and rendering.
* ``analysis/``: everything computed from result rows: the one per-label summary,
  tables, the report, learning curves, ratings, sequential tests, board pairs.
* ``run/``: one game on a host, the scheduler and its policy, what a study logs,
  the study driver in stages, the scaling bench.
* ``sweep/``: Ray Tune sweeps over a base study, their results and tracking.

Each room's ``__init__`` says what lives there and what it may import.
"""
