"""Scotland Yard agents: MCTS for Mr X, determinizing MCTS for the seekers (Location
Categorization, Coalition Reduction, shared or per-detective trees) and greedy
baselines, all on the one search core (``agents.search``). Importing this
package registers them: ``sy_mcts_mrx``, ``sy_mcts_seekers``, ``sy_greedy_mrx``,
``sy_greedy_seekers`` (random play: the generic ``random`` agent).
"""
from . import greedy, mcts_mrx, mcts_seekers  # noqa: F401  (registration)
