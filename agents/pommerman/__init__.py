"""Pommerman search agents (registered in :mod:`agents.registry`):

``rule_based``, ``osla``, ``mcts`` and ``rhea`` (``random`` lives in
:mod:`agents.simple`). Kernels: ``_common.py`` (model, forward step),
``_mcts.py``, ``_rhea.py``, ``_osla.py``, ``_rule_based.py``; the Agent
classes in ``players.py``; speed measurements in ``bench.py``.
"""
from .players import MCTSAgent, OSLAAgent, RHEAAgent, RuleBasedAgent
from .femcts import FEMCTSAgent

__all__ = ["FEMCTSAgent", "MCTSAgent", "OSLAAgent", "RHEAAgent", "RuleBasedAgent"]
