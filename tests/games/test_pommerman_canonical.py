"""Canonical Pommerman rules: golden conformance, scripted scenarios, board generation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from golden_data import GOLDEN_ROOT, golden, skip_reason

from games.pommerman.kernels import (
    inaccessible_passages, generate_canonical, step_canonical,
)
from games.pommerman.kernels import (
    A_ALIVE, A_AMMO, A_BLAST, A_COL, A_KICK, A_REWARD, A_ROW, A_STATUS,
    AGENT0, BOARD_SIZE, BOMB,
    DEFAULT_MAX_STEPS, DOWN, EXTRA_BOMB, FLAMES, INCR_RANGE, KICK, LAY_BOMB,
    LEFT, M_DONE, M_INITIAL_WOOD, M_N_BOMBS, M_N_FLAMES, M_RESULT, M_STEP, MODE_FFA,
    MODE_TEAM, PASSAGE, RESULT_INCOMPLETE, RESULT_TIE, RESULT_WIN, RIGHT, RIGID,
    RULESET_CANONICAL, STATUS_LOSS, STATUS_TIE, STATUS_WIN, STOP, UP, WOOD,
    empty_state, flame_list,
)

GOLDEN = GOLDEN_ROOT
GOLDEN_FILES = ("ffa_lowbomb", "team_lowbomb", "ffa_simple", "fuzz_ffa", "fuzz_team")

# --------------------------------------------------------------------------
# (a) conformance with the golden trajectories
# --------------------------------------------------------------------------


@golden
@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden_conformance(name):
    path = GOLDEN / "pommerman" / f"{name}.jsonl.gz"
    if not GOLDEN.exists():
        pytest.skip(skip_reason(GOLDEN))
    if not path.exists():
        pytest.skip(f"golden file not found: {path}")
    from games.pommerman.conformance import check_files

    report = check_files([path])
    assert report.trajectories > 0
    assert not report.mismatches, "\n".join(str(m) for m in report.mismatches[:5])


# --------------------------------------------------------------------------
# (b) scripted scenarios from ASCII boards
# --------------------------------------------------------------------------

CHARS = {".": PASSAGE, "#": RIGID, "w": WOOD, "e": EXTRA_BOMB, "r": INCR_RANGE, "k": KICK}


def make_state(picture, bombs=(), items=(), mode=MODE_FFA, **agent_fields):
    """A canonical state from an 11-line ASCII picture.

    picture: 11 strings of 11 chars: '.' passage, '#' rigid, 'w' wood,
    'e' / 'r' / 'k' power-ups (extra bomb, range, kick), '0'..'3' agents.
    Agents absent from the picture are dead (at (0, 0), not drawn).
    bombs: (row, col, owner, life, blast, direction) tuples in laying order
    (a bomb under an agent is listed here and drawn as the agent).
    items: (row, col, value) hidden under wood.
    agent_fields: e.g. kick={0: 1}, blast={2: 4}, ammo={1: 0}.
    """
    lines = [ln for ln in picture.strip().splitlines()]
    assert len(lines) == BOARD_SIZE and all(len(ln.strip()) == BOARD_SIZE for ln in lines), lines
    s = empty_state(mode, RULESET_CANONICAL, 0, DEFAULT_MAX_STEPS)
    s.agents[:, A_ALIVE] = 0
    for r, ln in enumerate(lines):
        for c, ch in enumerate(ln.strip()):
            if ch.isdigit():
                a = int(ch)
                s.agents[a, A_ROW], s.agents[a, A_COL], s.agents[a, A_ALIVE] = r, c, 1
                s.board[r * BOARD_SIZE + c] = AGENT0 + a
            else:
                s.board[r * BOARD_SIZE + c] = CHARS[ch]
    for k, (r, c, owner, life, blast, direction) in enumerate(bombs):
        s.bombs[k] = (r, c, owner, life, blast, direction)
        if s.board[r * BOARD_SIZE + c] < AGENT0:
            s.board[r * BOARD_SIZE + c] = BOMB
    s.meta[M_N_BOMBS] = len(bombs)
    for r, c, v in items:
        s.items[r * BOARD_SIZE + c] = v
    for key, col in (("kick", A_KICK), ("blast", A_BLAST), ("ammo", A_AMMO)):
        for a, v in agent_fields.get(key, {}).items():
            s.agents[a, col] = v
    s.meta[M_INITIAL_WOOD] = int(np.count_nonzero(s.board == WOOD))
    return s


def act(s, *actions):
    step_canonical(s, np.array(actions, dtype=np.int64))


def at(s, r, c):
    return int(s.board[r * BOARD_SIZE + c])


def pos(s, a):
    return int(s.agents[a, A_ROW]), int(s.agents[a, A_COL])


def bomb_list(s):
    return [tuple(int(v) for v in s.bombs[k]) for k in range(s.meta[M_N_BOMBS])]


OPEN = """
...........
...........
...........
...........
...........
...........
...........
...........
...........
...........
.........1.
"""


def test_kick_bomb_into_wall():
    s = make_state("""
...........
...........
...........
...........
...........
...0...#...
...........
...........
...........
...........
.........1.
""", bombs=[(5, 4, 1, 9, 2, 0)], kick={0: 1})
    act(s, RIGHT, STOP, STOP, STOP)
    assert pos(s, 0) == (5, 4)
    assert bomb_list(s) == [(5, 5, 1, 8, 2, RIGHT)]
    assert at(s, 5, 4) == AGENT0 and at(s, 5, 5) == BOMB
    act(s, STOP, STOP, STOP, STOP)
    assert bomb_list(s) == [(5, 6, 1, 7, 2, RIGHT)]
    act(s, STOP, STOP, STOP, STOP)  # blocked by the rigid wall: stops in place
    assert bomb_list(s) == [(5, 6, 1, 6, 2, 0)]
    assert at(s, 5, 6) == BOMB and at(s, 5, 7) == RIGID


def test_agent_without_kick_is_blocked_by_bomb():
    s = make_state(OPEN.replace("...........\n...........\n...........\n...........\n...........\n...........",
                                "...........\n...........\n...........\n...........\n...........\n...0.......", 1),
                   bombs=[(5, 4, 1, 9, 2, 0)])
    act(s, RIGHT, STOP, STOP, STOP)
    assert pos(s, 0) == (5, 3)
    assert bomb_list(s) == [(5, 4, 1, 8, 2, 0)]


def test_chain_explosion():
    s = make_state("""
...........
...........
...........
...........
...........
...........
...........
...........
...........
.0.........
.........1.
""", bombs=[(5, 2, 0, 1, 3, 0), (5, 4, 1, 9, 2, 0), (0, 9, 1, 9, 2, 0)], ammo={0: 0, 1: 0})
    act(s, STOP, STOP, STOP, STOP)
    # The first bomb reaches the second (2 cells right), which explodes too;
    # the third bomb is untouched and keeps its place in the list.
    assert bomb_list(s) == [(0, 9, 1, 8, 2, 0)]
    assert s.agents[0, A_AMMO] == 1 and s.agents[1, A_AMMO] == 1
    for c in range(0, 6):
        assert at(s, 5, c) == FLAMES, c
    assert at(s, 5, 6) == PASSAGE
    assert at(s, 4, 4) == FLAMES and at(s, 6, 4) == FLAMES  # the second bomb's own blast
    assert at(s, 3, 2) == FLAMES and at(s, 2, 2) == PASSAGE
    assert s.meta[M_N_FLAMES] == len(set(
        [(5, c) for c in range(6)] + [(3, 2), (4, 2), (6, 2), (7, 2), (4, 4), (6, 4)]))
    assert all(life == 2 for _, _, life in flame_list(s))


def test_two_agents_into_same_cell_bounce():
    s = make_state("""
...........
...........
...........
...........
...........
....0.1....
...........
...........
...........
...........
..........2
""")
    act(s, RIGHT, LEFT, STOP, STOP)
    assert pos(s, 0) == (5, 4) and pos(s, 1) == (5, 6)
    assert at(s, 5, 5) == PASSAGE and at(s, 5, 4) == AGENT0 and at(s, 5, 6) == AGENT0 + 1


def test_swap_bounces_and_chain_of_bounces():
    s = make_state("""
...........
...........
...........
...........
...........
...012.....
...........
...........
...........
...........
...........
""")
    # 0 and 1 try to swap: both bounce; 2 tries to follow 1 and bounces too.
    act(s, RIGHT, LEFT, LEFT, STOP)
    assert (pos(s, 0), pos(s, 1), pos(s, 2)) == ((5, 3), (5, 4), (5, 5))


def test_powerup_under_wood_revealed_after_flames_die():
    s = make_state("""
...........
...........
...........
...........
...........
.....w.....
...........
...........
...........
...........
0.........1
""", bombs=[(5, 4, 0, 1, 2, 0)], items=[(5, 5, KICK)], ammo={0: 0})
    act(s, STOP, STOP, STOP, STOP)  # explodes: wood burns
    assert at(s, 5, 5) == FLAMES and s.items[5 * BOARD_SIZE + 5] == KICK
    act(s, STOP, STOP, STOP, STOP)  # flames life 1
    act(s, STOP, STOP, STOP, STOP)  # flames life 0
    assert at(s, 5, 5) == FLAMES
    act(s, STOP, STOP, STOP, STOP)  # flames gone: power-up revealed
    assert at(s, 5, 5) == KICK and s.items[5 * BOARD_SIZE + 5] == 0
    assert at(s, 5, 4) == PASSAGE and s.meta[M_N_FLAMES] == 0


@pytest.mark.parametrize("mode,expected", [(MODE_TEAM, 4), (MODE_FFA, 5)])
def test_blast_cap_team_4(mode, expected):
    s = make_state("""
...........
...........
...........
...........
...........
....0r.....
...........
...........
...........
...........
.1.......2.
""", mode=mode, blast={0: 4})
    act(s, RIGHT, STOP, STOP, STOP)
    assert pos(s, 0) == (5, 5)
    assert s.agents[0, A_BLAST] == expected


def test_ffa_last_agent_wins_and_team_win():
    s = make_state("""
...........
...........
...........
...........
...........
....0......
...........
...........
...........
...........
.........1.
""", bombs=[(5, 4, 0, 1, 2, 0)])
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_DONE] == 1 and s.meta[M_RESULT] == RESULT_WIN and s.meta[M_STEP] == 1
    assert list(s.agents[:, A_REWARD]) == [-1, 1, -1, -1]
    assert list(s.agents[:, A_STATUS]) == [STATUS_LOSS, STATUS_WIN, STATUS_LOSS, STATUS_LOSS]
    snapshot = s.board.copy()
    act(s, UP, UP, UP, UP)  # finished games do not move
    assert s.meta[M_STEP] == 1 and np.array_equal(s.board, snapshot)

    t = make_state(OPEN.replace("0", "."), mode=MODE_TEAM)  # only agent 1 alive
    t.agents[3, A_ALIVE] = 0
    t.agents[1, A_ALIVE] = 1
    act(t, STOP, STOP, STOP, STOP)
    assert t.meta[M_RESULT] == RESULT_WIN
    assert list(t.agents[:, A_STATUS]) == [STATUS_LOSS, STATUS_WIN, STATUS_LOSS, STATUS_WIN]


def test_ffa_timeout_is_a_tie_with_all_minus_one():
    s = make_state("""
...........
.0.........
...........
...........
...........
...........
...........
...........
...........
...........
.........1.
""")
    s.meta[M_STEP] = DEFAULT_MAX_STEPS - 2
    act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_DONE] == 0 and s.meta[M_RESULT] == RESULT_INCOMPLETE
    assert list(s.agents[:, A_REWARD]) == [0, 0, -1, -1]
    act(s, 9, -3, STOP, STOP)  # invalid actions count as STOP
    assert pos(s, 0) == (1, 1)
    assert s.meta[M_DONE] == 1 and s.meta[M_RESULT] == RESULT_TIE
    assert list(s.agents[:, A_REWARD]) == [-1, -1, -1, -1]
    assert all(v == STATUS_TIE for v in s.agents[:, A_STATUS])


def test_lay_bomb_and_flames_kill():
    s = make_state("""
...........
.0.........
...........
...........
...........
...........
...........
...........
...........
...........
.........1.
""")
    act(s, LAY_BOMB, STOP, STOP, STOP)
    assert bomb_list(s) == [(1, 1, 0, 9, 2, 0)] and s.agents[0, A_AMMO] == 0
    assert at(s, 1, 1) == AGENT0
    act(s, DOWN, STOP, STOP, STOP)
    assert at(s, 1, 1) == BOMB and pos(s, 0) == (2, 1)
    for _ in range(8):
        act(s, STOP, STOP, STOP, STOP)
    assert s.meta[M_N_BOMBS] == 0 and not s.agents[0, A_ALIVE]  # (2, 1) is in the blast
    assert s.meta[M_DONE] == 1 and list(s.agents[:, A_REWARD]) == [-1, 1, -1, -1]


# --------------------------------------------------------------------------
# (c) board generation
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, np.random.SeedSequence(7)])
@pytest.mark.parametrize("mode", [MODE_FFA, MODE_TEAM])
def test_generate_counts_and_symmetry(seed, mode):
    s = generate_canonical(seed, mode)
    b = s.board.reshape(BOARD_SIZE, BOARD_SIZE).astype(int)
    assert np.count_nonzero(b == RIGID) == 36
    assert np.count_nonzero(b == WOOD) == 36
    assert s.meta[M_INITIAL_WOOD] == 36
    items = s.items.reshape(BOARD_SIZE, BOARD_SIZE)
    assert np.count_nonzero(items) == 20
    assert set(np.unique(items[items != 0])) <= {EXTRA_BOMB, INCR_RANGE, KICK}
    assert np.all(b[items != 0] == WOOD)
    starts = [(1, 1), (9, 1), (9, 9), (1, 9)]
    for a, (r, c) in enumerate(starts):
        assert b[r, c] == AGENT0 + a and pos(s, a) == (r, c) and s.agents[a, A_ALIVE] == 1
    plain = np.where(b >= AGENT0, PASSAGE, b)
    assert np.array_equal(plain, plain.T)
    assert np.all(np.diag(plain) == PASSAGE)
    for i in (2, 3):  # breathing room
        for r, c in ((1, i), (i, 1), (9, 10 - i), (10 - i, 9), (1, 10 - i), (10 - i, 1), (i, 9), (9, i)):
            assert b[r, c] == PASSAGE, (r, c)
    for i in (4, 5, 6):  # fixed wood
        for r, c in ((1, i), (i, 1), (9, i), (i, 9)):
            assert b[r, c] == WOOD, (r, c)
    assert inaccessible_passages(b) <= 4
    assert s.meta[M_N_BOMBS] == 0 and s.meta[M_N_FLAMES] == 0 and s.meta[M_STEP] == 0
    assert s.meta[M_DONE] == 0


def test_generate_deterministic_per_seed():
    a = generate_canonical(42, MODE_FFA)
    b = generate_canonical(42, MODE_FFA)
    c = generate_canonical(43, MODE_FFA)
    assert np.array_equal(a.board, b.board) and np.array_equal(a.items, b.items)
    assert not (np.array_equal(a.board, c.board) and np.array_equal(a.items, c.items))
    d = generate_canonical(np.random.SeedSequence(5), MODE_TEAM)
    e = generate_canonical(np.random.SeedSequence(5), MODE_TEAM)
    assert np.array_equal(d.board, e.board) and np.array_equal(d.items, e.items)


def test_generated_games_run_to_the_end():
    rng = np.random.default_rng(0)
    for seed in range(5):
        s = generate_canonical(seed, MODE_FFA if seed % 2 else MODE_TEAM)
        while not s.meta[M_DONE]:
            step_canonical(s, rng.integers(0, 6, size=4))
        assert s.meta[M_RESULT] in (RESULT_WIN, RESULT_TIE)
        assert s.meta[M_STEP] <= DEFAULT_MAX_STEPS


# --------------------------------------------------------------------------
# (d) the shortcut past the movement resolution
# --------------------------------------------------------------------------

def test_plain_moves_leave_what_the_full_resolution_leaves():
    """On every tick that ``_plain_bounces`` finds plain, ``_plain_moves`` leaves what the
    full ``_resolve_moves``, run on a copy, leaves: the same desired cells (agents as
    chosen or bounced, bombs on their own cells), no kick and the same board; checked
    over random play from fresh boards, FFA and team, with plain ticks and bounces present
    in numbers (the other ticks, rare in random play, are the golden trajectories')."""
    import numba as nb

    from games.pommerman import PommermanConfig, generate
    from games.pommerman import _canonical as c
    from games.pommerman.kernels import N_AGENTS, copy_state, step
    from games.rng import make_rng, rng_integer

    @nb.njit
    def check(boards, rng, games):
        plain = 0
        bounced = 0
        full = 0
        mismatches = 0
        actions = np.zeros(N_AGENTS, dtype=np.int64)
        for g in range(games):
            state = copy_state(boards[g % len(boards)])
            while state.meta[M_DONE] == 0:
                for i in range(N_AGENTS):
                    actions[i] = rng_integer(rng, 6)
                probe = copy_state(state)
                s = np.zeros(c._S_SIZE, dtype=np.int16)
                acts = s[c._S_ACTS:c._S_ACTS + N_AGENTS]
                for i in range(N_AGENTS):
                    acts[i] = actions[i]
                ades = s[c._S_ADES:c._S_ADES + N_AGENTS]
                c._agent_intents(probe.board, probe.agents, probe.bombs, probe.meta, acts, ades)
                nbombs = probe.meta[M_N_BOMBS]
                c._clear_bombs(probe.board, probe.bombs, nbombs, s[c._S_BDES:c._S_BDES + 64])
                bounce = c._plain_bounces(probe.agents, probe.bombs, nbombs, ades)
                if bounce >= 0:
                    plain += 1
                    bounced += bounce != 0
                    mine = copy_state(probe)
                    s2 = s.copy()
                    ades2 = s2[c._S_ADES:c._S_ADES + N_AGENTS]
                    c._plain_moves(mine.agents, ades2, bounce)
                    c._resolve_moves(probe.board, probe.agents, probe.bombs, nbombs, acts, s)
                    same = (ades == ades2).all() and (probe.board == mine.board).all()
                    for b in range(nbombs):
                        same = (same and s[c._S_BDES + b] == s2[c._S_BDES + b]
                                and s[c._S_KBY + b] == 0)
                    if not same:
                        mismatches += 1
                else:
                    full += 1
                step(state, actions)
        return plain, bounced, full, mismatches

    for mode in ("ffa", "team"):
        config = PommermanConfig(mode=mode, ruleset="canonical")
        boards = nb.typed.List([generate(config, np.random.SeedSequence(7, spawn_key=(k,)))
                                for k in range(8)])
        plain, bounced, full, mismatches = check(boards, make_rng(11), 400)
        assert mismatches == 0
        assert plain > 1000 and bounced > 100, (plain, bounced, full)
