"""XCOM agents: the search on known positions, TD(0) by hand, the encoder, bad input, determinism."""
from __future__ import annotations

import numpy as np
import pytest

from agents.api import Budget
from agents.registry import make_agent, make_agent_config
from agents.search import ROOT_INDEX, backup_alternating, expand, new_tree
from agents.xcom._value import (
    MANUAL_FEATURES, TABLE_SIZE, VALUE_MANUAL, grid_key, manual_features, td_update,
)
from agents.xcom.encoder import (
    BUILTIN_ENCODERS, check_encoder_arrays, encode_boards, encoder_from_arrays,
    load_encoder_arrays,
)
from cluster.spec.build import build_spec
from cluster.spec.fields import SpecError
from games.registry import make_config, make_game
from games.xcom import Xcom, XcomConfig
from games.xcom.kernels import (
    ALIENS, HUMANS, grid_from_ascii, legal_actions, new_dist, state_from_grid,
)

AGENTS = ("xcom_mcts", "xcom_mcts_td", "xcom_mf_fa", "xcom_convae_fa")


def play(game, agents, seed):
    game.reset(seed)
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(seed, spawn_key=(1, seat)))
    actions = []
    while not game.done:
        side = game.acting_players()[0]
        a = agents[side].act(game.observation(side))
        actions.append(a)
        game.step([a, a])
    for seat, agent in enumerate(agents):
        agent.end_game(game.observation(seat), game.returns())
    return actions


# --- TD(0) -------------------------------------------------------------------
def test_td_update_hand_computed():
    # V(s) = 0.5*1 + 0.5*2 = 1.5; delta = 10 + 0.9*1.0 - 1.5 = 9.4; w += 0.1*9.4*phi
    w = np.array([0.5, 0.5])
    delta = td_update(w, np.array([1.0, 2.0]), -1, 10.0, 1.0, 0.1, 0.9)
    assert delta == pytest.approx(9.4)
    assert w == pytest.approx([1.44, 2.38])
    # table: one entry moves by alpha * delta
    table = np.full(8, 0.25)
    delta = td_update(table, np.zeros(1), 3, -10.0, 0.5, 0.5, 1.0)
    assert delta == pytest.approx(-10.0 + 0.5 - 0.25)
    assert table[3] == pytest.approx(0.25 + 0.5 * delta) and (np.delete(table, 3) == 0.25).all()


def test_features_on_a_known_board():
    s = state_from_grid(grid_from_ascii("""
        H # . .
        A . . .
        . . . .
        . . H A
    """), 2)
    # 3x3 around human 0 at (0,0): neighbours in order (-1,-1),(-1,0),(-1,1),(0,-1),(0,1),(1,-1),(1,0),(1,1)
    # off, off, off, off, wall, off, enemy, empty -> codes 0,0,0,0,0,0,3,1
    assert grid_key(s, HUMANS, 0) == 3 * 4 ** 6 + 1 * 4 ** 7
    phi = np.zeros(MANUAL_FEATURES)
    cells = np.empty(13, dtype=np.int64)
    manual_features(s, HUMANS, cells, new_dist(s), phi)
    assert phi[0] == 1.0 and phi[1] == 1.0
    assert phi[3] == pytest.approx(2 / 4) and phi[4] == pytest.approx(2 / 4)
    s.meta[4] = HUMANS
    assert phi[2] == pytest.approx(legal_actions(s, HUMANS).sum() / len(legal_actions(s, HUMANS)))


def test_weights_start_uniform_and_learn_across_rounds():
    game = make_game("xcom", board="mini")
    budget = Budget(iterations=20)
    learner = make_agent("xcom_mf_fa", {}, budget, game.config)
    opponent = make_agent("xcom_mcts", {}, budget, game.config)
    play(game, [learner, opponent], 0)
    w1 = learner.learned_state()["weights"]
    assert w1.shape == (5,) and learner.td_updates > 0
    play(game, [learner, opponent], 1)
    w2 = learner.learned_state()["weights"]
    assert not np.array_equal(w1, w2)  # kept learning from where it was
    fresh = make_agent("xcom_mf_fa", {}, budget, game.config)
    fresh.begin_game(0, np.random.SeedSequence(0, spawn_key=(1, 0)))
    w0 = fresh.learned_state()["weights"]
    assert ((w0 >= 0) & (w0 <= 1)).all()
    table = make_agent("xcom_mcts_td", {}, budget, game.config)
    table.begin_game(0, np.random.SeedSequence(3))
    assert table.learned_state()["weights"].shape == (TABLE_SIZE,)


# --- search ------------------------------------------------------------------
def test_backup_alternating_perspectives():
    tree = new_tree(4, 2)
    a = expand(tree, ROOT_INDEX, 0)
    b = expand(tree, a, 1)
    backup_alternating(tree, b, 10.0)  # +10 for the root player
    assert tree.node_value_sum[a] == 10.0     # chosen by the root player
    assert tree.node_value_sum[b] == -10.0    # chosen by the opponent
    assert tree.node_max_value[ROOT_INDEX] == 10.0 and tree.node_max_value[a] == -10.0


@pytest.mark.parametrize("agent", AGENTS)
def test_search_takes_the_winning_shot(agent):
    grid = grid_from_ascii("""
        H . . . . H
        . . . . . .
        # # # # . .
        . . . . . .
        . . . . . .
        A . . . . A
    """)
    state = state_from_grid(grid, 4)
    state.units[ALIENS, 1, 2] = 0  # alien 1 is already dead: one shot ends the round
    state.board[5 * 6 + 5] = 0
    # human 1 moves down the right column and shoots alien 0 at (5, 0); from the top row
    # the wall row covers it
    assert not legal_actions(state, HUMANS)[:41 * 3].reshape(41, 3)[0, 1]
    game = Xcom(XcomConfig(board="mini"))
    bot = make_agent(agent, {}, Budget(iterations=200), make_config("xcom", {"board": "mini"}))
    bot.begin_game(HUMANS, np.random.SeedSequence(5))
    action = bot.act(state)
    game.state = state
    game.step([action, 0])
    assert game.done and game.winner == HUMANS


def test_determinism_with_fixed_seeds():
    game = make_game("xcom", board="mini")
    budget = Budget(iterations=30)
    runs = []
    for _ in range(2):
        agents = [make_agent("xcom_convae_fa", {}, budget, game.config),
                  make_agent("xcom_mcts_td", {}, budget, game.config)]
        runs.append((play(game, agents, 4), agents[0].learned_state()["weights"].tolist()))
    assert runs[0] == runs[1]


# --- encoder -----------------------------------------------------------------
def _torch_encode(torch, model, boards):
    """PyTorch's encoder output in float64 (the same float32-stored weights, no float32
    rounding of the activations: the numba pass computes in float64)."""
    with torch.no_grad():
        return model.double().encode(torch.from_numpy(boards).unsqueeze(1)).numpy()


@pytest.mark.parametrize("n", [6, 18])
def test_numba_encoder_equals_pytorch(n):
    torch = pytest.importorskip("torch", reason="PyTorch is the optional 'train' extra")
    from agents.xcom.autoencoder import build_autoencoder, export_encoder

    torch.manual_seed(n)
    model = build_autoencoder(n)
    arrays = export_encoder(model, n)
    rng = np.random.default_rng(n)
    boards = rng.choice(np.array([-2.0, -1.0, 0.0, 1.0]), size=(64, n, n))
    out = np.zeros((64, arrays["fc_w"].shape[0]))
    encode_boards(boards, encoder_from_arrays(arrays), out)
    assert np.abs(out - _torch_encode(torch, model, boards)).max() < 1e-5
    # and the shipped encoder of this size, when present
    if BUILTIN_ENCODERS[n].is_file():
        shipped = load_encoder_arrays(BUILTIN_ENCODERS[n])
        model2 = build_autoencoder(n, (shipped["conv1_w"].shape[0], shipped["conv2_w"].shape[0]),
                                   shipped["fc_w"].shape[0])
        sd = {"conv1.weight": shipped["conv1_w"], "conv1.bias": shipped["conv1_b"],
              "conv2.weight": shipped["conv2_w"], "conv2.bias": shipped["conv2_b"],
              "fc.weight": shipped["fc_w"], "fc.bias": shipped["fc_b"]}
        model2.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in sd.items()}, strict=False)
        encode_boards(boards, encoder_from_arrays(shipped), out)
        assert np.abs(out - _torch_encode(torch, model2, boards)).max() < 1e-5
        # in float32 PyTorch rounds at ~1e-7 relative: equal to 1e-5 relative
        with torch.no_grad():
            single = model2.float().encode(torch.from_numpy(boards.astype(np.float32)).unsqueeze(1)).numpy()
        assert np.abs(out - single).max() <= 1e-5 * max(1.0, np.abs(single).max())


def test_shipped_encoders_have_provenance():
    for n, path in BUILTIN_ENCODERS.items():
        assert path.is_file(), f"no shipped encoder for {n}x{n}"
        assert check_encoder_arrays(load_encoder_arrays(path), n) == n
        assert path.with_suffix(".json").is_file()


def _spec(tmp_path, seat, board="mini"):
    return {
        "study": {"name": "x", "seed": 1, "results_dir": str(tmp_path)},
        "game": {"name": "xcom", "board": board},
        "budget": {"iterations": 10},
        "design": {"runs": 1, "rounds": 2},
        "lineup": [seat, {"agent": "xcom_mcts"}],
        "tracking": {"enabled": False},
    }


def test_bad_encoder_files_are_named_before_any_game(tmp_path):
    good = load_encoder_arrays(BUILTIN_ENCODERS[6])
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, **{**good, "fc_w": np.zeros((16, 7), dtype=np.float32)})
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.params\.encoder: .*fc_w: expected shape"):
        build_spec(_spec(tmp_path, {"agent": "xcom_convae_fa", "params": {"encoder": str(wrong)}}))
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.params\.encoder: .*cannot read"):
        build_spec(_spec(tmp_path, {"agent": "xcom_convae_fa", "params": {"encoder": str(corrupt)}}))
    # an 18x18 encoder on the 6x6 board, as a file and as a seed population
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.params\.encoder: .*trained for a 18x18 board"):
        build_spec(_spec(tmp_path, {"agent": "xcom_convae_fa",
                                    "params": {"encoder": str(BUILTIN_ENCODERS[18])}}))
    with pytest.raises(SpecError, match=r"^lineup\[0\]\.seed_population: .*trained for a 18x18 board"):
        build_spec(_spec(tmp_path, {"agent": "xcom_convae_fa",
                                    "seed_population": str(BUILTIN_ENCODERS[18])}))
    spec = build_spec(_spec(tmp_path, {"agent": "xcom_convae_fa",
                                       "seed_population": str(BUILTIN_ENCODERS[6])}))
    assert spec.lineup[0].seed_population == str(BUILTIN_ENCODERS[6])


@pytest.mark.parametrize("params, field", [
    ({"alpha": 0.0}, "alpha"), ({"alpha": 1.5}, "alpha"), ({"gamma": -0.1}, "gamma"),
    ({"gamma": 1.01}, "gamma"), ({"value_weight": -1}, "value_weight"),
])
def test_alpha_gamma_out_of_range(params, field):
    for agent in AGENTS[1:]:
        with pytest.raises(ValueError, match=rf"^params\.{field}: "):
            make_agent_config(agent, params)


@pytest.mark.parametrize("board_name, iterations", [("mini", 3000), ("large", 1500)])
def test_search_marks_exactly_the_illegal_commands_of_every_node_it_went_on_from(board_name,
                                                                                  iterations):
    """The descent marks a node's illegal commands when it first goes on from it (not at
    expansion): every node with an expanded child has ILLEGAL exactly where its state (the
    root's, replayed along the path) has no legal command, and only the legal commands are
    ever expanded."""
    from agents.search.tree import ILLEGAL
    from agents.xcom.mcts import SEARCH_STATS, XcomParams, dummy_encoder, xcom_search
    from agents.xcom._value import TARGET_NEXT_STATE, VALUE_NONE
    from games.rng import make_rng
    from games.xcom.kernels import M_TO_MOVE, apply_action, copy_state

    game = make_game("xcom", board=board_name)
    game.reset(0)
    root = game.state
    player = int(root.meta[M_TO_MOVE])
    tree = new_tree(iterations + 1, game.config.num_actions)
    params = XcomParams(iterations, 0.0, np.sqrt(2), 1e-6, VALUE_NONE, TARGET_NEXT_STATE, 0.0, 0.0)
    xcom_search(root, player, tree, copy_state(root), copy_state(root), params, np.zeros(1),
                dummy_encoder(), np.zeros(SEARCH_STATS, dtype=np.int64), make_rng(7))
    entered = 0
    for node in range(int(tree.num_nodes[0])):
        if not (tree.children[node] >= 0).any():
            continue
        entered += 1
        path, up = [], node
        while up != ROOT_INDEX:
            path.append(int(tree.action_from_parent[up]))
            up = int(tree.parents[up])
        state = copy_state(root)
        for a in reversed(path):
            apply_action(state, a)
        legal = legal_actions(state, int(state.meta[M_TO_MOVE]))
        assert np.array_equal(tree.children[node] == ILLEGAL, ~legal)
        assert legal[tree.children[node] >= 0].all()
    assert entered > 5  # nodes below the root were entered, not only the root
