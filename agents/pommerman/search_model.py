"""The model of the world a Pommerman searcher plans in, public for analysis programs
(e.g. ``jobs/femcts/fog_diagnostics.py``, which replays what FEMCTS's search sees under fog,
and ``jobs/femcts/calibration.py``, which counts the forward-model ticks of MCTS's iterations).

These are the kernels every searcher of this package shares (defined in the private
``_common.py``); this module is their public face, so programs outside ``agents``
need not reach into the package's private modules:

* :func:`prepare_search`: the search root built from an observation (hidden
  power-ups, fog, the opponents' unknown moves) under the profile's switches;
* :func:`advance`: one open-loop forward step of the model;
* :func:`safe_random_action`: the rollout's random action that avoids certain death;
* :func:`search_over`: whether an iteration stops (the searcher's result decided);
* :func:`can_act`: whether a seat is asked for an action in an observation (alive,
  game not over; from ``_agent.py``);
* :func:`scratch_state`: an empty state of the capacity a searcher's root and scratch
  have (every agent of this package allocates its two with it; from ``_agent.py``).
"""
from ._agent import can_act, scratch_state
from ._common import advance, prepare_search, safe_random_action, search_over

__all__ = ["prepare_search", "advance", "safe_random_action", "search_over", "can_act", "scratch_state"]
