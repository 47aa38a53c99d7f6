"""The low-level helpers hot kernels rely on (games/lowlevel.py): a borrowed view of a
kernel's own array stays valid up to ``keep_alive``, and the Pommerman searches' in-frame
set-up gives what ``prepare_search`` gives; an array rebuilt from ``data_pointer`` is the
array itself."""
import numba as nb
import numpy as np

from games.lowlevel import borrow, data_pointer, keep_alive


@nb.njit(cache=True)
def _fill_through_borrowed_view(n, churn):
    owner = np.zeros(n, dtype=np.int64)
    view = borrow(owner)
    total = 0
    for k in range(churn):
        other = np.full(n, -1, dtype=np.int64)  # heap traffic that would reuse a freed owner
        view[k % n] += k
        total += other[0]
    s = 0
    for i in range(n):
        s += view[i]
    keep_alive(owner)
    return s, total


def test_borrowed_view_of_an_owned_array_stays_valid_up_to_keep_alive():
    n, churn = 64, 10_000
    s, total = _fill_through_borrowed_view(n, churn)
    assert s == sum(range(churn))
    assert total == -churn


def test_prepare_search_in_frame_matches_prepare_search():
    """The in-frame set-up gives prepare_search's model, hidden flags and wood; the
    scratch does not alias the heap copy, and the borrowed rng is the caller's rng."""
    from agents.pommerman._common import prepare_search, prepare_search_in_frame
    from games.pommerman import PommermanConfig, generate
    from games.pommerman.kernels import copy_state, observe
    from games.rng import make_rng, rng_next

    @nb.njit
    def in_frame(root, observation, rng):
        hidden, joint, n_hidden, root_wood, rng_view = prepare_search_in_frame(root, observation, rng, 0, 0)
        joint[0] = 99
        rng_next(rng_view)
        out = np.zeros(10, dtype=np.int64)
        for i in range(4):
            out[i] = hidden[i]
            out[4 + i] = joint[i]
        out[8] = n_hidden
        out[9] = root_wood
        return out

    state = generate(PommermanConfig(ruleset="java", view_range=2), np.random.SeedSequence(3))
    obs = observe(state, 0, 2)
    root_a, root_b = copy_state(obs), copy_state(obs)
    hidden, joint, n_hidden, root_wood = prepare_search(root_a, obs)
    rng = make_rng(5)
    reference = make_rng(5)
    rng_next(reference)
    got = in_frame(root_b, obs, rng)
    assert got[:4].tolist() == hidden.astype(int).tolist() and got[4:8].tolist() == [99, 0, 0, 0]
    assert got[8] == n_hidden and got[9] == root_wood
    assert np.array_equal(root_a.board, root_b.board) and np.array_equal(root_a.agents, root_b.agents)
    assert joint.tolist() == [0, 0, 0, 0]  # the heap scratch is untouched
    assert rng.tolist() == reference.tolist()  # advanced through the borrowed view


@nb.njit(cache=True)
def _write_through_data_pointer(values, agents):
    flat = nb.carray(data_pointer(values), values.shape[0])
    for i in range(flat.shape[0]):
        flat[i] = 10 * i
    grid = nb.carray(data_pointer(agents), (4, 9))
    grid[3, 8] = -7
    return flat[flat.shape[0] - 1]


def test_data_pointer_rebuilds_the_same_memory():
    """An array rebuilt from its data pointer is the array: writes land in the caller's."""
    values = np.zeros(5, dtype=np.int64)
    agents = np.zeros((4, 9), dtype=np.int16)
    assert _write_through_data_pointer(values, agents) == 40
    assert values.tolist() == [0, 10, 20, 30, 40]
    assert agents[3, 8] == -7 and np.count_nonzero(agents) == 1


def test_data_pointer_refuses_a_non_contiguous_array():
    """Only C-contiguous arrays have a pointer a fixed-shape carray can read: others fail to type."""
    import pytest
    from numba.core.errors import TypingError

    @nb.njit
    def pointer_of(a):
        return nb.carray(data_pointer(a), 3)[0]

    assert pointer_of(np.arange(3.0)) == 0.0
    with pytest.raises(TypingError):
        pointer_of(np.arange(6.0)[::2])


def test_java_step_takes_any_action_array():
    """step_java copies the actions into its own int64 scratch: an int32 or strided action
    array gives the same tick as an int64 one."""
    from games.pommerman import PommermanConfig, generate
    from games.pommerman.kernels import copy_state, step

    state = generate(PommermanConfig(ruleset="java"), np.random.SeedSequence(4))
    joint = np.array([1, 2, 5, 4], dtype=np.int64)
    reference = copy_state(state)
    step(reference, joint)
    for actions in (joint.astype(np.int32), np.repeat(joint, 2)[::2]):
        other = copy_state(state)
        step(other, actions)
        for a, b in zip(other, reference):
            assert np.array_equal(a, b)


def test_java_step_refuses_a_state_of_another_shape():
    """The java rules read the state through fixed-shape views: a state whose arrays are not
    the layout's (here a shorter flame list) is refused, not read out of bounds."""
    import pytest
    from games.pommerman import PommermanConfig, generate
    from games.pommerman.kernels import PommermanState, step

    state = generate(PommermanConfig(ruleset="java"), np.random.SeedSequence(4))
    short = PommermanState(state.board, state.items, state.agents, state.bombs,
                           np.ascontiguousarray(state.flames[:16]), state.meta)
    with pytest.raises(ValueError, match="layout's shapes"):
        step(short, np.zeros(4, dtype=np.int64))


def test_search_kernels_refuse_a_scratch_state_of_another_shape():
    """The searches step their scratch states without the per-tick shape check (the kernel
    checks them once per decision): a scratch state whose arrays are not the layout's is
    refused before any tick, for each search and ruleset."""
    import pytest
    from agents.api import Budget
    from agents.registry import make_agent
    from games.pommerman import Pommerman, PommermanConfig
    from games.pommerman.kernels import PommermanState

    for ruleset in ("canonical", "java"):
        config = PommermanConfig(ruleset=ruleset)
        game = Pommerman(config)
        game.reset(np.random.SeedSequence(4))
        for name in ("mcts", "osla", "rhea", "femcts"):
            agent = make_agent(name, {}, Budget(iterations=20), config)
            agent.begin_game(0, np.random.SeedSequence(1))
            s = agent._scratch
            agent._scratch = PommermanState(s.board, s.items, s.agents, s.bombs,
                                            np.ascontiguousarray(s.flames[:16]), s.meta)
            with pytest.raises(ValueError, match="layout's shapes"):
                agent.act(game.observation(0))
