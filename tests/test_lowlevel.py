"""The low-level helpers hot kernels rely on (games/_lowlevel.py): a borrowed view of a
kernel's own array stays valid up to ``keep_alive``, and the Pommerman searches' stack
copies of their per-decision scratch hold what ``prepare_search`` gave them."""
import numba as nb
import numpy as np

from games._lowlevel import borrow, keep_alive


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


def test_search_scratch_on_stack_copies_hidden_and_joint():
    from agents.pommerman._common import search_scratch_on_stack

    @nb.njit
    def use(hidden, joint):
        h, j = search_scratch_on_stack(hidden, joint)
        joint[0] = 99  # the copies do not alias the heap arrays
        out = np.zeros(8, dtype=np.int64)
        for i in range(4):
            out[i] = h[i]
            out[4 + i] = j[i]
        return out

    hidden = np.array([False, True, False, True])
    joint = np.array([5, 4, 3, 2], dtype=np.int64)
    assert use(hidden, joint).tolist() == [0, 1, 0, 1, 5, 4, 3, 2]
