"""Scotland Yard rules on the real board: scripted scenarios, the possible-locations
set, board validation and the wrapper's contract."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from games.scotland_yard import DEFAULT_BOARD_FILE as BOARD, DEFAULT_DATA_DIR as DATA
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
from games.scotland_yard import kernels as K


def new_game(seed=0, **options) -> "ScotlandYard":
    game = ScotlandYard(ScotlandYardConfig(**options))
    game.reset(seed)
    return game


def place(game, mrx, detectives, possible=None):
    """Put Mr X and the detectives on given stations at the start of Mr X's turn."""
    s = game.state
    s.positions[0] = mrx
    for d, station in enumerate(detectives, start=1):
        s.positions[d] = station
    s.possible[:] = False
    for v in (possible if possible is not None else [mrx]):
        s.possible[v] = True
    s.mrx_path[s.meta[K.M_ROUND]] = mrx


def action_to(game, player, dest, black=False):
    """The action that moves ``player`` to ``dest`` (a taxi/bus/underground ticket
    picked by ``ticket`` when several connections lead there)."""
    s = game.state
    u = s.positions[player]
    for k in range(s.degree[u]):
        if s.neighbours[u, k] == dest:
            return 2 * k + int(black)
    raise AssertionError(f"{dest} is not a neighbour of {u}")


def action_by(game, player, dest, ticket):
    s = game.state
    u = s.positions[player]
    for k in range(s.degree[u]):
        if s.neighbours[u, k] == dest and s.transport[u, k] == ticket:
            return 2 * k
    raise AssertionError(f"no {ticket} connection {u}-{dest}")


def destinations(game, seat):
    """{(station, ticket name)} of the legal moves of ``seat`` (DOUBLE excluded)."""
    s = game.state
    player = 0 if seat == 0 else int(s.meta[K.M_TO_MOVE])
    u = s.positions[player]
    out = set()
    for a in np.flatnonzero(game.legal_actions(seat)):
        if a == K.DOUBLE_MOVE:
            continue
        k, black = a >> 1, a & 1
        ticket = "black" if black else K.TICKET_NAMES[s.transport[u, k]]
        out.add((int(s.neighbours[u, k]), ticket))
    return out


def play(game, seat, action):
    actions = [0, 0]
    actions[seat] = action
    game.step(actions)
    assert game.invalid_actions.sum() == 0


def detectives_pass(game):
    """Let every detective make its first legal move (scripted filler)."""
    while not game.done and game.acting_players() == [1]:
        play(game, 1, int(np.flatnonzero(game.legal_actions(1))[0]))


# --- the board ------------------------------------------------------------------
def test_board_facts():
    board = K.load_board(BOARD)
    assert board.degree.shape[0] - 1 == 199
    assert int(board.degree.sum()) == 2 * 468
    assert int(board.dist_detective[1:, 1:].max()) == 10
    assert int(board.dist_any[1:, 1:].max()) <= 10
    # the ferry shortens Mr X's trips only
    assert board.dist_any[108, 115] == 1 and board.dist_detective[108, 115] > 1


@pytest.mark.parametrize("rows, message", [
    (["1,2,taxi", "2,3,boat"], "unknown transport 'boat'"),
    (["1,2,taxi", "2,0,bus"], "station 0 out of range"),
    (["1,2,taxi", "3,4,taxi"], "disconnected board"),
    (["1,2,taxi", "2,3,bus", "2,1,taxi"], "duplicate connection 1-2 (taxi)"),
    (["1,2,taxi", "2,x,bus"], "station numbers must be integers"),
    (["1,2,taxi", "2,4,bus"], "station 3 out of range"),
])
def test_malformed_board_files(tmp_path, rows, message):
    path = tmp_path / "board.csv"
    path.write_text("station_a,station_b,transport\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        K.load_board(path)


def test_config_errors_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="^board_file: file not found"):
        ScotlandYardConfig(board_file=str(tmp_path / "none.csv"))
    bad = tmp_path / "b.csv"
    bad.write_text("station_a,station_b,transport\n1,2,boat\n")
    (tmp_path / "scotland_yard_setup.json").write_text((DATA / "scotland_yard_setup.json").read_text())
    with pytest.raises(ValueError, match="^board_file: .*unknown transport"):
        ScotlandYardConfig(board_file=str(bad))
    with pytest.raises(ValueError, match="^num_detectives"):
        ScotlandYardConfig(board_file=str(BOARD), num_detectives=6)
    with pytest.raises(ValueError, match="^reveal_rounds"):
        ScotlandYardConfig(board_file=str(BOARD), reveal_rounds=(3, 30))


# --- rules ----------------------------------------------------------------------
def test_deal_without_collision():
    for seed in range(50):
        game = new_game(seed)
        pos = game.state.positions[:6].tolist()
        assert len(set(pos)) == 6
        assert pos[0] in {35, 45, 51, 71, 78, 104, 106, 127, 132, 146, 166, 170, 172}
        assert game.acting_players() == [0]
        assert pos[0] in game.possible_locations()


def test_legal_moves_by_ticket_type():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104])
    assert destinations(game, 0) == {(8, "taxi"), (9, "taxi"), (46, "bus"), (58, "bus"),
                                     (46, "underground"), (8, "black"), (9, "black"),
                                     (46, "black"), (58, "black")}
    game.state.tickets[0, K.BUS_TICKET] = 0
    game.state.tickets[0, K.BLACK_TICKET] = 0
    assert destinations(game, 0) == {(8, "taxi"), (9, "taxi"), (46, "underground")}
    game.state.tickets[0, K.TAXI_TICKET] = 0
    assert destinations(game, 0) == {(46, "underground")}


def test_ferry_only_with_black_tickets():
    game = new_game()
    place(game, 115, [1, 2, 3, 4, 5])
    dests = destinations(game, 0)
    assert (108, "black") in dests and (157, "black") in dests
    assert not any(t == "ferry" for _, t in dests)
    game.state.tickets[0, K.BLACK_TICKET] = 0
    assert {d for d, _ in destinations(game, 0)} == {102, 114, 126, 127}
    # a detective on the ferry station cannot take the ferry
    place(game, 1, [115, 2, 3, 4, 5])
    play(game, 0, action_to(game, 0, 8))
    assert game.state.meta[K.M_TO_MOVE] == 1
    assert {d for d, _ in destinations(game, 1)} == {102, 114, 126, 127}


def test_detectives_do_not_share_stations_and_tickets_go_to_mrx():
    game = new_game()
    place(game, 1, [8, 9, 100, 101, 102])
    assert {d for d, _ in destinations(game, 0)} == {46, 58}  # not onto a detective
    play(game, 0, action_by(game, 0, 58, K.BUS))
    assert game.state.meta[K.M_TO_MOVE] == 1
    before = game.state.tickets.copy()
    play(game, 1, action_by(game, 1, 1, K.TAXI))  # detective 1: 8 -> 1 by taxi
    after = game.state.tickets
    assert after[1, K.TAXI_TICKET] == before[1, K.TAXI_TICKET] - 1
    assert after[0, K.TAXI_TICKET] == before[0, K.TAXI_TICKET] + 1
    assert game.state.meta[K.M_TO_MOVE] == 2
    # detective 2 at 9 may not move onto detective 1 at 1
    assert 1 not in {d for d, _ in destinations(game, 1)}


def test_double_move():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104])
    assert game.legal_actions(0)[K.DOUBLE_MOVE]
    play(game, 0, K.DOUBLE_MOVE)
    assert game.state.tickets[0, K.DOUBLE_TICKET] == 1
    assert game.acting_players() == [0] and not game.legal_actions(0)[K.DOUBLE_MOVE]
    play(game, 0, action_by(game, 0, 8, K.TAXI))
    assert game.acting_players() == [0] and game.round == 1
    play(game, 0, action_to(game, 0, 18))
    assert game.round == 2 and game.acting_players() == [1]
    assert game.state.ticket_log[1] == K.TAXI_TICKET and game.state.ticket_log[2] == K.TAXI_TICKET
    # no double move without two rounds left
    game2 = new_game()
    place(game2, 1, [100, 101, 102, 103, 104])
    game2.state.meta[K.M_ROUND] = 23
    assert not game2.legal_actions(0)[K.DOUBLE_MOVE]
    game2.state.meta[K.M_ROUND] = 22
    assert game2.legal_actions(0)[K.DOUBLE_MOVE]


def test_reveal_rounds_and_observation():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104], possible=[1, 13])
    stations = [8, 18, 31]
    for r, dest in enumerate(stations, start=1):
        play(game, 0, action_by(game, 0, dest, K.TAXI))
        obs = game.observation(1)
        assert obs.positions[0] == K.HIDDEN
        if r < 3:
            assert obs.meta[K.M_LAST_REVEAL] == 0 and obs.mrx_path[r] == K.HIDDEN
            assert len(game.possible_locations()) > 1
        detectives_pass(game)
    obs = game.observation(1)
    assert game.possible_locations() == [31]  # collapses at the round-3 reveal
    assert obs.meta[K.M_LAST_REVEAL] == 31 and obs.mrx_path[3] == 31
    assert obs.mrx_path[1] == K.HIDDEN and obs.mrx_path[2] == K.HIDDEN
    assert game.observation(0).positions[0] == 31 and game.observation(0).mrx_path[1] == 8


def test_capture():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104])
    play(game, 0, action_by(game, 0, 9, K.TAXI))
    play(game, 1, int(np.flatnonzero(game.legal_actions(1))[0]))
    game.state.positions[2] = 20  # detective 2 next to 9 (20-9 taxi)
    play(game, 1, action_to(game, 2, 9))
    assert game.done and game.outcomes() == ["loss", "win"]
    assert game.state.meta[K.M_CAPTURER] == 2
    assert game.returns().tolist() == [0.0, 1.0]


def test_escape_after_24_rounds():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104])
    game.state.meta[K.M_ROUND] = 23
    play(game, 0, action_by(game, 0, 9, K.TAXI))
    assert game.round == 24 and not game.done  # the detectives still move in round 24
    detectives_pass(game)
    assert game.done and game.outcomes() == ["win", "loss"]
    assert game.observation(1).positions[0] == 9  # everything is shown at the end


def test_full_game_lasts_24_rounds_without_capture():
    game = new_game(seed=4)
    rounds = []
    while not game.done:
        seat = game.acting_players()[0]
        legal = np.flatnonzero(game.legal_actions(seat))
        legal = legal[legal != K.DOUBLE_MOVE]
        # detectives try to stay put-ish: first legal move; Mr X too
        play(game, seat, int(legal[0]))
        rounds.append(game.round)
    if game.outcomes()[0] == "win" and game.state.meta[K.M_CAPTURER] == 0:
        assert game.round == 24 or not any(K.can_move(game.state, d) for d in range(1, 6))


def test_no_legal_move():
    # Mr X boxed in by detectives has no move (the game then ends at the start of
    # his turn: test_mrx_boxed_in_after_detectives_move)
    game = new_game()
    place(game, 1, [8, 9, 46, 58, 100])
    assert destinations(game, 0) == set() and not game.legal_actions(0).any()
    assert not K.can_move(game.state, 0)


def test_mrx_boxed_in_after_detectives_move():
    game = new_game()
    place(game, 1, [8, 19, 20, 100, 101])
    game.state.tickets[2:4, :] = 0  # detectives 2 and 3 cannot move: skipped
    play(game, 0, action_by(game, 0, 9, K.TAXI))  # 9 touches 1, 19, 20 only
    assert game.state.meta[K.M_TO_MOVE] == 1
    play(game, 1, action_by(game, 1, 1, K.TAXI))  # detective 1: 8 -> 1
    assert game.state.meta[K.M_TO_MOVE] == 4  # 2 and 3 skipped
    detectives_pass(game)
    assert game.done and game.outcomes() == ["loss", "win"]
    assert game.state.meta[K.M_CAPTURER] == 0


def test_detectives_without_tickets_lose():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104])
    game.state.tickets[1:, :3] = 0
    play(game, 0, action_by(game, 0, 9, K.TAXI))
    assert game.done and game.outcomes() == ["win", "loss"]


def test_invalid_action_is_replaced_and_counted():
    game = new_game()
    game.step([9999, 0])
    assert game.invalid_actions.tolist() == [1, 0] and game.round == 1


# --- the possible-locations set -------------------------------------------------
def test_possible_set_expands_with_the_ticket_type():
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104], possible=[1])
    play(game, 0, action_by(game, 0, 46, K.UNDERGROUND))
    assert game.possible_locations() == [46]  # the only underground line from 1
    detectives_pass(game)
    game = new_game()
    place(game, 1, [100, 101, 102, 103, 104], possible=[1])
    play(game, 0, action_to(game, 0, 8, black=True))
    assert set(game.possible_locations()) == {8, 9, 46, 58}


def test_possible_set_shrinks_by_detectives():
    game = new_game()
    place(game, 1, [100, 10, 102, 103, 104], possible=[1])
    play(game, 0, action_by(game, 0, 8, K.TAXI))
    assert set(game.possible_locations()) == {8, 9}
    detective_1_target = 9
    game.state.positions[1] = 20  # 20-9 taxi
    play(game, 1, action_to(game, 1, detective_1_target))
    assert game.possible_locations() == [8]


def test_possible_set_always_contains_the_true_location():
    rng = np.random.default_rng(1)
    for seed in range(20):
        game = new_game(seed)
        while not game.done:
            seat = game.acting_players()[0]
            play(game, seat, int(rng.choice(np.flatnonzero(game.legal_actions(seat)))))
            if not game.done:
                assert game.state.possible[game.state.positions[0]]
                for d in range(1, 6):
                    assert not game.state.possible[game.state.positions[d]]


def test_json_round_trip_and_copy():
    game = new_game(3)
    play(game, 0, int(np.flatnonzero(game.legal_actions(0))[0]))
    other = ScotlandYard.from_json(game.to_json())
    for name in ("positions", "tickets", "meta", "possible", "mrx_path", "ticket_log"):
        assert np.array_equal(getattr(other.state, name), getattr(game.state, name))
    twin = game.copy()
    play(twin, 1, int(np.flatnonzero(twin.legal_actions(1))[0]))
    assert twin.step_count == game.step_count + 1
    assert "round 1/24" in game.render()


def test_registered_and_seeded_deterministically():
    from games.registry import make_game

    a, b = make_game("scotland_yard"), make_game("scotland_yard")
    a.reset(np.random.SeedSequence(5))
    b.reset(np.random.SeedSequence(5))
    assert a.to_json() == b.to_json()
