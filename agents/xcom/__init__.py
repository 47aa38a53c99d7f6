"""XCOM agents on the shared search core (``agents/search``).

One MCTS driver (``mcts.py``) serves all four agents; the TD agents
(``td.py``) plug their value term into it as data (``_value.py``):

==================  =================  =========================================
registry name       study name         value term in UCT
==================  =================  =========================================
``xcom_mcts``       MCTS               none (random rollouts only)
``xcom_mcts_td``    MCTS-TD            table over the 3x3 grid around the unit
``xcom_mf_fa``      MF+FA              linear over five manual features
``xcom_convae_fa``  Conv-AE+FA         linear over the conv encoder's features
==================  =================  =========================================
"""
from . import mcts, td  # noqa: F401  (registration happens on import)
