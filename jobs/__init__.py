"""Arena's front door: study and sweep specs (TOML) and the ``arena`` command line.

Imports go one way: ``jobs -> cluster -> agents -> games``; nothing imports
``jobs``. ``jobs.spec`` reads users' spec files into the validated models of
:mod:`cluster.spec.study` and :mod:`cluster.spec.sweep`; ``jobs.overrides``
parses ``--set`` and ``--unset`` (the edits themselves, and ``--scale``, are
:mod:`cluster.spec.edits`); ``jobs.cli`` is the ``arena`` console script,
one module per subcommand in ``jobs.commands``.
"""
