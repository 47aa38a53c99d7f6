"""The FEMCTS study: its specs (``*.toml``, ``seeds/``) and the programs that serve it.

* ``calibration``: the forward-model ticks per iteration of MCTS and FEMCTS that set
  FEMCTS's iteration budget (``python -m jobs.femcts.calibration``);
* ``side_by_side``: Arena's Pommerman agents against the Java framework's figures
  (``framework_side_by_side.toml``);
* ``fog_diagnostics`` and ``fog_readings``: what FEMCTS's search sees under fog, and its
  win % per view range from study directories (``FINDINGS.md``).

``README.md`` is the protocol (how to run each spec, the calibration); ``FINDINGS.md``
the report of what the fog investigations found.
"""
