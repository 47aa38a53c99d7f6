"""Pommerman rules, canonical ruleset (the NeurIPS 2018 competition package).

``step_canonical`` follows ``pommerman/forward_model.py`` (``ForwardModel.step``,
``get_done``, ``get_rewards``, ``get_info``) and the env's step-count
increment of the reference package, operation by operation, on the flat
arrays of ``_layout.PommermanState``. Its boards are generated in
``_board_generation.py``.

Order of one tick (as in the reference):

1. tick flames: dead ones (life 0) leave their cell, revealing a hidden
   power-up; the others lose one life and are redrawn;
2. living agents, in id order: clear their cell, lay a bomb (life 10, if no
   bomb is at their cell and they have ammo) or pick a desired cell (not off
   the board, not rigid or wood);
3. bombs, in laying order: clear their cell; moving ones desire the next
   cell unless it is off the board, a power-up or a wall;
4. swaps across one border bounce (agent-agent both, bomb-bomb both, a bomb
   crossing an agent only the bomb); then the reference's occupancy loops,
   kicks and delayed reverts (cumulative occupancy counts, exactly as the
   reference's ``defaultdict`` counters);
5. bombs move or stop; agents move and pick up power-ups (ammo cap 10, blast
   cap 10 in FFA, 4 in team mode: the reference passes its agent view size);
6. bombs tick; bombs at 0 or standing in flames explode, in chains; owners
   get their ammo back (dead or alive);
7. bombs and flames (new ones life 2) are drawn; agents on flames die, the
   others are drawn;
8. step count + 1, then done / rewards / result as the reference computes
   them (done when the new step count reaches ``meta[M_MAX_STEPS]``).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..lowlevel import stack_alloca
from ._layout import (
    cell_in, is_powerup, is_wall, neighbour_cell, with_cell,
    step_through_pointers,
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS, AGENT_FIELDS,
    AGENT0, BOMB_FIELDS, FLAME_WORDS, META_FIELDS, B_BLAST, B_COL, B_DIR, B_LIFE, B_OWNER, B_ROW, BOARD_SIZE, BOMB,
    EXTRA_BOMB, FLAME_MASK, FLAMES, INCR_RANGE, KICK,
    LAY_BOMB, M_DONE, M_MAX_STEPS, M_MODE, M_N_BOMBS, M_N_FLAMES,
    M_OVERFLOW, M_RESULT, M_STEP, MAX_BOMBS, MODE_TEAM,
    N_AGENTS, N_CELLS, PASSAGE, RESULT_INCOMPLETE, RESULT_TIE, RESULT_WIN, RIGID,
    STATUS_LOSS, STATUS_TIE, STATUS_WIN, STOP, WOOD,
    COL_OF, NEIGHBOUR, ROW_OF,
    add_flames, clear_flame_cell, drop_lowest, first_cell,
)

#: Life of a freshly laid bomb (the reference's DEFAULT_BOMB_LIFE + 1; it is
#: ticked in the same step, so it shows 9 after the step that laid it).
BOMB_LIFE = 10
#: Life of a new flame.
FLAME_LIFE = 2
#: Ammo cap (``Bomber.incr_ammo``).
MAX_AMMO = 10
#: Blast-strength cap from a range power-up: FFA (the default of
#: ``ForwardModel.step``) and team mode (the reference's agent view size).
MAX_BLAST_FFA = 10
MAX_BLAST_TEAM = 4


# Offsets into the per-step int16 scratch buffer (on the stack: see ``stack_alloca``).
_S_AOCC = 0                         # agent occupancy per cell [121]
_S_BOCC = _S_AOCC + N_CELLS         # bomb occupancy per cell [121]
_S_ADES = _S_BOCC + N_CELLS         # agents' desired cell [4]
_S_BDES = _S_ADES + N_AGENTS        # bombs' desired cell [MAX_BOMBS]
_S_KBY = _S_BDES + MAX_BOMBS        # bomb -> 1 + kicking agent (0 none) [MAX_BOMBS]
_S_KOF = _S_KBY + MAX_BOMBS         # agent -> 1 + kicked bomb (0 none) [4]
_S_DBOMB = _S_KOF + N_AGENTS        # delayed bomb updates (bomb, cell) [2 * MAX_BOMBS]
_S_DAGENT = _S_DBOMB + 2 * MAX_BOMBS  # delayed agent updates (agent, cell) [2 * MAX_BOMBS]
_S_ACTS = _S_DAGENT + 2 * MAX_BOMBS  # sanitized actions [4]
_S_ALIVE = _S_ACTS + N_AGENTS       # alive at the start of the step [4]
_S_AKEY = _S_ALIVE + N_AGENTS       # agent -> border crossed, or negative [4]
_S_BKEY = _S_AKEY + N_AGENTS        # bomb -> border crossed, or -1 [MAX_BOMBS]
_S_SIZE = _S_BKEY + MAX_BOMBS


@nb.njit(cache=True, inline="always")
def _border(p, q):
    """Index (0..241) of the border between adjacent flat cells p and q (selects)."""
    lo = p if p < q else q
    vertical = (p - q == BOARD_SIZE) | (q - p == BOARD_SIZE)
    return lo if vertical else N_CELLS + lo


_EIGHT = np.uint64(8)
_BYTE = np.uint64(0xFF)


@nb.njit(cache=True, inline="always")
def _tick_flames(board, items, flames, meta):
    """Tick the flames (uint64[FLAME_WORDS], per cell: see ``_layout``).

    Dead flames (life 0) are removed, their cell becomes the hidden item of
    ``items`` (int8[121], then cleared) or passage (a second dead flame on the
    cell finds the item taken: passage); the others lose one life and are
    redrawn as flames on ``board`` (int8[121]). Cells are independent, so one
    pass per marked cell does all of it.
    """
    n_dead = 0
    for w in range(2):
        bits = flames[FLAME_MASK + w]
        while bits:
            p = w * 64 + first_cell(bits)
            bits = drop_lowest(bits)
            # Without branches on the lives: flames that stay show; else a single dead
            # flame reveals the hidden item (0: a passage), several leave a passage; a dead
            # flame takes the item off ``items``.
            v = flames[p]
            dead = np.int64(v & _BYTE)
            rest = v >> _EIGHT
            it = items[p]
            shown = it if dead == 1 else np.int8(PASSAGE)
            board[p] = np.int8(FLAMES) if rest != 0 else shown
            items[p] = np.int8(0) if dead != 0 else it
            flames[p] = rest
            flames[FLAME_MASK + w] &= ~(np.uint64(rest == 0) << np.uint64(p & 63))
            n_dead += dead
    meta[M_N_FLAMES] -= n_dead


@nb.njit(cache=True, inline="always")
def _agent_intents(board, agents, bombs, meta, acts, ades):
    """Living agents clear their cell, lay bombs and choose desired cells.

    acts: int16[4] sanitized actions; ades: int16[4] desired flat cells
    (written; dead agents keep their own cell). Appends laid bombs to
    ``bombs`` (int16[MAX_BOMBS, 6]); sets meta[M_OVERFLOW] when full.
    """
    for a in range(N_AGENTS):
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        ades[a] = p
        if agents[a, A_ALIVE] == 0:
            continue
        board[p] = PASSAGE
        act = acts[a]
        # An agent without ammo lays nothing: tested with the action (no branch of its
        # own for a random LAY_BOMB without ammo).
        if (act == LAY_BOMB) & (agents[a, A_AMMO] > 0):
            nb_ = meta[M_N_BOMBS]
            has_bomb = False
            for b in range(nb_):
                if bombs[b, B_ROW] == agents[a, A_ROW] and bombs[b, B_COL] == agents[a, A_COL]:
                    has_bomb = True
                    break
            if not has_bomb:
                if nb_ >= MAX_BOMBS:
                    meta[M_OVERFLOW] = 1
                    continue
                agents[a, A_AMMO] -= 1
                bombs[nb_, B_ROW] = agents[a, A_ROW]
                bombs[nb_, B_COL] = agents[a, A_COL]
                bombs[nb_, B_OWNER] = a
                bombs[nb_, B_LIFE] = BOMB_LIFE
                bombs[nb_, B_BLAST] = agents[a, A_BLAST]
                bombs[nb_, B_DIR] = 0
                meta[M_N_BOMBS] = nb_ + 1
        # Without a branch on the (random) action: STOP and LAY_BOMB (direction 0) step to
        # the cell itself, a passage since the line above, so the agent stays.
        q = neighbour_cell(p, act if act != LAY_BOMB else 0)
        ok = (q >= 0) & (not is_wall(board[q if q >= 0 else p]))
        ades[a] = q if ok else p


@nb.njit(cache=True, inline="always")
def _plain_bounces(agents, bombs, nbombs, ades):
    """The outcome of the reference's movement resolution (:func:`_resolve_moves`) on a
    plain tick, or -1 when the tick is not plain.

    A tick is plain when no bomb moves, no two bombs share a cell, no two living agents
    desire the same cell, no moving agent desires another living agent's cell, and every
    moving agent that desires a bomb's cell cannot kick. Then nobody crosses a border, no
    occupancy count passes 1 before the kicks, each bomb's cell is desired by at most one
    agent, and the kicks only bounce those agents (with their bombs, which stay): a
    bounced agent returns to its own cell, which nobody else desires, so the delayed
    updates move nothing more. Returns the bit mask of the bouncing agents (bit a: agent
    a stays), 0 when every desired cell stands as chosen. Most ticks of play are plain.

    agents int16[4, 9]; bombs int16[MAX_BOMBS, 6] with ``nbombs`` live; ades int16[4]
    (``_agent_intents``' desired cells). Compares and selects, no branch on the moves.
    """
    cells_lo = np.uint64(0)  # the bombs' cells, a two-word cell mask
    cells_hi = np.uint64(0)
    odd = False
    for b in range(nbombs):
        p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
        odd |= (bombs[b, B_DIR] != 0) | cell_in(cells_lo, cells_hi, p)
        cells_lo, cells_hi = with_cell(cells_lo, cells_hi, p)
    bounce = 0
    for a in range(N_AGENTS):
        alive = agents[a, A_ALIVE] != 0
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        d = np.int64(ades[a])
        moving = alive & (d != p)
        on_bomb = moving & cell_in(cells_lo, cells_hi, d)
        odd |= on_bomb & (agents[a, A_KICK] != 0)
        bounce |= np.int64(on_bomb) << a
        for a2 in range(N_AGENTS):
            if a2 == a:
                continue
            both = alive & (agents[a2, A_ALIVE] != 0)
            p2 = agents[a2, A_ROW] * BOARD_SIZE + agents[a2, A_COL]
            odd |= both & ((d == ades[a2]) | (moving & (d == p2)))
    return -1 if odd else bounce


@nb.njit(cache=True, inline="always")
def _clear_bombs(board, bombs, nbombs, bdes):
    """The bombs clear their cells (``board``, int8[121]) and desire them (``bdes``,
    int16[nbombs], written): the first step of the reference's movement resolution,
    before either :func:`_plain_moves` or :func:`_resolve_moves`."""
    for b in range(nbombs):
        p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
        board[p] = PASSAGE
        bdes[b] = p


@nb.njit(cache=True, inline="always")
def _plain_moves(agents, ades, bounce):
    """What :func:`_resolve_moves` leaves of the agents on a plain tick
    (:func:`_plain_bounces` gave ``bounce`` >= 0): the bouncing agents back on their own
    cells, the others' desired cells as chosen; no kick (the bombs stay, as
    :func:`_clear_bombs` left them).

    ades int16[4] (the scratch's ``_S_ADES``; written).
    """
    for a in range(N_AGENTS):
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        ades[a] = p if (bounce >> a) & 1 else ades[a]


@nb.njit(cache=True)
def _resolve_moves(board, agents, bombs, nbombs, acts, s):
    """The reference's movement resolution (swaps, occupancy loops, kicks).

    A call of its own, not inlined into the rules: it runs only on the ticks that are
    not plain (:func:`_plain_bounces`; about 0.1% of random play), and the rules compile
    faster without it.

    board int8[121]; agents int16[4, 9]; bombs int16[MAX_BOMBS, 6] with
    ``nbombs`` live, their cells already cleared (:func:`_clear_bombs`); acts int16[4]
    (sanitized); s: int16 scratch buffer (layout ``_S_*``: occupancy counts and kick map
    zeroed, the bombs' desired cells their own) holding on return the final desired cells of agents (``_S_ADES``)
    and bombs (``_S_BDES``) and the kick map (``_S_KBY``). Sets the moving
    direction of kicked bombs.
    """
    # Moving bombs' desired cells (every bomb's cell is cleared and its desired cell its
    # own already: _clear_bombs).
    for b in range(nbombs):
        d = bombs[b, B_DIR]
        if d != 0:
            p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
            q = neighbour_cell(p, d)
            if q >= 0 and not is_powerup(board[q]) and not is_wall(board[q]):
                s[_S_BDES + b] = q

    # Crossings (swaps across one border). The reference keys a map by the border: the
    # first mover across a border (agents in id order, then bombs in laying order) holds
    # it, and a later one bounces (agent-agent both, bomb-bomb both, a bomb crossing an
    # agent only the bomb). Here each mover's border is kept (``_S_AKEY``, ``_S_BKEY``;
    # a stayer or a dead agent gets a negative key of its own) and a later mover looks for
    # the first earlier one with its border: the same holder, and no 242-slot map to zero
    # every tick. The agents' look-up is a few selects (no branch on the random moves).
    for a in range(N_AGENTS):
        s[_S_AKEY + a] = -1 - a
        if agents[a, A_ALIVE] == 0:
            continue
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        q = s[_S_ADES + a]
        key = _border(p, q) if q != p else -1 - a
        holder = -1
        for a2 in range(a - 1, -1, -1):  # the earliest match wins: scanned last
            holder = a2 if s[_S_AKEY + a2] == key else holder
        s[_S_AKEY + a] = key
        if holder >= 0:  # a crossing: rare
            s[_S_ADES + a] = p
            s[_S_ADES + holder] = agents[holder, A_ROW] * BOARD_SIZE + agents[holder, A_COL]
    for b in range(nbombs):
        p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
        q = s[_S_BDES + b]
        s[_S_BKEY + b] = -1
        if q != p:
            key = _border(p, q)
            s[_S_BKEY + b] = key
            held_by_agent = False
            for a2 in range(N_AGENTS):
                held_by_agent |= s[_S_AKEY + a2] == key
            holder = -1
            if not held_by_agent:
                for b2 in range(b):
                    if s[_S_BKEY + b2] == key:
                        holder = b2
                        break
            if held_by_agent or holder >= 0:
                s[_S_BDES + b] = p
                if holder >= 0:
                    s[_S_BDES + holder] = bombs[holder, B_ROW] * BOARD_SIZE + bombs[holder, B_COL]

    # Occupancy counts.
    for a in range(N_AGENTS):
        if agents[a, A_ALIVE] != 0:
            s[_S_AOCC + s[_S_ADES + a]] += 1
    for b in range(nbombs):
        s[_S_BOCC + s[_S_BDES + b]] += 1

    change = True
    while change:
        change = False
        for a in range(N_AGENTS):
            if agents[a, A_ALIVE] == 0:
                continue
            d = s[_S_ADES + a]
            p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
            if (d != p) & ((s[_S_AOCC + d] > 1) | (s[_S_BOCC + d] > 1)):
                s[_S_ADES + a] = p
                s[_S_AOCC + p] += 1
                change = True
        for b in range(nbombs):
            d = s[_S_BDES + b]
            p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
            if (d != p) & ((s[_S_BOCC + d] > 1) | (s[_S_AOCC + d] > 1)):
                s[_S_BDES + b] = p
                s[_S_BOCC + p] += 1
                change = True

    # Kicks.
    ndb = 0
    nda = 0
    for b in range(nbombs):
        d = s[_S_BDES + b]
        if s[_S_AOCC + d] == 0:
            continue
        a = -1
        for a2 in range(N_AGENTS):
            if agents[a2, A_ALIVE] != 0 and s[_S_ADES + a2] == d:
                a = a2
                break
        if a < 0:
            continue
        bp = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
        ap = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        if d == ap:
            if d != bp:
                s[_S_DBOMB + 2 * ndb] = b
                s[_S_DBOMB + 2 * ndb + 1] = bp
                ndb += 1
            continue
        if agents[a, A_KICK] == 0:
            s[_S_DBOMB + 2 * ndb] = b
            s[_S_DBOMB + 2 * ndb + 1] = bp
            ndb += 1
            s[_S_DAGENT + 2 * nda] = a
            s[_S_DAGENT + 2 * nda + 1] = ap
            nda += 1
            continue
        direction = acts[a]
        t = neighbour_cell(d, direction)
        if (t >= 0 and s[_S_AOCC + t] == 0 and s[_S_BOCC + t] == 0
                and not is_powerup(board[t]) and not is_wall(board[t])):
            s[_S_BOCC + d] = 0
            s[_S_DBOMB + 2 * ndb] = b
            s[_S_DBOMB + 2 * ndb + 1] = t
            ndb += 1
            s[_S_KBY + b] = 1 + a
            s[_S_KOF + a] = 1 + b
            bombs[b, B_DIR] = direction
        else:
            s[_S_DBOMB + 2 * ndb] = b
            s[_S_DBOMB + 2 * ndb + 1] = bp
            ndb += 1
            s[_S_DAGENT + 2 * nda] = a
            s[_S_DAGENT + 2 * nda + 1] = ap
            nda += 1

    for i in range(ndb):
        b = s[_S_DBOMB + 2 * i]
        q = s[_S_DBOMB + 2 * i + 1]
        s[_S_BDES + b] = q
        s[_S_BOCC + q] += 1
        change = True
    for i in range(nda):
        a = s[_S_DAGENT + 2 * i]
        q = s[_S_DAGENT + 2 * i + 1]
        s[_S_ADES + a] = q
        s[_S_AOCC + q] += 1
        change = True

    while change:
        change = False
        for a in range(N_AGENTS):
            if agents[a, A_ALIVE] == 0:
                continue
            d = s[_S_ADES + a]
            p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
            if (d != p) & ((s[_S_AOCC + d] > 1) | (s[_S_BOCC + d] != 0)):
                kb = s[_S_KOF + a]
                if kb != 0:
                    b = kb - 1
                    bp = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
                    s[_S_BDES + b] = bp
                    s[_S_BOCC + bp] += 1
                    s[_S_KBY + b] = 0
                    s[_S_KOF + a] = 0
                s[_S_ADES + a] = p
                s[_S_AOCC + p] += 1
                change = True
        for b in range(nbombs):
            d = s[_S_BDES + b]
            p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
            if d == p and s[_S_KBY + b] == 0:
                continue
            if s[_S_BOCC + d] > 1 or s[_S_AOCC + d] != 0:
                s[_S_BDES + b] = p
                s[_S_BOCC + p] += 1
                ka = s[_S_KBY + b]
                if ka != 0:
                    a = ka - 1
                    ap = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
                    s[_S_ADES + a] = ap
                    s[_S_AOCC + ap] += 1
                    s[_S_KOF + a] = 0
                    s[_S_KBY + b] = 0
                change = True


@nb.njit(cache=True, inline="always")
def _apply_moves(board, agents, bombs, nbombs, acts, s, max_blast):
    """Move bombs and agents to their resolved cells; agents pick up power-ups.

    Arguments as ``_resolve_moves``; max_blast: the blast-strength cap.
    """
    for b in range(nbombs):
        d = s[_S_BDES + b]
        p = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
        if d == p and s[_S_KBY + b] == 0:
            bombs[b, B_DIR] = 0
        else:
            bombs[b, B_ROW] = ROW_OF[d]
            bombs[b, B_COL] = COL_OF[d]
    for a in range(N_AGENTS):
        if agents[a, A_ALIVE] == 0:
            continue
        d = s[_S_ADES + a]
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        # selects on the (random) move; the power-up branches below are rarely taken
        moved = d != p
        q = neighbour_cell(p, acts[a] if moved else 0)
        agents[a, A_ROW] = ROW_OF[q]
        agents[a, A_COL] = COL_OF[q]
        v = board[q] if moved else np.int8(PASSAGE)
        if v == EXTRA_BOMB:
            if agents[a, A_AMMO] + 1 < MAX_AMMO:
                agents[a, A_AMMO] += 1
            else:
                agents[a, A_AMMO] = MAX_AMMO
        elif v == INCR_RANGE:
            if agents[a, A_BLAST] + 1 < max_blast:
                agents[a, A_BLAST] += 1
            else:
                agents[a, A_BLAST] = max_blast
        elif v == KICK:
            agents[a, A_KICK] = 1


@nb.njit(cache=True)
def _chain_explosions(board, agents, bombs, nbombs):
    """The explosions of a tick in which a bomb explodes (:func:`_explode`): every bomb of
    life 0 explodes (its owner's ammo back, its blast marked in the blast mask) and leaves
    the list (laying order kept); bombs in a blast explode next, until none does. A call of
    its own, not inlined into the rules (it runs on the ticks with an explosion only; the
    rules compile faster without it). Returns (nbombs, blast_lo, blast_hi): the bombs left
    and the blasted cells as a two-word cell mask (uint64: bit c of ``blast_lo`` for cell
    c < 64, bit c - 64 of ``blast_hi`` for the others).
    """
    blast_lo = np.uint64(0)
    blast_hi = np.uint64(0)
    any_new = True
    while any_new:
        any_new = False
        k = 0
        for b in range(nbombs):
            if bombs[b, B_LIFE] != 0:
                if k != b:
                    for f in range(6):
                        bombs[k, f] = bombs[b, f]
                k += 1
                continue
            owner = bombs[b, B_OWNER]
            if owner >= 0:
                if agents[owner, A_AMMO] + 1 < MAX_AMMO:
                    agents[owner, A_AMMO] += 1
                else:
                    agents[owner, A_AMMO] = MAX_AMMO
            r0 = bombs[b, B_ROW]
            c0 = bombs[b, B_COL]
            strength = bombs[b, B_BLAST]
            for direction in range(4):
                # up: 1..s-1; down: 0..s-1 (centre); left, right: 1..s-1.
                start = 0 if direction == 1 else 1
                for i in range(start, strength):
                    r = r0
                    c = c0
                    if direction == 0:
                        r = r0 - i
                    elif direction == 1:
                        r = r0 + i
                    elif direction == 2:
                        c = c0 - i
                    else:
                        c = c0 + i
                    if r < 0 or c < 0 or r >= BOARD_SIZE or c >= BOARD_SIZE:
                        break
                    v = board[r * BOARD_SIZE + c]
                    if v == RIGID:
                        break
                    q = r * BOARD_SIZE + c
                    blast_lo, blast_hi = with_cell(blast_lo, blast_hi, q)
                    if v == WOOD:
                        break
        nbombs = k
        for b in range(nbombs):
            q = bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]
            if cell_in(blast_lo, blast_hi, q):
                bombs[b, B_LIFE] = 0
                any_new = True
    return nbombs, blast_lo, blast_hi


@nb.njit(cache=True, inline="always")
def _explode(board, agents, bombs, meta):
    """Tick bombs and resolve (chain) explosions.

    Exploded bombs are removed from ``bombs`` keeping the laying order; their owners
    get one ammo back (cap 10). Returns (exploded, blast_lo, blast_hi): True when
    anything exploded, and the blasted cells as a two-word cell mask (see
    :func:`_chain_explosions`; zero when none).
    """
    nbombs = meta[M_N_BOMBS]
    blast_lo = np.uint64(0)
    blast_hi = np.uint64(0)
    any_new = False
    for b in range(nbombs):
        bombs[b, B_LIFE] -= 1
        if bombs[b, B_LIFE] == 0:
            any_new = True
        elif board[bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]] == FLAMES:
            bombs[b, B_LIFE] = 0
            any_new = True
    exploded_any = any_new
    if any_new:
        nbombs, blast_lo, blast_hi = _chain_explosions(board, agents, bombs, nbombs)
    meta[M_N_BOMBS] = nbombs
    return exploded_any, blast_lo, blast_hi


@nb.njit(cache=True, inline="always")
def _draw(board, agents, bombs, flames, meta, blast_lo, blast_hi, alive_before, exploded):
    """Draw bombs, add new flames (row-major, life 2), draw flames, kill agents.

    blast_lo, blast_hi: the blasted cells, a two-word cell mask (:func:`_chain_explosions`);
    alive_before: int16[4] 1 for the agents alive at the start of the step.
    """
    for b in range(meta[M_N_BOMBS]):
        board[bombs[b, B_ROW] * BOARD_SIZE + bombs[b, B_COL]] = BOMB
    if exploded:
        nf = meta[M_N_FLAMES]
        full = False  # a cell's flame count at its cap: no more flames (state invalid)
        for w in range(2):  # the blasted cells in row-major order: set bits, lowest first
            bits = blast_lo if w == 0 else blast_hi
            while bits and not full:
                p = w * 64 + first_cell(bits)
                bits = drop_lowest(bits)
                if add_flames(flames, p, FLAME_LIFE, 1):
                    nf += 1
                else:
                    meta[M_OVERFLOW] = 1
                    full = True
        meta[M_N_FLAMES] = nf
    for w in range(2):
        bits = flames[FLAME_MASK + w]
        while bits:
            board[w * 64 + first_cell(bits)] = FLAMES
            bits = drop_lowest(bits)
    for a in range(N_AGENTS):
        if alive_before[a] == 0:
            continue
        p = agents[a, A_ROW] * BOARD_SIZE + agents[a, A_COL]
        if board[p] == FLAMES:
            agents[a, A_ALIVE] = 0
        else:
            board[p] = AGENT0 + a


@nb.njit(cache=True, inline="always")
def _fill4(x, v):
    """x[:] = v for a length-4 array (an element loop: numba's slice fill is slow)."""
    for i in range(N_AGENTS):
        x[i] = v


@nb.njit(cache=True, inline="always")
def _finish(agents, meta):
    """Step count + 1, then the reference's get_done / get_rewards / get_info.

    Writes meta[M_STEP], meta[M_DONE], meta[M_RESULT], agents[:, A_REWARD]
    and, at the end, agents[:, A_STATUS].
    """
    meta[M_STEP] += 1
    step = meta[M_STEP]
    timeout = step >= meta[M_MAX_STEPS]
    n_alive = 0
    mask = 0
    for a in range(N_AGENTS):
        if agents[a, A_ALIVE] != 0:
            n_alive += 1
            mask |= 1 << a
    rewards = agents[:, A_REWARD]
    _fill4(rewards, 0)
    if meta[M_MODE] == MODE_TEAM:
        done = timeout or n_alive <= 1 or mask == 0b0101 or mask == 0b1010
        if mask == 0b0101 or mask == 0b0001 or mask == 0b0100:
            rewards[0] = 1
            rewards[1] = -1
            rewards[2] = 1
            rewards[3] = -1
        elif mask == 0b1010 or mask == 0b0010 or mask == 0b1000:
            rewards[0] = -1
            rewards[1] = 1
            rewards[2] = -1
            rewards[3] = 1
        elif timeout or n_alive == 0:
            _fill4(rewards, -1)
        result = RESULT_INCOMPLETE
        if done:
            if rewards[0] == -1 and rewards[1] == -1 and rewards[2] == -1 and rewards[3] == -1:
                result = RESULT_TIE
            else:
                result = RESULT_WIN
    else:
        done = timeout or n_alive <= 1
        if n_alive == 1:
            for a in range(N_AGENTS):
                rewards[a] = 1 if agents[a, A_ALIVE] != 0 else -1
        elif timeout:
            _fill4(rewards, -1)
        else:
            for a in range(N_AGENTS):
                rewards[a] = 0 if agents[a, A_ALIVE] != 0 else -1
        result = RESULT_INCOMPLETE
        if done:
            result = RESULT_WIN if n_alive == 1 else RESULT_TIE
    meta[M_DONE] = 1 if done else 0
    meta[M_RESULT] = result
    if done:
        for a in range(N_AGENTS):
            if result == RESULT_WIN and rewards[a] == 1:
                agents[a, A_STATUS] = STATUS_WIN
            elif result == RESULT_TIE:
                agents[a, A_STATUS] = STATUS_TIE
            else:
                agents[a, A_STATUS] = STATUS_LOSS


@nb.njit(cache=True, inline="always")
def step_canonical(state, actions, checked=True):
    """Advance a canonical-ruleset state by one tick in place.

    Args:
        state: PommermanState (modified in place); a finished game is left alone.
        actions: int64[4] per agent id; values outside 0..5 count as STOP;
            dead agents' actions are ignored.

    Inlined into its callers: :func:`~._layout.step_through_pointers` with this ruleset's
    :func:`_step_at` (the checks, then the rules on data pointers), as ``step_java``.
    """
    step_through_pointers(_step_at, state, actions, checked)


@nb.njit(cache=True)
def _step_at(board, items, agents, bombs, flames, meta, actions):
    """:func:`_step` on the state's arrays given as data pointers (``data_pointer``),
    rebuilt here with the layout's fixed shapes (no reference counts).

    Args: pointers to int8[121] board and items, int16[4, AGENT_FIELDS] agents,
        int16[MAX_BOMBS, BOMB_FIELDS] bombs, uint64[FLAME_WORDS] flames,
        int32[META_FIELDS] meta (all C-contiguous), int64[4] actions.
    """
    _step(nb.carray(board, N_CELLS), nb.carray(items, N_CELLS),
          nb.carray(agents, (N_AGENTS, AGENT_FIELDS)), nb.carray(bombs, (MAX_BOMBS, BOMB_FIELDS)),
          nb.carray(flames, FLAME_WORDS), nb.carray(meta, META_FIELDS),
          nb.carray(actions, N_AGENTS))


@nb.njit(cache=True, inline="always")
def _step(board, items, agents, bombs, flames, meta, actions):
    """The body of ``step_canonical`` on the unpacked state arrays (see PommermanState)."""
    s = nb.carray(stack_alloca(_S_SIZE, np.int16), _S_SIZE)
    for i in range(_S_KBY, _S_DBOMB):
        s[i] = 0
    acts = s[_S_ACTS:_S_ACTS + N_AGENTS]
    alive_before = s[_S_ALIVE:_S_ALIVE + N_AGENTS]
    for a in range(N_AGENTS):
        v = actions[a]
        acts[a] = v if 0 <= v <= 5 else STOP
        alive_before[a] = agents[a, A_ALIVE]
    max_blast = MAX_BLAST_TEAM if meta[M_MODE] == MODE_TEAM else MAX_BLAST_FFA

    _tick_flames(board, items, flames, meta)
    _agent_intents(board, agents, bombs, meta, acts, s[_S_ADES:_S_ADES + N_AGENTS])
    nbombs = meta[M_N_BOMBS]
    ades = s[_S_ADES:_S_ADES + N_AGENTS]
    _clear_bombs(board, bombs, nbombs, s[_S_BDES:_S_BDES + MAX_BOMBS])
    bounce = _plain_bounces(agents, bombs, nbombs, ades)
    if bounce >= 0:
        _plain_moves(agents, ades, bounce)
    else:
        for i in range(_S_ADES):  # the occupancy counts
            s[i] = 0
        _resolve_moves(board, agents, bombs, nbombs, acts, s)
    _apply_moves(board, agents, bombs, nbombs, acts, s, max_blast)
    exploded, blast_lo, blast_hi = _explode(board, agents, bombs, meta)
    _draw(board, agents, bombs, flames, meta, blast_lo, blast_hi, alive_before, exploded)
    _finish(agents, meta)


__all__ = ["step_canonical"]
