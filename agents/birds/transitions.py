"""Transitions of the bird game's MCTS (:mod:`agents.birds.mcts`): what follows
the searcher's action in a determinized state.

An action that reveals a card leaves a chance event pending (``PENDING_*``: a
draw, a tray refill, and with ``closed_loop`` the opponent's move and its
refill, whose outcomes are ``OPP_*``); :func:`resolve_chance` settles it with an
outcome, :func:`opponent_move` plays the opponent's turn by its model, and
:func:`rollout` plays to the end and scores it with :func:`leaf_value`
(``BACKUP_*``).
"""
from __future__ import annotations

import numba as nb

from games.birds.kernels import (
    DRAW_DECK, DRAW_TRAY, M_DECK_POS, M_TO_MOVE, N_CLASSES, P_SCORE, TRAY_SLOTS, apply_action,
    card_class, end_turn, is_terminal, result_of, step,
)

from .features import model_action
from .information_sets import GROUPING_COARSE, force_top_card

#: What a finished game backs up (``BirdsMCTSConfig.backup``).
BACKUP_RESULT = 0
BACKUP_MARGIN = 1
#: The chance event an action leaves pending.
PENDING_NONE = 0
PENDING_DRAW = 1
PENDING_REFILL = 2
PENDING_OPPONENT = 3      # closed loop: the opponent's move is a chance node
PENDING_OPP_REFILL = 4    # closed loop: the tray refill after the opponent took a tray card
#: Outcomes of an opponent chance node (closed loop): what the searcher sees of the move.
OPP_PLAY = 0                          # + the class of the bird played
OPP_TRAY = N_CLASSES                  # + the tray slot taken
OPP_DECK = N_CLASSES + TRAY_SLOTS     # a blind draw (the card stays hidden: not split)
OPP_FOOD = OPP_DECK + 1


@nb.njit(cache=True)
def opponent_turn(sim, player, opp_model, weights, feats, probs, rng):
    """If the game goes on, the opponent of ``player`` takes its turn by its model."""
    if is_terminal(sim) or sim.meta[M_TO_MOVE] == player:
        return
    q = sim.meta[M_TO_MOVE]
    step(sim, model_action(sim, q, opp_model, weights, feats, probs, rng))


@nb.njit(cache=True, inline="always")
def pending_after(sim, action, split):
    """Which chance event (PENDING_*) ``action`` of the player to move leads to
    (none unless ``split``: the search makes chance nodes)."""
    if not split or sim.meta[M_DECK_POS] >= sim.deck.shape[0]:
        return PENDING_NONE
    if action == DRAW_DECK:
        return PENDING_DRAW
    if DRAW_TRAY <= action < DRAW_DECK:
        return PENDING_REFILL
    return PENDING_NONE


@nb.njit(cache=True, inline="always")
def begin_action(sim, player, action, pending, closed_loop, opp_model, weights, feats, probs, rng):
    """Apply the searching player's ``action`` up to its chance event: nothing yet
    for a deck draw, the tray take for a tray draw; with no chance event the
    whole turn and (open loop) the opponent's reply."""
    if pending == PENDING_DRAW:
        return
    if pending == PENDING_REFILL:
        apply_action(sim, action)
        return
    step(sim, action)
    if not closed_loop:
        opponent_turn(sim, player, opp_model, weights, feats, probs, rng)


@nb.njit(cache=True, inline="always")
def resolve_chance(sim, player, pending, outcome, count, outcome_of, params, weights, scratch, rng):
    """Finish a turn whose chance event has ``outcome`` (a card class, or a group by
    ``outcome_of``, with ``count`` unseen cards): such a card is drawn (or refills
    the tray), the turn ends and (open loop) the opponent replies.

    ``params``: the search's :class:`~agents.birds.mcts.BirdsMctsParams` (its
    ``grouping``, ``closed_loop`` and ``opp_model``); ``weights``: the policy of a
    MODEL_POLICY opponent; ``scratch``: the search's
    :class:`~agents.birds.mcts.SearchScratch` (its ``feats`` and ``probs``)."""
    force_top_card(sim, player, outcome, count, params.grouping == GROUPING_COARSE, outcome_of, rng)
    if pending == PENDING_DRAW:
        apply_action(sim, DRAW_DECK)
    end_turn(sim)
    if not params.closed_loop:
        opponent_turn(sim, player, params.opp_model, weights, scratch.feats, scratch.probs, rng)


@nb.njit(cache=True, inline="always")
def opponent_pending(sim, player, closed_loop):
    """PENDING_OPPONENT when the closed-loop search is at the opponent's move, else PENDING_NONE."""
    if closed_loop and not is_terminal(sim) and sim.meta[M_TO_MOVE] != player:
        return PENDING_OPPONENT
    return PENDING_NONE


@nb.njit(cache=True)
def opponent_move(sim, player, split, opp_model, weights, feats, probs, rng):
    """Closed loop: the opponent's move by its model, applied without ending the
    turn. Returns ``(outcome, pending)``: what the searcher sees of it (OPP_PLAY +
    the bird's class, OPP_TRAY + the slot, OPP_DECK, OPP_FOOD) and the next
    chance event (PENDING_OPP_REFILL after a tray take when ``split`` and the
    deck is not empty; else the turn is ended here and PENDING_NONE)."""
    q = 1 - player
    b = model_action(sim, q, opp_model, weights, feats, probs, rng)
    if b < DRAW_TRAY:
        outcome = OPP_PLAY + card_class(sim.cards, sim.hand[q, b])
    elif b < DRAW_DECK:
        outcome = OPP_TRAY + (b - DRAW_TRAY)
    elif b == DRAW_DECK:
        outcome = OPP_DECK
    else:
        outcome = OPP_FOOD
    apply_action(sim, b)
    if split and DRAW_TRAY <= b < DRAW_DECK and sim.meta[M_DECK_POS] < sim.deck.shape[0]:
        return outcome, PENDING_OPP_REFILL
    end_turn(sim)
    return outcome, PENDING_NONE


@nb.njit(cache=True)
def leaf_value(sim, player, backup_kind, margin_scale):
    """The value a finished ``sim`` backs up, in [0, 1] from ``player``'s view:

    * BACKUP_RESULT: the result, 1 / 0.5 / 0;
    * BACKUP_MARGIN: the point differential ``d`` = own board points minus the
      opponent's, scaled to [-1, 1] by ``margin_scale`` and mapped onto the
      tree's value range: ``(1 + clip(d / margin_scale, -1, 1)) / 2`` (a tie is
      0.5, a lead of ``margin_scale`` points or more is 1).
    """
    if backup_kind == BACKUP_MARGIN:
        d = float(sim.player[player, P_SCORE] - sim.player[1 - player, P_SCORE]) / margin_scale
        return 0.5 * (1.0 + min(1.0, max(-1.0, d)))
    return result_of(sim, player)


@nb.njit(cache=True, inline="always")
def rollout(sim, player, rollout_model, opp_model, weights, feats, probs, backup_kind,
            margin_scale, rng):
    """Play ``sim`` to the end; returns its :func:`leaf_value` for ``player``."""
    while not is_terminal(sim):
        p = sim.meta[M_TO_MOVE]
        model = rollout_model if p == player else opp_model
        step(sim, model_action(sim, p, model, weights, feats, probs, rng))
    return leaf_value(sim, player, backup_kind, margin_scale)
