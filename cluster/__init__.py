"""Arena's cluster layer: run studies on Ray and keep their results.

Imports go one way: ``jobs -> cluster -> agents -> games``. ``cluster`` knows
games and agents through their registries (``games.registry``,
``agents.registry``) and their public modules; it never imports ``jobs``. The
validated study and sweep model it runs lives here (``spec.py``,
``sweep_spec.py``); reading users' TOML files is ``jobs``'s job.

Modules: ``spec`` / ``sweep_spec`` (validated models; their field rules in
``spec_fields``, seed files and MLflow artifacts in ``seed_populations``),
``plan`` (games and seeds of a study), ``scheduler`` (GameHost actors,
HostPool), ``play`` (one game on a host), ``store`` (durable Parquet results),
``study`` (the driver loop), ``tracking`` (MLflow, with the one batch writer),
``report`` (tables and plots, the one Markdown table writer), ``stats`` (every
interval and test, on SciPy), ``populations`` (export learned populations),
``sweep`` (Ray Tune sweeps; ``sweep_tracking`` mirrors them to MLflow,
``sweep_results`` scores, selects and reports), ``segments``, ``ratings``,
``sequential`` and ``scaling_bench`` (scheduling overhead and scaling,
``arena bench cluster``).
"""
