"""The Pommerman engine over both rulesets: the ruleset dispatcher and the kernels
that do not depend on the ruleset (end, returns, legal actions, observation, heuristic).

``step(state, actions)`` advances a PommermanState in place by one tick under
the state's own ruleset (``meta[M_RULESET]``). The rules themselves live in
``_canonical.py`` and ``_java.py``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ._layout import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_ROW, A_STATUS, A_VISIBLE, A_REWARD,
    B_COL, B_DIR, BOMB_FIELDS, B_OWNER, B_ROW, FLAME_COUNT_MAX, FLAME_MASK, FOG, M_DONE,
    M_INITIAL_WOOD, M_MODE, M_N_BOMBS, M_N_FLAMES, M_OVERFLOW, M_VIEW_RANGE, MODE_TEAM, N_ACTIONS,
    N_AGENTS, N_CELLS, NO_OWNER, STATUS_LOSS, STATUS_TIE, STATUS_WIN, WOOD, BOARD_SIZE,
    M_RULESET, RULESET_CANONICAL, RULESET_JAVA, borrowed_state, clear_flame_cell, copy_state,
    drop_lowest, first_cell, flames_in_word,
)
from ..lowlevel import borrow
from ._canonical import step_canonical
from ._java import step_java


#: ``step_under``'s ruleset argument for "the state's own ruleset" (decided at run time).
STATE_RULESET = -1


@nb.njit(cache=True, inline="always")
def step_under(state, actions, ruleset, checked=True):
    """Advance ``state`` by one tick in place under ``ruleset``.

    Args:
        state: PommermanState (modified in place).
        actions: int64[4], one action (0..5) per agent id; ignored for dead agents.
        ruleset: RULESET_JAVA or RULESET_CANONICAL (the state must be of that
            ruleset), or STATE_RULESET: the state's own (``meta[M_RULESET]``).
        checked: False (a constant of the caller) skips the layout-shape check of
            ``_layout.step_through_pointers``: for search loops whose kernel checked its
            states once (``_layout.require_layout_shapes``).

    Inlined into the calling kernel (a search's tick): as a call it passed the state and
    the actions (~55 machine words of array structs) twice per simulated tick, here and
    again to the rules. When ``ruleset`` is a constant there (a search kernel compiled for
    one ruleset), numba's dead-branch pruning drops the other ruleset's branch, so the
    kernel neither compiles nor links the other rules (seconds on a fresh cache).
    """
    s = borrowed_state(state)
    a = borrow(actions)
    if ruleset == RULESET_JAVA:
        step_java(s, a, checked)
    elif ruleset == RULESET_CANONICAL:
        step_canonical(s, a, checked)
    elif s.meta[M_RULESET] == RULESET_JAVA:
        step_java(s, a, checked)
    else:
        step_canonical(s, a, checked)


@nb.njit(cache=True, inline="always")
def step(state, actions):
    """Advance ``state`` by one tick in place under its own ruleset (``meta[M_RULESET]``).

    Args:
        state: PommermanState (modified in place).
        actions: int64[4], one action (0..5) per agent id; ignored for dead agents.

    Inlined into the calling kernel, see :func:`step_under`.
    """
    step_under(state, actions, STATE_RULESET)


#: Flame life an agent's model gives every visible flame (the reference's
#: "flames get the full life" when it copies a state for an agent).
FULL_FLAME_LIFE_CANONICAL = 2
FULL_FLAME_LIFE_JAVA = 5


@nb.njit(cache=True)
def is_terminal(state):
    """True when the game is over (meta[M_DONE])."""
    return state.meta[M_DONE] != 0


@nb.njit(cache=True)
def returns(state):
    """float64[4]: the reference's rewards after the last step (final at the end)."""
    out = np.empty(N_AGENTS, dtype=np.float64)
    for i in range(N_AGENTS):
        out[i] = state.agents[i, A_REWARD]
    return out


@nb.njit(cache=True)
def legal_actions(state, player):
    """bool[6] action mask for ``player``.

    Pommerman accepts every action from a living agent (a blocked move is a
    stop, a bomb without ammo does nothing); a dead or finished agent can only
    stop.
    """
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    if state.agents[player, A_ALIVE] and not state.meta[M_DONE]:
        mask[:] = True
    else:
        mask[0] = True
    return mask


@nb.njit(cache=True, inline="always")
def teammate_of(state, player):
    """The teammate's id in team mode (teams 0+2, 1+3), else -1."""
    if state.meta[M_MODE] == MODE_TEAM:
        return (player + 2) % 4
    return -1


@nb.njit(cache=True)
def observe(state, player, view_range):
    """The model of the world ``player`` may plan from, as a new PommermanState.

    Args:
        state: the true PommermanState.
        player: int, the observer's id.
        view_range: int, -1 for full observability, else the Chebyshev radius
            0..4 of the square the observer sees around itself.
    Returns:
        PommermanState in the same layout, built the way the reference Java
        framework copies a state for a searching agent:
        - cells outside the view square read FOG (5); bombs and flames there
          are dropped; agents there get ``A_VISIBLE = 0`` and no board cell;
        - hidden power-ups (``items``) are dropped under partial
          observability; under full observability they are kept, as in the
          framework's copy (a leak: Arena's searching agents drop them from
          their model unless their ``java`` profile keeps them);
        - under partial observability other agents' ammo, blast strength and
          kick are unknown and set to the starting defaults (1, 2, no kick);
        - bombs lose their owner (no ammo refund in simulations) and their
          movement; flames get the full life of the ruleset.
        ``meta[M_VIEW_RANGE]`` records the view range.
    """
    obs = copy_state(state)
    if view_range >= 0:
        obs.items[:] = 0
    obs.meta[M_VIEW_RANGE] = view_range
    full_flame = FULL_FLAME_LIFE_JAVA if state.meta[M_RULESET] == RULESET_JAVA else FULL_FLAME_LIFE_CANONICAL
    prow = state.agents[player, A_ROW]
    pcol = state.agents[player, A_COL]
    partial = view_range >= 0
    if partial:
        for c in range(N_CELLS):
            r = c // BOARD_SIZE
            k = c % BOARD_SIZE
            if abs(r - prow) > view_range or abs(k - pcol) > view_range:
                obs.board[c] = FOG
    for i in range(N_AGENTS):
        if i == player:
            continue
        if partial:
            r = state.agents[i, A_ROW]
            k = state.agents[i, A_COL]
            if abs(r - prow) > view_range or abs(k - pcol) > view_range:
                obs.agents[i, A_VISIBLE] = 0
            obs.agents[i, A_AMMO] = 1
            obs.agents[i, A_BLAST] = 2
            obs.agents[i, A_KICK] = 0
    nb_ = 0
    for b in range(state.meta[M_N_BOMBS]):
        r = state.bombs[b, B_ROW]
        k = state.bombs[b, B_COL]
        if partial and (abs(r - prow) > view_range or abs(k - pcol) > view_range):
            continue
        for f in range(BOMB_FIELDS):  # a loop: a row assignment compiles numba's shape-error message
            obs.bombs[nb_, f] = state.bombs[b, f]
        obs.bombs[nb_, B_OWNER] = NO_OWNER
        obs.bombs[nb_, B_DIR] = 0
        nb_ += 1
    obs.meta[M_N_BOMBS] = nb_
    nf = 0
    full_shift = np.uint64(8 * full_flame)
    for w in range(2):
        bits = state.flames[FLAME_MASK + w]
        while bits:
            c = w * 64 + first_cell(bits)
            bits = drop_lowest(bits)
            r = c // BOARD_SIZE
            k = c % BOARD_SIZE
            if partial and (abs(r - prow) > view_range or abs(k - pcol) > view_range):
                clear_flame_cell(obs.flames, c)
                continue
            n = flames_in_word(state.flames[c])
            if n > FLAME_COUNT_MAX:
                n = FLAME_COUNT_MAX
                obs.meta[M_OVERFLOW] = 1
            obs.flames[c] = np.uint64(n) << full_shift
            nf += n
    obs.meta[M_N_FLAMES] = nf
    return obs


@nb.njit(cache=True, inline="always")
def count_wood(state):
    """Number of wood cells on the (possibly fogged) board."""
    n = 0
    for c in range(N_CELLS):
        if state.board[c] == WOOD:
            n += 1
    return n


@nb.njit(cache=True, inline="always")
def count_alive(state, player, teammates):
    """Living visible agents other than ``player``: teammates if ``teammates`` else enemies."""
    mate = teammate_of(state, player)
    n = 0
    for i in range(N_AGENTS):
        if i == player or not state.agents[i, A_ALIVE] or not state.agents[i, A_VISIBLE]:
            continue
        if (i == mate) == teammates:
            n += 1
    return n


@nb.njit(cache=True, inline="always")
def count_alive_others(state, player):
    """``(enemies, teammates)``: :func:`count_alive` of both kinds in one pass (the
    heuristic's four counts are two inlined loops, not four)."""
    mate = teammate_of(state, player)
    enemies = 0
    mates = 0
    for i in range(N_AGENTS):
        if i == player or not state.agents[i, A_ALIVE] or not state.agents[i, A_VISIBLE]:
            continue
        if i == mate:
            mates += 1
        else:
            enemies += 1
    return enemies, mates


@nb.njit(cache=True, inline="always")
def heuristic(root, root_wood, leaf, player, tie_death_scored=False):
    """The reference framework's heuristic value of ``leaf`` for ``player``.

    Args:
        root: PommermanState the search started from.
        root_wood: int, wood cells on the root board (precomputed once).
        leaf: PommermanState reached by the search.
        player: int.
        tie_death_scored: bool; if True a dead ``player`` whose status is TIE gets
            :func:`heuristic_score` instead of -1 (the Java framework scores -1 only
            LOSS; the searches' ``QUIRK_TIE_DEATH_SCORED``).
    Returns:
        float64: +1 if ``player`` has won, -1 if it has lost or died, else
        :func:`heuristic_score`.
    """
    status = leaf.agents[player, A_STATUS]
    if status == STATUS_WIN:
        return 1.0
    scored_tie = tie_death_scored and status == STATUS_TIE
    if not scored_tie and (status == STATUS_LOSS or not leaf.agents[player, A_ALIVE]):
        return -1.0
    return heuristic_score(root, root_wood, leaf, player)  # one site: it is inlined


@nb.njit(cache=True, inline="always")
def heuristic_score(root, root_wood, leaf, player):
    """The non-terminal part of :func:`heuristic` (whatever ``player``'s status):
    FFA: 0.5 * enemies killed / 3 + 0.1 * wood destroyed / initial wood
    (``root.meta[M_INITIAL_WOOD]``, at least 1) + 0.15 * can kick + 0.15 *
    blast gained / 10; team: 0.4 for enemies plus 0.1 * change in living
    teammates. Returns float64.
    """
    team = leaf.meta[M_MODE] == MODE_TEAM
    enemy_factor = 0.4 if team else 0.5
    root_enemies, root_mates = count_alive_others(root, player)
    leaf_enemies, leaf_mates = count_alive_others(leaf, player)
    enemies_killed = root_enemies - leaf_enemies
    teammates_change = leaf_mates - root_mates
    wood_destroyed = root_wood - count_wood(leaf)
    max_wood = max(root.meta[M_INITIAL_WOOD], 1)
    blast_gained = leaf.agents[player, A_BLAST] - root.agents[player, A_BLAST]
    score = enemy_factor * enemies_killed / 3.0
    score += 0.1 * wood_destroyed / max_wood
    score += 0.15 * (1.0 if leaf.agents[player, A_KICK] else 0.0)
    score += 0.15 * blast_gained / 10.0
    if team:
        score += 0.1 * teammates_change
    return score
