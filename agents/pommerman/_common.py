"""Kernels shared by the Pommerman search agents: the search's model of the
world, the open-loop forward step with random opponents, safe random moves.

Fogged agents (``A_VISIBLE == 0`` in the observation) are absent from the
model: :func:`build_search_root` marks them dead so the rules never move them,
and :func:`advance` undoes a game end that only their "death" caused (the
rules would otherwise declare the searcher the winner as soon as everybody
else is out of sight).

**Profiles.** The searching agents take a ``profile``: ``"java"`` reproduces
the Java framework's agents as the FEMCTS study ran them, slips included;
``"arena"`` keeps Arena's corrected behaviour; ``"auto"`` (default) is
``"java"`` in the java ruleset and ``"arena"`` otherwise. A profile is a set
of named switches (``QUIRK_*`` bits, one ``int64`` passed to the kernels):

- ``QUIRK_SAFE_ACTION_SLIP``: :func:`safe_random_action` returns the
  framework's index into the shortened action list (see there);
- ``QUIRK_FIRST_ROOT_WOOD``: the heuristic divides wood destroyed by the wood
  of the agent's first root of the game + 1 (the framework's static
  ``maxWoods``; see :func:`prepare_search`) instead of the board's initial wood;
- ``QUIRK_HIDDEN_ITEMS``: under full observability the hidden power-ups stay
  in the searched model (the framework's state copy keeps them);
- ``QUIRK_STOP_AT_OWN_END``: an iteration stops as soon as the searcher's own
  result is decided (it died or won), not only at the end of the game
  (the framework's ``GameState.isTerminal`` for an agent's copy);
- ``QUIRK_TIE_DEATH_SCORED``: a searcher that died with status TIE (in the
  tick every other agent still alive died too) is scored by the heuristic, not
  -1 (the framework scores -1 only LOSS).

**Inlining.** The small kernels called once per simulated tick or per
iteration (:func:`advance`, :func:`safe_random_action`, :func:`is_over`,
:func:`search_over`, :func:`search_value`) are ``inline="always"``: numba
then pastes them into the search loops. As separate functions each call paid
for passing the state (a tuple of six arrays) across a call boundary: when the
profile switches turned ``is_over`` / ``heuristic`` into the (not inlined)
``search_over`` / ``search_value``, a RHEA-like evaluation loop got about 13 %
slower from that alone, and MCTS / RHEA iterations 15-30 % slower in all
(issue 22; ``arena bench pommerman --against REV --script
jobs/bench/probes/pommerman_search_cpu.py`` measures it).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from games.lowlevel import borrow, stack_alloca
from games.rng import rng_integer
from games.pommerman.kernels import (
    RULESET_CANONICAL, RULESET_JAVA, STATE_RULESET, borrowed_state, count_wood, heuristic, require_layout_shapes, step_under,
)
from games.pommerman.kernels import (
    A_ALIVE, A_COL, A_REWARD, A_ROW, A_STATUS, A_VISIBLE, ACTION_DCOL, ACTION_DROW,
    BOARD_SIZE, FLAMES, M_DONE, M_INITIAL_WOOD, M_MAX_STEPS, M_MODE, M_RESULT, M_STEP,
    MODE_TEAM, N_ACTIONS, N_AGENTS, RESULT_INCOMPLETE, STATUS_INCOMPLETE, STATUS_LOSS,
    STATUS_TIE, copy_into,
)

from ..search import deadline_ns, monotonic_ns

#: The rulesets a search has a decision kernel for, one kernel each: each search module
#: makes its kernels with a closure factory over the ruleset (``_mcts_decide_for`` and the
#: like), keyed by the observation's ruleset (``meta[M_RULESET]``) in its ``*_DECIDE`` dict.
KERNEL_RULESETS = (RULESET_CANONICAL, RULESET_JAVA)

QUIRK_SAFE_ACTION_SLIP = 1
"""Own rollout moves: the framework's safeRandomAction index slip."""
QUIRK_FIRST_ROOT_WOOD = 2
"""Heuristic: wood destroyed / (wood of the agent's first root of the game + 1)."""
QUIRK_HIDDEN_ITEMS = 4
"""Full observability: hidden power-ups stay in the searched model."""
QUIRK_STOP_AT_OWN_END = 8
"""An iteration stops when the searcher's own result is decided."""
QUIRK_TIE_DEATH_SCORED = 16
"""A searcher dead with status TIE is scored by the heuristic, not -1."""
JAVA_QUIRKS = (QUIRK_SAFE_ACTION_SLIP | QUIRK_FIRST_ROOT_WOOD | QUIRK_HIDDEN_ITEMS
               | QUIRK_STOP_AT_OWN_END | QUIRK_TIE_DEATH_SCORED)
ARENA_QUIRKS = 0
PROFILES = {"java": JAVA_QUIRKS, "arena": ARENA_QUIRKS}
"""Profile name -> its switches (``"auto"`` resolves by ruleset, see :func:`resolve_profile`)."""


def resolve_profile(profile: str, game_config) -> str:
    """``"java"`` or ``"arena"`` for a config's ``profile`` and the game's config:
    ``"auto"`` is ``"java"`` when the game's ruleset is ``java``, else ``"arena"``."""
    if profile == "auto":
        return "java" if game_config.ruleset == "java" else "arena"
    return profile


@nb.njit(cache=True)
def build_search_root(root, observation, hidden, quirks=0):
    """Copy ``observation`` into the preallocated ``root`` and remove fogged agents
    (and the hidden power-ups a full observation carries, unless ``quirks`` has
    ``QUIRK_HIDDEN_ITEMS``).

    Args:
        root: PommermanState (overwritten).
        observation: PommermanState, the agent's observation (unchanged).
        hidden: bool[4] (overwritten): True for living agents fogged in the
            observation (a fogged agent known to be dead is just dead, as in
            the framework, whose copy keeps every agent's status).
        quirks: int, ``QUIRK_*`` bits.
    Returns:
        int, the number of hidden agents (they are marked dead in ``root``).
    """
    copy_into(root, observation)
    if not quirks & QUIRK_HIDDEN_ITEMS:
        root.items[:] = 0
    n_hidden = 0
    for i in range(N_AGENTS):
        hidden[i] = root.agents[i, A_VISIBLE] == 0 and root.agents[i, A_ALIVE] != 0
        if hidden[i]:
            n_hidden += 1
            root.agents[i, A_ALIVE] = 0
    return n_hidden


@nb.njit(cache=True)
def prepare_search(root, observation, quirks=0, max_wood=0):
    """Set up one decision: the search's model in ``root`` and its scratch.

    Args:
        root: PommermanState (overwritten with the model, see :func:`build_search_root`).
        observation: PommermanState, the agent's observation (unchanged).
        quirks: int, ``QUIRK_*`` bits of the agent's profile.
        max_wood: int; if > 0, the heuristic's wood divisor
            (``root.meta[M_INITIAL_WOOD]`` of the model; 0: the board's initial
            wood). With ``QUIRK_FIRST_ROOT_WOOD`` agents pass their first root's
            wood + 1 (the framework's rule), or a fixed value if asked. The
            framework's ``maxWoods`` is static: set once per JVM from the first
            root any searching agent scores, to 1 + the wood on that root's
            (fogged) board; Arena's agents take it from their own first
            decision of each game (:func:`first_root_wood`), so that a game
            stays a function of its seeds.
    Returns:
        (hidden, joint, n_hidden, root_wood): bool[4] fogged agents, int64[4]
        joint-action scratch for :func:`advance`, int number hidden, int wood
        cells on the root board (for the heuristic).
    """
    hidden = np.zeros(N_AGENTS, dtype=np.bool_)
    joint = np.zeros(N_AGENTS, dtype=np.int64)
    n_hidden = build_search_root(root, observation, hidden, quirks)
    if max_wood > 0:
        root.meta[M_INITIAL_WOOD] = max_wood
    return hidden, joint, n_hidden, count_wood(root)


@nb.njit(cache=True, inline="always")
def prepare_search_in_frame(root, observation, rng, quirks, max_wood):
    """:func:`prepare_search` for a search kernel, with its scratch in the kernel's frame.

    Args: as :func:`prepare_search`, plus rng: uint64[2] (the kernel's argument).
    Returns: (hidden, joint, n_hidden, root_wood, rng): ``hidden`` uint8[4] and ``joint``
    int64[4] are copies on the calling kernel's stack (``games.lowlevel.stack_alloca``;
    inlined, so the frame is the caller's) and ``rng`` a borrowed view. None of them
    carries a reference count, so a search loop that hands them to :func:`advance` every
    tick makes no atomic ``NRT_incref`` / ``NRT_decref`` calls for them (they were ~17%
    of an MCTS iteration). They must not outlive the calling kernel.
    """
    hidden_heap, joint_heap, n_hidden, root_wood = prepare_search(root, observation, quirks, max_wood)
    hidden = nb.carray(stack_alloca(N_AGENTS, np.uint8), N_AGENTS)
    joint = nb.carray(stack_alloca(N_AGENTS, np.int64), N_AGENTS)
    for i in range(N_AGENTS):
        hidden[i] = 1 if hidden_heap[i] else 0
        joint[i] = joint_heap[i]
    return hidden, joint, n_hidden, root_wood, borrow(rng)


@nb.njit(cache=True, inline="always")
def begin_search(observation, root, scratch, rng, quirks, max_wood, time_limit):
    """The prologue of every Pommerman search kernel (MCTS, RHEA, OSLA, FEMCTS), once per
    decision: the budget's clock, borrowed views of the agent's root and scratch states,
    the scratch state's layout check, and the searched model (:func:`prepare_search_in_frame`).

    Args: observation: PommermanState (unchanged); root, scratch: the agent's preallocated
    PommermanStates (overwritten); rng: uint64[2]; quirks, max_wood: as
    :func:`prepare_search`; time_limit: float seconds (0 = none).
    Returns: (root, scratch, hidden, joint, n_hidden, root_wood, rng, start, deadline):
    ``root`` and ``scratch`` borrowed views (no reference counts in the search loop),
    ``hidden`` .. ``rng`` those of :func:`prepare_search_in_frame`, ``start`` and
    ``deadline`` the monotonic ns for :func:`agents.search.budget_exhausted`.

    Inlined into the calling kernel, like :func:`prepare_search_in_frame`: ``hidden`` and
    ``joint`` are on its stack and must not outlive it. The scratch state is checked once
    here so that :func:`advance` steps it unchecked in the loop.
    """
    deadline = deadline_ns(time_limit)
    start = monotonic_ns()
    root = borrowed_state(root)
    scratch = borrowed_state(scratch)
    require_layout_shapes(scratch)
    hidden, joint, n_hidden, root_wood, rng = prepare_search_in_frame(root, observation, rng, quirks,
                                                                      max_wood)
    return root, scratch, hidden, joint, n_hidden, root_wood, rng, start, deadline


@nb.njit(cache=True)
def first_root_wood(observation):
    """The framework's ``maxWoods`` for a first root: 1 + the wood cells on the
    observation's (fogged) board (its wood count starts at 1)."""
    return count_wood(observation) + 1


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
    """Clear a game end caused only by hidden agents being absent (in place).

    When the game is over all the same (say the last visible agents died and
    one hidden agent is left), an FFA agent that died is LOSS, not the TIE the
    rules gave it for dying with "everybody" (the hidden survivor outlives it).
    """
    if _really_over(state, hidden):
        if state.meta[M_MODE] != MODE_TEAM:
            for i in range(N_AGENTS):
                if not state.agents[i, A_ALIVE] and not hidden[i] and state.agents[i, A_STATUS] == STATUS_TIE:
                    state.agents[i, A_STATUS] = STATUS_LOSS
        return
    state.meta[M_DONE] = 0
    state.meta[M_RESULT] = RESULT_INCOMPLETE
    for i in range(N_AGENTS):
        if state.agents[i, A_ALIVE]:
            state.agents[i, A_STATUS] = STATUS_INCOMPLETE
            state.agents[i, A_REWARD] = 0
        elif not hidden[i]:
            state.agents[i, A_STATUS] = STATUS_LOSS


@nb.njit(cache=True, inline="always")
def advance(state, player, action, joint, hidden, n_hidden, rng, ruleset=STATE_RULESET):
    """One tick: ``player`` plays ``action``, every other living agent a uniformly
    random action (the Java framework's opponent model), in place.

    Args:
        state: PommermanState (advanced in place).
        player: int; action: int in 0..5.
        joint: int64[4] scratch for the joint action.
        hidden: bool[4]; n_hidden: int (from :func:`build_search_root`).
        rng: uint64[2] (advanced).
        ruleset: the state's ruleset as a constant of the calling kernel (a search
            kernel compiled per ruleset compiles only its rules, see
            ``games.pommerman.kernels.step_under``), or STATE_RULESET.

    The layout's shape check is not repeated at every tick: a search kernel calls
    ``require_layout_shapes`` once for each state it advances.
    """
    for i in range(N_AGENTS):
        if i == player:
            joint[i] = action
        elif state.agents[i, A_ALIVE]:
            joint[i] = rng_integer(rng, N_ACTIONS)
        else:
            joint[i] = 0
    step_under(state, joint, ruleset, False)  # the search kernel checked its states once
    if n_hidden > 0 and state.meta[M_DONE] != 0:
        undo_fog_termination(state, hidden)


@nb.njit(cache=True, inline="always")
def safe_random_action(state, player, rng, quirks=0):
    """A random own move that does not step into flames.

    Without ``QUIRK_SAFE_ACTION_SLIP``: uniform over the actions whose
    destination (own cell for stop / bomb) is on the board and not in flames;
    uniform over all six if none is.

    With it, the framework's ``safeRandomAction``: draw an index uniformly over
    a list of the six actions; if that action's destination is off the board
    or in flames, remove it and draw again over the shorter list; return the
    index drawn, which the caller reads in the FULL list. So after a removal
    the played action is shifted toward the front of stop, up, down, left,
    right, bomb: bomb can no longer be played and the removed move can.

    The action sets are bit masks (bit ``a`` = action ``a``), so a rollout
    step allocates nothing (it allocated an ``int64[6]`` array per call); the draws are the same as with lists: the
    ``k``-th safe action is the ``k``-th set bit, and the shortened list of
    the slip keeps its order, so its ``k``-th entry is the ``k``-th set bit of
    the remaining mask.
    """
    row = state.agents[player, A_ROW]
    col = state.agents[player, A_COL]
    ok = 0
    n = 0
    for a in range(N_ACTIONS):
        r = row + ACTION_DROW[a]
        c = col + ACTION_DCOL[a]
        if 0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE and state.board[r * BOARD_SIZE + c] != FLAMES:
            ok |= 1 << a
            n += 1
    if n == 0:
        return rng_integer(rng, N_ACTIONS)
    if not quirks & QUIRK_SAFE_ACTION_SLIP:
        return nth_set_bit(ok, rng_integer(rng, n))
    remaining = (1 << N_ACTIONS) - 1
    size = N_ACTIONS
    while size > 0:
        k = rng_integer(rng, size)
        a = nth_set_bit(remaining, k)
        if ok >> a & 1:
            return k  # the slip: an index into the shortened list, played in the full one
        remaining &= ~(1 << a)
        size -= 1
    return rng_integer(rng, N_ACTIONS)


@nb.njit(cache=True, inline="always")
def nth_set_bit(mask, k):
    """The action of the ``k``-th (from 0) set bit of ``mask`` (bits 0..5), or -1."""
    for a in range(N_ACTIONS):
        if mask >> a & 1:
            if k == 0:
                return a
            k -= 1
    return -1


@nb.njit(cache=True, inline="always")
def is_over(state):
    """True when the simulated game has ended."""
    return state.meta[M_DONE] != 0


@nb.njit(cache=True, inline="always")
def search_over(state, player, quirks=0):
    """Whether a search iteration stops at ``state``: the end of the game, or
    (``QUIRK_STOP_AT_OWN_END``) ``player`` dead or its result decided."""
    if state.meta[M_DONE] != 0:
        return True
    if quirks & QUIRK_STOP_AT_OWN_END:
        return not state.agents[player, A_ALIVE] or state.agents[player, A_STATUS] != STATUS_INCOMPLETE
    return False


@nb.njit(cache=True, inline="always")
def search_value(root, root_wood, leaf, player, quirks=0):
    """The heuristic value of ``leaf`` for ``player`` (games' ``heuristic``: +1 won,
    -1 lost or dead, else ``heuristic_score``); with ``QUIRK_TIE_DEATH_SCORED`` a dead
    searcher whose status is TIE gets the heuristic score instead of -1, as in the
    framework."""
    return heuristic(root, root_wood, leaf, player, quirks & QUIRK_TIE_DEATH_SCORED != 0)
