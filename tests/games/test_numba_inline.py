"""The repaired numba IR inliner (games/numba_inline.py): in place, same kernels, less work."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import games  # noqa: F401  (installs the repair)
from games import numba_inline

_ROOT = Path(__file__).resolve().parents[2]

# A kernel with nested inlinables called from several sites, a loop, arrays, a tuple
# return and a global constant: what the games' kernels do, in small.
_KERNELS = textwrap.dedent('''
    import numba as nb
    import numpy as np

    SCALE = 3

    @nb.njit(inline="always")
    def clamp(x, lo, hi):
        return lo if x < lo else (hi if x > hi else x)

    @nb.njit(inline="always")
    def cell_value(board, i):
        return clamp(board[i] * SCALE, 0, 20) + clamp(i - 2, 0, 4)

    @nb.njit(inline="always")
    def pair(board, i):
        a = cell_value(board, i)
        b = cell_value(board, (i + 1) % board.shape[0])
        return a, b

    @nb.njit
    def kernel(board):
        total = 0
        best = -1
        for i in range(board.shape[0]):
            a, b = pair(board, i)
            total += a - b + cell_value(board, i)
            if a > best:
                best = a
        return total, best
''')

_RUN = textwrap.dedent('''
    import importlib.util, json, sys
    import numpy as np
    import games
    from games import numba_inline
    from numba.core.inline_closurecall import InlineWorker
    calls = []
    run = InlineWorker.run_untyped_passes
    def counted(self, func, enable_ssa=False):
        calls.append(func.__name__)
        return run(self, func, enable_ssa)
    InlineWorker.run_untyped_passes = counted
    spec = importlib.util.spec_from_file_location("nested_kernels", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(7)
    out = [module.kernel(rng.integers(-5, 9, size=n)) for n in (3, 8, 31)]
    print(json.dumps({"installed": numba_inline.installed(), "results": [list(map(int, r)) for r in out],
                      "front_ends": calls}))
''')


def _compile_and_run(tmp_path, inliner: str) -> dict:
    kernels = tmp_path / "nested_kernels.py"
    kernels.write_text(_KERNELS)
    env = dict(os.environ, ARENA_NUMBA_INLINER=inliner,
               PYTHONPATH=os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _RUN, str(kernels)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_repair_is_in_place_for_the_numba_we_allow():
    assert numba_inline.installed()


def test_repaired_inliner_compiles_the_same_kernel_with_one_front_end_per_callee(tmp_path):
    stock = _compile_and_run(tmp_path, "stock")
    repaired = _compile_and_run(tmp_path, "repaired")
    assert not stock["installed"] and repaired["installed"]
    assert repaired["results"] == stock["results"]
    # stock numba re-runs the front end at every transitive call site of an inlinable
    assert len(stock["front_ends"]) > len(set(stock["front_ends"]))
    # the repaired one once per callee (and per compiler flags: at most twice here)
    counts = {name: repaired["front_ends"].count(name) for name in set(repaired["front_ends"])}
    assert set(counts) == {"clamp", "cell_value", "pair"}
    assert all(n <= 2 for n in counts.values()), counts
    assert len(repaired["front_ends"]) < len(stock["front_ends"])
