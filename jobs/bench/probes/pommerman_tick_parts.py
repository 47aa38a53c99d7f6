"""Probe: what a tick of random play costs beyond a tick where nothing happens.

Plays the games of ``arena bench pommerman``'s random play (the same fresh boards, games cut
at ``--max-ticks``) three ways, each for the same number of games, and prints the CPU
nanoseconds per tick of each as one JSON object:

- ``random``: every agent draws a uniform action (the benchmark's ticks);
- ``stop``: the same draws, but every agent stops (the rules run with no move, bomb or flame);
- ``no_step``: the same draws and no step at all (the loop, the draws and the board copies).

``random - stop`` is what the rules' decisions on random data cost (mostly mispredicted
branches: see the README's *Branches on random data*); ``stop - no_step`` the rules' fixed
cost per tick.

    python jobs/bench/probes/pommerman_tick_parts.py --ruleset java
    python -m jobs.cli bench pommerman --against main --script jobs/bench/probes/pommerman_tick_parts.py -- --ruleset java
"""
import argparse
import json
import time

import numba as nb
import numpy as np

from games.pommerman import PommermanConfig, generate
from games.pommerman.kernels import M_DONE, M_STEP, N_AGENTS, copy_into, copy_state, step
from games.rng import make_rng, rng_integer

RANDOM, STOP, NO_STEP = 0, 1, 2


@nb.njit(cache=True)
def play(boards, scratch, rng, games, max_ticks, how):
    """Play ``games`` games from ``boards`` (cycled), each to its end or ``max_ticks``;
    ``how``: RANDOM, STOP or NO_STEP (see the module). Returns the ticks played (int)."""
    ticks = 0
    actions = np.zeros(N_AGENTS, dtype=np.int64)
    for g in range(games):
        copy_into(scratch, boards[g % len(boards)])
        while scratch.meta[M_STEP] < max_ticks and scratch.meta[M_DONE] == 0:
            for i in range(N_AGENTS):
                a = rng_integer(rng, 6)
                actions[i] = a if how == RANDOM else 0
            if how == NO_STEP:
                scratch.meta[M_STEP] += 1
            else:
                step(scratch, actions)
            ticks += 1
    return ticks


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ruleset", default="canonical", choices=("canonical", "java"))
    p.add_argument("--mode", default="ffa", choices=("ffa", "team"))
    p.add_argument("--games", type=int, default=40_000)
    p.add_argument("--max-ticks", type=int, default=25,
                   help="cut every game here (random games last about 25 ticks)")
    args = p.parse_args()
    config = PommermanConfig(mode=args.mode, ruleset=args.ruleset)
    boards = nb.typed.List([generate(config, np.random.SeedSequence(0, spawn_key=(k,)))
                            for k in range(16)])
    scratch = copy_state(boards[0])
    out = {}
    for how, name in ((RANDOM, "random"), (STOP, "stop"), (NO_STEP, "no_step")):
        rng = make_rng(0)
        play(boards, scratch, rng, 1, args.max_ticks, how)  # compile / load
        t0 = time.process_time()
        ticks = play(boards, scratch, rng, args.games, args.max_ticks, how)
        cpu = time.process_time() - t0
        out[f"{name}_ns_per_tick"] = cpu / ticks * 1e9
        out[f"{name}_ticks"] = ticks
    print(json.dumps(out))


if __name__ == "__main__":
    main()
