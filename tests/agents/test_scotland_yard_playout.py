"""The searches' flat playout plays the same game as stepping the rules move by move:
same moves, same random draws, same final state, from every kind of position."""
from __future__ import annotations

import numpy as np
import pytest

from agents.scotland_yard._common import playout, playout_by_steps
from games.rng import make_rng
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
from games.scotland_yard import kernels as K


def positions_along_random_games(games=30, seed=0):
    """Search-like states (possible set off) at every ply of random games whose
    moves include black tickets and double moves: Mr X to move, in the middle of a
    double move, and each detective to move."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        game = ScotlandYard(ScotlandYardConfig())
        game.reset(g)
        state = K.copy_state(game.state)
        while not K.is_terminal(state):
            snapshot = K.copy_state(state)
            snapshot.meta[K.M_TRACK_POSSIBLE] = 0
            out.append(snapshot)
            legal = np.flatnonzero(K.legal_actions(state, state.meta[K.M_TO_MOVE]))
            K.step(state, int(rng.choice(legal)))
    return out


def same_state(a, b):
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("positions", "tickets", "meta", "ticket_log", "mrx_path", "possible"))


@pytest.mark.parametrize("epsilons", [(0.2, 0.2), (0.0, 0.0), (1.0, 1.0), (0.0, 0.7)])
def test_flat_playout_is_the_stepwise_playout(epsilons):
    states = positions_along_random_games()
    assert any(s.meta[K.M_IN_DOUBLE] and s.meta[K.M_MOVES_LEFT] == 2 for s in states)
    assert any(s.meta[K.M_TO_MOVE] == 5 for s in states)
    mask = np.zeros(K.NUM_ACTIONS, dtype=np.bool_)
    occupied = np.zeros(states[0].possible.shape[0], dtype=np.bool_)
    moves = np.zeros(K.NUM_ACTIONS, dtype=np.int64)
    outcomes = set()
    for i, start in enumerate(states):
        by_steps, flat = K.copy_state(start), K.copy_state(start)
        rng_steps, rng_flat = make_rng(i), make_rng(i)
        playout_by_steps(by_steps, *epsilons, mask, rng_steps)
        playout(flat, *epsilons, mask, occupied, moves, rng_flat)
        assert same_state(by_steps, flat), i
        assert np.array_equal(rng_steps, rng_flat), i
        assert not occupied.any()
        outcomes.add((int(flat.meta[K.M_RESULT]), int(flat.meta[K.M_CAPTURER]) > 0))
    assert {(K.RESULT_MRX_WINS, False), (K.RESULT_SEEKERS_WIN, True)} <= outcomes
    if epsilons[0] < 1:  # Mr X stuck, caught without a capturer
        assert (K.RESULT_SEEKERS_WIN, False) in outcomes


def test_playout_keeps_the_possible_set_when_asked():
    game = ScotlandYard(ScotlandYardConfig())
    game.reset(3)
    by_steps, tracked = K.copy_state(game.state), K.copy_state(game.state)
    mask = np.zeros(K.NUM_ACTIONS, dtype=np.bool_)
    occupied = np.zeros(by_steps.possible.shape[0], dtype=np.bool_)
    moves = np.zeros(K.NUM_ACTIONS, dtype=np.int64)
    playout_by_steps(by_steps, 0.2, 0.2, mask, make_rng(1))
    playout(tracked, 0.2, 0.2, mask, occupied, moves, make_rng(1))
    assert tracked.meta[K.M_TRACK_POSSIBLE] == 1
    assert same_state(by_steps, tracked)
