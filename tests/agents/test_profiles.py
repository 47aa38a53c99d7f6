"""Agent profiles: each of the Java framework's search quirks, alone, on a
scripted state where it changes the result; both profiles end to end."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.pommerman._common import (
    ARENA_QUIRKS, JAVA_QUIRKS, QUIRK_FIRST_ROOT_WOOD, QUIRK_HIDDEN_ITEMS, QUIRK_SAFE_ACTION_SLIP,
    QUIRK_STOP_AT_OWN_END, QUIRK_TIE_DEATH_SCORED, prepare_search, safe_random_action, search_over,
    search_value,
)
from agents.registry import make_agent, resolved_params
from games.rng import make_rng
from games.pommerman import PommermanConfig
from games.pommerman.kernels import (
    A_ALIVE, A_STATUS, FLAMES, KICK, LAY_BOMB, LEFT, PASSAGE, RIGHT, STATUS_LOSS, STATUS_TIE,
    STOP, UP, copy_state, observe, state_from_dict, step,
)

CODES = {".": 0, "#": 1, "+": 2, "b": 3, "*": 4}


def java_state(picture: str, bombs=(), flames=(), items=(), dead=()) -> object:
    """A java-ruleset FFA state from an ASCII picture: digits are agents, ``b``
    bombs (given in ``bombs`` as (row, col, life, blast)), ``*`` flames (life in
    ``flames`` as (row, col, life)); ``items`` (row, col, code) hidden under wood."""
    rows = [r.split() for r in picture.strip().splitlines()]
    board, agents = [], [None] * 4
    for r, row in enumerate(rows):
        line = []
        for c, ch in enumerate(row):
            if ch.isdigit():
                agents[int(ch)] = {"id": int(ch), "position": [r, c], "alive": True, "ammo": 1,
                                   "blast_strength": 2, "can_kick": False, "result": "INCOMPLETE"}
                line.append(10 + int(ch))
            else:
                line.append(CODES[ch])
        board.append(line)
    for i in dead:
        agents[i] = {"id": i, "position": [10, 10], "alive": False, "ammo": 1, "blast_strength": 2,
                     "can_kick": False, "result": "LOSS"}
    d = {"step_count": 10, "board": board, "agents": agents,
         "bombs": [{"position": [r, c], "owner": 0, "life": life, "blast_strength": blast,
                    "moving_direction": None} for r, c, life, blast in bombs],
         "flames": [{"position": [r, c], "life": life} for r, c, life in flames],
         "items": [list(it) for it in items], "done": False, "rewards": [0, 0, 0, 0],
         "results": [a["result"] for a in agents], "result": "Incomplete", "winners": None}
    return state_from_dict(d, mode="ffa", ruleset="java", collapse=False)


OPEN = """
. . . . . . . . . . .
. 0 . . . . . . . . 3
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. 1 . . . . . . . . 2
. . . . . . . . . . .
"""


# --------------------------------------------------------------------- profiles
def test_profile_auto_follows_the_ruleset_and_is_recorded():
    budget = Budget(iterations=5)
    java = PommermanConfig(ruleset="java")
    canonical = PommermanConfig(ruleset="canonical")
    for name in ("mcts", "rhea", "osla", "femcts"):
        assert make_agent(name, {}, budget, java).profile == "java"
        assert make_agent(name, {}, budget, java).quirks == JAVA_QUIRKS
        assert make_agent(name, {}, budget, canonical).profile == "arena"
        assert make_agent(name, {}, budget, canonical).quirks == ARENA_QUIRKS
        assert make_agent(name, {"profile": "arena"}, budget, java).quirks == ARENA_QUIRKS
        assert make_agent(name, {"profile": "java"}, budget, canonical).profile == "java"
        extra = {"fog_moves": "blocked"} if name == "femcts" else {}  # issue 27
        assert resolved_params(name, make_agent(name, {}, budget, java).config, java) == {"profile": "java", **extra}
    assert resolved_params("simple", make_agent("simple", {}, budget, java).config, java) == {}
    with pytest.raises(ValueError, match="params.profile: must be one of"):
        make_agent("mcts", {"profile": "jav"}, budget, java)


# --------------------------------------------------------------------- the safe-action slip
def _draws(state, quirks, n=30000):
    rng = make_rng(7)
    out = np.zeros(6, dtype=np.int64)
    for _ in range(n):
        out[safe_random_action(state, 0, rng, quirks)] += 1
    return out / n


def test_safe_action_slip_plays_the_flame_move_and_never_bombs_after_a_redraw():
    # only UP leads into flames
    state = java_state(OPEN.replace(". . . . . . . . . . .\n. 0", ". * . . . . . . . . .\n. 0", 1),
                       flames=[(0, 1, 3)])
    arena = _draws(state, ARENA_QUIRKS)
    java = _draws(state, QUIRK_SAFE_ACTION_SLIP)
    assert arena[UP] == 0 and arena[LAY_BOMB] == pytest.approx(1 / 5, abs=0.01)
    # the framework: first draw uniform over six; UP drawn (1/6) -> removed, then an
    # index over five is played in the full list: STOP..RIGHT, never BOMB
    assert java[UP] == pytest.approx(1 / 30, abs=0.006)
    assert java[LAY_BOMB] == pytest.approx(5 / 6 / 5, abs=0.01)
    assert java[STOP] == pytest.approx(1 / 6 + 1 / 30, abs=0.01)


def test_safe_action_slip_on_the_edge_where_moves_leave_the_board():
    state = java_state(OPEN.replace("\n. 0 .", "\n0 . .", 1))  # agent 0 at (1, 0): LEFT is off the board
    java = _draws(state, JAVA_QUIRKS)
    assert java[LEFT] == pytest.approx(1 / 30, abs=0.006)
    assert java[RIGHT] == pytest.approx(1 / 6 + 1 / 30, abs=0.01)
    assert java[LAY_BOMB] == pytest.approx(1 / 6, abs=0.01)


# --------------------------------------------------------------------- maxWoods
def test_first_root_wood_divides_destroyed_wood():
    picture = OPEN.replace(". 0 . .", ". 0 + +", 1)  # two wood cells next to agent 0
    root = java_state(picture)
    leaf = copy_state(root)
    leaf.board[1 * 11 + 2] = PASSAGE  # one wood destroyed
    values = {}
    for quirks, max_wood in ((ARENA_QUIRKS, 0), (QUIRK_FIRST_ROOT_WOOD, 3)):
        model = copy_state(root)
        _, _, _, root_wood = prepare_search(model, root, quirks, max_wood)
        values[quirks] = search_value(model, root_wood, leaf, 0, quirks)
    assert values[ARENA_QUIRKS] == pytest.approx(0.1 * 1 / 2)  # the board's initial wood: 2
    assert values[QUIRK_FIRST_ROOT_WOOD] == pytest.approx(0.1 * 1 / 3)


def test_java_agents_fix_max_wood_at_their_first_decision_of_each_game():
    cfg = PommermanConfig(ruleset="java", view_range=0)
    agent = make_agent("mcts", {"profile": "java"}, Budget(iterations=3), cfg)
    state = java_state(OPEN.replace(". 0 . .", ". 0 + +", 1))
    agent.begin_game(0, np.random.SeedSequence(1))
    agent.act(observe(state, 0, 0))  # sees its own cell only: no wood
    assert agent.model_max_wood(observe(state, 0, -1)) == 1  # still the first root's 0 + 1
    agent.begin_game(0, np.random.SeedSequence(1))
    assert agent.model_max_wood(observe(state, 0, -1)) == 3  # a new game: 2 wood + 1
    arena = make_agent("mcts", {"profile": "arena"}, Budget(iterations=3), cfg)
    arena.begin_game(0, np.random.SeedSequence(1))
    assert arena.model_max_wood(observe(state, 0, -1)) == 0  # 0: the board's initial wood
    for name in ("mcts", "rhea", "osla"):  # a framework run's static value, given explicitly
        fixed = make_agent(name, {"max_woods": 11}, Budget(iterations=3), cfg)
        fixed.begin_game(0, np.random.SeedSequence(1))
        assert fixed.model_max_wood(observe(state, 0, 0)) == 11
    with pytest.raises(ValueError, match="params.max_woods"):
        make_agent("mcts", {"max_woods": -1}, Budget(iterations=3), cfg)


# --------------------------------------------------------------------- hidden power-ups
def test_hidden_power_up_in_the_model_only_with_the_quirk_and_only_at_full_view():
    # wood at (1, 2) burning, a kick hidden under it
    picture = OPEN.replace(". 0 . .", ". 0 * .", 1)
    state = java_state(picture, flames=[(1, 2, 1)], items=[(1, 2, KICK)])
    for view, quirks, expect in ((-1, QUIRK_HIDDEN_ITEMS, KICK), (-1, ARENA_QUIRKS, PASSAGE),
                                 (2, QUIRK_HIDDEN_ITEMS, PASSAGE)):
        model = copy_state(state)
        prepare_search(model, observe(state, 0, view), quirks, 0)
        for _ in range(6):  # the model's flame has the full life (5): it dies within 6 steps
            if model.board[1 * 11 + 2] != FLAMES:
                break
            step(model, np.zeros(4, dtype=np.int64))
        assert model.board[1 * 11 + 2] == expect, (view, quirks)


# --------------------------------------------------------------------- the searcher's end
def test_stop_at_own_end_ends_an_iteration_when_the_searcher_dies():
    state = java_state(OPEN)
    state.agents[0, A_ALIVE] = 0
    state.agents[0, A_STATUS] = STATUS_LOSS
    assert search_over(state, 0, QUIRK_STOP_AT_OWN_END)
    assert not search_over(state, 0, ARENA_QUIRKS)  # three agents still play on
    assert not search_over(state, 1, QUIRK_STOP_AT_OWN_END)


def test_a_searcher_dying_in_a_tie_is_scored_by_the_heuristic():
    # agents 0 and 1 left, both in the blast of a bomb about to explode
    picture = """
. . . . . . . . . . .
. 0 b 1 . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
"""
    root = java_state(picture, bombs=[(1, 2, 1, 2)], dead=(2, 3))
    leaf = copy_state(root)
    step(leaf, np.zeros(4, dtype=np.int64))
    assert not leaf.agents[0, A_ALIVE] and leaf.agents[0, A_STATUS] == STATUS_TIE
    assert search_value(root, 0, leaf, 0, ARENA_QUIRKS) == -1.0
    assert search_value(root, 0, leaf, 0, QUIRK_TIE_DEATH_SCORED) == pytest.approx(0.5 / 3)


# --------------------------------------------------------------------- both profiles end to end
@pytest.mark.parametrize("profile", ["java", "arena"])
@pytest.mark.parametrize("name", ["mcts", "rhea", "osla"])
def test_both_profiles_play_and_are_deterministic(name, profile):
    from games.pommerman import Pommerman

    cfg = PommermanConfig(ruleset="java", collapse=True)

    def play():
        agents = [make_agent(name if s == 0 else "simple", {"profile": profile} if s == 0 else {},
                             Budget(iterations=10), cfg) for s in range(4)]
        game = Pommerman(cfg)
        game.reset(11)
        for s, a in enumerate(agents):
            a.begin_game(s, np.random.SeedSequence([5, s]))
        actions = []
        for _ in range(60):
            if game.done:
                break
            joint = [agents[p].act(game.observation(p)) if game.is_alive(p) else 0 for p in range(4)]
            actions.append(joint)
            game.step(joint)
        return actions

    first = play()
    assert first == play()
    assert all(0 <= a <= 5 for joint in first for a in joint)


# --------------------------------------------------------------------- fogged agents in the model
TIE_PICTURE = """
. . . . . . . . . . .
. 0 b 1 . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . 2 .
. . . . . . . . . . .
"""


def _advance_model(state, view, quirks):
    from agents.pommerman._common import advance

    model = copy_state(state)
    hidden, joint, n_hidden, root_wood = prepare_search(model, observe(state, 0, view), quirks, 0)
    root = copy_state(model)
    advance(model, 0, STOP, joint, hidden, n_hidden, make_rng(3))
    return root, root_wood, model


def test_dying_with_the_last_visible_enemy_is_a_loss_while_a_fogged_one_lives():
    # agent 2 is alive out of sight: in the framework it outlives agents 0 and 1
    # (agent 1 is walled in next to the bomb, agent 0 stays)
    rows = TIE_PICTURE.strip().splitlines()
    rows[0] = ". . . # . . . . . . ."
    rows[1] = ". 0 b 1 # . . . . . ."
    rows[2] = ". . . # . . . . . . ."
    state = java_state("\n".join(rows), bombs=[(1, 2, 1, 2)], dead=(3,))
    root, root_wood, leaf = _advance_model(state, 2, JAVA_QUIRKS)
    assert not leaf.agents[0, A_ALIVE] and leaf.agents[0, A_STATUS] == STATUS_LOSS
    assert search_value(root, root_wood, leaf, 0, JAVA_QUIRKS) == -1.0


def test_a_fogged_agent_known_dead_is_not_kept_alive_in_the_model():
    # agents 2 and 3 died out of sight (the framework's copy keeps their status):
    # killing agent 1, the last visible one (walled in next to a bomb), wins
    rows = TIE_PICTURE.strip().splitlines()
    rows[0] = ". . . # . . . . . . ."
    rows[1] = "0 . # 1 b . . . . . ."
    rows[2] = ". . . # . . . . . . ."
    rows[9] = ". . . . . . . . . . ."
    state = java_state("\n".join(rows), bombs=[(1, 4, 1, 2)], dead=(2, 3))
    root, root_wood, leaf = _advance_model(state, 4, ARENA_QUIRKS)
    assert leaf.agents[0, A_ALIVE] and not leaf.agents[1, A_ALIVE]
    assert search_value(root, root_wood, leaf, 0, ARENA_QUIRKS) == 1.0


def test_resolved_profile_is_in_result_rows_and_mlflow_params():
    from cluster.spec.plan import plan_study
    from cluster.run.play import build_agents, play_game
    from cluster.spec.build import build_spec

    spec = build_spec({
        "study": {"name": "profiles", "seed": 3},
        "game": {"name": "pommerman", "ruleset": "java", "max_steps": 30},
        "budget": {"iterations": 2},
        "design": {"seeds": 1, "games_per_seed": 1},
        "lineup": [{"agent": "mcts"}, {"agent": "rhea", "params": {"profile": "arena"}},
                   {"agent": "osla"}, {"agent": "simple"}],
    }, check_files=False)
    params = spec.flat_params()
    assert params["lineup.0.params.profile"] == "java"
    assert params["lineup.1.params.profile"] == "arena"
    assert "lineup.3.params.profile" not in params
    task = plan_study(spec)[0].games[0]
    rows, _ = play_game(spec, task, build_agents(spec))
    profiles = {row["agent"]: row.get("profile") for row in rows}
    assert profiles == {"mcts": "java", "rhea": "arena", "osla": "java", "simple": None}
