"""The offline Location Categorization table job's held-out log score (issue 24,
point 5): the log-probability of Mr X's true station under the general and detailed
samplers on a hand-made log, the per-game summary with its t interval, the split by
deal, and tables rebuilt from a game record equal to those the agent learned online."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from agents.api import Budget
from agents.registry import make_agent
from agents.scotland_yard._common import category_of
from agents.scotland_yard.mcts_seekers import empty_tables
from cluster.replay.records import GameRecorder
from games.scotland_yard import DEFAULT_BOARD_FILE as BOARD
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
from games.scotland_yard import kernels as K
from jobs.scotland_yard import lc_tables as T

L = 2  # categories 1 (next to a detective) and 2 (farther): easy to count by hand


def config():
    return ScotlandYardConfig(board_file=str(BOARD))


def hand_made_move(in_one: int, in_two: int, truth_category: int):
    """A seekers' observation whose possible locations are ``in_one`` stations of
    category 1 and ``in_two`` of category 2, and Mr X's true station (the first
    one of ``truth_category``)."""
    game = ScotlandYard(config())
    game.reset(3)
    obs = game.observation(1)
    by_category = {1: [], 2: []}
    for v in range(1, obs.possible.shape[0]):
        if not K.occupied_by_detective(obs, v, 0):
            by_category[category_of(obs, v, L)].append(v)
    obs.possible[:] = False
    chosen = {1: by_category[1][:in_one], 2: by_category[2][:in_two]}
    for stations in chosen.values():
        obs.possible[stations] = True
    return obs, chosen[truth_category][0]


def hand_made_tables():
    """Four records with both categories present (Mr X three times in 1, once in 2)
    and two with only category 2: a = [3, 3]; the paper's n (records with the
    category present) = [4, 6]."""
    t = empty_tables(L)
    t["lc_detailed_a"][0b11] = [3, 1]
    t["lc_detailed_a"][0b10] = [0, 2]
    t["lc_detailed_n"][0b11] = [5, 20]
    t["lc_detailed_n"][0b10] = [0, 30]
    t["lc_general_a"][:] = [3, 3]
    t["lc_general_n"][:] = [5, 50]
    return t


def test_log_score_on_a_hand_made_log():
    tables = hand_made_tables()
    # one location in category 1 (the truth), two in category 2
    moves = [hand_made_move(1, 2, truth_category=1), hand_made_move(1, 2, truth_category=2)]
    got = T.log_probabilities(moves, tables)
    assert got["uniform"] == pytest.approx([math.log(1 / 3)] * 2)
    # general, the paper's n, add-one: (3 + 1) / (4 + 2) = 2/3 and (3 + 1) / (6 + 2) = 1/2
    g1, g2 = 2 / 3, 1 / 2
    assert got["general"] == pytest.approx([math.log(g1 / (g1 + 2 * g2)), math.log(g2 / (g1 + 2 * g2))])
    # detailed, the stored vector for combination 0b11 plus one: [4, 2]
    assert got["detailed"] == pytest.approx([math.log(4 / 8), math.log(2 / 8)])
    # general by locations: (3 + 1) / (5 + 2), (3 + 1) / (50 + 2)
    l1, l2 = 4 / 7, 4 / 52
    assert got["general_locations"] == pytest.approx([math.log(l1 / (l1 + 2 * l2)),
                                                      math.log(l2 / (l1 + 2 * l2))])
    # detailed ratio: (3 + 1) / (5 + 2), (1 + 1) / (20 + 2)
    r1, r2 = 4 / 7, 2 / 22
    assert got["detailed_ratio"] == pytest.approx([math.log(r1 / (r1 + 2 * r2)),
                                                   math.log(r2 / (r1 + 2 * r2))])
    # the mean/floor rule: 3 / 4 and 3 / 6 for the general table; [3, 1] for the detailed
    assert got["general_mean_floor"] == pytest.approx([math.log(0.75 / 1.75), math.log(0.5 / 1.75)])
    assert got["detailed_mean_floor"] == pytest.approx([math.log(3 / 5), math.log(1 / 5)])
    # an empty table: every sampler is uniform
    flat = T.log_probabilities(moves, empty_tables(L))
    for name in T.SAMPLERS:
        assert flat[name] == pytest.approx(flat["uniform"]), name


def test_log_score_refuses_a_truth_that_is_not_possible():
    obs, truth = hand_made_move(1, 2, truth_category=1)
    obs.possible[truth] = False
    with pytest.raises(ValueError, match="not a possible location"):
        T.log_probabilities([(obs, truth)], hand_made_tables())


def test_summary_averages_games_with_a_t_interval():
    u = np.log([1 / 4, 1 / 4, 1 / 2])
    per_game = [{"uniform": u[:2], "general": np.log([1 / 2, 1 / 8])},   # gain: +log 2, -log 2
                {"uniform": u[2:], "general": np.log([1.0])},            # gain: +log 2
                {"uniform": np.zeros(0), "general": np.zeros(0)}]        # no hider move: skipped
    r = T.summarize_scores(per_game)
    assert (r["games"], r["moves"]) == (2, 3)
    g = r["samplers"]["general"]
    means = np.array([np.log([1 / 2, 1 / 8]).mean(), 0.0])
    assert g["log_p"] == pytest.approx(means.mean())
    assert g["pooled_log_p"] == pytest.approx(np.log([1 / 2, 1 / 8, 1.0]).mean())
    gains = np.array([0.0, math.log(2)])
    assert g["gain"] == pytest.approx(gains.mean())
    assert g["prob_ratio"] == pytest.approx(math.exp(gains.mean()))
    half = stats.t.ppf(0.975, 1) * gains.std(ddof=1) / math.sqrt(2)
    assert g["gain_ci"] == pytest.approx([gains.mean() - half, gains.mean() + half])
    assert r["samplers"]["uniform"]["gain"] == 0.0
    with pytest.raises(ValueError, match="no hider moves"):
        T.summarize_scores(per_game[2:])


def test_split_holds_out_every_fifth_deal():
    rows = []
    for run in range(2):
        for k in range(10):
            game = run * 10 + k
            for seat in (0, 1):
                rows.append({"game_index": game, "index_in_series": k, "seat": seat,
                             "result": "error" if game == 3 else ("win" if seat else "loss")})
    train, held = T.split_games(pd.DataFrame(rows))
    assert held == [4, 9, 14, 19]
    assert 3 not in train and len(train) == 15
    assert not set(train) & set(held)


def test_tables_rebuilt_from_a_record_equal_the_agents_online_tables():
    cfg = config()
    mrx = make_agent("sy_greedy_mrx", {}, Budget(iterations=1), cfg)
    seekers = make_agent("sy_mcts_seekers", {"lc_update": True, "categories": L},
                         Budget(iterations=20), cfg)
    game = ScotlandYard(cfg)
    seed = np.random.SeedSequence(2024)
    game.reset(seed)
    mrx.begin_game(0, np.random.SeedSequence(1))
    seekers.begin_game(1, np.random.SeedSequence(2))
    recorder = GameRecorder("scotland_yard", cfg, seed, ["MrX", "Seekers"], int(game.num_actions))
    recorder.start(game)
    while not game.done:
        seat = game.acting_players()[0]
        actions = [0, 0]
        actions[seat] = (mrx if seat == 0 else seekers).act(game.observation(seat))
        recorder.decision(seat, mrx if seat == 0 else seekers)
        game.step(actions)
        recorder.step(game, actions)
    returns = np.asarray(game.returns())
    seekers.end_game(game.observation(1), returns)
    record = recorder.finish()
    moves = list(T.hider_moves(record))
    assert len(moves) == int(seekers.learned_state()["lc_general_a"].sum()) > 0
    rebuilt = empty_tables(L)
    assert T.add_game(rebuilt, moves, L) == len(moves)
    for key, value in seekers.learned_state().items():
        np.testing.assert_allclose(rebuilt[key], value, err_msg=key)
    scores = T.log_probabilities(moves, rebuilt)
    assert all(len(v) == len(moves) and np.all(v <= 0) for v in scores.values())


# --- the online settings' learning curve and the playing time in compare's report -------
def test_learning_curve_blocks_games_by_index_in_series():
    from jobs.scotland_yard.compare import curve_table, learning_curve, play_seconds

    rows = []
    for run in range(2):
        for k in range(120):
            win = k >= 50 and (k + run) % 2 == 0 or k < 50 and k % 5 == 0
            rows.append({"seat": 1, "index_in_series": k, "result": "win" if win else "loss",
                         "metric.p_true_location": 0.1 if k < 50 else 0.2,
                         "finished_at": pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(seconds=run * 120 + k)})
            rows.append({"seat": 0, "index_in_series": k, "result": "loss" if win else "win",
                         "finished_at": rows[-1]["finished_at"]})
    rows[1]["result"] = rows[0]["result"] = "error"  # error games are left out
    df = pd.DataFrame(rows)
    curve = learning_curve(df, block=50)
    assert [(c["first"], c["last"], c["games"]) for c in curve] == [(0, 49, 99), (50, 99, 100), (100, 149, 40)]
    assert curve[0]["wins"] == 19 and curve[1]["wins"] == 50 and curve[2]["wins"] == 20
    assert curve[0]["p_true"] == pytest.approx(0.1) and curve[1]["p_true"] == pytest.approx(0.2)
    from cluster.stats import wilson_interval
    assert (curve[1]["lo"], curve[1]["hi"]) == pytest.approx(wilson_interval(50, 100))
    assert "| 50-99 | 100 | 50 | 0.500 |" in curve_table(curve)
    # 240 games one second apart: a span of 239 s, plus one mean game
    assert play_seconds(df) == pytest.approx(240.0)
