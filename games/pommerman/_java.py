"""Pommerman rules, java ruleset: the forward model of the Java framework.

``step_java`` reproduces ``ForwardModel.next(actions, tick)`` of
GAIGResearch/java-pommerman @58d27f4 followed by ``GameState.next``'s tick
increment and time-out, with ``OriginalGameConfig``'s end-of-game rules
(see ``pommerman-java/FORMAT.md`` of the golden trajectories, not shipped, for
the step order and the quirks matched here). Its boards are generated in
``_board_generation.py``.

Internally positions are flat cell indices (row * 11 + col). The objects'
desired coordinates, which Java keeps on each object, live only for the
duration of one step in small scratch arrays: at the start of a step every
desired coordinate equals the position (what loading the recorded state into a
fresh Java model gives, and what the recorded trajectories reproduce).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ._layout import (
    cell_in, is_powerup, is_wall, neighbour_cell, unsigned, with_cell,
    step_through_pointers,
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS, AGENT_FIELDS,
    BOMB_FIELDS, FLAME_MASK, FLAME_WORDS, META_FIELDS,
    AGENT0, B_BLAST, B_COL, B_DIR, B_LIFE, B_OWNER, B_ROW, BOARD_SIZE, BOMB,
    EXTRA_BOMB, FLAMES, INCR_RANGE, KICK,
    LAY_BOMB, M_COLLAPSE, M_DONE, M_MAX_STEPS, M_MODE, M_N_BOMBS,
    M_N_FLAMES, M_OVERFLOW, M_RESULT, M_STEP, MAX_BOMBS, MODE_FFA,
    N_AGENTS, N_CELLS, PASSAGE, RESULT_INCOMPLETE, RESULT_TIE, RESULT_WIN,
    RIGID, STATUS_INCOMPLETE, STATUS_LOSS, STATUS_TIE, STATUS_WIN,
    WOOD, COL_OF, NEIGHBOUR, ROW_OF, add_flames, clear_flame_cell, drop_lowest, first_cell,
    flames_in_word, has_flames,
)
from ..lowlevel import stack_alloca

#: Life of a freshly laid bomb (as in the canonical ruleset).
BOMB_LIFE = 10
#: Life of a new flame.
FLAME_LIFE = 5
#: The board collapse (``M_COLLAPSE``), ring by ring from the border inward: one ring at
#: tick COLLAPSE_START and one every COLLAPSE_STEP ticks after (500, 575, 650, 725).
COLLAPSE_START = 500
COLLAPSE_STEP = 75


@nb.njit(cache=True, inline="always")
def _is_agent(code):
    """True for the agent codes 10..13."""
    return (code >= AGENT0) & (code < AGENT0 + N_AGENTS)


@nb.njit(cache=True, inline="always")
def _delta_dir(frm, to):
    """Direction code (0..4) of the move between two equal or adjacent cells."""
    d = to - frm
    if d == -BOARD_SIZE:
        return 1
    if d == BOARD_SIZE:
        return 2
    if d == -1:
        return 3
    if d == 1:
        return 4
    return 0




@nb.njit(cache=True, inline="always")
def _reveal(board, items, c):
    """Write the hidden item at cell ``c`` (taking it off ``items``) or a passage.

    board, items: int8[121].
    """
    it = items[c]
    if it != 0:
        board[c] = it
        items[c] = 0
    else:
        board[c] = PASSAGE


@nb.njit(cache=True)
def _process_dead(agents, dying, mode):
    """OriginalGameConfig.processDeadAgents for the agents flagged in ``dying``.

    agents: int16[4, AGENT_FIELDS] (the dying still have A_ALIVE = 1; cleared here);
    dying: int64[4] flags (nonzero = dies); mode: MODE_FFA or MODE_TEAM.
    """
    n_dead = 0
    n_alive = 0
    for i in range(N_AGENTS):
        if agents[i, A_ALIVE]:
            n_alive += 1
        if dying[i]:
            n_dead += 1
    if n_dead == 0:
        return
    if mode == MODE_FFA:
        st = STATUS_TIE if n_dead == n_alive else STATUS_LOSS
        for i in range(N_AGENTS):
            if dying[i]:
                agents[i, A_STATUS] = st
    else:
        if n_dead == n_alive:
            for i in range(N_AGENTS):
                agents[i, A_STATUS] = STATUS_TIE
        else:
            for i in range(N_AGENTS):
                if dying[i]:
                    agents[i, A_STATUS] = STATUS_LOSS
    remaining = 0
    for i in range(N_AGENTS):
        if dying[i]:
            agents[i, A_ALIVE] = 0
        if agents[i, A_ALIVE]:
            remaining += 1
    if remaining == 0:
        return
    n_teams = N_AGENTS if mode == MODE_FFA else 2
    count = nb.carray(stack_alloca(N_AGENTS, np.int64), N_AGENTS)
    for t in range(N_AGENTS):
        count[t] = 0
    for i in range(N_AGENTS):
        if agents[i, A_ALIVE]:
            count[i % n_teams] += 1
    teams_alive = n_teams
    last = -1
    for t in range(n_teams):
        if count[t] == 0:
            for i in range(N_AGENTS):
                if i % n_teams == t:
                    agents[i, A_STATUS] = STATUS_LOSS
            teams_alive -= 1
        else:
            last = t
    if teams_alive == 1:
        for i in range(N_AGENTS):
            if i % n_teams == last:
                agents[i, A_STATUS] = STATUS_WIN


@nb.njit(cache=True, inline="always")
def _add_flame(board, flames, meta, p):
    """Bomb.tryToAddFlame at flat cell ``p`` (on the board): add a flame of life 5 unless
    the cell is rigid.

    board: int8[121]; flames: uint64[FLAME_WORDS] (per cell, see _layout); meta: int32[12].
    Returns (added, keep_going): keep going past anything but rigid and wood.
    """
    t = board[unsigned(p)]
    if t == RIGID:
        return False, False
    # one life above FLAME_LIFE: step 11 ages every flame, the new ones too (_step)
    if add_flames(flames, p, FLAME_LIFE + 1, 1):
        meta[M_N_FLAMES] += 1
    else:
        meta[M_OVERFLOW] = 1
    board[unsigned(p)] = FLAMES
    return True, t != WOOD


@nb.njit(cache=True, inline="always")
def _explode(board, flames, meta, centre, blast):
    """Bomb.explode of a bomb at flat cell ``centre`` with ``blast``; returns the number
    of flames made.

    The reference puts flames on the centre, then i = 1..blast-1 alternating +col / -col,
    then +row / -row; a direction stops at the edge or rigid, or just after wood. The
    four directions' cells are disjoint and a direction's walk reads only its own cells,
    so walking them one after the other (centre, then right, left, down, up: ``NEIGHBOUR``
    steps) leaves the same board and flames, with one ``_add_flame`` site instead of five
    (the java rules compile about 2 s faster: the cold start).
    """
    added, _ = _add_flame(board, flames, meta, centre)
    made = np.int64(added)
    for d in range(4):
        direction = 4 - d  # right, left, down, up
        p = centre
        for _ in range(1, blast):
            p = neighbour_cell(p, direction)
            if p < 0:
                break
            added, go = _add_flame(board, flames, meta, p)
            made += added
            if not go:
                break
    return made


@nb.njit(cache=True, inline="always")
def _overlap_bombs(bpos, bdes, n):
    """checkPositionOverlap over the bombs: revert every bomb whose desired cell is shared.

    bpos, bdes: int64[MAX_BOMBS] cells; n: bomb count. The shared cells are found before
    any bomb reverts (as the framework's counts are), by pairs: only when a bomb moves.
    """
    moved = False
    for k in range(n):
        if bdes[k] != bpos[k]:
            moved = True
            break
    if not moved:  # reverting a bomb that did not move changes nothing
        return
    shared = np.uint64(0)
    for k in range(n):
        for m in range(k + 1, n):
            if bdes[k] == bdes[m]:
                shared |= (_ONE << np.uint64(k)) | (_ONE << np.uint64(m))
    for k in range(n):
        if shared >> np.uint64(k) & _ONE:
            bdes[k] = bpos[k]


@nb.njit(cache=True, inline="always")
def _remove_bombs(bombs, bpos, bdes, dead, n):
    """Compact the bomb list (and its scratch arrays), dropping the rows whose bit is set
    in ``dead``.

    bombs: int16[MAX_BOMBS, 6]; bpos, bdes: int64[MAX_BOMBS] cells; dead: uint64 bit mask
    (bit k: bomb k; MAX_BOMBS == 64). Returns the new count.
    """
    w = 0
    for k in range(n):
        if dead >> np.uint64(k) & np.uint64(1):
            continue
        if w != k:
            for f in range(bombs.shape[1]):
                bombs[w, f] = bombs[k, f]
            bpos[w] = bpos[k]
            bdes[w] = bdes[k]
        w += 1
    return w


@nb.njit(cache=True, inline="always")
def _move_bomb(board, items, bombs, bpos, bdes, k):
    """ForwardModel.move for bomb ``k``; the target cell is always stamped 3."""
    cur = bpos[k]
    nxt = bdes[k]
    if cur != nxt:
        nt = board[nxt]
        if not is_wall(nt):
            bpos[k] = nxt
            bombs[k, B_ROW] = ROW_OF[nxt]
            bombs[k, B_COL] = COL_OF[nxt]
            if is_powerup(nt):
                items[nxt] = nt
            oc = board[cur]
            if not (is_powerup(oc) or oc == FLAMES or _is_agent(oc)):
                _reveal(board, items, cur)
    board[nxt] = BOMB


@nb.njit(cache=True, inline="always")
def _move_agent(board, items, agents, apos, ades, i):
    """ForwardModel.move for agent ``i``; the target cell is always stamped with its code."""
    cur = apos[i]
    nxt = ades[i]
    code = AGENT0 + i
    # Without branches on the (random) move: ``moved`` selects the new position, and the
    # reveal of the cell left (its hidden item, or 0: a passage) is a select too.
    moved = (cur != nxt) & (not is_wall(board[unsigned(nxt)]))
    p = nxt if moved else cur
    apos[i] = p
    agents[i, A_ROW] = ROW_OF[unsigned(p)]
    agents[i, A_COL] = COL_OF[unsigned(p)]
    oc = board[unsigned(cur)]
    keep = is_powerup(oc) | (oc == FLAMES) | (oc == BOMB) | (_is_agent(oc) & (oc != code))
    reveal = moved & (not keep)
    hidden = items[unsigned(cur)]
    board[unsigned(cur)] = hidden if reveal else oc
    items[unsigned(cur)] = 0 if reveal else hidden
    board[unsigned(nxt)] = code


@nb.njit(cache=True)
def _collapse(board, bombs, flames, agents, meta, tick, dying):
    """Collapse the ring of stage (tick - 500) / 75 (Java's tile order); flags agents killed.

    dying: int64[4] flags (output). Bombs on a tile showing 3 are removed with an ammo
    refund, the flames of a tile showing 4 are removed; every ring tile becomes rigid.
    """
    stage = (tick - COLLAPSE_START) // COLLAPSE_STEP
    lo = stage
    hi = BOARD_SIZE - stage - 1
    for x in range(lo, hi + 1):
        if x == lo or x == hi:
            for y in range(lo + 1, hi):
                _collapse_tile(board, bombs, flames, agents, meta, y, x, dying)
        _collapse_tile(board, bombs, flames, agents, meta, lo, x, dying)
        _collapse_tile(board, bombs, flames, agents, meta, hi, x, dying)


@nb.njit(cache=True)
def _collapse_tile(board, bombs, flames, agents, meta, r, c, dying):
    """ForwardModel.collapseTile at (r, c), decided by the board code there."""
    p = r * BOARD_SIZE + c
    t = board[p]
    if t == BOMB:
        n = meta[M_N_BOMBS]
        w = 0
        for k in range(n):
            if bombs[k, B_ROW] == r and bombs[k, B_COL] == c:
                o = bombs[k, B_OWNER]
                if o >= 0:
                    agents[o, A_AMMO] += 1
                continue
            if w != k:
                for f in range(bombs.shape[1]):
                    bombs[w, f] = bombs[k, f]
            w += 1
        meta[M_N_BOMBS] = w
    elif t == FLAMES:
        meta[M_N_FLAMES] -= flames_in_word(flames[p])
        clear_flame_cell(flames, p)
    elif _is_agent(t):
        for i in range(N_AGENTS):
            if agents[i, A_ALIVE] and not dying[i] and agents[i, A_ROW] == r and agents[i, A_COL] == c:
                dying[i] = 1
    board[p] = RIGID


@nb.njit(cache=True, inline="always")
def step_java(state, actions, checked=True):
    """Advance a java-ruleset state by one tick in place (ForwardModel.next + tick).

    Args:
        state: PommermanState with meta[M_RULESET] == RULESET_JAVA (modified in place).
        actions: int64[4], one action per agent id (values outside 0..5 count as
            STOP); only agents with status STATUS_INCOMPLETE act.
    Sets meta[M_OVERFLOW] = 1 if the bomb or flame capacity would be exceeded.
    A finished game (meta[M_DONE]) is left unchanged.

    Inlined into its callers: :func:`~._layout.step_through_pointers` with this ruleset's
    :func:`_step_at` (the checks, then the rules on data pointers, seven registers instead
    of ~55 words of array structs pushed per simulated tick).
    """
    step_through_pointers(_step_at, state, actions, checked)


@nb.njit(cache=True)
def _step_at(board, items, agents, bombs, flames, meta, actions):
    """:func:`_step` on the state's arrays given as data pointers (``data_pointer``);
    the arrays are rebuilt here with the layout's fixed shapes (no reference counts).

    Args: pointers to int8[121] board and items, int16[4, AGENT_FIELDS] agents,
        int16[MAX_BOMBS, BOMB_FIELDS] bombs, uint64[FLAME_WORDS] flames,
        int32[META_FIELDS] meta (all C-contiguous), int64[4] actions.
    """
    _step(nb.carray(board, N_CELLS), nb.carray(items, N_CELLS),
          nb.carray(agents, (N_AGENTS, AGENT_FIELDS)), nb.carray(bombs, (MAX_BOMBS, BOMB_FIELDS)),
          nb.carray(flames, FLAME_WORDS), nb.carray(meta, META_FIELDS),
          nb.carray(actions, N_AGENTS))


#: Sizes of the per-tick scratch of ``_step`` (on the stack, see ``stack_alloca``): int64
#: positions (agents, bombs; written before they are read) and flags.
_SCRATCH_SIZE = 2 * N_AGENTS + 2 * MAX_BOMBS + 2 * N_AGENTS
_EIGHT = np.uint64(8)
_BYTE = np.uint64(0xFF)
_ONE = np.uint64(1)
assert MAX_BOMBS <= 64, "step 10 keeps the bombs' death flags in one uint64"
assert N_AGENTS == 4, "steps 6 and 8 test the four agents without a loop"


@nb.njit(cache=True, inline="always")
def _step(board, items, agents, bombs, flames, meta, actions):
    """The body of ``step_java`` on the unpacked state arrays (see PommermanState)."""
    tick = meta[M_STEP]
    mode = meta[M_MODE]
    nb_ = meta[M_N_BOMBS]

    # Scratch on the stack (int64): agent pos/desired, bomb pos/desired (filled below and
    # when a bomb is laid), agent flags; nothing to zero per tick (no cell grid: the few
    # bombs and agents are compared by pairs). The flames' occupancy is their cell marks.
    scratch = nb.carray(stack_alloca(_SCRATCH_SIZE, np.int64), _SCRATCH_SIZE)
    o = 0
    apos = scratch[o:o + N_AGENTS]
    o += N_AGENTS
    ades = scratch[o:o + N_AGENTS]
    o += N_AGENTS
    bpos = scratch[o:o + MAX_BOMBS]
    o += MAX_BOMBS
    bdes = scratch[o:o + MAX_BOMBS]
    o += MAX_BOMBS
    dying = scratch[o:o + N_AGENTS]
    o += N_AGENTS
    alive = scratch[o:o + N_AGENTS]
    for i in range(N_AGENTS):
        dying[i] = 0

    # The bombs' positions, and 3. bombs tick, in one pass: every life one lower, a moving
    # bomb heads for the next cell unless a wall or the edge stops it. The bombs laid in
    # step 1 come after and get their life already one lower (BOMB_LIFE - 1, what step 3
    # gave them in the framework); step 1 changes the board only under the layer (an
    # agent's code to a bomb, neither a wall), so the stop test reads what it read there.
    any_moving = False
    bomb_lo = np.uint64(0)  # the bombs' cells (a two-word cell mask, _layout.cell_in)
    bomb_hi = np.uint64(0)
    for k in range(nb_):
        p = bombs[k, B_ROW] * BOARD_SIZE + bombs[k, B_COL]
        bpos[k] = p
        bdes[k] = p
        bomb_lo, bomb_hi = with_cell(bomb_lo, bomb_hi, p)
        bombs[k, B_LIFE] -= 1
        d = bombs[k, B_DIR]
        if d != 0:
            t = neighbour_cell(p, d)
            if t < 0 or is_wall(board[t]):
                bombs[k, B_DIR] = 0
            else:
                bdes[k] = t
                any_moving = True
    for i in range(N_AGENTS):
        p = agents[i, A_ROW] * BOARD_SIZE + agents[i, A_COL]
        apos[i] = p
        ades[i] = p
        alive[i] = agents[i, A_ALIVE] != 0

    # 1. actions (a bomb is laid where none stood at the start of the tick)
    nb_start = nb_
    for i in range(N_AGENTS):
        if agents[i, A_STATUS] != STATUS_INCOMPLETE:
            continue
        a = actions[i]
        a = a if (a >= 0) & (a <= LAY_BOMB) else 0
        # The move without a branch on the (random) action: direction 0 (stop, lay a
        # bomb) steps to the cell itself, which never blocks (it holds the agent or a bomb).
        p = apos[i]
        t = neighbour_cell(p, a if a != LAY_BOMB else 0)
        ok = (t >= 0) & (not is_wall(board[unsigned(t if t >= 0 else p)]))
        ades[i] = t if ok else p
        # (an agent without ammo lays nothing: tested with the action, without a branch of
        # its own, so that a random LAY_BOMB without ammo takes no branch)
        if (a == LAY_BOMB) & (agents[i, A_AMMO] > 0):
            free = True
            for k in range(nb_start):
                free &= bpos[k] != p
            if free:
                if nb_ >= MAX_BOMBS:
                    meta[M_OVERFLOW] = 1
                else:
                    agents[i, A_AMMO] -= 1
                    bombs[nb_, B_ROW] = agents[i, A_ROW]
                    bombs[nb_, B_COL] = agents[i, A_COL]
                    bombs[nb_, B_OWNER] = i
                    bombs[nb_, B_LIFE] = BOMB_LIFE - 1  # step 3 (above)
                    bombs[nb_, B_BLAST] = agents[i, A_BLAST]
                    bombs[nb_, B_DIR] = 0
                    bpos[nb_] = p
                    bdes[nb_] = p
                    nb_ += 1
                    board[p] = BOMB
                    bomb_lo, bomb_hi = with_cell(bomb_lo, bomb_hi, p)
    meta[M_N_BOMBS] = nb_

    # 2. flames tick: every life one lower. Deferred to step 11's pass over the flame
    # cells (one pass instead of two): nothing before it reads a flame's life, only the
    # cell marks (the occupancy of step 10, unchanged by ageing), and the flames that
    # step 10 adds get life FLAME_LIFE + 1, so that they too end the tick at FLAME_LIFE.

    # 3. bombs tick: above, with the positions.

    # 4. swaps. The framework checks every ordered pair; a revert only makes later
    # checks fail, and (j, i) tests what (i, j) tested, so unordered pairs suffice.
    for i in range(N_AGENTS):
        if not alive[i]:
            continue
        for j in range(i + 1, N_AGENTS):
            if not alive[j]:
                continue
            # one branch, rarely taken (``&``: no short-circuit branches on random moves)
            if ((ades[i] != apos[i]) & (ades[j] != apos[j])
                    & (ades[i] == apos[j]) & (ades[j] == apos[i])):
                ades[i] = apos[i]
                ades[j] = apos[j]
    if any_moving:
        for k in range(nb_):
            for m in range(k + 1, nb_):
                if bdes[k] != bpos[k] and bdes[m] != bpos[m]:
                    if bdes[k] == bpos[m] and bdes[m] == bpos[k]:
                        bdes[k] = bpos[k]
                        bdes[m] = bpos[m]
        for i in range(N_AGENTS):
            if not alive[i]:
                continue
            for k in range(nb_):
                if ades[i] != apos[i] and bdes[k] != bpos[k]:
                    if ades[i] == bpos[k] and bdes[k] == apos[i]:
                        bdes[k] = bpos[k]

    # 5. overlaps (agents, then bombs): every living agent whose desired cell another
    # living agent shares reverts (the shared cells found before any revert)
    revert = 0
    for i in range(N_AGENTS):
        for j in range(i + 1, N_AGENTS):
            both = alive[i] & alive[j] & (ades[i] == ades[j])
            revert |= both * ((1 << i) | (1 << j))
    for i in range(N_AGENTS):
        ades[i] = apos[i] if revert >> i & 1 else ades[i]
    if any_moving:  # else every bomb's desired cell is its own: nothing to revert
        _overlap_bombs(bpos, bdes, nb_)

    # 6. kicks. A pair (bomb k, agent i) acts only when the agent heads for the bomb's
    # desired cell and one of them moves: an agent standing on a bomb that stays "hits"
    # it, and its kick (direction 0) or revert changes nothing. A bomb that stays and
    # that no moving agent heads for (most bombs, most ticks) only has its direction
    # cleared, which the agents' loop does once there is a living agent; so it skips the
    # loop (a few compares without branches instead of four rounds of stores).
    # While no bomb moves (``any_moving``: every bomb's desired cell is its own and its
    # direction 0, step 3), the loop acts only if a moving agent heads for a bomb's cell
    # (``cell_in`` the bombs' cells): else it is skipped whole.
    any_alive = alive[0] | alive[1] | alive[2] | alive[3]
    heads_any = False
    for i in range(N_AGENTS):
        heads_any |= (alive[i] != 0) & (ades[i] != apos[i]) & cell_in(bomb_lo, bomb_hi, ades[i])
    for k in range(nb_ if (any_moving | heads_any) else 0):
        b = bdes[k]
        if b == bpos[k]:
            heads = False
            for i in range(N_AGENTS):
                heads |= (alive[i] != 0) & (ades[i] != apos[i]) & (ades[i] == b)
            if not heads:
                if any_alive:
                    bombs[k, B_DIR] = 0
                continue
        for i in range(N_AGENTS):
            if not alive[i]:
                continue
            if bdes[k] == bpos[k]:
                bombs[k, B_DIR] = 0
            # an agent heading for the bomb's cell kicks it (rare: one branch) or both
            # revert (selects: no branch on the random moves)
            hit = ades[i] == bdes[k]
            if hit & (agents[i, A_KICK] != 0):
                v = _delta_dir(apos[i], ades[i])
                bombs[k, B_DIR] = v
                if v != 0:
                    t = neighbour_cell(bdes[k], v)
                    if t < 0 or is_wall(board[t]) or _is_agent(board[t]):
                        bdes[k] = bpos[k]
                        bombs[k, B_DIR] = 0
                    else:
                        bdes[k] = t
                        any_moving = True
            else:
                ades[i] = apos[i] if hit else ades[i]
                bdes[k] = bpos[k] if hit else bdes[k]

    # 7. bomb overlaps again (``any_moving``: a bomb moves since step 3, or was kicked)
    if any_moving:
        _overlap_bombs(bpos, bdes, nb_)

    # 8. bombs move (agents that moved onto a bomb's target revert first; ``moving`` has
    # bit i while agent i's desired cell differs from its position)
    moving = 0
    for i in range(N_AGENTS):
        moving |= np.int64(ades[i] != apos[i]) << i
    if any_moving:
        for k in range(nb_):
            b = bdes[k]
            back = moving & ((np.int64(ades[0] == b)) | (np.int64(ades[1] == b) << 1)
                             | (np.int64(ades[2] == b) << 2) | (np.int64(ades[3] == b) << 3))
            if back:  # rare: one branch
                for i in range(N_AGENTS):
                    ades[i] = apos[i] if (back >> i) & 1 else ades[i]
                moving &= ~back
            _move_bomb(board, items, bombs, bpos, bdes, k)
    else:
        # No bomb moves: every desired cell is the bomb's own, so the loop above reverts
        # each moving agent that heads for a bomb's cell (once, whichever bomb) and
        # stamps the bombs' cells. The same without a branch per bomb.
        for i in range(N_AGENTS):
            back = ((moving >> i) & 1) & np.int64(cell_in(bomb_lo, bomb_hi, ades[i]))
            ades[i] = apos[i] if back else ades[i]
        for k in range(nb_):
            board[unsigned(bpos[k])] = BOMB

    # 9. pick-ups
    for i in range(N_AGENTS):
        if not alive[i]:
            continue
        v = board[ades[i]]
        if v == EXTRA_BOMB:
            agents[i, A_AMMO] += 1
        elif v == INCR_RANGE:
            agents[i, A_BLAST] += 1
        elif v == KICK:
            agents[i, A_KICK] = 1

    # 10. explosions (the marks count every flame, the dying ones too); ``bdead``
    # has bit k for bomb k (MAX_BOMBS == 64 bits: no per-tick zeroing of a flag array)
    again = True
    while again and nb_ > 0:
        again = False
        bdead = np.uint64(0)
        for k in range(nb_):
            if (bombs[k, B_LIFE] == 0) | has_flames(flames, bpos[k]):
                made = _explode(board, flames, meta, bpos[k], bombs[k, B_BLAST])
                if made > 0:
                    again = True
                    bdead |= np.uint64(1) << np.uint64(k)
                    o = bombs[k, B_OWNER]
                    if o >= 0:
                        agents[o, A_AMMO] += 1
        if bdead:
            # ArrayList.removeAll: also drops bombs equal (life, position, desired) to a dead one
            for m in range(nb_):
                if bdead >> np.uint64(m) & np.uint64(1):
                    continue
                for k in range(nb_):
                    if (bdead >> np.uint64(k) & np.uint64(1) and bombs[k, B_LIFE] == bombs[m, B_LIFE]
                            and bpos[k] == bpos[m] and bdes[k] == bdes[m]):
                        bdead |= np.uint64(1) << np.uint64(m)
                        break
            nb_ = _remove_bombs(bombs, bpos, bdes, bdead, nb_)
    meta[M_N_BOMBS] = nb_

    # 2 (deferred). Every flame one life lower (its cell's word one byte down); then
    # 11. dead flames (life 0: byte 0) reveal their cell, one reveal each (a second one
    # finds the item taken and leaves a passage), and go; 12. remaining flames show.
    # Cells are independent, so one pass per cell does both. The marks as they stand
    # before are the occupancy of step 13 (every flame of the tick, the dead ones too).
    occ_lo = flames[FLAME_MASK]
    occ_hi = flames[FLAME_MASK + 1]
    n_dead = 0
    for w in range(2):
        bits = flames[FLAME_MASK + w]
        kept = bits  # the marks of the cells that keep a flame (stored once, after)
        while bits:
            c = w * 64 + first_cell(bits)
            bits = drop_lowest(bits)
            # Without branches on the flames' lives: the cell shows flames while any stay;
            # else the first dead flame reveals its item (or 0, a passage) and a second
            # finds the item taken (a passage); a dead flame takes the item off ``items``.
            v = flames[unsigned(c)] >> _EIGHT
            dead = np.int64(v & _BYTE)
            rest = v & ~_BYTE
            hidden = items[unsigned(c)]
            shown = hidden if dead == 1 else np.int8(PASSAGE)
            board[unsigned(c)] = np.int8(FLAMES) if rest != 0 else shown
            items[unsigned(c)] = np.int8(0) if dead != 0 else hidden
            flames[unsigned(c)] = rest
            kept &= ~(np.uint64(rest == 0) << np.uint64(c & 63))
            n_dead += dead
        flames[FLAME_MASK + w] = kept
    meta[M_N_FLAMES] -= n_dead

    # 13. kill or move agents
    n_dying = 0
    for i in range(N_AGENTS):
        if not alive[i]:
            continue
        p = ades[i]
        if cell_in(occ_lo, occ_hi, p):
            dying[i] = 1
            n_dying += 1
            c = board[apos[i]]
            if c != BOMB and c != FLAMES:
                board[apos[i]] = PASSAGE
        else:
            _move_agent(board, items, agents, apos, ades, i)

    # 14. results of deaths
    if n_dying > 0:
        _process_dead(agents, dying, mode)

    # 16. collapse
    if meta[M_COLLAPSE] and tick >= COLLAPSE_START and (tick - COLLAPSE_START) % COLLAPSE_STEP == 0:
        for i in range(N_AGENTS):
            dying[i] = 0
        _collapse(board, bombs, flames, agents, meta, tick, dying)
        if dying[0] or dying[1] or dying[2] or dying[3]:
            _process_dead(agents, dying, mode)

    # 17. tick, time-out, end of game
    step = tick + 1
    meta[M_STEP] = step
    max_steps = meta[M_MAX_STEPS]
    if step == max_steps:
        for i in range(N_AGENTS):
            if mode != MODE_FFA or agents[i, A_ALIVE]:
                agents[i, A_STATUS] = STATUS_TIE
    n_alive = 0
    alive_win = False
    any_win = False
    for i in range(N_AGENTS):
        if agents[i, A_STATUS] == STATUS_WIN:
            any_win = True
        if agents[i, A_ALIVE]:
            n_alive += 1
            if agents[i, A_STATUS] == STATUS_WIN:
                alive_win = True
    done = step >= max_steps or n_alive == 0 or alive_win
    if done:
        meta[M_DONE] = 1
        meta[M_RESULT] = RESULT_WIN if any_win else RESULT_TIE
        for i in range(N_AGENTS):
            if step < max_steps and agents[i, A_STATUS] == STATUS_WIN:
                agents[i, A_REWARD] = 1
            else:
                agents[i, A_REWARD] = -1
    else:
        meta[M_RESULT] = RESULT_INCOMPLETE
        for i in range(N_AGENTS):
            agents[i, A_REWARD] = 0


__all__ = ["step_java"]
