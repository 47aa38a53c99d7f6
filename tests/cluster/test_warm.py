"""The cold-start warm-up: private numba caches merged into the shared one, and the
parallel warm-up of a lineup (cluster/warm.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import PLUGINS, TESTS_DIR
from cluster.spec import build_spec
from cluster.run.warm import warm_queue, warm_units, warm_up_parallel
from games.numba_cache import merge_cache, seed_private_cache

KERNEL = textwrap.dedent("""
    import numba as nb

    @nb.njit(cache=True)
    def plus_one(x):
        return x + 1
""")

CALL = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tiny_kernel import plus_one
    values = [plus_one(v) for v in json.loads(sys.argv[2])]
    stats = plus_one.stats
    print(json.dumps({"values": values, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values())}))
""")


def _call(module_dir, cache_dir, values) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    run = subprocess.run([sys.executable, "-c", CALL, str(module_dir), json.dumps(values)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_merged_private_caches_serve_every_signature(tmp_path, monkeypatch):
    """Two processes compile different signatures of one kernel into private caches
    (into one cache at once, numba would give both the same data file); merged, a third
    process loads both signatures without compiling, and so does one whose private cache
    was seeded from the shared one."""
    module_dir = tmp_path / "src"
    module_dir.mkdir()
    (module_dir / "tiny_kernel.py").write_text(KERNEL)
    first = _call(module_dir, tmp_path / "private_int", [1])
    second = _call(module_dir, tmp_path / "private_float", [1.5])
    assert first["misses"] == 1 and second["misses"] == 1
    common = tmp_path / "node_cache"
    assert merge_cache(tmp_path / "private_int", common) == 1
    assert merge_cache(tmp_path / "private_float", common) == 1
    assert merge_cache(tmp_path / "private_float", common) == 0, "an entry already there is kept"
    served = _call(module_dir, common, [1, 1.5])
    assert served == {"values": [2, 2.5], "hits": 2, "misses": 0}
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(common))  # the user's own cache directory
    monkeypatch.delenv("ARENA_NUMBA_CACHE_AUTO", raising=False)
    assert seed_private_cache(tmp_path / "seeded") == 3  # the index and two data files
    assert _call(module_dir, tmp_path / "seeded", [1.5, 1]) == {"values": [2.5, 2], "hits": 2, "misses": 0}


PEER_CALL = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from cluster.run.warm import _load_from_peers
    linked = _load_from_peers(json.loads(sys.argv[3]), sys.argv[4] or None, timeout=60)
    from tiny_kernel import plus_one
    values = [plus_one(v) for v in json.loads(sys.argv[2])]
    stats = plus_one.stats
    print(json.dumps({"values": values, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "linked": linked["kernels"],
                      "waited_s": linked["waited_s"]}))
""")


def _start_with_peers(module_dir, cache_dir, values, peers, claims=None) -> subprocess.Popen:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    return subprocess.Popen([sys.executable, "-c", PEER_CALL, str(module_dir), json.dumps(values),
                             json.dumps([str(p) for p in peers]), str(claims or "")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    result = json.loads(out.strip().splitlines()[-1])
    result["waited"] = result.pop("waited_s") > 0.5  # the subprocess starts in about a second
    return result


def _call_with_peers(module_dir, cache_dir, values, peers, claims=None) -> dict:
    return _result(_start_with_peers(module_dir, cache_dir, values, peers, claims))


def test_a_warm_up_group_loads_what_another_group_compiled(tmp_path):
    """A kernel another group compiled already (a peer's private cache) is linked in and
    loaded, not compiled again; a signature the peer lacks still compiles here, and a
    peer's index whose data file is not written yet is left alone."""
    module_dir = tmp_path / "src"
    module_dir.mkdir()
    (module_dir / "tiny_kernel.py").write_text(KERNEL)
    peer = tmp_path / "group0"
    assert _call(module_dir, peer, [1])["misses"] == 1
    nobody = tmp_path / "group-empty"
    loaded = _call_with_peers(module_dir, tmp_path / "group1", [1, 1.5], [nobody, peer])
    assert loaded == {"values": [2, 2.5], "hits": 1, "misses": 1, "linked": 1, "waited": False}
    for data in peer.rglob("*.nbc"):  # the peer's index now points at a data file not there yet
        data.unlink()
    alone = _call_with_peers(module_dir, tmp_path / "group2", [1], [peer])
    assert alone == {"values": [2], "hits": 0, "misses": 1, "linked": 0, "waited": False}
    merged = tmp_path / "node_cache"
    assert merge_cache(tmp_path / "group1", merged) == 2, "both signatures reach the shared cache"
    assert _call(module_dir, merged, [1, 1.5]) == {"values": [2, 2.5], "hits": 2, "misses": 0}


def test_a_warm_up_group_waits_for_a_kernel_a_peer_is_compiling(tmp_path):
    """A kernel a peer has claimed (it is compiling it) is waited for and loaded from the
    peer once the claim goes; a claim whose process is gone is not waited for."""
    import shutil
    import time

    module_dir = tmp_path / "src"
    module_dir.mkdir()
    (module_dir / "tiny_kernel.py").write_text(KERNEL)
    compiled = tmp_path / "compiled"
    started = time.monotonic()
    assert _call(module_dir, compiled, [1])["misses"] == 1
    # a subprocess's start-up and compile on this machine now: on a loaded machine the waiting
    # process may need longer than a fixed pause to reach the claim
    pause = max(3.0, 2.0 * (time.monotonic() - started))
    (index,) = compiled.rglob("*.nbi")
    claims = tmp_path / "claims"
    claims.mkdir()
    claim = claims / (index.relative_to(compiled).as_posix().replace("/", "__") + ".claim")
    claim.write_text(str(os.getpid()))  # a live process "compiles" it
    peer = tmp_path / "group0"
    waiting = _start_with_peers(module_dir, tmp_path / "group1", [1], [peer], claims)
    time.sleep(pause)
    assert waiting.poll() is None, "it waits while the claim stands"
    shutil.copytree(compiled, peer)  # the peer's compile ends: its cache has the kernel,
    claim.unlink()                   # then its claim goes
    assert _result(waiting) == {"values": [2], "hits": 1, "misses": 0, "linked": 1, "waited": True}
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    claim.write_text(gone.stdout.strip())  # claimed by a process that died
    alone = _call_with_peers(module_dir, tmp_path / "group2", [1], [tmp_path / "group-empty"], claims)
    assert alone == {"values": [2], "hits": 0, "misses": 1, "linked": 0, "waited": False}


def _spec(tmp_path, lineup):
    return build_spec({
        "study": {"name": "warm", "seed": 7, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "count", "max_steps": 4, "num_players": len(lineup)},
        "budget": {"iterations": 3},
        "design": {"seeds": 1, "games_per_seed": 1},
        "lineup": lineup,
        "tracking": {"enabled": False},
    })


def test_warm_units_one_per_distinct_entry(tmp_path):
    spec = _spec(tmp_path, [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"},
                            {"agent": "fake", "label": "C", "params": {"skill": 0.5}}])
    assert warm_units(spec) == [0, 2]


def test_warm_queue_one_item_per_agent_model_free_first_then_costliest():
    assert warm_queue([0, 1, 2, 3]) == [[0], [1], [2], [3]], "equal costs: the lineup order"
    assert warm_queue([]) == []
    names = {0: "femcts", 1: "mcts", 2: "rhea", 3: "osla"}
    costs = {"femcts": 16.0, "mcts": 11.0, "rhea": 8.0, "osla": 5.0, "rule_based": 3.0}
    assert warm_queue([3, 2, 1, 0], names, costs) == [[0], [1], [2], [3]]
    # two entries of one agent (other parameters) are one item: their kernels compile once
    names = {0: "femcts", 1: "mcts", 2: "femcts", 3: "rhea"}
    assert warm_queue([0, 1, 2, 3], names, costs) == [[0, 2], [1], [3]]
    # an agent that never calls the forward model goes first, costs aside: a group compiles
    # it while the first group compiles the forward model
    names = {0: "mcts", 1: "rhea", 2: "osla", 3: "rule_based"}
    assert warm_queue([0, 1, 2, 3], names, costs, {"rule_based"}) == [[3], [0], [1], [2]]


def test_only_the_search_agents_use_the_forward_model():
    from agents.registry import agent_class

    uses = {name: agent_class(name).uses_forward_model
            for name in ("femcts", "mcts", "rhea", "osla", "rule_based", "simple", "random")}
    assert uses == {"femcts": True, "mcts": True, "rhea": True, "osla": True,
                    "rule_based": False, "simple": False, "random": False}


def test_the_pommerman_agents_declare_their_compile_cost():
    from agents.api import Agent
    from agents.registry import agent_class

    assert Agent.compile_seconds == 1.0
    costs = {name: agent_class(name).compile_seconds for name in ("femcts", "mcts", "rhea", "osla", "rule_based")}
    assert costs["femcts"] > costs["mcts"] >= costs["rhea"] > costs["osla"] > 0
    names = {0: "mcts", 1: "rhea", 2: "osla", 3: "rule_based"}
    free = {name for name in names.values() if not agent_class(name).uses_forward_model}
    assert warm_queue([0, 1, 2, 3], names, costs, free) == [[3], [0], [1], [2]]


def test_warm_up_runs_once_per_lineup_and_reports_failures(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS_DIR, os.environ.get("PYTHONPATH", "")]))
    good = _spec(tmp_path, [{"agent": "fake", "label": "A"}, {"agent": "fake", "label": "B"}])
    first = warm_up_parallel(good, PLUGINS)
    assert (first["units"], first["skipped"], first["failed"]) == (1, False, [])
    assert first["groups"] == [[0]] and len(first["group_cpu_s"]) == 1 and first["group_cpu_s"][0] > 0
    assert warm_up_parallel(good, PLUGINS)["skipped"], "the same lineup and sources: nothing to do"
    boom = {"agent": "fake", "label": "Boom", "params": {"fail_prob": 1.0, "fail_step": 0}}
    failing = _spec(tmp_path, [{"agent": "fake", "label": "A"}, boom])
    result = warm_up_parallel(failing, PLUGINS)
    assert result["failed"] == ["Boom"]
    failing_first = _spec(tmp_path, [boom, {"agent": "fake", "label": "A"}])
    one_process = warm_up_parallel(failing_first, PLUGINS, workers=1)
    assert (one_process["units"], one_process["processes"]) == (2, 1)
    assert one_process["failed"] == ["Boom"], "the entry after a failing one in its group is still warmed"
    assert not warm_up_parallel(failing, PLUGINS)["skipped"], "a failed warm-up is tried again"


FORWARD_MODEL_PLUGIN = textwrap.dedent('''
    """A game whose forward model is a numba kernel and an agent whose search calls it."""
    import numba as nb
    import numpy as np

    from agents.api import Agent
    from agents.registry import register as register_agent
    from conftest import CountConfig, CountGame
    from games.registry import register as register_game


    @nb.njit(cache=True)
    def tick(points, gains):
        for p in range(points.shape[0]):
            points[p] += gains[p] % 3


    @nb.njit(cache=True)
    def best_action(points, seat):
        best, choice = -1, 0
        for a in range(3):
            trial = points.copy()
            gains = np.zeros(points.shape[0], dtype=np.int64)
            gains[seat] = a
            tick(trial, gains)
            if trial[seat] > best:
                best, choice = trial[seat], a
        return choice


    class TickGame(CountGame):
        def apply(self, joint):
            tick(self.state.points, (joint + self.state.bonus).astype(np.int64))
            self.state.t[0] += 1

        def forward_model_kernels(self):
            return (tick,)


    register_game("tick", CountConfig, TickGame)


    @register_agent
    class Lookahead(Agent):
        name = "tick_lookahead"
        games = ("tick",)
        compile_seconds = 2.0

        def decide(self, observation):
            points = np.array([observation[1], 0], dtype=np.int64)
            return int(best_action(points, 0)), 1


    @register_agent
    class Lookahead2(Lookahead):
        name = "tick_lookahead2"
''')


def test_the_forward_model_compiles_once_for_all_groups(tmp_path, monkeypatch):
    """With two groups the first compiles the game's forward model first; the other group's
    search, typed after it, loads it from the first group's cache instead of compiling it,
    and the merged cache serves everything."""
    (tmp_path / "fm_plugin.py").write_text(FORWARD_MODEL_PLUGIN)
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), TESTS_DIR, os.environ.get("PYTHONPATH", "")]))
    plugins = (*PLUGINS, "fm_plugin")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fm_plugin  # noqa: F401  (registers the game and agents in this process too)

    spec = build_spec({
        "study": {"name": "warm-fm", "seed": 7, "results_dir": str(tmp_path / "studies")},
        "game": {"name": "tick", "max_steps": 4, "num_players": 2},
        "budget": {"iterations": 3},
        "design": {"seeds": 1, "games_per_seed": 1},
        "lineup": [{"agent": "tick_lookahead"}, {"agent": "tick_lookahead2"}],
        "tracking": {"enabled": False},
    })
    (tmp_path / "trace").mkdir()
    result = warm_up_parallel(spec, plugins, workers=2, trace_dir=tmp_path / "trace")
    assert result["failed"] == []
    assert sorted(i for group in result["groups"] for i in group) == [0, 1], "each entry warmed once"
    traces = [json.loads((tmp_path / "trace" / f"group{g}.json").read_text()) for g in (0, 1)]
    ticks = [sum(c["kernel"] == "fm_plugin.tick" for c in trace) for trace in traces]
    assert ticks == [1, 0], "the trace shows the forward model compiled in the first group only"
    first, other = result["forward_model"]
    assert first == {"loaded": 0, "compiled": 1}, "the first group compiles the forward model"
    assert other["compiled"] == 0, "the other loads it when it searches (if it took an entry)"
    unshared = warm_up_parallel(spec, plugins, workers=2, force=True, share_forward_model=False)
    assert unshared["forward_model"] == [None, None] and unshared["failed"] == []
    probe = textwrap.dedent("""
        import json, numpy as np, fm_plugin
        fm_plugin.best_action(np.zeros(2, dtype=np.int64), 0)
        kernels = (fm_plugin.tick, fm_plugin.best_action)
        print(json.dumps([sum(sum(k.stats.cache_misses.values()) for k in kernels),
                          sum(sum(k.stats.cache_hits.values()) for k in kernels)]))
    """)
    env = dict(os.environ)
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    run = subprocess.run([sys.executable, "-c", "import games, agents\n" + probe], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    misses, hits = json.loads(run.stdout.strip().splitlines()[-1])
    assert (misses, hits) == (0, 1), "the merged cache serves the search (its callee linked in)"


PLUGIN_KERNEL = textwrap.dedent("""
    from typing import NamedTuple
    import numba as nb
    import numpy as np

    class PluginState(NamedTuple):
        cells: np.ndarray

    @nb.njit(cache=True)
    def total(state):
        return state.cells.sum()
""")

PLUGIN_CALL = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from plugin_only_kernel import PluginState, total
    print(total(PluginState(np.arange(3))))
""")


def test_merging_an_index_of_a_plugin_type_this_process_cannot_import_skips_it(tmp_path):
    """Regression: a cached kernel over a plugin game's state (the generic search compiled
    for it) names the state's NamedTuple by module in its index; the warm-up's merge, in a
    process without that module, crashed with ModuleNotFoundError (``arena play`` failed
    after a test compiled a plugin game's search). The entry is skipped instead."""
    module_dir = tmp_path / "src"
    module_dir.mkdir()
    (module_dir / "plugin_only_kernel.py").write_text(PLUGIN_KERNEL)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "private"))
    env.pop("ARENA_NUMBA_CACHE_AUTO", None)
    run = subprocess.run([sys.executable, "-c", PLUGIN_CALL, str(module_dir)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "3", run.stderr[-2000:]
    assert list((tmp_path / "private").rglob("*.nbi")), "the kernel was cached"
    assert merge_cache(tmp_path / "private", tmp_path / "node_cache") == 0


LAYER_CALL = textwrap.dedent("""
    import json, sys
    if sys.argv[1] == "agents":
        import agents  # noqa: F401  (configures the agents' cache directory first)
    from games.rng import make_rng, rng_integer
    value = int(rng_integer(make_rng(3), 10))
    stats = rng_integer.stats
    print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()),
                      "index": rng_integer._cache._cache_file._index_path}))
""")


def test_a_games_kernel_caches_under_its_own_layer_whatever_was_imported_first(tmp_path):
    """A game kernel first compiled by a process that imported ``agents`` first (whose import
    points numba at the agents' cache directory) is loaded, not compiled again, by a process that
    imports only ``games``: both find it under the games layer's directory."""
    env = dict(os.environ, ARENA_CACHE_DIR=str(tmp_path / "cache"))
    for name in ("NUMBA_CACHE_DIR", "ARENA_NUMBA_CACHE_AUTO"):
        env.pop(name, None)

    def call(first: str) -> dict:
        run = subprocess.run([sys.executable, "-c", LAYER_CALL, first], env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    from games.numba_cache import source_hash

    compiled = call("agents")
    assert compiled["misses"] == 1 and compiled["hits"] == 0
    games_dir = tmp_path / "cache" / "numba" / source_hash("games")
    assert compiled["index"].startswith(str(games_dir)), compiled["index"]
    loaded = call("games")
    assert loaded == dict(compiled, misses=0, hits=1)
