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
  autoencoder (``arena train-birds``, ``arena train-encoder``).

The benchmarks (the paired check, the plugins' cost, the cold start, the Java sitting)
are in the bench wing, ``jobs/bench/``.
"""
