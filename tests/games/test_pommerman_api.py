"""The Pommerman wrapper: JSON round trips, bad input, fog masking at every view range."""
from __future__ import annotations

import json

import pytest

from games.pommerman import Pommerman, PommermanConfig, StateFormatError
from games.pommerman.kernels import state_from_dict, state_to_dict
from games.pommerman.kernels import heuristic, observe
from games.pommerman.kernels import (
    A_AMMO, A_BLAST, A_KICK, A_VISIBLE, AGENT0, BOMB, FLAMES, FOG, M_N_BOMBS, M_N_FLAMES,
    NO_OWNER, RIGID, WOOD, PommermanState, copy_into, copy_state, flame_list, set_flames,
)

BOARD = """
. . . . . . . . . . .
. 0 . . . . . . . 3 .
. . . # . . . . . . .
. . . . . b . . . . .
. . + . . * . . . . .
. . . . . 2 . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. 1 . . . . . . . . .
. . . . . . . . . . .
"""
CODES = {".": 0, "#": RIGID, "+": WOOD, "b": BOMB, "*": FLAMES}


def board_state(picture: str = BOARD, mode: str = "ffa", ruleset: str = "canonical") -> dict:
    """A golden-format dict from an ASCII picture (agents are digits, bombs 'b', flames '*')."""
    rows = [r.split() for r in picture.strip().splitlines()]
    board, agents, bombs, flames = [], [None] * 4, [], []
    for r, row in enumerate(rows):
        line = []
        for c, ch in enumerate(row):
            if ch.isdigit():
                agents[int(ch)] = {"id": int(ch), "position": [r, c], "alive": True, "ammo": 1,
                                   "blast_strength": 2, "can_kick": False}
                line.append(AGENT0 + int(ch))
            else:
                line.append(CODES[ch])
                if ch == "b":
                    bombs.append({"position": [r, c], "owner": 2, "life": 5, "blast_strength": 2,
                                  "moving_direction": 1})
                if ch == "*":
                    flames.append({"position": [r, c], "life": 1})
        board.append(line)
    return {"step_count": 3, "board": board, "agents": agents, "bombs": bombs, "flames": flames,
            "items": [[4, 2, 7]], "done": False, "rewards": [0, 0, 0, 0], "result": "Incomplete",
            "winners": None}


def test_json_round_trip_keeps_every_field():
    d = board_state()
    state = state_from_dict(d)
    back = state_to_dict(state)
    for key in ("step_count", "board", "agents", "bombs", "flames", "items", "done", "rewards"):
        assert back[key] == d[key], key


def test_wrapper_json_round_trip():
    game = Pommerman.from_json(json.dumps(board_state() | {"config": {"mode": "team"}}))
    again = Pommerman.from_json(game.to_json())
    assert again.config == game.config
    assert again.to_json() == game.to_json()
    assert game.teams() == [0, 1, 0, 1]


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["board"].pop(), "board"),
    (lambda d: d["board"][3].__setitem__(3, 42), "unknown cell value 42"),
    (lambda d: d["agents"][2].__setitem__("position", [11, 3]), "agents[2].position"),
    (lambda d: d["agents"][1].__setitem__("position", [-1, 0]), "off the 11x11 board"),
    (lambda d: d["items"].append([0, 0, 3]), "items[1]"),
    (lambda d: d["bombs"][0].__setitem__("owner", 7), "bombs[0].owner"),
])
def test_malformed_state_names_the_field(mutate, field):
    d = board_state()
    mutate(d)
    with pytest.raises(StateFormatError, match=field.replace("[", r"\[").replace("]", r"\]")):
        state_from_dict(d)


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="view_range"):
        PommermanConfig(view_range=5)
    with pytest.raises(ValueError, match="collapse"):
        PommermanConfig(collapse=True)
    with pytest.raises(ValueError, match="mode"):
        PommermanConfig(mode="duel")


def chebyshev(a, b):
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


@pytest.mark.parametrize("view_range", [0, 1, 2, 3, 4])
def test_fog_masks_everything_outside_the_view_square(view_range):
    state = state_from_dict(board_state())
    player, me = 2, (5, 5)
    obs = observe(state, player, view_range)
    for cell in range(121):
        r, c = divmod(cell, 11)
        if chebyshev((r, c), me) > view_range:
            assert obs.board[cell] == FOG, (r, c)
        else:
            assert obs.board[cell] == state.board[cell], (r, c)
    # other agents: visible only inside the square; their private stats unknown
    positions = {0: (1, 1), 1: (9, 1), 3: (1, 9)}
    for i, pos in positions.items():
        assert obs.agents[i, A_VISIBLE] == (chebyshev(pos, me) <= view_range)
        assert (obs.agents[i, A_AMMO], obs.agents[i, A_BLAST], obs.agents[i, A_KICK]) == (1, 2, 0)
    # the bomb at (3, 5) and the flame at (4, 5) are in the model only when seen
    assert obs.meta[M_N_BOMBS] == (1 if view_range >= 2 else 0)
    assert obs.meta[M_N_FLAMES] == (1 if view_range >= 1 else 0)
    assert not obs.items.any(), "under fog hidden power-ups never reach an agent's model"


def test_full_observability_hides_only_bomb_owners():
    state = state_from_dict(board_state())
    state.agents[0, A_KICK] = 1
    obs = observe(state, 2, -1)
    assert (obs.board == state.board).all()
    assert obs.agents[0, A_KICK] == 1, "full observability shows the others' stats"
    # the hidden power-ups too, as in the framework's copy; searching agents
    # drop them from their model unless their java profile keeps them
    assert state.items.any() and (obs.items == state.items).all()
    assert obs.bombs[0, 2] == NO_OWNER and obs.bombs[0, 5] == 0  # owner and movement dropped
    assert flame_list(obs) == [(4, 5, 2)]  # canonical flames get their full life in the model


def test_heuristic_rewards_kills_wood_kick_and_blast():
    root = state_from_dict(board_state())
    root_wood = int((root.board == WOOD).sum())
    leaf = copy_state(root)
    assert heuristic(root, root_wood, leaf, 2) == 0.0
    leaf.agents[0, 2] = 0  # enemy 0 dies
    leaf.board[4 * 11 + 2] = 0  # the only wood burns
    leaf.agents[2, A_KICK] = 1
    leaf.agents[2, A_BLAST] += 1
    value = heuristic(root, root_wood, leaf, 2)
    assert value == pytest.approx(0.5 / 3 + 0.1 * 1 / max(root_wood, 1) + 0.15 + 0.015)
    leaf.agents[2, 2] = 0  # the player itself dies
    assert heuristic(root, root_wood, leaf, 2) == -1.0


def test_copy_state_is_an_independent_equal_state_from_one_buffer():
    """copy_state carves its six arrays out of one buffer (games.lowlevel.carve):
    same types and values as the source, bomb rows past the live count zero, writes to
    one array touch neither the source nor the copy's other arrays, and the arrays
    outlive the tuple they came in."""
    import gc

    import numba as nb
    import numpy as np

    src = Pommerman(PommermanConfig(ruleset="java"))
    src.reset(np.random.SeedSequence(3))
    s = src.state
    s.bombs[:] = 7  # stale rows past the counts (as in a reused scratch state)
    s.meta[M_N_BOMBS] = 1
    set_flames(s, [(4, 5, 1), (4, 5, 3), (4, 5, 3), (10, 10, 2)])
    c = copy_state(s)
    assert nb.typeof(c) == nb.typeof(s)
    for name in ("board", "items", "agents", "flames", "meta"):
        assert np.array_equal(getattr(c, name), getattr(s, name)), name
        assert getattr(c, name).flags.c_contiguous and getattr(c, name).flags.writeable, name
    assert (c.bombs[:1] == 7).all() and not c.bombs[1:].any()
    assert flame_list(c) == [(4, 5, 1), (4, 5, 3), (4, 5, 3), (10, 10, 2)] and c.meta[M_N_FLAMES] == 4
    before = [a.copy() for a in c]
    c.flames[:] = 0
    c.meta[:] = -1
    assert np.array_equal(c.board, before[0]) and np.array_equal(c.items, before[1])
    assert np.array_equal(c.agents, before[2]) and np.array_equal(c.bombs, before[3])
    assert len(flame_list(s)) == 4 and s.meta[M_N_FLAMES] == 4
    board = c.board
    del c
    gc.collect()
    assert np.array_equal(board, before[0])


def test_copies_of_a_state_of_separate_arrays_equal_the_packed_copies():
    """A state assembled from separate arrays (not one buffer) is copied array by array,
    to and from packed states, with the same result as the one-block copy."""
    import numpy as np

    src = Pommerman(PommermanConfig(ruleset="java"))
    src.reset(np.random.SeedSequence(5))
    s = src.state
    set_flames(s, [(1, 2, 5), (1, 2, 5), (3, 3, 1)])
    s.bombs[0] = (1, 3, 0, 4, 2, 0)
    s.meta[M_N_BOMBS] = 1
    loose = PommermanState(*(a.copy() for a in s))
    packed = copy_state(s)
    from_loose = copy_state(loose)
    for a, b, c in zip(packed, from_loose, s):
        assert np.array_equal(a, c) and np.array_equal(b, c)
    into_loose = PommermanState(*(np.zeros_like(a) for a in s))
    copy_into(into_loose, packed)
    into_packed = copy_state(copy_state(s))
    into_packed.flames[:] = 0
    copy_into(into_packed, loose)
    for a, b, c in zip(into_loose, into_packed, s):
        assert np.array_equal(a, c) and np.array_equal(b, c)


def test_copy_into_packed_states_moves_only_marked_flame_words_and_stays_exact():
    """copy_into between two one-buffer states copies the flame words of the cells marked
    in either state: a cell flaming only in the destination is cleared, one flaming in
    both takes the source's counts, and the result equals a full copy in every array
    (bomb rows past the source's count aside, which the destination keeps)."""
    import numpy as np

    game = Pommerman(PommermanConfig(ruleset="java"))
    game.reset(np.random.SeedSequence(8))
    src = copy_state(game.state)
    set_flames(src, [(0, 0, 2), (5, 5, 1), (5, 5, 4), (10, 10, 3)])  # cells 0, 60, 120
    src.bombs[0] = (1, 3, 0, 4, 2, 0)
    src.meta[M_N_BOMBS] = 1
    dst = copy_state(game.state)
    set_flames(dst, [(5, 5, 2), (6, 0, 1), (9, 9, 5), (9, 9, 5)])  # cells 60, 66, 108
    dst.bombs[:3] = 9
    dst.meta[M_N_BOMBS] = 3
    dst.board[:] = 2
    copy_into(dst, src)
    for name in ("board", "items", "agents", "flames", "meta"):
        assert np.array_equal(getattr(dst, name), getattr(src, name)), name
    assert flame_list(dst) == [(0, 0, 2), (5, 5, 1), (5, 5, 4), (10, 10, 3)]
    assert np.array_equal(dst.bombs[0], src.bombs[0]) and (dst.bombs[1:3] == 9).all()
    set_flames(src, [])
    copy_into(dst, src)
    assert not dst.flames.any() and dst.meta[M_N_FLAMES] == 0


def test_flames_round_trip_through_json_per_cell():
    """Overlapping flames (one cell, equal and different lives) survive the JSON round
    trip, and a life the layout cannot hold is refused naming the field."""
    d = board_state()
    d["flames"] = [{"position": [4, 5], "life": 1}, {"position": [4, 5], "life": 2},
                   {"position": [4, 5], "life": 2}]
    s = state_from_dict(d)
    assert s.meta[M_N_FLAMES] == 3
    assert sorted((f["position"][0], f["position"][1], f["life"]) for f in state_to_dict(s)["flames"]) \
        == [(4, 5, 1), (4, 5, 2), (4, 5, 2)]
    d["flames"] = [{"position": [4, 5], "life": 9}]
    with pytest.raises(StateFormatError, match=r"flames\[0\]\.life"):
        state_from_dict(d)
