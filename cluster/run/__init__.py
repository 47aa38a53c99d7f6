"""Running a study on Ray: one game on a host, the hosts and their scheduling, the driver.

Lives here: ``play`` (one game on a host: agents built from their configs, the
rows it returns), ``scheduler`` (``GameHost`` actors playing batches of games, ``BatchSizer``,
``HostPool``: bounded in-flight work, unordered retrieval, lost hosts replaced), ``policy`` (the
scheduling policy: which series first, how far past a sequential test's
frontier), ``plugin_nodes`` (every node imports the spec's plugins before a game),
``warm`` (the lineup's kernels compiled in parallel processes into the node's
numba cache), ``tracker`` (what a study logs to MLflow), ``standings`` (a
tournament's leaderboard refreshed while it runs), ``faults`` (termination signals as
interrupts, the infrastructure's errors), ``lock`` (one driver per study directory),
``ray_session`` (the Ray a driver plays on: started, watched for a lost GCS, ended with
every process it started) and ``driver`` (``run_study`` in named stages: plan and
resume, dispatch, finish). The cluster's benchmark
(``arena bench cluster``) is in the bench wing, ``jobs/bench/cluster.py``.

May import every room below it: ``cluster.spec``, ``cluster.results``,
``cluster.tracking``, ``cluster.replay``, ``cluster.analysis``, ``cluster.stats``.
Nothing is re-exported here: ``scheduler`` and ``driver`` import Ray, and a game
host or ``arena play`` loads ``play`` without it.
"""
