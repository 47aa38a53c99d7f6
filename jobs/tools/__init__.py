"""Benchmark programs beside the CLI (on their way to the bench wing, ``jobs/bench/``);
each study's own programs are in its folder (``jobs/femcts/``, ``jobs/scotland_yard/``,
``jobs/birds/``, ``jobs/xcom/``). They read specs through ``jobs.spec``, play through the
cluster's game loop and use agents' public APIs only (``tests/test_layers.py`` forbids
private imports across packages).

* ``paired_bench``: the interleaved this-tree / other-tree benchmark (``arena bench --against``);
* ``plugin_bench``: the cost of plugin agents and games (``arena bench plugins``);
* ``cold_start``: the first play from an empty numba cache and from a warm one
  (``arena bench pommerman``'s ``cold_start_s`` / ``warm_start_s``);
* ``java_sitting``: the Java framework's speed beside Arena's.
"""
