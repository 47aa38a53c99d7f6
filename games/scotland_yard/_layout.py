"""Scotland Yard state layout: one NamedTuple of fixed-capacity, fixed-dtype arrays.

Players: index 0 is Mr X, 1..D the detectives (D = ``meta[M_NUM_DETECTIVES]``
<= MAX_DETECTIVES). Stations are numbered 1..S as on the board; 0 means
"unknown / none".

Mutable arrays (copied by ``copy_into`` / ``copy_state``)::

    positions   int32[MAX_DETECTIVES + 1]     station of each player (Mr X's is 0
                                              = HIDDEN in a seeker's observation)
    tickets     int32[MAX_DETECTIVES + 1, 5]  columns TAXI, BUS, UNDERGROUND,
                                              BLACK, DOUBLE
    meta        int32[META_FIELDS]            M_* slots below
    ticket_log  int32[MAX_ROUNDS + 1]         ticket Mr X used in round r
                                              (r = 1..rounds; -1 before)
    mrx_path    int32[MAX_ROUNDS + 1]         Mr X's station after round r,
                                              [0] = start; in a seeker's
                                              observation only reveal rounds
                                              (and everything once the game is over)
    possible    bool[S + 1]                   where Mr X may be, from public
                                              information only
    scratch     bool[S + 1]                   work buffer of the possible-set update
    reveal      bool[MAX_ROUNDS + 1]          whether round r is a reveal round

Shared, read-only arrays (the :class:`~games.scotland_yard._board.Board`; a copy
of a state shares them): ``neighbours``, ``transport``, ``degree``,
``black_ok``, ``dist_detective``, ``dist_any``.

Actions (``NUM_ACTIONS = 2 * MAX_DEGREE + 1``): ``2k`` travels along
connection slot ``k`` of the mover's station with that connection's ticket,
``2k + 1`` (Mr X only) along slot ``k`` with a black ticket, ``DOUBLE_MOVE``
(Mr X only) plays a double-move card: his next two moves form this turn.
"""
from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..lowlevel import borrow
from ._board import MAX_DEGREE, Board

MAX_DETECTIVES = 5
MAX_ROUNDS = 64
MRX = 0
HIDDEN = 0

# Ticket columns (the first three are also the connection transports; FERRY == BLACK).
TAXI_TICKET, BUS_TICKET, UNDERGROUND_TICKET, BLACK_TICKET, DOUBLE_TICKET = 0, 1, 2, 3, 4
TICKET_KINDS = 5
TICKET_NAMES = ("taxi", "bus", "underground", "black", "double")

NUM_ACTIONS = 2 * MAX_DEGREE + 1
DOUBLE_MOVE = 2 * MAX_DEGREE

# Meta slots.
M_ROUND = 0             # Mr X moves made so far (the round of his last move)
M_TO_MOVE = 1           # player to move: 0 = Mr X, 1..D a detective
M_MOVES_LEFT = 2        # Mr X moves left in his current turn (1, or 2 after a double-move card)
M_IN_DOUBLE = 3         # 1 while Mr X's turn is a double move
M_RESULT = 4            # RESULT_* below
M_CAPTURER = 5          # detective who caught Mr X (0: none, or Mr X could not move)
M_ROUNDS = 6            # rounds in a game (24)
M_NUM_DETECTIVES = 7
M_PLIES = 8             # moves played (double-move cards included)
M_SEEKER_VIEW = 9       # 1 in a seeker's observation (Mr X's station removed)
M_LAST_REVEAL = 10      # station shown at the last reveal (0: none yet)
M_TRACK_POSSIBLE = 11   # 1: step keeps ``possible`` up to date (searches switch it off)
META_FIELDS = 12

RESULT_ONGOING, RESULT_MRX_WINS, RESULT_SEEKERS_WIN = 0, 1, 2


class ScotlandYardState(NamedTuple):
    """One Scotland Yard position (see the module docstring for the layout)."""

    positions: np.ndarray   # int32[MAX_DETECTIVES + 1]
    tickets: np.ndarray     # int32[MAX_DETECTIVES + 1, TICKET_KINDS]
    meta: np.ndarray        # int32[META_FIELDS]
    ticket_log: np.ndarray  # int32[MAX_ROUNDS + 1]
    mrx_path: np.ndarray    # int32[MAX_ROUNDS + 1]
    possible: np.ndarray    # bool[S + 1]
    scratch: np.ndarray     # bool[S + 1]
    reveal: np.ndarray      # bool[MAX_ROUNDS + 1]
    neighbours: np.ndarray  # int32[S + 1, MAX_DEGREE] (shared)
    transport: np.ndarray   # int32[S + 1, MAX_DEGREE] (shared)
    degree: np.ndarray      # int32[S + 1] (shared)
    black_ok: np.ndarray    # bool[S + 1, MAX_DEGREE] (shared)
    dist_detective: np.ndarray  # int32[S + 1, S + 1] (shared)
    dist_any: np.ndarray    # int32[S + 1, S + 1] (shared)


def empty_state(board: Board) -> ScotlandYardState:
    """A zeroed state on ``board`` (fill it with ``init`` or ``copy_into``)."""
    s = board.degree.shape[0]
    return ScotlandYardState(
        positions=np.zeros(MAX_DETECTIVES + 1, dtype=np.int32),
        tickets=np.zeros((MAX_DETECTIVES + 1, TICKET_KINDS), dtype=np.int32),
        meta=np.zeros(META_FIELDS, dtype=np.int32),
        ticket_log=np.full(MAX_ROUNDS + 1, -1, dtype=np.int32),
        mrx_path=np.zeros(MAX_ROUNDS + 1, dtype=np.int32),
        possible=np.zeros(s, dtype=np.bool_),
        scratch=np.zeros(s, dtype=np.bool_),
        reveal=np.zeros(MAX_ROUNDS + 1, dtype=np.bool_),
        neighbours=board.neighbours, transport=board.transport, degree=board.degree,
        black_ok=board.black_ok, dist_detective=board.dist_detective, dist_any=board.dist_any,
    )


@nb.njit(cache=True)
def copy_into(dst, src):
    """Copy the mutable arrays of ``src`` into ``dst`` (same board), in place.

    Mr X's log is copied only up to the current round. Explicit loops: numba's
    slice assignment costs more for arrays this small.
    """
    for i in range(src.positions.shape[0]):
        dst.positions[i] = src.positions[i]
        for t in range(TICKET_KINDS):
            dst.tickets[i, t] = src.tickets[i, t]
    for i in range(META_FIELDS):
        dst.meta[i] = src.meta[i]
    for r in range(src.ticket_log.shape[0]):
        dst.ticket_log[r] = src.ticket_log[r]
        dst.mrx_path[r] = src.mrx_path[r]
        dst.reveal[r] = src.reveal[r]
    for v in range(src.possible.shape[0]):
        dst.possible[v] = src.possible[v]


@nb.njit(cache=True)
def copy_dynamic_into(dst, src):
    """Copy only what moves change and the rules read (positions, tickets, meta):
    the per-iteration reset of a search scratch state that was filled once by
    :func:`copy_into` from the same root and runs with ``M_TRACK_POSSIBLE`` off
    (the log and path are then written but never read, the possible set untouched)."""
    for i in range(src.positions.shape[0]):
        dst.positions[i] = src.positions[i]
        for t in range(TICKET_KINDS):
            dst.tickets[i, t] = src.tickets[i, t]
    for i in range(META_FIELDS):
        dst.meta[i] = src.meta[i]


@nb.njit(cache=True, inline="always")
def borrowed_state(s):
    """``s`` with every array a borrowed view (``games.lowlevel.borrow``: no reference
    counts); for a search kernel's own use while ``s`` itself is alive."""
    return ScotlandYardState(
        borrow(s.positions), borrow(s.tickets), borrow(s.meta), borrow(s.ticket_log),
        borrow(s.mrx_path), borrow(s.possible), borrow(s.scratch), borrow(s.reveal),
        borrow(s.neighbours), borrow(s.transport), borrow(s.degree), borrow(s.black_ok),
        borrow(s.dist_detective), borrow(s.dist_any))


@nb.njit(cache=True)
def copy_state(src):
    """A new state with copies of ``src``'s mutable arrays (board arrays shared)."""
    return ScotlandYardState(
        src.positions.copy(), src.tickets.copy(), src.meta.copy(), src.ticket_log.copy(),
        src.mrx_path.copy(), src.possible.copy(), src.scratch.copy(), src.reveal.copy(),
        src.neighbours, src.transport, src.degree, src.black_ok, src.dist_detective,
        src.dist_any)
