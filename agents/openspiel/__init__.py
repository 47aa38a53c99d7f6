"""OpenSpiel's bots as Arena agents, on OpenSpiel games (``openspiel:NAME``).

===================  ==========================================================
``openspiel_mcts``   OpenSpiel's C++ ``MCTSBot`` with its random-rollout evaluator
                     (UCT or PUCT, optional solver); on a game with hidden
                     information it searches one world drawn from what its player
                     saw (OpenSpiel's MCTS takes a state)
``openspiel_ismcts`` OpenSpiel's C++ ``ISMCTSBot`` (information-set MCTS) for games
                     with hidden information whose OpenSpiel state can resample
                     itself from an information state (kuhn_poker, leduc_poker, ...)
``openspiel_random`` OpenSpiel's ``uniform_random`` bot
===================  ==========================================================

These are the bots of OpenSpiel that need no trained model (AlphaZero's and the
policy bots need networks or solved policies; the roshambo and gin rummy bots play one
game each). A bot gets a ``pyspiel.State`` rebuilt from its player's observation
(:func:`games.openspiel.state_from_observation`), never the referee's state, and its
seed from the seat's SeedSequence, so a game is a pure function of its seeds under an
iteration budget (``Budget.iterations`` is the bots' ``max_simulations``; a budget in
ms is their ``max_wall_clock_time``).

OpenSpiel is imported when the first game starts, so ``import agents`` works without
the ``arena[openspiel]`` extra; naming these agents without it is one error.
"""
from __future__ import annotations

from ._bots import OpenSpielISMCTSAgent, OpenSpielMCTSAgent, OpenSpielRandomAgent

__all__ = ["OpenSpielISMCTSAgent", "OpenSpielMCTSAgent", "OpenSpielRandomAgent"]
