"""Kernels shared by the Pommerman search agents: the search's model of the
world, the open-loop forward step with random opponents, safe random moves.

Fogged agents (``A_VISIBLE == 0`` in the observation) are absent from the
model: :func:`build_search_root` marks them dead so the rules never move them,
and :func:`advance` undoes a game end that only their "death" caused (the
rules would otherwise declare the searcher the winner as soon as everybody
else is out of sight).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games._rng import rng_integer
from games.pommerman.kernels import count_wood, step
from games.pommerman.kernels import (
    A_ALIVE, A_COL, A_REWARD, A_ROW, A_STATUS, A_VISIBLE, ACTION_DCOL, ACTION_DROW,
    BOARD_SIZE, FLAMES, M_DONE, M_MAX_STEPS, M_MODE, M_RESULT, M_STEP, MODE_TEAM,
    N_ACTIONS, N_AGENTS, RESULT_INCOMPLETE, STATUS_INCOMPLETE, STATUS_LOSS, copy_into,
)


@nb.njit(cache=True)
def build_search_root(root, observation, hidden):
    """Copy ``observation`` into the preallocated ``root`` and remove fogged agents.

    Args:
        root: PommermanState (overwritten).
        observation: PommermanState, the agent's observation (unchanged).
        hidden: bool[4] (overwritten): True for agents fogged in the observation.
    Returns:
        int, the number of hidden agents (they are marked dead in ``root``).
    """
    copy_into(root, observation)
    n_hidden = 0
    for i in range(N_AGENTS):
        hidden[i] = root.agents[i, A_VISIBLE] == 0
        if hidden[i]:
            n_hidden += 1
            root.agents[i, A_ALIVE] = 0
    return n_hidden


@nb.njit(cache=True)
def prepare_search(root, observation):
    """Set up one decision: the search's model in ``root`` and its scratch.

    Args:
        root: PommermanState (overwritten with the model, see :func:`build_search_root`).
        observation: PommermanState, the agent's observation (unchanged).
    Returns:
        (hidden, joint, n_hidden, root_wood): bool[4] fogged agents, int64[4]
        joint-action scratch for :func:`advance`, int number hidden, int wood
        cells on the root board (for the heuristic).
    """
    hidden = np.zeros(N_AGENTS, dtype=np.bool_)
    joint = np.zeros(N_AGENTS, dtype=np.int64)
    n_hidden = build_search_root(root, observation, hidden)
    return hidden, joint, n_hidden, count_wood(root)


@nb.njit(cache=True)
def _really_over(state, hidden):
    """Whether the game would be over if the hidden agents were alive."""
    if state.meta[M_STEP] >= state.meta[M_MAX_STEPS]:
        return True
    if state.meta[M_MODE] == MODE_TEAM:
        team0 = False
        team1 = False
        for i in range(N_AGENTS):
            if state.agents[i, A_ALIVE] or hidden[i]:
                if i % 2 == 0:
                    team0 = True
                else:
                    team1 = True
        return not (team0 and team1)
    n = 0
    for i in range(N_AGENTS):
        if state.agents[i, A_ALIVE] or hidden[i]:
            n += 1
    return n <= 1


@nb.njit(cache=True)
def undo_fog_termination(state, hidden):
    """Clear a game end caused only by hidden agents being absent (in place)."""
    if _really_over(state, hidden):
        return
    state.meta[M_DONE] = 0
    state.meta[M_RESULT] = RESULT_INCOMPLETE
    for i in range(N_AGENTS):
        if state.agents[i, A_ALIVE]:
            state.agents[i, A_STATUS] = STATUS_INCOMPLETE
            state.agents[i, A_REWARD] = 0
        elif not hidden[i]:
            state.agents[i, A_STATUS] = STATUS_LOSS


@nb.njit(cache=True)
def advance(state, player, action, joint, hidden, n_hidden, rng):
    """One tick: ``player`` plays ``action``, every other living agent a uniformly
    random action (the Java framework's opponent model), in place.

    Args:
        state: PommermanState (advanced in place).
        player: int; action: int in 0..5.
        joint: int64[4] scratch for the joint action.
        hidden: bool[4]; n_hidden: int (from :func:`build_search_root`).
        rng: uint64[2] (advanced).
    """
    for i in range(N_AGENTS):
        if i == player:
            joint[i] = action
        elif state.agents[i, A_ALIVE]:
            joint[i] = rng_integer(rng, N_ACTIONS)
        else:
            joint[i] = 0
    step(state, joint)
    if n_hidden > 0 and state.meta[M_DONE] != 0:
        undo_fog_termination(state, hidden)


@nb.njit(cache=True)
def safe_random_action(state, player, rng):
    """A uniformly random action whose destination (own cell for stop / bomb) is
    on the board and not in flames; uniform over all six if none is.

    This is what the Java framework's ``safeRandomAction`` means to do (its code
    returns an index into a shrinking list, which skews the draw; we do not copy
    that slip).
    """
    row = state.agents[player, A_ROW]
    col = state.agents[player, A_COL]
    ok = np.empty(N_ACTIONS, dtype=np.int64)
    n = 0
    for a in range(N_ACTIONS):
        r = row + ACTION_DROW[a]
        c = col + ACTION_DCOL[a]
        if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE and state.board[r * BOARD_SIZE + c] != FLAMES:
            ok[n] = a
            n += 1
    if n == 0:
        return rng_integer(rng, N_ACTIONS)
    return ok[rng_integer(rng, n)]


@nb.njit(cache=True)
def is_over(state):
    """True when the simulated game has ended."""
    return state.meta[M_DONE] != 0
