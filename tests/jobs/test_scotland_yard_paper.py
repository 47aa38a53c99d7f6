"""Scotland Yard seekers as the paper defines them (issue 24): the general and
detailed Location Categorization weights on a hand-made log, the add-one prior
that never gives a possible location zero weight, one table record per hider
move, Coalition Reduction from the root player's point of view on a scripted
capture, separate trees per determinization and how they are combined, Mr X in
the tree, and the per-decision diagnostic in result rows and reports."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent, make_agent_config
from agents.scotland_yard._common import (
    Determinization, LC_DETAILED_COUNTS, LC_DETAILED_RATIO, LC_N_LOCATIONS, LC_N_PRESENCE, LcTables,
    PRIOR_ADD_ONE, PRIOR_MEAN_FLOOR, categorize, category_of, location_weights, presence_counts,
)
from agents.scotland_yard.mcts_seekers import (
    coalition_values, coalition_values_root, combined_root_action, empty_tables, update_tables,
)
from agents.search import ROOT_INDEX
from games.rng import make_rng
from games.scotland_yard import DEFAULT_BOARD_FILE as BOARD
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
from games.scotland_yard import kernels as K

L = 3  # small enough to count by hand: categories 1, 2, 3+ (bit c - 1 of a combination)

# The hand-made log: per record, the possible locations per category, the combination
# of categories present and Mr X's true category.
LOG = [
    ([2, 0, 5], 0b101, 1),
    ([1, 3, 0], 0b011, 2),
    ([0, 4, 2], 0b110, 3),
    ([3, 1, 1], 0b111, 2),
    ([1, 0, 0], 0b001, 1),
]


def log_tables():
    t = empty_tables(L)
    counts = np.array([r[0] for r in LOG], dtype=np.float64)
    combos = np.array([r[1] for r in LOG], dtype=np.int64)
    truth = np.array([r[2] for r in LOG], dtype=np.int64)
    update_tables(t["lc_general_n"], t["lc_general_a"], t["lc_detailed_n"], t["lc_detailed_a"],
                  counts, combos, truth)
    return t


def new_game(seed=0):
    game = ScotlandYard(ScotlandYardConfig(board_file=str(BOARD)))
    game.reset(seed)
    return game


def agent(name, iterations=200, seed=99, **params):
    a = make_agent(name, params, Budget(iterations=iterations),
                   ScotlandYardConfig(board_file=str(BOARD)))
    a.begin_game(0 if "mrx" in name else 1, np.random.SeedSequence(seed))
    return a


def all_categories_present():
    """A seekers' observation whose possible locations are every free station
    (so, with L = 3, every category is present: combination 0b111)."""
    game = new_game(4)
    game.step([int(agent("sy_greedy_mrx").act(game.observation(0))), 0])
    obs = game.observation(1)
    obs.possible[:] = False
    for v in range(1, obs.possible.shape[0]):
        if not K.occupied_by_detective(obs, v, 0):
            obs.possible[v] = True
    return obs


def weights_of(obs, tables, mode, general_count, detailed_rule, prior):
    """(category weights, per-location weights, stations) of one determinization."""
    s = obs.possible.shape[0]
    stations, cumulative, w = np.zeros(s, dtype=np.int32), np.zeros(s), np.zeros(L)
    lc = LcTables(tables["lc_general_n"], tables["lc_general_a"], tables["lc_detailed_n"],
                  tables["lc_detailed_a"])
    m = location_weights(obs, Determinization(mode, L, general_count, detailed_rule, prior), lc,
                         stations, cumulative, w)
    return w, np.diff(np.concatenate([[0.0], cumulative[:m]])), stations[:m]


# --- the general and detailed tables on a hand-made log ------------------------------
def test_general_weights_on_a_hand_made_log():
    t = log_tables()
    # a: Mr X's category counted once per record; n (locations): the counts summed
    assert t["lc_general_a"].tolist() == [2, 2, 1]
    assert t["lc_general_n"].tolist() == [7, 8, 8]
    # the paper's n: the records in which the category held a possible location
    n = np.zeros(L)
    presence_counts(t["lc_detailed_a"], n)
    assert n.tolist() == [4, 3, 3]
    obs = all_categories_present()
    w, _, _ = weights_of(obs, t, 1, LC_N_PRESENCE, LC_DETAILED_COUNTS, PRIOR_MEAN_FLOOR)
    assert w == pytest.approx([2 / 4, 2 / 3, 1 / 3])           # a / n, the paper
    w, _, _ = weights_of(obs, t, 1, LC_N_PRESENCE, LC_DETAILED_COUNTS, PRIOR_ADD_ONE)
    assert w == pytest.approx([3 / 6, 3 / 5, 2 / 5])           # (a + 1) / (n + 2), the default
    w, _, _ = weights_of(obs, t, 1, LC_N_LOCATIONS, LC_DETAILED_COUNTS, PRIOR_MEAN_FLOOR)
    assert w == pytest.approx([2 / 7, 2 / 8, 1 / 8])           # today's a / locations
    # the default config uses the paper's definitions
    c = make_agent_config("sy_mcts_seekers", {})
    assert (c.lc_general_n, c.lc_detailed, c.lc_prior, c.lc_record, c.coalition_view, c.trees) == \
        ("presence", "counts", "add_one", "hider_move", "root", "single")


def test_detailed_weights_on_a_hand_made_log():
    t = log_tables()
    obs = all_categories_present()
    counts = np.zeros(L)
    assert categorize(obs, L, counts) == 0b111
    # combination 0b111 was seen once, with Mr X in category 2 and 3 / 1 / 1 locations
    assert t["lc_detailed_a"][0b111].tolist() == [0, 1, 0]
    w, per_location, stations = weights_of(obs, t, 2, LC_N_PRESENCE, LC_DETAILED_COUNTS,
                                           PRIOR_MEAN_FLOOR)
    assert w == pytest.approx([1e-6, 1, 1e-6])                # the stored vector itself
    w, per_location, stations = weights_of(obs, t, 2, LC_N_PRESENCE, LC_DETAILED_COUNTS,
                                           PRIOR_ADD_ONE)
    assert w.tolist() == [1, 2, 1]                             # add-one counts, the default
    # every possible location weighs its category's weight (roulette wheel)
    cats = np.array([category_of(obs, int(v), L) for v in stations])
    assert per_location == pytest.approx(w[cats - 1])
    w, _, _ = weights_of(obs, t, 2, LC_N_LOCATIONS, LC_DETAILED_RATIO, PRIOR_MEAN_FLOOR)
    assert w == pytest.approx([1e-6, 1, 1e-6])                # today's a / n: 0/3, 1/1, 0/1
    # an unseen combination: add-one counts are uniform over the categories
    t["lc_detailed_a"][0b111] = 0
    w, _, _ = weights_of(obs, t, 2, LC_N_PRESENCE, LC_DETAILED_COUNTS, PRIOR_ADD_ONE)
    assert w.tolist() == [1, 1, 1]


def test_the_prior_never_gives_a_possible_location_zero_weight():
    obs = all_categories_present()
    rng = np.random.default_rng(np.random.SeedSequence(24))
    for trial in range(300):
        t = empty_tables(L)
        for key in t:  # sparse counts: most cells 0, some categories never seen
            t[key][...] = rng.integers(0, 4, t[key].shape) * (rng.random(t[key].shape) < 0.3)
        if trial % 10 == 0:
            t = empty_tables(L)
        for mode in (1, 2):
            for count in (LC_N_PRESENCE, LC_N_LOCATIONS):
                for rule in (LC_DETAILED_COUNTS, LC_DETAILED_RATIO):
                    w, per_location, _ = weights_of(obs, t, mode, count, rule, PRIOR_ADD_ONE)
                    assert (w > 0).all() and (per_location > 0).all(), (trial, mode, count, rule)
                    # and no location is in effect ruled out: at least 1/ (n + 2) of the best
                    assert per_location.min() / per_location.max() > 1e-3


# --- one record per hider move ---------------------------------------------------------
def play(mrx, seekers, seed, max_rounds=30):
    game = new_game(seed)
    rounds = []
    while not game.done and game.round < max_rounds:
        seat = game.acting_players()[0]
        if seat == 1:
            rounds.append(game.round)
        acts = [0, 0]
        acts[seat] = (mrx if seat == 0 else seekers).act(game.observation(seat))
        game.step(acts)
    returns = np.asarray(game.returns())
    mrx.end_game(game.observation(0), returns)
    seekers.end_game(game.observation(1), returns)
    return game, rounds


@pytest.mark.parametrize("record", ["hider_move", "every_decision"])
def test_tables_record_once_per_hider_move(record):
    seekers = agent("sy_mcts_seekers", iterations=20, determinization="lc_general",
                    lc_update=True, lc_record=record)
    game, rounds = play(agent("sy_greedy_mrx"), seekers, seed=6)
    assert game.done
    a = seekers.learned_state()["lc_general_a"]
    expected = len(set(rounds)) if record == "hider_move" else len(rounds)
    assert a.sum() == expected  # one record adds 1 at Mr X's category
    assert seekers.learned_state()["lc_detailed_a"].sum() == expected


# --- Coalition Reduction from the root player's point of view --------------------------
def test_coalition_values_from_the_root_player():
    s = new_game().state
    values = np.zeros(6)
    s.meta[K.M_RESULT] = K.RESULT_SEEKERS_WIN
    s.meta[K.M_CAPTURER] = 2
    coalition_values_root(s, 0.25, 2, values)           # the root player caught him
    assert values.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    coalition_values_root(s, 0.25, 1, values)           # another seeker did
    assert values.tolist() == [0.0, 0.75, 0.75, 0.75, 0.75, 0.75]
    coalition_values(s, 0.25, values)                   # today's: each its own view
    assert values.tolist() == [0.0, 0.75, 1.0, 0.75, 0.75, 0.75]
    s.meta[K.M_RESULT] = K.RESULT_MRX_WINS
    coalition_values_root(s, 0.25, 1, values)
    assert values.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def scripted_capture():
    """Mr X known at 9; detective 1 (to move) far from him, detective 2 next to him."""
    game = new_game()
    s = game.state
    d = s.dist_detective
    far = next(v for v in range(199, 0, -1) if d[v, 9] >= 3)
    others = [v for v in range(100, 200) if d[v, 9] >= 3 and v != far][:3]
    s.positions[:6] = [9, far, 20, *others]
    assert d[20, 9] == 1
    s.possible[:] = False
    s.possible[9] = True
    s.meta[K.M_TO_MOVE] = 1
    return game


@pytest.mark.parametrize("view, expected", [("root", 0.75), ("own", 1.0)])
def test_coalition_reduction_scores_from_the_root_player_on_a_scripted_capture(view, expected):
    game = scripted_capture()
    a = agent("sy_mcts_seekers", iterations=3000, coalition_view=view, coalition_reduction=0.25)
    a.act(game.observation(1))
    tree, players = a._tree, a._node_player
    captures = []
    for first in tree.children[ROOT_INDEX]:            # detective 1's moves
        if first < 0:
            continue
        for action, second in enumerate(tree.children[first]):   # detective 2's moves
            if second >= 0 and tree.node_visits[second] > 0 and \
                    game.state.neighbours[20, action >> 1] == 9:
                assert players[second] == 2
                captures.append(tree.node_value_sum[second] / tree.node_visits[second])
    assert captures, "detective 2's capture was never searched"
    # every simulation through detective 2's capture ends there: 1 - r for the root
    # player (detective 1), 1 for detective 2 itself under today's per-detective scoring
    assert captures == pytest.approx([expected] * len(captures))


# --- separate trees, one per determinization --------------------------------------------
def test_combined_root_action_by_summed_visits_or_vote():
    rng = make_rng(0)
    visits = np.zeros(K.NUM_ACTIONS)
    sums = np.zeros(K.NUM_ACTIONS)
    votes = np.zeros(K.NUM_ACTIONS)
    visits[[2, 5, 7]] = [30, 55, 15]
    sums[[2, 5, 7]] = [20, 10, 14]
    votes[[2, 5, 7]] = [4, 2, 4]
    assert combined_root_action(visits, sums, votes, 0, rng) == 5  # most summed visits
    assert combined_root_action(visits, sums, votes, 1, rng) == 2  # most votes, tie: visits
    visits[2] = 55
    assert combined_root_action(visits, sums, votes, 0, rng) == 2  # tie: the higher mean
    assert combined_root_action(np.zeros(K.NUM_ACTIONS), sums * 0, votes * 0, 0, rng) == -1


@pytest.mark.parametrize("combine", ["visits", "vote"])
def test_separate_trees_split_the_budget_and_catch_a_known_mrx(combine):
    game = scripted_capture()
    s = game.state
    s.positions[1], s.positions[2] = 20, s.positions[1]  # detective 1 next to Mr X now
    a = agent("sy_mcts_seekers", iterations=403, trees="per_determinization", determinizations=4,
              combine=combine)
    action = a.act(game.observation(1))
    assert s.neighbours[20, action >> 1] == 9
    assert a.last_iterations == 403
    # the trees ran one after the other in the one preallocated tree: the last got its
    # quarter of the budget (403 = 101 + 101 + 101 + 100)
    assert a._tree.node_visits[ROOT_INDEX] == 100


@pytest.mark.parametrize("params", [
    {"trees": "per_determinization", "determinizations": 5, "combine": "vote",
     "determinization": "lc_detailed"},
    {"trees": "single", "mrx_in_tree": True},
    {"trees": "per_detective", "mrx_in_tree": True, "determinization": "lc_general"},
])
def test_tree_layouts_play_whole_games_deterministically(params):
    def run():
        mrx = agent("sy_mcts_mrx", iterations=40, seed=1)
        seekers = agent("sy_mcts_seekers", iterations=60, seed=2, **params)
        game, _ = play(mrx, seekers, seed=8, max_rounds=7)
        return game.to_json(), seekers.game_metrics()

    first, second = run(), run()
    assert first == second


def test_tree_options_name_the_field():
    with pytest.raises(ValueError, match="params.trees"):
        make_agent_config("sy_mcts_seekers", {"trees": "forest"})
    with pytest.raises(ValueError, match="params.shared_tree"):
        make_agent_config("sy_mcts_seekers", {"trees": "per_determinization", "shared_tree": False})
    with pytest.raises(ValueError, match="params.determinizations"):
        make_agent_config("sy_mcts_seekers", {"determinizations": 0})
    with pytest.raises(ValueError, match="params.lc_prior"):
        make_agent_config("sy_mcts_seekers", {"lc_prior": "none"})
    # the legacy switch still reads as before
    assert make_agent_config("sy_mcts_seekers", {"shared_tree": False}).trees == "per_detective"
    assert make_agent_config("sy_mcts_seekers", {"shared_tree": True}).trees == "single"


# --- the diagnostic: the probability given to Mr X's true station ----------------------------
def test_diagnostic_uniform_and_lc():
    uniform = agent("sy_mcts_seekers", iterations=30)
    play(agent("sy_greedy_mrx"), uniform, seed=5)
    m = uniform.game_metrics()
    assert m["p_true_decisions"] > 0
    assert m["p_true_location"] == pytest.approx(m["p_true_uniform"])  # uniform is 1 / |possible|
    assert m["p_true_ruled_out"] == 0
    lc = agent("sy_mcts_seekers", iterations=30, determinization="lc_general")
    t = empty_tables(5)
    t["lc_detailed_a"][0b11111, 0] = 1000.0  # Mr X always at distance 1: a sharp table
    t["lc_general_a"][0] = 1000.0
    lc.load_learned_state(t)
    play(agent("sy_greedy_mrx"), lc, seed=5)
    m = lc.game_metrics()
    assert 0 < m["p_true_location"] <= 1 and m["p_true_location"] != pytest.approx(m["p_true_uniform"])


def test_diagnostic_in_rows_and_report():
    from cluster.spec.plan import plan_study
    from cluster.run.play import build_agents, play_game
    from cluster.analysis.report import result_table, to_markdown
    from cluster.spec.build import build_spec

    import pandas as pd

    spec = build_spec({
        "study": {"name": "sy-diagnostic", "seed": 4},
        "game": {"name": "scotland_yard", "board_file": str(BOARD)},
        "budget": {"iterations": 20},
        "design": {"seeds": 2, "games_per_seed": 1, "series_by": "game", "rotate_seats": False},
        "lineup": [{"agent": "sy_greedy_mrx", "label": "MrX"},
                   {"agent": "sy_mcts_seekers", "label": "Seekers",
                    "params": {"determinization": "lc_general", "lc_update": True}}],
        "tracking": {"enabled": False},
    })
    agents = build_agents(spec)
    rows = []
    for series in plan_study(spec):
        for task in series.games:
            rows += play_game(spec, task, agents)[0]
    seekers = [r for r in rows if r["label"] == "Seekers"]
    assert all(0 < r["metric.p_true_location"] <= 1 for r in seekers)
    assert all("metric.p_true_location" not in r for r in rows if r["label"] == "MrX")
    table = result_table(pd.DataFrame(rows))
    expected = np.mean([r["metric.p_true_location"] for r in seekers])
    assert table.loc["Seekers", "metric.p_true_location"] == pytest.approx(expected)
    assert "p_true_location" in to_markdown(table)

    from jobs.scotland_yard.compare import compare, seeker_diagnostic

    d = seeker_diagnostic(pd.DataFrame(rows))
    weights = [r["metric.p_true_decisions"] for r in seekers]
    assert d["p"] == pytest.approx(np.average([r["metric.p_true_location"] for r in seekers],
                                              weights=weights))
    assert d["decisions"] == sum(weights)
    assert "P(true)" in compare({"lc": (1, 2)}, diagnostics={"lc": d})
