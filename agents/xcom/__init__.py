"""XCOM agents on the shared search core (``agents/search``).

One MCTS driver (``mcts.py``) serves all five agents; the TD agents
(``td.py``) plug their value term into it as data (``_value.py``). The bonus
of one of the agent's own commands ``c`` (from ``s`` to the afterstate ``s'``)
in UCT is ``value_weight * (r(s, c) + gamma * V(s'))`` by default
(``value_target = "td_target"``; ``"next_state"``: ``value_weight * V(s')``):

====================  =============  =============================================
registry name         study name     V in the bonus
====================  =============  =============================================
``xcom_mcts``         MCTS           no bonus (random rollouts only)
``xcom_mcts_reward``  MCTS+R         none: the bonus is the reward ``r(s, c)`` alone
                                     (the reward-only control)
``xcom_mcts_td``      MCTS-TD        table over the 3x3 grid around the unit
``xcom_mf_fa``        MF+FA          linear over five manual features
``xcom_convae_fa``    Conv-AE+FA     linear over the conv encoder's features
====================  =============  =============================================
"""
from . import mcts, td  # noqa: F401  (registration happens on import)
