"""Probe: the parallel warm-up's groups and the CPU seconds each takes, from an empty cache.

    python jobs/bench/probes/warm_groups.py --agents femcts,mcts,rhea,osla --ruleset java
        [--no-share] [--no-peers] [--order "0;3;1;2"] [--workers 2] [--trace] [--min-seconds 0.3]

Builds the lineup as ``arena play`` does and runs :func:`cluster.run.warm.warm_up_parallel`
in a new empty ``ARENA_CACHE_DIR`` (removed afterwards). The warm-up's wall time on an
idle machine is about its costliest group's CPU time plus start-up, so ``critical_cpu_s``
(the largest ``group_cpu_s``) is the figure that holds on a loaded machine. ``groups`` is
what each group took from the queue (``warm.warm_queue``). ``--no-share`` has no group compile
the game's forward model first (each steps the game; they reach it in any order), ``--no-peers``
keeps every group from loading the kernels another group compiles (before
``warm._load_from_peers``), ``--order`` forces the queue (lineup indices, items separated
by ``;``, an item's entries by ``,``), in the same code, for a paired comparison. Prints JSON;
``--trace`` then prints each group's compile timeline (the kernels it compiled, nested by who
typed whom, with their wall-time start and end in the group's process; those shorter than
``--min-seconds`` left out): where a group waited, and what two groups both compiled.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.getcwd())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agents", default="mcts,rhea,osla,rule_based")
    p.add_argument("--ruleset", default="canonical")
    p.add_argument("--workers", type=int, default=None, help="groups (default: the cores)")
    p.add_argument("--no-share", action="store_true",
                   help="no group compiles the forward model first: the groups reach it in any order")
    p.add_argument("--no-peers", action="store_true",
                   help="no group loads a kernel another group compiled (the scheme before)")
    p.add_argument("--order", default=None, help='force the queue, e.g. "0;3;1;2"')
    p.add_argument("--trace", action="store_true", help="print each group's compile timeline")
    p.add_argument("--min-seconds", type=float, default=0.3, help="shortest compile --trace shows")
    a = p.parse_args()
    cache = tempfile.mkdtemp(prefix="arena-warm-")
    os.environ["ARENA_CACHE_DIR"] = cache
    os.environ.pop("NUMBA_CACHE_DIR", None)
    os.environ.pop("ARENA_NUMBA_CACHE_AUTO", None)
    try:
        from cluster.run import warm
        from cluster.spec.build import build_spec

        if a.order:
            forced = [[int(i) for i in item.split(",")] for item in a.order.split(";")]
            warm.warm_queue = lambda *args, **kwargs: forced
        spec = build_spec({
            "study": {"name": "warm-probe", "seed": 0},
            "game": {"name": "pommerman", "ruleset": a.ruleset, "max_steps": 5},
            "budget": {"iterations": 50},
            "design": {"seeds": 1, "games_per_seed": 1, "rotate_seats": False},
            "lineup": [{"agent": name} for name in a.agents.split(",")],
            "tracking": {"enabled": False},
        }, check_files=False)
        trace_dir = os.path.join(cache, "trace") if a.trace else None
        if trace_dir:
            os.makedirs(trace_dir)
        result = warm.warm_up_parallel(spec, workers=a.workers, share_forward_model=not a.no_share,
                                       share_kernels=not a.no_peers, trace_dir=trace_dir)
        labels = [[spec.lineup[i].label for i in group] for group in result["groups"]]
        cpu = [c for c in result["group_cpu_s"] if c is not None]
        print(json.dumps({"agents": a.agents, "ruleset": a.ruleset, "share": not a.no_share,
                          "peers": not a.no_peers, "from_peers": result["from_peers"],
                          "groups": labels, "group_cpu_s": result["group_cpu_s"],
                          "critical_cpu_s": max(cpu) if cpu else None,
                          "forward_model": result["forward_model"], "wall_s": round(result["seconds"], 2),
                          "failed": result["failed"]}))
        for g in range(len(result["groups"])) if trace_dir else ():
            path = os.path.join(trace_dir, f"group{g}.json")
            if not os.path.exists(path):
                print(f"group {g}: no trace (the group failed)")
                continue
            print(f"group {g}: took {labels[g]}")
            for c in sorted(json.load(open(path)), key=lambda c: c["start_s"]):
                if c["end_s"] - c["start_s"] >= a.min_seconds:
                    print(f"  {c['start_s']:7.2f} {c['end_s']:7.2f} {c['end_s'] - c['start_s']:6.2f} "
                          f"{'  ' * c['depth']}{c['kernel']}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
