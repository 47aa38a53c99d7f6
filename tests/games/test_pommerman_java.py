"""Java-ruleset Pommerman: golden conformance, scripted scenarios, board generation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from golden_data import POMMERMAN_JAVA, golden, skip_reason

from games.pommerman.kernels import generate_java, step_java
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS, AGENT0, BOARD_SIZE, BOMB,
    DEFAULT_MAX_STEPS, EXTRA_BOMB, FLAMES, INCR_RANGE, KICK, LEFT, M_COLLAPSE,
    M_DONE, M_INITIAL_WOOD, M_N_BOMBS, M_N_FLAMES, M_STEP, MODE_FFA, MODE_TEAM, PASSAGE,
    RIGHT, RIGID, RULESET_JAVA, STATUS_INCOMPLETE, STATUS_LOSS, STOP, WOOD, empty_state,
    flame_list, set_flames,
)

GOLDEN = POMMERMAN_JAVA
GOLDEN_FILES = sorted(GOLDEN.glob("*.jsonl.gz")) if GOLDEN.is_dir() else []
#: One skipped case, saying why, when the golden trajectories are absent.
GOLDEN_CASES = GOLDEN_FILES or [pytest.param(None, marks=pytest.mark.skip(reason=skip_reason(GOLDEN)))]

ASCII = {".": PASSAGE, "#": RIGID, "W": WOOD, "B": BOMB, "F": FLAMES,
         "e": EXTRA_BOMB, "r": INCR_RANGE, "k": KICK}


def make_state(picture: str, mode=MODE_FFA, collapse=False, step=0):
    """A java-ruleset state from an 11-line picture.

    '.' passage, '#' rigid, 'W' wood, 'B' bomb tile, 'F' flame tile, 'e'/'r'/'k'
    power-ups, '0'..'3' agents. Bombs and flames (the objects) are added with
    ``add_bomb`` / ``add_flame``; every agent must appear in the picture.
    """
    rows = [line.strip() for line in picture.strip().splitlines()]
    assert len(rows) == BOARD_SIZE and all(len(r) == BOARD_SIZE for r in rows), rows
    s = empty_state(mode, RULESET_JAVA, int(collapse), DEFAULT_MAX_STEPS)
    seen = set()
    for r, line in enumerate(rows):
        for c, ch in enumerate(line):
            if ch.isdigit():
                i = int(ch)
                s.agents[i, A_ROW] = r
                s.agents[i, A_COL] = c
                s.board[r * BOARD_SIZE + c] = AGENT0 + i
                seen.add(i)
            else:
                s.board[r * BOARD_SIZE + c] = ASCII[ch]
    assert seen == {0, 1, 2, 3}
    s.meta[M_STEP] = step
    return s


def add_bomb(s, r, c, owner, life=9, blast=2, direction=0):
    n = s.meta[M_N_BOMBS]
    s.bombs[n] = (r, c, owner, life, blast, direction)
    s.meta[M_N_BOMBS] = n + 1


def add_flame(s, r, c, life=5):
    set_flames(s, flame_list(s) + [(r, c, life)])
    s.board[r * BOARD_SIZE + c] = FLAMES


def act(s, *actions):
    step_java(s, np.array(actions, dtype=np.int64))


def at(s, r, c):
    return int(s.board[r * BOARD_SIZE + c])


def bombs_of(s):
    return [tuple(int(v) for v in b) for b in s.bombs[: s.meta[M_N_BOMBS]]]


def flames_of(s):
    return sorted(flame_list(s))


OPEN = """
0.........1
...........
...........
...........
...........
...........
...........
...........
...........
...........
3.........2
"""


# ---------------------------------------------------------------- conformance

@golden
@pytest.mark.parametrize("path", GOLDEN_CASES, ids=[p.name for p in GOLDEN_FILES] or None)
def test_golden_conformance(path):
    from games.pommerman.conformance import check_files
    report = check_files([path])
    assert report.trajectories > 0
    assert not report.mismatches, "\n".join(str(m) for m in report.mismatches[:5])


@golden
def test_golden_folder_present():
    if not GOLDEN_FILES:
        pytest.skip(skip_reason(GOLDEN))
    assert len(GOLDEN_FILES) == 14


# ---------------------------------------------------------------- scenarios

FLAME_PIC = """
..........1
...........
...........
...........
.....F0....
...........
...........
...........
...........
...........
3.........2
"""


def test_flame_lethal_on_step_after_last_visible():
    s = make_state(FLAME_PIC)
    add_flame(s, 4, 5, life=5)  # as made in the previous step
    lives = []
    for _ in range(4):
        act(s, STOP, STOP, STOP, STOP)
        lives.append(flames_of(s)[0][2])
        assert at(s, 4, 5) == FLAMES
    assert lives == [4, 3, 2, 1]  # visible for 5 states: 5, 4, 3, 2, 1
    act(s, LEFT, STOP, STOP, STOP)  # the flame's life reaches 0 now: still lethal
    assert s.agents[0, A_ALIVE] == 0
    assert s.agents[0, A_STATUS] == STATUS_LOSS
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (4, 6)  # keeps the old position
    assert s.meta[M_N_FLAMES] == 0 and at(s, 4, 5) == PASSAGE and at(s, 4, 6) == PASSAGE


def test_flame_harmless_once_removed():
    s = make_state(FLAME_PIC)
    add_flame(s, 4, 5, life=1)
    act(s, STOP, STOP, STOP, STOP)  # life 0 this step, then removed
    assert s.meta[M_N_FLAMES] == 0 and at(s, 4, 5) == PASSAGE
    act(s, LEFT, STOP, STOP, STOP)
    assert s.agents[0, A_ALIVE] == 1
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (4, 5)


def test_overlapping_flames_keep_their_own_lives():
    """Two flames on one cell (two blasts, two ticks apart) age apart: when the older
    dies its reveal takes the hidden item, and the younger one still burns there."""
    s = make_state(FLAME_PIC)
    s.items[4 * BOARD_SIZE + 5] = KICK
    add_flame(s, 4, 5, life=1)
    add_flame(s, 4, 5, life=3)
    assert s.meta[M_N_FLAMES] == 2
    act(s, STOP, STOP, STOP, STOP)
    assert flames_of(s) == [(4, 5, 2)] and s.meta[M_N_FLAMES] == 1
    assert at(s, 4, 5) == FLAMES and s.items[4 * BOARD_SIZE + 5] == 0  # the kick is lost
    act(s, STOP, STOP, STOP, STOP)
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_FLAMES] == 0 and at(s, 4, 5) == PASSAGE


def test_two_flames_dying_together_leave_a_passage():
    """Two flames of one life on a cell (two bombs' blasts in one tick) die together:
    the first reveal shows the item, the second finds it taken and leaves a passage."""
    s = make_state(FLAME_PIC)
    s.items[4 * BOARD_SIZE + 5] = EXTRA_BOMB
    add_flame(s, 4, 5, life=1)
    add_flame(s, 4, 5, life=1)
    assert flames_of(s) == [(4, 5, 1), (4, 5, 1)]
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_FLAMES] == 0 and at(s, 4, 5) == PASSAGE and s.items[4 * BOARD_SIZE + 5] == 0
    s = make_state(FLAME_PIC)
    s.items[4 * BOARD_SIZE + 5] = EXTRA_BOMB
    add_flame(s, 4, 5, life=1)
    act(s, STOP, STOP, STOP, STOP)
    assert at(s, 4, 5) == EXTRA_BOMB  # one flame: the item shows


def test_bomb_flames_timeline():
    s = make_state(OPEN)
    add_bomb(s, 5, 5, owner=1, life=1, blast=2)
    s.agents[1, A_AMMO] = 0
    s.board[5 * BOARD_SIZE + 5] = BOMB
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_BOMBS] == 0 and s.agents[1, A_AMMO] == 1
    assert flames_of(s) == sorted([(5, 5, 5), (5, 6, 5), (5, 4, 5), (6, 5, 5), (4, 5, 5)])
    for expected in (4, 3, 2, 1):
        act(s, STOP, STOP, STOP, STOP)
        assert {f[2] for f in flames_of(s)} == {expected}
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_FLAMES] == 0 and at(s, 5, 5) == PASSAGE


def test_collapse_kills_ring0_agent_and_refunds_bomb():
    pic = """
    .....0.....
    ...........
    ...........
    ...........
    ...........
    ....1.2....
    ...........
    ...........
    .....3.....
    ...........
    ...........
    """
    for collapse in (True, False):
        s = make_state(pic, collapse=collapse, step=500)
        add_bomb(s, 10, 3, owner=1, life=5)
        s.board[10 * BOARD_SIZE + 3] = BOMB
        s.agents[1, A_AMMO] = 0
        add_flame(s, 0, 8, life=3)
        act(s, STOP, STOP, STOP, STOP)
        assert s.meta[M_STEP] == 501
        if collapse:
            assert s.agents[0, A_ALIVE] == 0 and s.agents[0, A_STATUS] == STATUS_LOSS
            assert s.meta[M_N_BOMBS] == 0 and s.agents[1, A_AMMO] == 1
            assert s.meta[M_N_FLAMES] == 0
            ring = [(r, c) for r in range(11) for c in range(11) if min(r, c, 10 - r, 10 - c) == 0]
            assert all(at(s, r, c) == RIGID for r, c in ring)
            assert at(s, 1, 1) == PASSAGE
            assert s.meta[M_DONE] == 0
            assert all(s.agents[i, A_STATUS] == STATUS_INCOMPLETE for i in (1, 2, 3))
        else:
            assert s.agents[0, A_ALIVE] == 1
            assert s.meta[M_N_BOMBS] == 1 and s.agents[1, A_AMMO] == 0
            assert at(s, 0, 0) == PASSAGE


def test_collapse_only_at_its_ticks():
    pic = """
    ...........
    .....0.....
    ...........
    ...........
    ...........
    ...........
    ...........
    ...........
    ...........
    ...........
    3...1.....2
    """
    s = make_state(pic, collapse=True, step=499)
    act(s, STOP, STOP, STOP, STOP)  # tick 499: nothing
    assert at(s, 0, 3) == PASSAGE and s.agents[1, A_ALIVE] == 1
    act(s, STOP, STOP, STOP, STOP)  # tick 500: ring 0
    assert at(s, 0, 3) == RIGID and s.agents[1, A_ALIVE] == 0
    assert s.agents[0, A_ALIVE] == 1  # ring 1 not yet
    assert at(s, 1, 5) == AGENT0


def test_kick_travels_until_wall():
    s = make_state(_kick_picture())
    s.agents[0, A_KICK] = 1
    add_bomb(s, 5, 2, owner=1, life=9)
    s.board[5 * BOARD_SIZE + 2] = BOMB
    act(s, RIGHT, STOP, STOP, STOP)  # kick: the bomb moves at once
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (5, 2)
    assert bombs_of(s) == [(5, 3, 1, 8, 2, 4)]
    assert at(s, 5, 3) == BOMB and at(s, 5, 2) == AGENT0 and at(s, 5, 1) == PASSAGE
    act(s, STOP, STOP, STOP, STOP)  # rolls on
    assert bombs_of(s) == [(5, 4, 1, 7, 2, 4)]
    act(s, STOP, STOP, STOP, STOP)  # the wall at (5, 5) stops it
    assert bombs_of(s) == [(5, 4, 1, 6, 2, 0)]
    act(s, RIGHT, STOP, STOP, STOP)
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (5, 3)
    act(s, RIGHT, STOP, STOP, STOP)  # kick straight into the wall: nothing moves
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (5, 3)
    assert bombs_of(s) == [(5, 4, 1, 4, 2, 0)]
    assert at(s, 5, 3) == AGENT0 and at(s, 5, 4) == BOMB


def _kick_picture():
    return """
    ..........1
    ...........
    ...........
    ...........
    ...........
    .0...#.....
    ...........
    ...........
    ...........
    ...........
    3.........2
    """


def test_bomb_bounces_off_non_kicker():
    s = make_state(_kick_picture())
    add_bomb(s, 5, 2, owner=1, life=9)
    s.board[5 * BOARD_SIZE + 2] = BOMB
    act(s, RIGHT, STOP, STOP, STOP)
    assert (s.agents[0, A_ROW], s.agents[0, A_COL]) == (5, 1)
    assert bombs_of(s) == [(5, 2, 1, 8, 2, 0)]


def test_chain_explosion():
    s = make_state(OPEN)
    add_bomb(s, 5, 3, owner=0, life=1, blast=2)
    add_bomb(s, 5, 4, owner=1, life=9, blast=3)
    for c in (3, 4):
        s.board[5 * BOARD_SIZE + c] = BOMB
    s.board[5 * BOARD_SIZE + 8] = WOOD
    s.items[5 * BOARD_SIZE + 8] = KICK
    s.agents[0, A_AMMO] = 0
    s.agents[1, A_AMMO] = 0
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_BOMBS] == 0
    assert s.agents[0, A_AMMO] == 1 and s.agents[1, A_AMMO] == 1
    cells = {(f[0], f[1]) for f in flames_of(s)}
    assert {(5, 2), (5, 3), (5, 4), (5, 5), (5, 6), (4, 4), (3, 4), (6, 4), (7, 4)} <= cells
    assert (5, 8) not in cells  # blast 3 from (5, 4) reaches (5, 6) only
    assert all(at(s, r, c) == FLAMES for r, c in cells)


def test_flames_stop_on_first_wood_and_reveal_item():
    s = make_state(OPEN)
    add_bomb(s, 5, 3, owner=0, life=1, blast=4)
    s.board[5 * BOARD_SIZE + 3] = BOMB
    s.board[5 * BOARD_SIZE + 5] = WOOD
    s.board[5 * BOARD_SIZE + 6] = WOOD
    s.items[5 * BOARD_SIZE + 5] = INCR_RANGE
    act(s, STOP, STOP, STOP, STOP)
    assert at(s, 5, 5) == FLAMES and at(s, 5, 6) == WOOD
    assert s.items[5 * BOARD_SIZE + 5] == INCR_RANGE
    for _ in range(5):
        act(s, STOP, STOP, STOP, STOP)
    assert at(s, 5, 5) == INCR_RANGE and s.items[5 * BOARD_SIZE + 5] == 0


def test_done_game_is_frozen_and_rewards():
    s = make_state(OPEN)
    for i in (1, 2, 3):
        s.agents[i, A_ALIVE] = 0
        s.agents[i, A_STATUS] = STATUS_LOSS
    add_flame(s, 0, 1, life=2)
    act(s, RIGHT, STOP, STOP, STOP)  # agent 0 walks into a flame: everybody dead
    assert s.meta[M_DONE] == 1
    assert s.agents[0, A_STATUS] != STATUS_INCOMPLETE
    before = [a.copy() for a in s]
    act(s, STOP, STOP, STOP, STOP)
    assert all(np.array_equal(a, b) for a, b in zip(s, before))


def test_team_win_includes_dead_member():
    s = make_state(OPEN, mode=MODE_TEAM)
    s.agents[2, A_ALIVE] = 0
    s.agents[2, A_STATUS] = STATUS_LOSS
    s.agents[3, A_ALIVE] = 0
    s.agents[3, A_STATUS] = STATUS_LOSS
    add_flame(s, 0, 9, life=3)
    act(s, STOP, LEFT, STOP, STOP)  # agent 1, the last of team 1+3, dies
    assert s.meta[M_DONE] == 1
    assert [int(v) for v in s.agents[:, A_STATUS]] == [1, 3, 1, 3]
    assert [int(v) for v in s.agents[:, A_REWARD]] == [1, -1, 1, -1]


def test_invalid_actions_are_stop():
    s = make_state(OPEN)
    act(s, 7, -1, 99, 6)
    assert s.meta[M_STEP] == 1
    assert [(int(a[A_ROW]), int(a[A_COL])) for a in s.agents] == [(0, 0), (0, 10), (10, 10), (10, 0)]


# ---------------------------------------------------------------- generation

@pytest.mark.parametrize("seed", range(20))
def test_generate_counts_and_symmetry(seed):
    s = generate_java(seed, MODE_FFA, False)
    b = s.board.reshape(11, 11).copy()
    assert np.count_nonzero(b == RIGID) == 20
    assert np.count_nonzero(b == WOOD) == 20
    assert s.meta[M_INITIAL_WOOD] == 20
    items = s.items.reshape(11, 11)
    assert np.count_nonzero(items) == 10
    assert set(np.unique(items[items != 0])) <= {EXTRA_BOMB, INCR_RANGE, KICK}
    assert np.all(b[items != 0] == WOOD)
    for i, (r, c) in enumerate(((1, 1), (9, 1), (9, 9), (1, 9))):
        assert b[r, c] == AGENT0 + i
        assert (s.agents[i, A_ROW], s.agents[i, A_COL]) == (r, c)
        b[r, c] = 0
    assert np.array_equal(b, b.T)
    assert np.all(np.diag(b) == 0)
    # each agent's L of two free cells on both sides
    for r, c, dr, dc in ((1, 1, 1, 1), (9, 1, -1, 1), (9, 9, -1, -1), (1, 9, 1, -1)):
        for k in (1, 2):
            assert b[r + dr * k, c] == 0 and b[r, c + dc * k] == 0
    fixed = [(1, 4), (1, 5), (1, 6), (9, 4), (9, 5), (9, 6)]
    for r, c in fixed:
        assert b[r, c] == WOOD and b[c, r] == WOOD
    assert s.meta[M_COLLAPSE] == 0 and s.meta[M_N_BOMBS] == 0 and s.meta[M_N_FLAMES] == 0


def test_generate_deterministic_per_seed():
    a = generate_java(123, "team", True)
    b = generate_java(123, "team", True)
    c = generate_java(124, "team", True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not (np.array_equal(a.board, c.board) and np.array_equal(a.items, c.items))
    assert a.meta[M_COLLAPSE] == 1
    d = generate_java(np.random.SeedSequence(5), MODE_FFA, False)
    e = generate_java(np.random.SeedSequence(5), MODE_FFA, False)
    assert np.array_equal(d.board, e.board) and np.array_equal(d.items, e.items)


def test_generated_game_runs_to_the_end():
    rng = np.random.default_rng(0)
    for seed in range(5):
        s = generate_java(seed, MODE_FFA, True)
        for _ in range(DEFAULT_MAX_STEPS + 5):
            if s.meta[M_DONE]:
                break
            act(s, *rng.integers(0, 5, size=4))
        assert s.meta[M_DONE] == 1
