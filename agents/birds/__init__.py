"""Agents of the bird card game (registered in :mod:`agents.registry`):

* ``birds_mcts`` (``mcts.py``): MCTS with decision and chance nodes over
  information sets on the shared core :mod:`agents.search`; with
  ``chance_nodes = false`` the single-determinization baseline;
* ``birds_greedy`` (``greedy.py``): play the best affordable bird, else food or draw;
* ``birds_random_typed`` (``greedy.py``): an action type first, then an action of it
  (the public project's random player);
* ``birds_policy`` (``policy.py``): the trained linear softmax policy, and its
  REINFORCE training (:func:`~agents.birds.policy.train_policy`);
* ``random`` (:mod:`agents.random_agent`) is the uniform baseline.

``mcts.py`` keeps the search and the agent; its information sets (unseen cards,
determinization, chance outcomes) are in ``information_sets.py`` and its
transitions (chance events, the opponent's turn, rollouts, leaf values) in
``transitions.py``. ``features.py`` holds the action features, the policy kernels
and the move models (random / policy / greedy) the searches and the training
share; ``weights/`` holds the shipped policy (the MCTS default opponent model,
``weights/PROVENANCE.md``). ``arena bench birds`` (``jobs/bench/birds.py``)
measures their speed.
"""
from .greedy import BirdsGreedyAgent, BirdsTypedRandomAgent
from .mcts import BirdsMCTSAgent
from .policy import BirdsPolicyAgent

__all__ = ["BirdsGreedyAgent", "BirdsMCTSAgent", "BirdsPolicyAgent", "BirdsTypedRandomAgent"]
