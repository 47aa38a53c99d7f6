"""Analysis and training programs beside the CLI: they read specs through ``jobs.spec``,
play through the cluster's game loop (``cluster.run.play``) and use agents' public
APIs only (``tests/test_layers.py`` forbids private imports across packages).

* ``side_by_side``: Arena's Pommerman agents against the Java framework's figures
  (``jobs/femcts/framework_side_by_side.toml``);
* ``fog_diagnostics`` and ``fog_readings``: what FEMCTS's search sees under fog, and its
  win % per view range from study directories (``jobs/femcts/``);
* ``lc_tables`` and ``scotland_yard_compare``: Scotland Yard's location-categorization
  tables and the paper comparisons (``jobs/scotland_yard/``);
* ``train_birds`` and ``train_encoder``: training the bird policy and the XCOM
  autoencoder (``arena train-birds``, ``arena train-encoder``);
* ``paired_bench``: the interleaved this-tree / other-tree benchmark (``arena bench --against``);
* ``plugin_bench``: the cost of plugin agents and games (``arena bench plugins``);
* ``cold_start``: the first play from an empty numba cache and from a warm one
  (``arena bench pommerman``'s ``cold_start_s`` / ``warm_start_s``).
"""
