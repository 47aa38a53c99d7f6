"""Statistics and tables of result rows: everything computed from a results store.

Lives here: ``summary`` (the one summary of result rows per label: which games
count, deaths, ties, the score; used by the report, MLflow tracking and sweeps),
``tables`` (the one Markdown table writer), ``report`` (a study's tables, plots
and report directory), ``learning_curves`` (learning curves of runs x rounds designs:
win rates per segment of rounds),
``ratings`` (Bradley-Terry-Davidson ratings across studies), ``leaderboard`` (a
tournament's crosstable and leaderboard with rank intervals), ``sequential`` (the
sequential test: its statistics and the monitor the driver asks for admission)
and ``board_pairs`` (per-board means of seat-swapped pairs).

May import: ``cluster.stats``, ``cluster.spec``, ``cluster.results``,
``cluster.tracking`` and ``cluster.replay`` (a report links replay pages); never
``cluster.run`` or ``cluster.sweep`` (they call in here). Plotting libraries are
imported inside the functions that plot.
"""
