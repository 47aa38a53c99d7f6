"""Action features of the bird game and the linear softmax policy over them.

The policy scores each legal action ``a`` of the player ``p`` to move with
``weights . phi(s, p, a)`` and plays ``softmax`` of the scores. Every feature
uses only what ``p`` sees (own hand and food, both boards, the tray, turns
left), so the policy runs unchanged on an observation, on a determinized
state inside a search, and as the opponent model there.

Features (``N_FEATURES`` = 16); ``r`` = turns ``p`` has left including this
one, ``free`` = free board slots, ``food`` = food ``p`` holds::

     0  play                          8  food * (a hand card costs more than food)
     1  play * points / 9             9  food * food / 5
     2  play * cost / 3              10  draw * (free - hand size) / 5
     3  play * (points - best playable points) / 9
     4  tray * points / 9            11  draw * r / 10
     5  tray * (cost <= food)        12  play * r / 10
     6  tray * cost / 3              13  food * r / 10
     7  deck                         14  play * (r <= free)      (must play now to fill)
                                     15  food * (hand size == 0)

where ``play``/``tray``/``deck``/``food`` are the indicators of the action
type and ``draw`` = ``tray`` or ``deck``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.rng import rng_integer, rng_uniform
from games.birds.kernels import (
    BOARD_SLOTS, C_COST, C_POINTS, DRAW_DECK, DRAW_TRAY, GAIN_FOOD, M_TURN, N_ACTIONS,
    P_BOARD, P_FOOD, P_HAND, TOTAL_TURNS, is_legal, nth_legal_action, random_legal_action,
)

N_FEATURES = 16


@nb.njit(cache=True)
def action_features(state, p, out):
    """Fill ``out`` (float64[N_ACTIONS, N_FEATURES]) with the features of every
    action of ``p`` (illegal actions get features too; callers mask them)."""
    out[:, :] = 0.0
    food = state.player[p, P_FOOD]
    hand_size = state.player[p, P_HAND]
    free = BOARD_SLOTS - state.player[p, P_BOARD]
    r = (TOTAL_TURNS - state.meta[M_TURN] + 1) // 2
    best_playable = 0
    dear = 0.0
    for i in range(hand_size):
        c = state.hand[p, i]
        if c < 0:
            continue
        if state.cards[c, C_COST] <= food:
            best_playable = max(best_playable, state.cards[c, C_POINTS])
        else:
            dear = 1.0
    for i in range(hand_size):
        c = state.hand[p, i]
        if c < 0:
            continue
        pts = state.cards[c, C_POINTS]
        out[i, 0] = 1.0
        out[i, 1] = pts / 9.0
        out[i, 2] = state.cards[c, C_COST] / 3.0
        out[i, 3] = (pts - best_playable) / 9.0
        out[i, 12] = r / 10.0
        out[i, 14] = 1.0 if r <= free else 0.0
    for j in range(DRAW_DECK - DRAW_TRAY):
        c = state.tray[j]
        a = DRAW_TRAY + j
        if c >= 0:
            out[a, 4] = state.cards[c, C_POINTS] / 9.0
            out[a, 5] = 1.0 if state.cards[c, C_COST] <= food else 0.0
            out[a, 6] = state.cards[c, C_COST] / 3.0
        out[a, 10] = (free - hand_size) / 5.0
        out[a, 11] = r / 10.0
    out[DRAW_DECK, 7] = 1.0
    out[DRAW_DECK, 10] = (free - hand_size) / 5.0
    out[DRAW_DECK, 11] = r / 10.0
    out[GAIN_FOOD, 8] = dear
    out[GAIN_FOOD, 9] = food / 5.0
    out[GAIN_FOOD, 13] = r / 10.0
    out[GAIN_FOOD, 15] = 1.0 if hand_size == 0 else 0.0


@nb.njit(cache=True)
def policy_probabilities(state, p, weights, feats, probs):
    """Softmax policy of ``p`` into ``probs`` (float64[N_ACTIONS], 0 where illegal)
    after filling ``feats`` (float64[N_ACTIONS, N_FEATURES]). Returns the number
    of legal actions."""
    action_features(state, p, feats)
    top = -np.inf
    n = 0
    for a in range(N_ACTIONS):
        if is_legal(state, p, a):
            z = 0.0
            for f in range(N_FEATURES):
                z += weights[f] * feats[a, f]
            probs[a] = z
            if z > top:
                top = z
            n += 1
        else:
            probs[a] = -np.inf
    total = 0.0
    for a in range(N_ACTIONS):
        if probs[a] == -np.inf:
            probs[a] = 0.0
        else:
            probs[a] = np.exp(probs[a] - top)
            total += probs[a]
    for a in range(N_ACTIONS):
        probs[a] /= total
    return n


@nb.njit(cache=True)
def sample_from(probs, rng):
    """An index drawn from ``probs`` (float64[k] summing to 1)."""
    x = rng_uniform(rng)
    last = 0
    for a in range(probs.shape[0]):
        if probs[a] > 0.0:
            last = a
            if x < probs[a]:
                return a
            x -= probs[a]
    return last


@nb.njit(cache=True, inline="always")
def random_action(state, p, rng):
    """A uniformly random legal action of ``p`` (GAIN_FOOD is always legal)."""
    return random_legal_action(state, p, rng)


@nb.njit(cache=True)
def greedy_action(state, p):
    """The greedy baseline: play the best affordable bird (most points, then the
    cheapest); else, with a free slot, gain food if a hand bird is too dear,
    otherwise draw the best tray bird (or from the deck if the tray is empty);
    with a full board, gain food."""
    food = state.player[p, P_FOOD]
    best = -1
    best_key = -1
    dear = False
    for i in range(state.player[p, P_HAND]):
        c = state.hand[p, i]
        if c < 0:
            continue
        if is_legal(state, p, i):
            key = state.cards[c, C_POINTS] * 4 + (3 - state.cards[c, C_COST])
            if key > best_key:
                best_key = key
                best = i
        elif state.cards[c, C_COST] > food:
            dear = True
    if best >= 0:
        return best
    if state.player[p, P_BOARD] >= BOARD_SLOTS or dear:
        return GAIN_FOOD
    best = -1
    best_key = -1
    for j in range(DRAW_DECK - DRAW_TRAY):
        c = state.tray[j]
        if c >= 0 and is_legal(state, p, DRAW_TRAY + j):
            key = state.cards[c, C_POINTS] * 4 + (3 - state.cards[c, C_COST])
            if key > best_key:
                best_key = key
                best = DRAW_TRAY + j
    if best >= 0:
        return best
    if is_legal(state, p, DRAW_DECK):
        return DRAW_DECK
    return GAIN_FOOD


@nb.njit(cache=True)
def typed_random_action(state, p, rng):
    """A random player of the public project's kind: an action type first, uniformly
    among the types with a legal action (play a bird, gain food, draw a bird from the
    tray or the deck), then a uniformly random legal action of that type. (On the
    public project's cards it beats the flat :func:`random_action` 57%.)"""
    n_play = 0
    n_draw = 0
    for a in range(N_ACTIONS):
        if a == GAIN_FOOD or not is_legal(state, p, a):
            continue
        if a < DRAW_TRAY:
            n_play += 1
        else:
            n_draw += 1
    types = 1 + (n_play > 0) + (n_draw > 0)
    t = rng_integer(rng, types)
    if n_play > 0:
        if t == 0:
            k = rng_integer(rng, n_play)
            for a in range(DRAW_TRAY):
                if is_legal(state, p, a):
                    if k == 0:
                        return a
                    k -= 1
        t -= 1
    if n_draw > 0:
        if t == 0:
            k = rng_integer(rng, n_draw)
            for a in range(DRAW_TRAY, GAIN_FOOD):
                if is_legal(state, p, a):
                    if k == 0:
                        return a
                    k -= 1
    return GAIN_FOOD


#: Move models of the searches and the training loop.
MODEL_RANDOM = 0
MODEL_POLICY = 1
MODEL_GREEDY = 2
MODEL_TYPED_RANDOM = 3


@nb.njit(cache=True)
def model_action(state, p, model, weights, feats, probs, rng):
    """The action of ``p`` under a move model (MODEL_RANDOM / MODEL_POLICY / MODEL_GREEDY /
    MODEL_TYPED_RANDOM)."""
    if model == MODEL_POLICY:
        policy_probabilities(state, p, weights, feats, probs)
        return sample_from(probs, rng)
    if model == MODEL_GREEDY:
        return greedy_action(state, p)
    if model == MODEL_TYPED_RANDOM:
        return typed_random_action(state, p, rng)
    return random_action(state, p, rng)
