"""Pommerman states to and from the JSON shape of the golden trajectories.

The shape is the one in ``pommerman/FORMAT.md`` of the golden trajectories (and, for the
``java`` ruleset, the extra ``results`` / ``agents[i].result`` keys of
``pommerman-java/FORMAT.md``). ``state_from_dict`` validates what it reads and
raises :class:`StateFormatError` naming the offending field.
"""
from __future__ import annotations

import numpy as np

from ._layout import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS, A_VISIBLE,
    B_BLAST, B_COL, B_DIR, B_LIFE, B_OWNER, B_ROW, BOARD_SIZE, DEFAULT_MAX_STEPS,
    M_COLLAPSE, M_DONE, M_N_BOMBS, MAX_FLAME_LIFE,
    M_RESULT, M_RULESET, M_STEP, MAX_BOMBS, MODES, N_AGENTS,
    RESULT_INCOMPLETE, RESULT_TIE, RESULT_WIN, RULESET_JAVA, RULESETS,
    STATUS_INCOMPLETE, STATUS_LOSS, STATUS_TIE, STATUS_WIN, M_INITIAL_WOOD, WOOD,
    M_VIEW_RANGE, FULL_VIEW, empty_state, flame_list, set_flames,
)

STATUS_NAMES = ("INCOMPLETE", "WIN", "TIE", "LOSS")
RESULT_NAMES = ("Incomplete", "Win", "Tie")
VALID_CELLS = frozenset(range(14))
VALID_ITEMS = frozenset((6, 7, 8))


class StateFormatError(ValueError):
    """A state dict that does not describe a valid Pommerman state."""


def _fail(field: str, msg: str):
    raise StateFormatError(f"{field}: {msg}")


def _pos(value, field: str) -> tuple[int, int]:
    if not (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)):
        _fail(field, f"expected [row, col], got {value!r}")
    r, c = int(value[0]), int(value[1])
    if not (0 <= r < BOARD_SIZE and 0 <= c < BOARD_SIZE):
        _fail(field, f"position {[r, c]} is off the {BOARD_SIZE}x{BOARD_SIZE} board")
    return r, c


def state_from_dict(d: dict, mode: str = "ffa", ruleset: str = "canonical",
                    collapse: bool = False, max_steps: int = DEFAULT_MAX_STEPS):
    """Build a PommermanState from one golden-format state dict.

    Raises StateFormatError (a ValueError) naming the field when the board has
    the wrong size, a cell or item value is unknown, an agent is off the
    board, or a list is longer than the engine's capacity.
    """
    if mode not in MODES:
        _fail("mode", f"unknown mode {mode!r}; expected one of {sorted(MODES)}")
    if ruleset not in RULESETS:
        _fail("ruleset", f"unknown ruleset {ruleset!r}; expected one of {sorted(RULESETS)}")
    s = empty_state(MODES[mode], RULESETS[ruleset], int(bool(collapse)), int(max_steps))

    board = d.get("board")
    if not isinstance(board, list) or len(board) != BOARD_SIZE or any(
            not isinstance(row, list) or len(row) != BOARD_SIZE for row in board):
        _fail("board", f"expected {BOARD_SIZE} rows of {BOARD_SIZE} cells")
    flat = np.array(board, dtype=np.int64).reshape(-1)
    bad = [int(v) for v in flat if int(v) not in VALID_CELLS]
    if bad:
        _fail("board", f"unknown cell value {bad[0]} (valid: 0..13)")
    s.board[:] = flat

    agents = d.get("agents")
    if not isinstance(agents, list) or len(agents) != N_AGENTS:
        _fail("agents", f"expected {N_AGENTS} agents")
    statuses = d.get("results")
    for i, a in enumerate(agents):
        r, c = _pos(a.get("position"), f"agents[{i}].position")
        s.agents[i, A_ROW] = r
        s.agents[i, A_COL] = c
        s.agents[i, A_ALIVE] = bool(a.get("alive", True))
        for key, col in (("ammo", A_AMMO), ("blast_strength", A_BLAST)):
            v = a.get(key)
            if not isinstance(v, int) or v < 0:
                _fail(f"agents[{i}].{key}", f"expected a non-negative int, got {v!r}")
            s.agents[i, col] = v
        s.agents[i, A_KICK] = bool(a.get("can_kick", False))
        s.agents[i, A_VISIBLE] = 1
        status = a.get("result", statuses[i] if statuses else None)
        if status is not None:
            if status not in STATUS_NAMES:
                _fail(f"agents[{i}].result", f"unknown status {status!r}")
            s.agents[i, A_STATUS] = STATUS_NAMES.index(status)

    bombs = d.get("bombs") or []
    if len(bombs) > MAX_BOMBS:
        _fail("bombs", f"{len(bombs)} bombs exceed the capacity {MAX_BOMBS}")
    for k, b in enumerate(bombs):
        r, c = _pos(b.get("position"), f"bombs[{k}].position")
        owner = b.get("owner")
        owner = -1 if owner is None else int(owner)
        if not -1 <= owner < N_AGENTS:
            _fail(f"bombs[{k}].owner", f"unknown owner {owner}")
        direction = b.get("moving_direction") or 0
        if direction not in (0, 1, 2, 3, 4):
            _fail(f"bombs[{k}].moving_direction", f"expected null or 1..4, got {direction!r}")
        s.bombs[k] = (r, c, owner, int(b["life"]), int(b["blast_strength"]), direction)
    s.meta[M_N_BOMBS] = len(bombs)

    flames = d.get("flames") or []
    lowest_life = 1 if RULESETS[ruleset] == RULESET_JAVA else 0  # java flames at 0 are gone
    listed = []
    for k, f in enumerate(flames):
        r, c = _pos(f.get("position"), f"flames[{k}].position")
        life = f.get("life")
        if not isinstance(life, int) or not lowest_life <= life <= MAX_FLAME_LIFE:
            _fail(f"flames[{k}].life", f"expected an int in {lowest_life}..{MAX_FLAME_LIFE}, got {life!r}")
        listed.append((r, c, life))
    try:
        set_flames(s, listed)
    except ValueError as e:
        _fail("flames", str(e))

    for k, item in enumerate(d.get("items") or []):
        if not (isinstance(item, list) and len(item) == 3):
            _fail(f"items[{k}]", f"expected [row, col, value], got {item!r}")
        r, c = _pos(item[:2], f"items[{k}]")
        if item[2] not in VALID_ITEMS:
            _fail(f"items[{k}]", f"unknown power-up value {item[2]!r} (valid: 6, 7, 8)")
        s.items[r * BOARD_SIZE + c] = item[2]

    s.meta[M_STEP] = int(d.get("step_count", 0))
    s.meta[M_DONE] = bool(d.get("done", False))
    result = d.get("result", "Incomplete")
    if result not in RESULT_NAMES:
        _fail("result", f"unknown result {result!r}")
    s.meta[M_RESULT] = RESULT_NAMES.index(result)
    rewards = d.get("rewards") or [0] * N_AGENTS
    s.agents[:, A_REWARD] = rewards
    if s.meta[M_RULESET] != RULESET_JAVA and s.meta[M_DONE]:
        winners = set(d.get("winners") or [])
        for i in range(N_AGENTS):
            s.agents[i, A_STATUS] = (STATUS_WIN if i in winners else
                                     STATUS_TIE if s.meta[M_RESULT] == RESULT_TIE else STATUS_LOSS)
    s.meta[M_INITIAL_WOOD] = int(np.count_nonzero(s.board == WOOD))
    s.meta[M_VIEW_RANGE] = FULL_VIEW
    return s


def state_to_dict(s) -> dict:
    """The golden-format dict of a PommermanState (without ``actions``)."""
    java = s.meta[M_RULESET] == RULESET_JAVA
    agents = []
    for i in range(N_AGENTS):
        a = {"id": i, "position": [int(s.agents[i, A_ROW]), int(s.agents[i, A_COL])],
             "alive": bool(s.agents[i, A_ALIVE]), "ammo": int(s.agents[i, A_AMMO]),
             "blast_strength": int(s.agents[i, A_BLAST]), "can_kick": bool(s.agents[i, A_KICK])}
        if java:
            a["result"] = STATUS_NAMES[s.agents[i, A_STATUS]]
        if not s.agents[i, A_VISIBLE]:
            a["visible"] = False
        agents.append(a)
    bombs = [{"position": [int(b[B_ROW]), int(b[B_COL])],
              "owner": None if b[B_OWNER] < 0 else int(b[B_OWNER]),
              "life": int(b[B_LIFE]), "blast_strength": int(b[B_BLAST]),
              "moving_direction": None if b[B_DIR] == 0 else int(b[B_DIR])}
             for b in s.bombs[: s.meta[M_N_BOMBS]]]
    flames = [{"position": [r, c], "life": life} for r, c, life in flame_list(s)]
    items = [[int(c // BOARD_SIZE), int(c % BOARD_SIZE), int(s.items[c])]
             for c in np.flatnonzero(s.items)]
    done = bool(s.meta[M_DONE])
    result = RESULT_NAMES[s.meta[M_RESULT]]
    winners = [i for i in range(N_AGENTS) if s.agents[i, A_STATUS] == STATUS_WIN]
    d = {"step_count": int(s.meta[M_STEP]),
         "board": s.board.reshape(BOARD_SIZE, BOARD_SIZE).astype(int).tolist(),
         "agents": agents, "bombs": bombs, "flames": flames, "items": items,
         "done": done, "rewards": [int(r) for r in s.agents[:, A_REWARD]],
         "result": result,
         "winners": winners if (s.meta[M_RESULT] == RESULT_WIN and winners) else None}
    if java:
        d["results"] = [STATUS_NAMES[v] for v in s.agents[:, A_STATUS]]
        d["collapse"] = bool(s.meta[M_COLLAPSE])
    if s.meta[M_VIEW_RANGE] != FULL_VIEW:
        d["view_range"] = int(s.meta[M_VIEW_RANGE])
    return d


__all__ = ["StateFormatError", "state_from_dict", "state_to_dict",
           "STATUS_INCOMPLETE", "RESULT_INCOMPLETE"]
