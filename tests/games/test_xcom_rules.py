"""XCOM rules on scripted ASCII boards (``.`` empty, ``#`` wall, ``H`` human, ``A`` alien)."""
from __future__ import annotations

import numpy as np
import pytest

from games.registry import make_config, make_game
from games.xcom import Xcom, XcomConfig, first_mover_for
from games.xcom.kernels import (
    ALIENS, HUMANS, M_MOVES, M_TO_MOVE, M_WINNER, NO_WINNER, U_ALIVE, U_COL, U_ROW,
    apply_command, grid_from_ascii, is_terminal, legal_actions, move_offsets, num_actions,
    parse_layout, returns, state_from_grid, step,
)


def board(picture, max_move=2, max_moves=25, first=HUMANS):
    return state_from_grid(grid_from_ascii(picture), max_move, max_moves, first)


def cell(state, r, c):
    return r * int(state.meta[0]) + c


def sees(state, a, b):
    return bool(state.sight[cell(state, *a), cell(state, *b)])


def action(state, unit, dr, dc, target, max_move):
    """The action index of (unit, offset (dr, dc), target) as documented in _layout."""
    k = int(state.meta[1])
    offsets = [tuple(o) for o in move_offsets(max_move)]
    return (unit * len(offsets) + offsets.index((dr, dc))) * (k + 1) + target


# --- line of sight ------------------------------------------------------------
def test_wall_exactly_on_the_segment_blocks():
    s = board("""
        H . # . A
        . . . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert not sees(s, (0, 0), (0, 4))
    assert sees(s, (1, 0), (1, 4))  # the row below: the wall is beside the line, not on it


def test_segment_through_a_wall_corner_blocks():
    # (0,0) -> (2,2): the segment passes exactly through the shared corner of
    # cells (0,1), (1,0), (1,1)... the diagonal through (1,1) is the middle cell; use
    # (0,0) -> (1,1) whose segment touches only the corner point of (0,1) and (1,0).
    s = board("""
        H # .
        . A .
        . . .
    """)
    assert not sees(s, (0, 0), (1, 1))  # touching a wall's corner blocks (cover at corners)
    s2 = board("""
        H . .
        . A .
        . . .
    """)
    assert sees(s2, (0, 0), (1, 1))


def test_shallow_segment_passes_beside_a_wall_and_is_blocked_by_one_on_it():
    # centres (0.5, 0.5) -> (1.5, 4.5) (row, col): the line reaches row 1 at col 2.5,
    # so it misses cell (1, 1) but enters cell (1, 2)
    s = board("""
        H . . . .
        . # . . A
        . . . . .
        . . . . .
        . . . . .
    """)
    assert sees(s, (0, 0), (1, 4))
    s2 = board("""
        H . . . .
        . . # . A
        . . . . .
        . . . . .
        . . . . .
    """)
    assert not sees(s2, (0, 0), (1, 4))


def test_adjacent_units_see_each_other_and_units_do_not_block():
    s = board("""
        H A . A
        . . . .
        . . . .
        H . . .
    """)
    assert sees(s, (0, 0), (0, 1))
    assert sees(s, (0, 0), (0, 3))  # through the alien at (0, 1): units are no cover
    mask = legal_actions(s, HUMANS)
    assert mask[action(s, 0, 0, 0, 1, 2)]  # human 0 shoots alien 0 without moving
    assert mask[action(s, 0, 0, 0, 2, 2)]  # ... or alien 1 behind it


# --- movement -----------------------------------------------------------------
def test_movement_limit_and_blocking():
    s = board("""
        H . . . .
        # # . . .
        . . . . .
        . . . . .
        A . # # #
    """, max_move=3)
    mask = legal_actions(s, HUMANS)
    move = lambda dr, dc: mask[action(s, 0, dr, dc, 0, 3)]  # noqa: E731
    assert move(0, 1) and move(0, 2) and move(0, 3)
    assert move(1, 2)          # (0,0) -> (0,1) -> (0,2) -> (1,2): 3 steps
    assert not move(1, 0)      # wall
    assert not move(2, 1)      # behind the wall: 5 steps around it, over the limit
    assert not move(0, 0)      # staying without shooting is not a command
    # units block: the alien squad's row cannot be entered
    s2 = board("""
        H A .
        . . .
        H . A
    """, max_move=2)
    mask2 = legal_actions(s2, HUMANS)
    assert not mask2[action(s2, 0, 0, 1, 0, 2)]   # onto an alien
    assert not mask2[action(s2, 0, 0, 2, 0, 2)]   # through it (the only 2-step path)
    assert mask2[action(s2, 0, 1, 1, 0, 2)]       # around: down then right


def test_hold_only_when_nothing_else_is_legal():
    s = board("""
        H # .
        # . .
        . . A
    """, max_move=2)
    mask = legal_actions(s, HUMANS)
    assert mask.sum() == 1 and mask[action(s, 0, 0, 0, 0, 2)]
    assert not legal_actions(s, ALIENS).any()  # not the aliens' turn


# --- move then shoot, rewards, end of round -------------------------------------
def test_move_then_shoot_kills_and_rewards():
    s = board("""
        H # . . A
        . # . . .
        . . . . .
        . . . . .
        H . . . A
    """, max_move=2)
    mask = legal_actions(s, HUMANS)
    assert not mask[action(s, 0, 0, 0, 1, 2)]  # alien 0 covered by the wall at (0, 1)
    assert not mask[action(s, 0, 0, 0, 2, 2)]  # alien 1: the diagonal touches that wall's corner
    assert not mask[action(s, 0, 2, 0, 1, 2)]  # from (2, 0) alien 0 is behind the wall at (1, 1)
    a = action(s, 0, 2, 0, 2, 2)               # move to (2, 0), then shoot alien 1 at (4, 4)
    assert mask[a]
    step(s, np.array([a, 0]))
    assert (s.units[HUMANS, 0, U_ROW], s.units[HUMANS, 0, U_COL]) == (2, 0)
    assert s.units[ALIENS, 1, U_ALIVE] == 0 and s.units[ALIENS, 0, U_ALIVE] == 1
    assert s.board[4 * 5 + 4] == 0
    assert list(returns(s)) == [10.0, -10.0]
    assert s.meta[M_TO_MOVE] == ALIENS and not is_terminal(s)


def test_elimination_wins():
    s = board("""
        H . A
        . . .
        . . .
    """)
    a = action(s, 0, 0, 0, 1, 2)
    step(s, np.array([a, 0]))
    assert is_terminal(s) and s.meta[M_WINNER] == HUMANS
    assert list(returns(s)) == [10.0, -10.0]


def test_draw_after_25_moves():
    s = board("""
        H # . . .
        . # . . .
        # # . . .
        . . . # #
        . . . # A
    """, max_move=1)
    for k in range(25):
        assert not is_terminal(s)
        side = int(s.meta[M_TO_MOVE])
        mask = legal_actions(s, side)
        step(s, np.array([int(np.flatnonzero(mask)[0])] * 2))
    assert is_terminal(s) and s.meta[M_MOVES] == 25 and s.meta[M_WINNER] == NO_WINNER
    assert list(returns(s)) == [0.0, 0.0]


def test_wrapper_draw_outcomes_and_turns():
    game = Xcom(XcomConfig(board="mini", max_moves=3))
    game.reset(0)
    assert game.acting_players() == [HUMANS]
    seen = []
    while not game.done:
        side = game.acting_players()[0]
        seen.append(side)
        legal = game.legal_actions(side)
        moves_only = [a for a in np.flatnonzero(legal) if a % (game.config.units + 1) == 0]
        game.step([moves_only[0], moves_only[0]])
    assert seen == [0, 1, 0] and game.outcomes() == ["tie", "tie"] and game.acting_players() == []


def test_illegal_action_is_replaced_and_counted():
    game = Xcom(XcomConfig(board="mini"))
    game.reset(0)
    game.step([-5, 0])
    assert game.invalid_actions.tolist() == [1, 0] and game.step_count == 1


def test_first_mover_alternates_between_rounds():
    cfg = XcomConfig(board="mini")
    starts = [first_mover_for(cfg, k) for k in range(40)]
    assert starts.count(HUMANS) == 20 and starts.count(ALIENS) == 20
    assert starts[:4] == [HUMANS, ALIENS, HUMANS, ALIENS]
    game = Xcom(cfg)
    game.reset(np.random.SeedSequence(7, spawn_key=(0, 0)), board_index=1)  # the plan's board seed 1
    assert game.acting_players() == [ALIENS]
    game.reset(np.random.SeedSequence(7, spawn_key=(0, 1)), board_index=2)
    assert game.acting_players() == [HUMANS]
    game.reset(3)  # an int seed names its board
    assert game.acting_players() == [ALIENS]
    assert first_mover_for(XcomConfig(board="mini", first_mover="aliens"), 0) == ALIENS


def test_builtin_layouts_are_symmetric_and_start_without_a_shot():
    for name, (n, k, m) in {"mini": (6, 2, 4), "large": (18, 4, 6)}.items():
        cfg = XcomConfig(board=name)
        grid = cfg.grid
        assert grid.shape == (n, n) and cfg.units == k and cfg.max_move == m
        assert (np.rot90(grid, 2) == np.where(np.abs(grid) == 1, -grid, grid)).all()
        game = Xcom(cfg)
        game.reset(0)
        assert game.num_actions == num_actions(k, m)
        for side in (HUMANS, ALIENS):
            game.state.meta[M_TO_MOVE] = side
            shots = [a for a in np.flatnonzero(game.legal_actions(side))
                     if a % (k + 1) and (a // (k + 1)) % (2 * m * m + 2 * m + 1) == 0]
            assert shots == []


def test_json_round_trip():
    game = make_game("xcom", board="mini")
    game.reset(3)  # odd board seed: the aliens open
    a = int(np.flatnonzero(game.legal_actions(ALIENS))[5])
    game.step([0, a])
    other = Xcom.from_json(game.to_json())
    assert other.render() == game.render()
    assert (other.legal_actions(1) == game.legal_actions(1)).all()


# --- bad input ----------------------------------------------------------------
@pytest.mark.parametrize("text, where", [
    ("1 0\n0 -1 0\n", "row 2, column 3: ragged row"),
    ("1 0 0\n0 7 0\n0 0 -1\n", "row 2, column 2: cell value 7"),
    ("1 0 0\n0 x 0\n0 0 -1\n", "row 2, column 2: 'x' is not an int"),
    ("1 0 1\n0 0 0\n0 0 -1\n", "row 1, column 3: wrong unit count: 2 humans and 1 aliens"),
])
def test_malformed_layouts_name_row_and_column(tmp_path, text, where):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        make_config("xcom", {"board": str(path)})
    assert str(info.value).startswith("board: ") and where in str(info.value)


def test_layout_file_and_bad_options(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("# a corridor\n1 0 0 0 -1\n0 0 -2 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n")
    cfg = make_config("xcom", {"board": str(path)})
    assert cfg.size == 5 and cfg.units == 1 and cfg.max_move == 4
    assert parse_layout("1 -1\n0 0").shape == (2, 2)
    with pytest.raises(ValueError, match="^max_move: "):
        make_config("xcom", {"board": "mini", "max_move": 0})
    with pytest.raises(ValueError, match="^board: "):
        make_config("xcom", {"board": "nowhere.txt"})
    with pytest.raises(ValueError, match="^first_mover: "):
        make_config("xcom", {"first_mover": "both"})


def test_apply_command_moves_the_unit_cell():
    s = board("""
        H . .
        . . .
        . . A
    """)
    apply_command(s, 0, cell(s, 1, 1), -1)
    assert s.board[cell(s, 0, 0)] == 0 and s.board[cell(s, 1, 1)] == 1


# --- the rollout policy against a plain-Python reading of its docstring --------
def _reference_reachable(state, side, unit):
    """Breadth-first over empty cells, neighbours up, down, left, right, at most max_move steps."""
    n, max_move = int(state.meta[0]), int(state.meta[2])
    r0, c0 = int(state.units[side, unit, U_ROW]), int(state.units[side, unit, U_COL])
    order, dist = [(r0, c0)], {(r0, c0): 0}
    head = 0
    while head < len(order):
        r, c = order[head]
        head += 1
        if dist[(r, c)] >= max_move:
            continue
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < n and 0 <= cc < n and (rr, cc) not in dist and state.board[rr * n + cc] == 0:
                dist[(rr, cc)] = dist[(r, c)] + 1
                order.append((rr, cc))
    return [r * n + c for r, c in order]


def _random_positions(board_name, rounds):
    """Every position of ``rounds`` random rounds on a built-in board (copies)."""
    from games.rng import make_rng
    from games.xcom.kernels import M_DONE, copy_state, random_command, rollout_scratch

    game = make_game("xcom", board=board_name)
    game.reset(0)
    rng = make_rng(3)
    out = []
    for _ in range(rounds):
        s = copy_state(game.state)
        cells, dist = rollout_scratch(s)
        while not s.meta[M_DONE]:
            out.append(copy_state(s))
            random_command(s, cells, dist, rng)
    return out


@pytest.mark.parametrize("board_name", ["mini", "large"])
def test_reachable_is_the_documented_breadth_first_search(board_name):
    from games.xcom.kernels import new_dist, reachable

    for s in _random_positions(board_name, 4):
        side = int(s.meta[M_TO_MOVE])
        dist = new_dist(s)
        cells = np.empty(2 * 36 + 13, dtype=np.int64)
        for unit in range(int(s.meta[1])):
            if not s.units[side, unit, U_ALIVE]:
                continue
            count = reachable(s, side, unit, cells, dist)
            assert list(cells[:count]) == _reference_reachable(s, side, unit)
            assert (dist == -1).all()  # the scratch is left as it was given


@pytest.mark.parametrize("board_name", ["mini", "large"])
def test_random_command_draws_among_the_documented_candidates(board_name):
    """A living unit uniformly, then one of its commands uniformly in the documented order
    (moves without a shot by reachable cell, then per living enemy the cells it is
    visible from), with the generator's draws in that order; hold when nothing is legal."""
    from games.rng import make_rng, rng_integer
    from games.xcom.kernels import copy_state, random_command, rollout_scratch

    for k, s in enumerate(_random_positions(board_name, 3)):
        side, enemy, n = int(s.meta[M_TO_MOVE]), 1 - int(s.meta[M_TO_MOVE]), int(s.meta[0])
        rng, ref_rng = make_rng(k), make_rng(k)
        want = copy_state(s)
        living = [u for u in range(int(s.meta[1])) if s.units[side, u, U_ALIVE]]
        unit = living[rng_integer(ref_rng, len(living))]
        cells = _reference_reachable(s, side, unit)
        candidates = [(c, -1) for c in cells[1:]]
        for j in range(int(s.meta[1])):
            if s.units[enemy, j, U_ALIVE]:
                target = int(s.units[enemy, j, U_ROW]) * n + int(s.units[enemy, j, U_COL])
                candidates += [(c, j) for c in cells if s.sight[target, c]]
        dest, shot = candidates[rng_integer(ref_rng, len(candidates))] if candidates else (cells[0], -1)
        apply_command(want, unit, dest, shot)
        got = copy_state(s)
        random_command(got, *rollout_scratch(got), rng)
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
        assert np.array_equal(rng, ref_rng)


def test_max_move_beyond_the_kernels_scratch_is_refused():
    from games.xcom.kernels import MAX_MOVE

    picture = """
        H .
        . A
    """
    with pytest.raises(ValueError, match="max_move"):
        board(picture, max_move=MAX_MOVE + 1)
    assert board(picture, max_move=MAX_MOVE).meta[2] == MAX_MOVE
