"""``arena bench pommerman``: the engine (:mod:`.engine`: forward-model ticks and state
copies per second), the searches (:mod:`.search`: MCTS, RHEA and FEMCTS iterations per
40 ms decision, decision times, tree depths, FEMCTS's variants on the same positions)
and, without ``--quick``, the cold start (:mod:`.cold_start`: an ``arena play`` from an
empty numba cache, then warm), for one ruleset.
"""
from __future__ import annotations


def bench(options) -> dict:
    """The figures of :mod:`.engine`, :mod:`.search` and (without ``options.quick``)
    :mod:`.cold_start` for ``options.ruleset``, in one dict (``ruleset`` first).
    ``options``: a :class:`jobs.bench.BenchOptions` (``quick``, ``seconds``, ``ruleset``)."""
    from .engine import bench_engine
    from .search import bench_agents

    result = {"ruleset": options.ruleset}
    result.update(bench_engine(ruleset=options.ruleset, seconds=options.seconds))
    result.update(bench_agents(games=1 if options.quick else 3,
                               decisions_per_game=15 if options.quick else 40,
                               ruleset=options.ruleset))
    if not options.quick:
        from .cold_start import bench_cold_start

        result.update(bench_cold_start(options.ruleset))
    return result
