"""Scotland Yard agents: the seekers never read Mr X's true location, roulette-wheel
determinization, Coalition Reduction, online tables across a series, move
filters, known positions, determinism, and the study specs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent
from agents.scotland_yard._common import (
    Determinization, LcTables, category_of, filter_mrx_moves, location_weights, roulette,
)
from agents.scotland_yard.mcts_seekers import coalition_values, empty_tables
from games.rng import make_rng
from games.scotland_yard import DEFAULT_BOARD_FILE as BOARD
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
from games.scotland_yard import kernels as K

REPO = Path(__file__).resolve().parents[2]


def new_game(seed=0) -> "ScotlandYard":
    game = ScotlandYard(ScotlandYardConfig())
    game.reset(seed)
    return game


def agent(name, iterations=300, **params):
    game_config = ScotlandYardConfig()
    a = make_agent(name, params, Budget(iterations=iterations), game_config)
    a.begin_game(0 if "mrx" in name else 1, np.random.SeedSequence(99))
    return a


def seekers_turn(seed=0, rounds=2):
    """A game (the first deal from ``seed`` on where greedy play lasts that long)
    ``rounds`` rounds in, at the first detective's move."""
    for attempt in range(seed, seed + 50):
        game = new_game(attempt)
        mrx = agent("sy_greedy_mrx")
        seekers = agent("sy_greedy_seekers")
        while not game.done and (game.round < rounds or game.state.meta[K.M_TO_MOVE] != 1):
            seat = game.acting_players()[0]
            acts = [0, 0]
            acts[seat] = (mrx if seat == 0 else seekers).act(game.observation(seat))
            game.step(acts)
        if not game.done:
            return game
    raise AssertionError("no deal lasted")


# --- the seekers never read Mr X's true location -----------------------------------
@pytest.mark.parametrize("params", [
    {"determinization": "uniform"},
    {"determinization": "lc_general"},
    {"determinization": "lc_detailed", "shared_tree": False},
])
def test_seeker_decisions_do_not_depend_on_the_true_location(params):
    game = seekers_turn(seed=3, rounds=4)
    possible = game.possible_locations()
    assert len(possible) >= 2
    decisions = []
    for truth in possible[:3]:
        state = K.copy_state(game.state)
        state.positions[0] = truth  # the full state, not even the observation
        state.mrx_path[state.meta[K.M_ROUND]] = truth
        a = agent("sy_mcts_seekers", iterations=400, **params)
        tables = empty_tables(5)
        tables["lc_general_n"][:] = [10, 20, 30, 40, 50]
        tables["lc_general_a"][:] = [1, 8, 9, 4, 1]
        a.load_learned_state(tables)
        decisions.append([a.act(state) for _ in range(3)])
    assert all(d == decisions[0] for d in decisions)


def test_seeker_observation_hides_mrx():
    game = seekers_turn(seed=1)
    obs = game.observation(1)
    assert obs.positions[0] == K.HIDDEN
    assert obs.possible[game.state.positions[0]]


# --- determinization by roulette wheel ----------------------------------------------
def test_roulette_matches_category_weights():
    from agents.scotland_yard._common import LC_DETAILED_RATIO, LC_N_LOCATIONS, PRIOR_MEAN_FLOOR

    game = seekers_turn(seed=5, rounds=2)
    s = game.observation(1)
    s.possible[:] = False
    stations = [v for v in range(1, 200) if not K.occupied_by_detective(s, v, 0)][::3]
    for v in stations:
        s.possible[v] = True
    L = 5
    n = np.array([10.0, 10, 10, 10, 10])
    a = np.array([1.0, 4, 2, 2, 1])
    buf_s = np.zeros(200, dtype=np.int32)
    buf_c = np.zeros(200)
    old_rules = (LC_N_LOCATIONS, LC_DETAILED_RATIO, PRIOR_MEAN_FLOOR)  # today's a / n, by name
    tables = LcTables(n, a, np.zeros((32, L)), np.zeros((32, L)))
    m = location_weights(s, Determinization(1, L, *old_rules), tables, buf_s, buf_c, np.zeros(L))
    assert m == len(stations)
    cats = {v: category_of(s, v, L) for v in stations}
    expected = np.zeros(L)
    for v in stations:
        expected[cats[v] - 1] += a[cats[v] - 1] / n[cats[v] - 1]
    expected /= expected.sum()
    rng = make_rng(7)
    draws = 40_000
    counts = np.zeros(L)
    for _ in range(draws):
        counts[cats[roulette(buf_s, buf_c, m, rng)] - 1] += 1
    observed = counts / draws
    sd = np.sqrt(expected * (1 - expected) / draws)
    assert np.all(np.abs(observed - expected) <= 5 * sd + 1e-9), (observed, expected)
    # uniform mode: every possible location equally likely
    m = location_weights(s, Determinization(0, L, *old_rules), tables, buf_s, buf_c, np.zeros(L))
    assert np.allclose(np.diff(np.concatenate([[0.0], buf_c[:m]])), 1.0)


def test_detailed_table_weights_by_combination():
    """Today's detailed rule (ratio, mean-and-floor prior), by name."""
    game = seekers_turn(seed=5, rounds=2)
    s = game.observation(1)
    L = 5
    counts = np.zeros(L)
    from agents.scotland_yard._common import (
        LC_DETAILED_RATIO, LC_N_LOCATIONS, PRIOR_MEAN_FLOOR, categorize,
    )

    combo = categorize(s, L, counts)
    dn = np.zeros((32, L))
    da = np.zeros((32, L))
    dn[combo] = 1.0
    present = [c for c in range(L) if combo >> c & 1]
    da[combo, present[0]] = 1.0  # only the first present category ever held Mr X
    buf_s = np.zeros(200, dtype=np.int32)
    buf_c = np.zeros(200)
    m = location_weights(s, Determinization(2, L, LC_N_LOCATIONS, LC_DETAILED_RATIO, PRIOR_MEAN_FLOOR),
                         LcTables(np.ones(L), np.ones(L), dn, da), buf_s, buf_c, np.zeros(L))
    rng = make_rng(1)
    hits = [category_of(s, roulette(buf_s, buf_c, m, rng), L) - 1 for _ in range(2000)]
    share = np.mean(np.array(hits) == present[0])
    assert share > 0.99 or len(present) == 1


# --- coalition reduction -----------------------------------------------------------
def test_coalition_reduction_scores():
    game = new_game()
    s = game.state
    values = np.zeros(6)
    s.meta[K.M_RESULT] = K.RESULT_SEEKERS_WIN
    s.meta[K.M_CAPTURER] = 2
    coalition_values(s, 0.25, values)
    assert values.tolist() == [0.0, 0.75, 1.0, 0.75, 0.75, 0.75]
    coalition_values(s, 0.0, values)
    assert values.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    s.meta[K.M_RESULT] = K.RESULT_MRX_WINS
    s.meta[K.M_CAPTURER] = 0
    coalition_values(s, 0.25, values)
    assert values.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]


# --- Mr X's move filters -----------------------------------------------------------
def test_mrx_move_filters():
    game = new_game(2)
    s = game.state
    mask = np.zeros(K.NUM_ACTIONS, dtype=np.bool_)
    n = K.legal_actions_into(s, 0, mask)
    assert mask[1::2][:s.degree[s.positions[0]]].any() and mask[K.DOUBLE_MOVE]
    filtered = mask.copy()
    left = filter_mrx_moves(s, filtered, True, True, 3.0)  # round 1; detectives far away
    assert not filtered[1:K.DOUBLE_MOVE:2].any() and not filtered[K.DOUBLE_MOVE]
    assert left == filtered.sum() and left < n
    off = mask.copy()
    assert filter_mrx_moves(s, off, False, False, 3.0) == n and (off == mask).all()
    # the double move is allowed when the detectives are close
    off = mask.copy()
    assert filter_mrx_moves(s, off, False, True, 1e9) == n and off[K.DOUBLE_MOVE]


# --- known positions ---------------------------------------------------------------
def test_seekers_catch_a_known_mrx():
    game = new_game()
    s = game.state
    s.positions[:6] = [9, 20, 100, 101, 102, 103]  # detective 1 at 20, next to 9
    s.possible[:] = False
    s.possible[9] = True
    s.meta[K.M_TO_MOVE] = 1
    a = agent("sy_mcts_seekers", iterations=300)
    action = a.act(game.observation(1))
    assert s.neighbours[20, action >> 1] == 9


def test_mrx_avoids_capture():
    game = new_game()
    s = game.state
    d = s.dist_detective
    # Mr X at 1 (taxi 8, 9; bus 46, 58); detective 1 next to 8 only, the others far away
    others = (9, 46, 58)
    trap = next(v for v in range(2, 200) if d[v, 8] == 1 and d[v, 1] >= 2
                and all(d[v, x] >= 2 for x in others))
    far = [v for v in range(199, 0, -1) if d[v, 1] >= 4 and d[v, trap] >= 2][:4]
    s.positions[:6] = [1, trap, *far]
    s.tickets[0, K.DOUBLE_TICKET] = 0
    for seed in range(3):
        mrx = agent("sy_mcts_mrx", iterations=2000)
        mrx.begin_game(0, np.random.SeedSequence(seed))
        action = mrx.act(game.observation(0))
        assert s.neighbours[1, action >> 1] != 8


# --- online tables across a series ---------------------------------------------------
def test_online_tables_carried_across_a_series():
    from cluster.spec.plan import plan_study
    from cluster.run.play import build_agents, play_game
    from cluster.spec.build import build_spec

    spec = build_spec({
        "study": {"name": "sy-online", "seed": 3},
        "game": {"name": "scotland_yard"},
        "budget": {"iterations": 30},
        "design": {"runs": 1, "rounds": 3, "series_by": "run", "rotate_seats": False},
        "lineup": [{"agent": "sy_greedy_mrx", "label": "MrX"},
                   {"agent": "sy_mcts_seekers", "label": "Seekers",
                    "params": {"determinization": "lc_general", "lc_update": True}}],
        "tracking": {"enabled": False},
    })
    (series,) = plan_study(spec)
    agents = build_agents(spec)
    learned, totals = None, []
    for task in series.games:
        rows, learned = play_game(spec, task, agents, learned)
        assert all(r["error"] is None for r in rows)
        totals.append(float(learned["Seekers"]["lc_general_n"].sum()))
        assert learned["Seekers"]["lc_general_a"].sum() > 0
    assert totals[0] < totals[1] < totals[2]
    # a fresh agent restarts from the saved state (a series resumed on another host)
    fresh = build_agents(spec)
    fresh[1].load_learned_state(learned["Seekers"])
    assert np.array_equal(fresh[1].learned_state()["lc_detailed_a"], learned["Seekers"]["lc_detailed_a"])
    with pytest.raises(ValueError, match="lc_general_n: shape"):
        fresh[1].load_learned_state({**learned["Seekers"], "lc_general_n": np.zeros(3)})


def test_offline_tables_stay_fixed():
    a = agent("sy_mcts_seekers", iterations=20, determinization="lc_general")
    assert a.learned_state() is not None  # LC agents report their tables
    tables = empty_tables(5)
    tables["lc_general_n"][:] = 5
    a.load_learned_state(tables)
    game = seekers_turn(seed=2)
    a.act(game.observation(1))
    a.end_game(game.observation(1), np.zeros(2))
    assert np.array_equal(a.learned_state()["lc_general_n"], tables["lc_general_n"])


# --- determinism -------------------------------------------------------------------
def test_game_with_mcts_agents_is_deterministic():
    def run():
        game = new_game(11)
        mrx = agent("sy_mcts_mrx", iterations=60)
        seekers = agent("sy_mcts_seekers", iterations=60, determinization="lc_detailed",
                        shared_tree=False, coalition_reduction=0.5)
        while not game.done and game.round < 6:
            seat = game.acting_players()[0]
            acts = [0, 0]
            acts[seat] = (mrx if seat == 0 else seekers).act(game.observation(seat))
            game.step(acts)
        return game.to_json()

    assert run() == run()


_SCRIPT = """
import hashlib, sys, numpy as np
from agents.api import Budget
from agents.registry import make_agent
from games.scotland_yard import ScotlandYard, ScotlandYardConfig
config = ScotlandYardConfig(board_file=sys.argv[1])
game = ScotlandYard(config)
game.reset(np.random.SeedSequence(21))
seats = [make_agent("sy_mcts_mrx", {}, Budget(iterations=40), config),
         make_agent("sy_mcts_seekers", {"determinization": "lc_general"}, Budget(iterations=40), config)]
for seat, a in enumerate(seats):
    a.begin_game(seat, np.random.SeedSequence(seat))
while not game.done and game.round < 5:
    seat = game.acting_players()[0]
    acts = [0, 0]
    acts[seat] = seats[seat].act(game.observation(seat))
    game.step(acts)
print(hashlib.sha1(game.to_json().encode()).hexdigest())
"""


def test_same_game_across_processes():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = [subprocess.run([sys.executable, "-c", _SCRIPT, str(BOARD)], env=env, cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.strip()
           for _ in range(2)]
    assert out[0] == out[1] and len(out[0]) == 40


def test_agents_refuse_the_wrong_seat():
    a = make_agent("sy_mcts_seekers", {}, Budget(iterations=5), ScotlandYardConfig())
    with pytest.raises(ValueError, match="seat 1"):
        a.begin_game(0, np.random.SeedSequence(0))


def test_config_errors_name_the_field():
    from agents.registry import make_agent_config

    with pytest.raises(ValueError, match="params.determinization"):
        make_agent_config("sy_mcts_seekers", {"determinization": "psychic"})
    with pytest.raises(ValueError, match="params.coalition_reduction"):
        make_agent_config("sy_mcts_seekers", {"coalition_reduction": 1.5})
    with pytest.raises(ValueError, match="params.final_move"):
        make_agent_config("sy_mcts_mrx", {"final_move": "best"})


# --- the study specs -----------------------------------------------------------------
SPECS = sorted((REPO / "jobs" / "scotland_yard").glob("*.toml")) + sorted(
    (REPO / "jobs" / "sweeps").glob("scotland_yard*.toml"))


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_every_scotland_yard_spec_validates(path):
    if path.parent.name == "sweeps":
        from jobs.spec import load_sweep

        load_sweep(path)
    else:
        from jobs.spec import load_spec

        spec = load_spec(path)
        assert spec.game == "scotland_yard" and not spec.design.rotate_seats
        assert spec.design.total_games >= 200 or "lc-tables" in spec.name


def test_fisher_and_holm():
    from cluster.stats import fisher_exact, holm

    assert fisher_exact(5, 5, 5, 5) == pytest.approx(1.0)
    # a classic: the lady tasting tea, [[3, 1], [1, 3]] -> p = 0.4857
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(0.4857, abs=1e-4)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
