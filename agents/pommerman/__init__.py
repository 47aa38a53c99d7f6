"""Pommerman agents (registered in :mod:`agents.registry`), one module per agent
family with its numba kernel beside its Agent class:

* ``rule_based.py``: Arena's own hand-written rules (no search);
* ``simple_player.py``: ``simple``, the Java framework's SimplePlayer rule by
  rule (its slips included);
* ``osla.py``: one-step look-ahead; ``mcts.py``: open-loop UCT; ``rhea.py``:
  rolling horizon evolution (the Java framework's agents);
* ``femcts.py``: MCTS with an online-evolved rollout policy, over the features
  of ``features.py`` and the operators of :mod:`agents.evolution` (its rollout
  policy in ``femcts_rollout.py``, its search in ``femcts_search.py``).

Private to this package: ``_common.py`` (kernels every searcher shares: the
model of the world, the open-loop forward step; ``search_model.py`` is their public
face for analysis programs) and ``_agent.py`` (the Python
glue every agent shares). The agents' speed is measured in the bench wing
(``jobs/bench/pommerman/search.py``, ``arena bench pommerman``). Games are used through their public kernel
module only (:mod:`games.pommerman.kernels`). ``random`` is in :mod:`agents.random_agent`.
"""
from .femcts import FEMCTSAgent
from .mcts import MCTSAgent
from .osla import OSLAAgent
from .rhea import RHEAAgent
from .rule_based import RuleBasedAgent
from .simple_player import SimpleAgent

__all__ = ["FEMCTSAgent", "MCTSAgent", "OSLAAgent", "RHEAAgent", "RuleBasedAgent", "SimpleAgent"]
