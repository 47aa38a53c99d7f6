"""Pommerman engine benchmark: forward-model ticks and state copies per second, on one
core (the searches are timed in :mod:`jobs.bench.pommerman.search`, the start-up of a
process that plays in :mod:`jobs.bench.pommerman.cold_start`).

Run through the CLI: ``arena bench pommerman --json``.
"""
from __future__ import annotations

import time

import numba as nb
import numpy as np

from games.pommerman import PommermanConfig, generate
from games.pommerman.kernels import M_DONE, N_AGENTS, copy_into, copy_state, step
from games.rng import make_rng, rng_integer


@nb.njit(cache=True)
def random_playouts(boards, scratch, rng, games):
    """Play ``games`` games with uniform random actions from the fresh ``boards``.

    Args:
        boards: a typed list of PommermanState, fresh boards cycled through.
        scratch: PommermanState overwritten for each game.
        rng: uint64[2] generator state.
        games: int, number of games to play.
    Returns:
        int64: forward-model ticks executed.
    """
    ticks = 0
    actions = np.zeros(N_AGENTS, dtype=np.int64)
    for g in range(games):
        copy_into(scratch, boards[g % len(boards)])
        while scratch.meta[M_DONE] == 0:
            for i in range(N_AGENTS):
                actions[i] = rng_integer(rng, 6)
            step(scratch, actions)
            ticks += 1
    return ticks


@nb.njit(cache=True)
def repeated_copies(src, dst, count):
    """Copy ``src`` into ``dst`` ``count`` times (fresh arrays each time, like ``copy_state``)."""
    total = 0
    for _ in range(count):
        s = copy_state(src)
        total += s.meta[0]
    copy_into(dst, src)
    return total


#: Target length of one call of the random-play kernel in :func:`bench_engine`.
CALL_SECONDS = 0.02


def games_per_call(play, seconds=CALL_SECONDS, start=8, cap=1 << 16, clock=time.perf_counter):
    """Games per timed call of ``play(games)``: ``start`` doubled until one call takes at
    least ``seconds`` by ``clock`` (or reaches ``cap``), so that the 2-3 us of calling a
    kernel from Python (unboxing its arguments) stays out of the ticks' time. At 8 games
    (about 200 ticks) per call it was 10-15% of it; JBench's loop has no such cost."""
    games = start
    while games < cap:
        t0 = clock()
        play(games)
        if clock() - t0 >= seconds:
            break
        games *= 2
    return games


def bench_engine(ruleset: str = "canonical", mode: str = "ffa", seconds: float = 2.0, seed: int = 0) -> dict:
    """Ticks per second of random games and copies per second, on one core."""
    config = PommermanConfig(mode=mode, ruleset=ruleset)
    boards = nb.typed.List([generate(config, np.random.SeedSequence(seed, spawn_key=(k,))) for k in range(16)])
    scratch = copy_state(boards[0])
    rng = make_rng(seed)
    random_playouts(boards, scratch, rng, 1)  # compile / load
    batch = games_per_call(lambda games: random_playouts(boards, scratch, rng, games))
    games, ticks, elapsed = 0, 0, 0.0
    while elapsed < seconds:
        t0 = time.perf_counter()
        ticks += random_playouts(boards, scratch, rng, batch)
        elapsed += time.perf_counter() - t0
        games += batch
    repeated_copies(boards[0], scratch, 10)
    n = 200_000
    t0 = time.perf_counter()
    repeated_copies(boards[0], scratch, n)
    copy_s = time.perf_counter() - t0
    return {"ticks_per_s": ticks / elapsed, "random_games": games, "games_per_call": batch,
            "mean_game_length": ticks / games, "copies_per_s": n / copy_s}
