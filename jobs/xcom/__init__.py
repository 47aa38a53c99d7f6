"""The XCOM studies: their specs (``*.toml``) and the programs that serve them.

* ``train_encoder``: training the Conv-AE encoder of the Conv-AE+FA agent
  (``arena train-encoder``);
* ``diagnostics``: whether the learned value reaches the search, decision by decision
  (``python -m jobs.xcom.diagnostics``).
"""
