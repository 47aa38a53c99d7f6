"""Probe: where a cold start's compile time goes, kernel by kernel.

    python jobs/bench/probes/pommerman_compile_profile.py [--agents mcts,rhea,osla,rule_based]
        [--ruleset canonical] [--cache-dir DIR] [--top 25]
    python -m jobs.cli bench pommerman --against main --rounds 1 \
        --script jobs/bench/probes/pommerman_compile_profile.py     # the same, both trees

Runs in a fresh numba cache (a new temporary ``ARENA_CACHE_DIR`` unless
``--cache-dir`` names one, which lets a second run show what the cache
serves), builds a game and the lineup, and times each agent's first decision
in seat order (``first_decision_s``: what a user waits for that agent,
including everything compiled for it). Every numba compile (a cache miss) is
recorded through numba's event API (``numba:compile``): ``kernels`` lists
each compiled dispatcher with its inclusive seconds (its own compile and the
callees compiled within it) and exclusive seconds (without them), sorted by
exclusive time; ``passes_s`` the compiler passes' exclusive seconds. All times
are this process's CPU seconds (compiling is single-threaded), so that the
figures hold on a loaded machine; ``wall_s`` is the wall time of the whole
run. ``cache`` counts the signatures served from the cache (hits) and compiled
(misses): with ``--cache-dir`` of a finished run, misses are 0 when the cache
serves everything. Run it from the tree to measure (its working directory is
put first on ``sys.path``). Prints one JSON object.
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.getcwd())  # the tree measured is the working directory (as the paired check runs it)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agents", default="mcts,rhea,osla,rule_based")
    p.add_argument("--ruleset", default="canonical")
    p.add_argument("--cache-dir", default=None,
                   help="ARENA_CACHE_DIR to use (default: a new empty temporary directory)")
    p.add_argument("--top", type=int, default=25, help="kernels listed (by exclusive time)")
    p.add_argument("--keep", action="store_true",
                   help="keep the new cache directory (for a second run with --cache-dir)")
    a = p.parse_args()
    if len(a.agents.split(",")) != 4:
        p.error(f"--agents: four agents, one per seat (e.g. osla,osla,osla,osla), got {a.agents!r}")
    cache_dir = a.cache_dir or tempfile.mkdtemp(prefix="arena-cold-")
    os.environ["ARENA_CACHE_DIR"] = cache_dir
    os.environ.pop("NUMBA_CACHE_DIR", None)
    os.environ.pop("ARENA_NUMBA_CACHE_AUTO", None)
    t_start = time.process_time()
    wall_start = time.perf_counter()

    from numba.core import event

    records = []  # [name, start, end, child seconds]
    stack = []

    class CompileTimer(event.Listener):
        def on_start(self, ev):
            stack.append([_name(ev.data["dispatcher"]), time.process_time(), 0.0, 0.0])

        def on_end(self, ev):
            rec = stack.pop()
            rec[2] = time.process_time()
            if stack:
                stack[-1][3] += rec[2] - rec[1]
            records.append(rec)

    def _name(dispatcher):
        fn = dispatcher.py_func
        return f"{fn.__module__}.{fn.__qualname__}"

    passes = {}  # pass name -> exclusive seconds (without the compiles nested in it)
    pass_stack = []

    class PassTimer(event.Listener):
        def on_start(self, ev):
            pass_stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            t0, child = pass_stack.pop()
            spent = time.process_time() - t0
            if pass_stack:
                pass_stack[-1][1] += spent
            name = ev.data["name"]
            passes[name] = passes.get(name, 0.0) + spent - child

    event.register("numba:compile", CompileTimer())
    event.register("numba:run_pass", PassTimer())

    import numpy as np

    from agents.api import Budget
    from agents.registry import make_agent
    from games.pommerman import Pommerman, PommermanConfig

    t_imported = time.process_time()
    config = PommermanConfig(ruleset=a.ruleset, max_steps=5)
    game = Pommerman(config)
    game.reset(np.random.SeedSequence(0))
    t_game = time.process_time()
    names = a.agents.split(",")
    agents = [make_agent(name, {}, Budget(iterations=50), config) for name in names]
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence([0, seat]))
    t_built = time.process_time()
    first = {}
    actions = []
    for seat, (name, agent) in enumerate(zip(names, agents)):
        t0 = time.process_time()
        actions.append(agent.act(game.observation(seat)))
        first[f"{seat}:{name}"] = round(time.process_time() - t0, 2)
    t0 = time.process_time()
    game.step(actions)
    step_s = time.process_time() - t0
    t_end = time.process_time()

    from numba.core.registry import CPUDispatcher  # noqa: F401  (dispatchers alive in this process)
    import gc

    hits = misses = 0
    for obj in gc.get_objects():
        if isinstance(obj, CPUDispatcher):
            hits += sum(obj._cache_hits.values())
            misses += sum(obj._cache_misses.values())
    kernels = {}
    for name, start, end, child in records:
        k = kernels.setdefault(name, [0.0, 0.0, 0])
        k[0] += end - start
        k[1] += end - start - child
        k[2] += 1
    ranked = sorted(kernels.items(), key=lambda kv: -kv[1][1])
    out = {
        "ruleset": a.ruleset, "agents": names, "cache_dir": cache_dir,
        "wall_s": round(time.perf_counter() - wall_start, 2), "total_s": round(t_end - t_start, 2),
        "import_s": round(t_imported - t_start, 2),
        "game_s": round(t_game - t_imported, 2), "agents_built_s": round(t_built - t_game, 2),
        "first_decision_s": first, "first_step_s": round(step_s, 2),
        "compile_s": round(sum(v[1] for v in kernels.values()), 2),
        "cache": {"hits": hits, "misses": misses},
        "passes_s": {k: round(v, 2) for k, v in sorted(passes.items(), key=lambda kv: -kv[1])[:8]},
        "kernels": [{"kernel": name, "inclusive_s": round(v[0], 2), "exclusive_s": round(v[1], 2),
                     "signatures": v[2]} for name, v in ranked[:a.top]],
    }
    print(json.dumps(out))  # one line: the paired check reads the last line that is a JSON object
    if a.cache_dir is None and not a.keep:
        import shutil

        shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
