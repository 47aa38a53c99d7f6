"""Probe: what a forward-model tick and a state copy of Pommerman handle, for the
layout decisions of issue 37 (where the flames live, how a state is copied).

    python jobs/bench/probes/pommerman_state_profile.py --ruleset java

Plays the random games of ``arena bench pommerman`` (uniform random actions from the
bench's 16 boards) and prints one JSON object: the game length, the live bombs,
flames and flame cells per tick (mean, 90th percentile, max), the bytes of each
array of the state layout, and the CPU nanoseconds of a tick, of a ``copy_state``
(fresh arrays) and of a ``copy_into`` (into a preallocated state) on a mid-game
state. Which code inside a tick the time goes to is not measurable from here (the
kernels are one inlined body): see the README's speed notes for the sampled profile.
"""
import argparse
import json
import time

import numba as nb
import numpy as np

from games.pommerman import PommermanConfig, generate
from games.pommerman.kernels import (
    FLAME_MASK, M_DONE, M_N_BOMBS, M_N_FLAMES, N_AGENTS, copy_into, copy_state, step,
)
from games.rng import make_rng, rng_integer


@nb.njit(cache=True)
def _popcount(x):
    n = 0
    while x:
        x &= x - np.uint64(1)
        n += 1
    return n


@nb.njit(cache=True)
def _census(boards, scratch, rng, games, flames, cells, bombs, keep, kept):
    """Random games; per tick histograms of flames, flame cells and bombs; a copy of the
    state at tick ``kept`` of the first game that reaches it (into ``keep``)."""
    actions = np.zeros(N_AGENTS, dtype=np.int64)
    ticks = 0
    have = False
    for g in range(games):
        copy_into(scratch, boards[g % len(boards)])
        t = 0
        while scratch.meta[M_DONE] == 0:
            for i in range(N_AGENTS):
                actions[i] = rng_integer(rng, 6)
            flames[min(scratch.meta[M_N_FLAMES], flames.shape[0] - 1)] += 1
            cells[_popcount(scratch.flames[FLAME_MASK]) + _popcount(scratch.flames[FLAME_MASK + 1])] += 1
            bombs[scratch.meta[M_N_BOMBS]] += 1
            if t == kept and not have:
                copy_into(keep, scratch)
                have = True
            step(scratch, actions)
            ticks += 1
            t += 1
    return ticks


@nb.njit(cache=True)
def _copies(src, dst, count, fresh):
    total = 0
    for _ in range(count):
        if fresh:
            s = copy_state(src)
            total += s.meta[0]
        else:
            copy_into(dst, src)
            total += dst.meta[0]
    return total


def _summary(hist):
    x = np.arange(hist.size)
    n = hist.sum()
    return {"mean": round(float((x * hist).sum() / n), 3),
            "p90": int(np.searchsorted(np.cumsum(hist), 0.9 * n)), "max": int(x[hist > 0].max())}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ruleset", default="java")
    p.add_argument("--games", type=int, default=4000)
    p.add_argument("--copies", type=int, default=400_000)
    a = p.parse_args()
    config = PommermanConfig(ruleset=a.ruleset)
    boards = nb.typed.List([generate(config, np.random.SeedSequence(0, spawn_key=(k,))) for k in range(16)])
    scratch = copy_state(boards[0])
    keep = copy_state(boards[0])
    flames, cells, bombs = np.zeros(4096, np.int64), np.zeros(122, np.int64), np.zeros(65, np.int64)
    _census(boards, scratch, make_rng(0), 1, flames.copy(), cells.copy(), bombs.copy(), keep, 0)
    t0 = time.process_time_ns()
    ticks = _census(boards, scratch, make_rng(0), a.games, flames, cells, bombs, keep, 12)
    tick_ns = (time.process_time_ns() - t0) / ticks
    out = {"ruleset": a.ruleset, "games": a.games, "mean_game_length": ticks / a.games,
           "flames_per_tick": _summary(flames), "flame_cells_per_tick": _summary(cells),
           "bombs_per_tick": _summary(bombs),
           "state_bytes": {name: int(arr.nbytes) for name, arr in zip(keep._fields, keep)},
           "ns_per_tick_with_census": tick_ns}
    for fresh, name in ((True, "ns_per_copy_state"), (False, "ns_per_copy_into")):
        _copies(keep, scratch, 10, fresh)
        t0 = time.process_time_ns()
        _copies(keep, scratch, a.copies, fresh)
        out[name] = (time.process_time_ns() - t0) / a.copies
    print(json.dumps(out))


if __name__ == "__main__":
    main()
