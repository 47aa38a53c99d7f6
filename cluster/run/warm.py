"""Cold start: compile a lineup's numba kernels in parallel processes, once per cache.

On a fresh numba cache (a new install, a new node, any edit to ``games/`` or
``agents/``, see :mod:`games.numba_cache`) the first decision of each agent
compiles its search kernel, seconds to tens of seconds each, one after the other in one
process. :func:`warm_up_parallel` compiles them side by side instead: one subprocess per
core (a *group*) builds the game and warms lineup entries in turn (each decides once), taking
the next entry from one queue (:func:`warm_queue`: the distinct entries, :func:`warm_units`,
an agent's entries together, those that never call the game's forward model first, then the
costliest first) until none is left, so no core idles while there is work and no compile-cost
estimate has to be right. Each subprocess compiles into a private cache directory, merged into
the shared one afterwards (:func:`games.numba_cache.merge_cache`: numba's own cache
files are not safe to fill from several processes at once); a private cache
starts as hard links to the shared one, so what is cached already is loaded.

The groups share what they compile: a group about to compile a kernel that a peer group
has compiled, or is compiling, loads it from the peer's private cache instead, waiting for
the peer's compile if need be (:func:`_load_from_peers`). The first group claims the game's
forward model as it starts and compiles it first, so the others wait for it instead of
racing to compile it.

A marker file in the shared cache, keyed by the sources and the lineup, makes
a second call with the same lineup return at once. If a subprocess fails,
nothing breaks: its kernels are compiled on first use, as without a warm-up.

    python -m cluster.run.warm < job.json    # one group: {"spec": ..., "queue": [[i, ...], ...], "plugins": [...]}
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from cluster.run.play import acting_players, build_agents, observation_for, worker_name
from cluster.spec.plan import GameTask, board_seed_sequence, seat_seed_sequence
from games.registry import make_game

_ROOT = Path(__file__).resolve().parent.parent


def warm_units(spec) -> list[int]:
    """The lineup indices worth a subprocess each: one per distinct (agent, parameters,
    budget kind) entry, the first of each."""
    seen, units = set(), []
    for i, seat in enumerate(spec.lineup):
        budget = spec.budget_for(i)
        key = (seat.agent, json.dumps(dict(seat.params), sort_keys=True, default=str),
               budget.iterations is None)
        if key not in seen:
            seen.add(key)
            units.append(i)
    return units


def warm_queue(units: list[int], agents: dict[int, str] | None = None,
               costs: dict[str, float] | None = None,
               model_free: frozenset[str] | set[str] = frozenset()) -> list[list[int]]:
    """The order in which the warm-up's groups take ``units``: one item per agent (its units
    together, so its kernels compile once, in one group), the ``model_free`` agents first
    (those whose :attr:`~agents.api.Agent.uses_forward_model` is False: a group takes them
    while the first group compiles the game's forward model), then the others by
    :attr:`~agents.api.Agent.compile_seconds` (``costs``, default 1), costliest first: the
    longest-processing-time order, taken greedily by whichever group is free
    (:func:`warm_up_parallel`). Ties keep the lineup order.

    ``agents`` names each unit's agent (default: every unit its own). The default lineup
    ``[mcts, rhea, osla, rule_based]`` gives ``[[3], [0], [1], [2]]``: on 2 cores the
    second group compiles the rule-based agent and then MCTS (as far as its kernel is typed
    before the rules) while the first compiles the rules; the first then takes RHEA."""
    agents = agents or {u: str(u) for u in units}
    costs = costs or {}
    families: dict[str, list[int]] = {}
    for u in units:
        families.setdefault(agents[u], []).append(u)
    order = sorted(families, key=lambda name: (name not in model_free, -costs.get(name, 1.0)))
    return [families[name] for name in order]


def _marker(spec, plugins) -> Path:
    from games.numba_cache import cache_root, source_hash

    lineup = {"game": {"name": spec.game, **asdict(spec.game_config)},
              "lineup": [(seat.agent, dict(seat.params)) for seat in spec.lineup], "plugins": sorted(plugins)}
    key = hashlib.sha1(json.dumps(lineup, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return cache_root() / "warm" / f"{source_hash('games', 'agents', 'cluster')}-{key}"


def warm_up_parallel(spec, plugins=(), workers: int | None = None, timeout: float = 3600.0,
                     force: bool = False, share_forward_model: bool = True,
                     share_kernels: bool = True, trace_dir: str | Path | None = None) -> dict[str, Any]:
    """Compile the kernels of ``spec``'s lineup into the shared numba cache: ``workers``
    (default: the cores, at most one per agent) subprocesses take the :func:`warm_queue`
    items in turn, each warming the next one nobody has taken (a claim file per item).

    Returns ``{"seconds", "units", "processes", "skipped", "failed", "entries", "groups",
    "group_cpu_s", "forward_model", "from_peers"}``: ``groups`` the lineup indices each
    subprocess warmed, in its order, ``group_cpu_s`` each one's CPU seconds (None where it
    did not report), ``forward_model`` each one's ``{"loaded": n, "compiled": m}``
    signatures of the game's forward model (None where not shared); ``skipped`` when the
    marker says this lineup was warmed with these sources already (``force`` ignores
    it), ``failed`` the lineup labels nobody warmed (their subprocess failed or ran past
    ``timeout`` seconds: their kernels compile on first use), ``entries`` the cache entries
    merged; ``skipped`` too when no lineup agent has kernels to compile (every one declares
    ``compile_seconds = 0`` and no use of the forward model). Never raises for a failed unit. The timeout is a safety net only: on a machine
    shared with heavy work a unit can take many times its idle minute.

    ``share_kernels`` (default) lets each group load the kernels another group compiles,
    or wait for one it is compiling (:func:`_load_from_peers`); ``from_peers`` in the
    result has each group's ``{"kernels", "waited_s"}`` (None where not shared). With it,
    ``share_forward_model`` (default) has the first group compile the game's forward model
    (:meth:`games.api.Game.forward_model_kernels`, which every search kernel calls) before
    it takes an item: that group claims its kernels as it starts, so
    the others take items meanwhile and, when a search first needs them, wait and load
    them; ``False`` lets the groups reach them in any order (each group steps the game). ``trace_dir``: each
    group writes the timeline of its compiles there (:func:`_trace_compiles`), for a probe.
    """
    from games.numba_cache import (
        SCRATCH_PREFIX, cache_root, merge_cache, private_cache_env, seed_private_cache,
    )

    t0 = time.perf_counter()
    marker = _marker(spec, plugins)
    units = warm_units(spec)
    if marker.exists() and not force:
        return {"seconds": time.perf_counter() - t0, "units": len(units), "processes": 0,
                "skipped": True, "failed": [], "entries": 0, "groups": [], "group_cpu_s": [],
                "forward_model": [], "from_peers": []}
    from agents.registry import agent_class

    agents = {i: spec.lineup[i].agent for i in units}
    costs = {name: float(agent_class(name).compile_seconds) for name in set(agents.values())}
    model_free = {name for name in set(agents.values()) if not agent_class(name).uses_forward_model}
    if model_free == set(costs) and not any(costs.values()):
        # Nothing to compile in parallel: no agent has kernels of its own or calls the
        # game's forward model (OpenSpiel's bots). warm_up's ticks still step the game here.
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        return {"seconds": time.perf_counter() - t0, "units": len(units), "processes": 0,
                "skipped": True, "failed": [], "entries": 0, "groups": [], "group_cpu_s": [],
                "forward_model": [], "from_peers": []}
    queue = warm_queue(units, agents, costs, model_free)
    n = max(1, min(len(queue), workers or os.cpu_count() or 1))
    spec_data = spec.to_dict()
    cache_root().mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=cache_root()))  # hard links work there
    claims = scratch / "claims"  # the kernels a group is compiling (_load_from_peers)
    claims.mkdir()
    share_forward_model = share_forward_model and share_kernels and n > 1
    taken = scratch / "queue"  # the queue's items a group has taken (_warm_group)
    taken.mkdir()
    entries = 0
    groups: list[list[int]] = [[] for _ in range(n)]
    group_cpu: list[float | None] = [None] * n
    forward: list[dict | None] = [None] * n
    from_peers: list[dict | None] = [None] * n
    try:
        running: dict[int, tuple[subprocess.Popen, Path, float]] = {}
        for g in range(n):
            private = scratch / f"group{g}"
            seed_private_cache(private)  # what is cached already is loaded, not compiled again
            env = private_cache_env(private)
            env["PYTHONPATH"] = os.pathsep.join([str(_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
            proc = subprocess.Popen([sys.executable, "-m", "cluster.run.warm"], env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            job = {"spec": spec_data, "queue": queue, "taken": str(taken), "plugins": list(plugins)}
            if trace_dir is not None:
                job["trace"] = str(Path(trace_dir) / f"group{g}.json")
            if share_forward_model:
                job["forward_model"] = "compile first" if g == 0 else "await"
            if share_kernels and n > 1:
                job["peers"] = [str(scratch / f"group{h}") for h in range(n) if h != g]
                job["claims"] = str(claims)
            proc.stdin.write(json.dumps(job))
            proc.stdin.close()
            running[g] = (proc, private, time.perf_counter())
        while running:
            time.sleep(0.05)
            for g, (proc, private, started) in list(running.items()):
                code = proc.poll()
                if code is None and time.perf_counter() - started < timeout:
                    continue
                if code is None:
                    proc.kill()
                    proc.wait()
                out = proc.stdout.read()
                groups[g] = _warmed_indices(out)
                group_cpu[g] = _reported_cpu(out)
                forward[g] = _reported_forward_model(out)
                from_peers[g] = _reported_from_peers(out)
                entries += merge_cache(private, cache_root())  # what it compiled is sound either way
                proc.stdout.close()
                del running[g]
        warmed = {i for group in groups for i in group}
        failed = [spec.lineup[i].label for item in queue for i in item if i not in warmed]
        if not failed:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"seconds": time.perf_counter() - t0, "units": len(units), "processes": n,
            "skipped": False, "failed": failed, "entries": entries, "groups": groups,
            "group_cpu_s": group_cpu, "forward_model": forward, "from_peers": from_peers}


_WARMED = "warmed: "
_CPU = "cpu: "
_FORWARD = "forward model: "
_PEERS = "from peers: "


def _reported_forward_model(stdout: str) -> dict[str, int] | None:
    """``{"loaded": n, "compiled": m}``: the signatures of the game's forward model a group's
    subprocess loaded from the cache and compiled, if it shared them."""
    lines = [line for line in stdout.splitlines() if line.startswith(_FORWARD)]
    if not lines:
        return None
    words = lines[-1][len(_FORWARD):].split()
    return {words[0]: int(words[1]), words[2]: int(words[3])}


def _reported_from_peers(stdout: str) -> dict[str, float] | None:
    """``{"kernels": n, "waited_s": s}``: the kernels a group's subprocess loaded from other
    groups' caches and the seconds it waited for their compiles (a ``from peers: n s`` line,
    see :func:`_load_from_peers`), if it shared them."""
    lines = [line for line in stdout.splitlines() if line.startswith(_PEERS)]
    if not lines:
        return None
    kernels, waited = lines[-1][len(_PEERS):].split()
    return {"kernels": int(kernels), "waited_s": float(waited)}


def _reported_cpu(stdout: str) -> float | None:
    """The CPU seconds a group's subprocess reported last (a ``cpu: s`` line), if any."""
    lines = [line for line in stdout.splitlines() if line.startswith(_CPU)]
    return float(lines[-1][len(_CPU):]) if lines else None


def _warmed_indices(stdout: str) -> list[int]:
    """The lineup indices a group's subprocess reported warmed (a ``warmed: i`` line each),
    in its order."""
    return [int(line[len(_WARMED):]) for line in stdout.splitlines() if line.startswith(_WARMED)]


def _warm_group(spec_data: dict, queue: list[list[int]], plugins, forward_model: str | None = None,
                peers: list[str] = (), claims: str | None = None, taken: str | None = None,
                trace: str | None = None) -> None:
    """In a subprocess: take the ``queue``'s items in turn, each that no other group has
    taken yet (a file per item created exclusively in ``taken``; every item when ``taken``
    is None), and warm its lineup entries (:func:`_warm_one`), printing ``warmed: i`` for
    each that succeeded; one that fails does not stop the rest (its kernels compile on
    first use, as without a warm-up). ``forward_model`` (when the warm-up shares it):
    ``"compile first"`` claims the forward model's kernels and steps the game before taking
    an item (the first group), ``"await"`` never steps it (a search waits for the first
    group's compile instead); either reports the forward model's signatures it loaded and
    compiled. ``peers`` and ``claims``: see :func:`_load_from_peers`; ``trace``: see
    :func:`_trace_compiles`."""
    from cluster.spec.build import spec_from_dict

    compiles = _trace_compiles() if trace else None

    for module in plugins or ():  # extra games or agents (as cluster.run.scheduler.import_plugins)
        importlib.import_module(module)
    spec = spec_from_dict(spec_data)
    from_peers = _load_from_peers(peers, claims) if peers else None
    kernels = ()
    if forward_model:
        game = make_game(spec.game, spec.game_config)
        kernels = game.forward_model_kernels()
        if forward_model == "compile first":
            # claimed at once (the others are still importing), compiled by stepping the game
            first_claims = [_claim_path(Path(claims), rel) for rel in map(_cache_index_rel, kernels)
                            if rel is not None and claims]
            for claim in first_claims:
                _claim(claim)
            try:
                game.reset(np.random.SeedSequence(spec.seed), board_index=0)
                game.step([0] * game.num_players)
            except Exception as exc:  # the others then compile it
                print(f"forward model: {exc!r}", file=sys.stderr)
            for claim in first_claims:  # one left: the step failed, or loaded it from the cache
                if _claimed_for(claim, os.getpid()):
                    claim.unlink(missing_ok=True)
    # A group awaiting the forward model does not step the game: the first group compiles
    # the step, and stepping here would block the group's next agent until it has.
    awaiting = forward_model == "await"
    for k, item in enumerate(queue):
        if taken is not None and not _claim(Path(taken) / f"{k}.item"):
            continue
        for index in item:
            try:
                _warm_one(spec, index, step=not awaiting)
            except Exception as exc:
                print(f"lineup entry {index}: {exc!r}", file=sys.stderr)
                continue
            print(f"{_WARMED}{index}", flush=True)
    if kernels:  # numba's own counters: signatures this process loaded from the cache / compiled
        loaded = sum(sum(k.stats.cache_hits.values()) for k in kernels)
        compiled = sum(sum(k.stats.cache_misses.values()) for k in kernels)
        print(f"{_FORWARD}loaded {loaded} compiled {compiled}", flush=True)
    if from_peers is not None:
        print(f"{_PEERS}{from_peers['kernels']} {from_peers['waited_s']:.2f}", flush=True)
    if compiles is not None:
        Path(trace).write_text(json.dumps(compiles))
    print(f"{_CPU}{time.process_time():.2f}", flush=True)


def _trace_compiles() -> list[dict]:
    """Record every numba compile in this process (numba's ``numba:compile`` events): the
    returned list gets one ``{"kernel", "depth", "start_s", "end_s"}`` per compile as it
    ends (``depth`` 0 for a compile started from Python, 1 for one started while typing
    another, ...; seconds of wall time since this call), for ``jobs/bench/probes/warm_groups.py
    --trace``."""
    from numba.core import event

    t0 = time.perf_counter()
    open_compiles: list[tuple[str, float]] = []
    compiles: list[dict] = []

    class CompileTimeline(event.Listener):
        def on_start(self, ev):
            fn = ev.data["dispatcher"].py_func
            open_compiles.append((f"{fn.__module__}.{fn.__qualname__}", time.perf_counter() - t0))

        def on_end(self, ev):
            kernel, start = open_compiles.pop()
            compiles.append({"kernel": kernel, "depth": len(open_compiles), "start_s": round(start, 3),
                             "end_s": round(time.perf_counter() - t0, 3)})

    event.register("numba:compile", CompileTimeline())
    return compiles


def _load_from_peers(peers: list[str], claims: str | None = None, timeout: float = 300.0) -> dict[str, float]:
    """Let this warm-up group load the kernels another group compiles, instead of compiling
    them again.

    Before numba compiles a cached dispatcher here that this process's cache has no index
    for, the index of the same kernel in a peer group's private cache (``peers``, laid out
    as :func:`games.numba_cache.cache_root` is) is linked in, with its data files, if it is
    complete there (:func:`games.numba_cache.link_complete_index`); numba then loads the
    signatures it holds instead of compiling them. With ``claims`` (a directory the groups
    share) a group that compiles a kernel claims it first (a file created exclusively,
    holding its pid, removed when the compile ends); a group that needs a kernel a peer is
    compiling waits for that compile (at most ``timeout`` seconds, or until the peer's
    process is gone) and loads it. So the kernels the searches share (the observation,
    state copies, the search's set-up and tree) compile once, in whichever group reaches
    them first. Waits cannot deadlock: a group waits only while compiling a kernel that
    calls the one waited for, and numba's call graphs have no cycles. Patches
    ``Dispatcher.compile`` in this subprocess only. Returns counters (``kernels``: linked
    from a peer; ``waited_s``: seconds spent waiting for peers' compiles), updated as they
    change."""
    from numba.core.dispatcher import Dispatcher

    from games.numba_cache import cache_root, link_complete_index

    own = cache_root()
    roots = [Path(p) for p in peers]
    claims_dir = Path(claims) if claims else None
    counts = {"kernels": 0, "waited_s": 0.0}
    settled: set[Path] = set()  # indexes this process has linked, compiled or given up on
    compile_here = Dispatcher.compile

    def link(rel: Path, index: Path) -> bool:
        for root in roots:
            if link_complete_index(root / rel, index):
                counts["kernels"] += 1
                return True
        return False

    def compile_or_link(self, sig):
        rel = _cache_index_rel(self)
        if rel is None:  # no file cache, or one outside this group's (the user's NUMBA_CACHE_DIR)
            return compile_here(self, sig)
        index = own / rel
        if index in settled or index.exists():
            return compile_here(self, sig)
        settled.add(index)
        if link(rel, index) or claims_dir is None:
            return compile_here(self, sig)
        claim = _claim_path(claims_dir, rel)
        if _claim(claim) or _claimed_for(claim, os.getpid()):
            try:
                return compile_here(self, sig)
            finally:
                claim.unlink(missing_ok=True)
        started = time.monotonic()
        while claim.exists() and _holder_alive(claim) and time.monotonic() - started < timeout:
            time.sleep(0.02)
        counts["waited_s"] += time.monotonic() - started
        link(rel, index)
        return compile_here(self, sig)

    Dispatcher.compile = compile_or_link
    return counts


def _cache_index_rel(dispatcher) -> Path | None:
    """The path of ``dispatcher``'s numba cache index relative to this process's
    :func:`games.numba_cache.cache_root` (the same in every group's private cache and in
    the shared one), or None when it has no file cache there."""
    from numba.core.caching import FunctionCache

    from games.numba_cache import cache_root

    if not isinstance(dispatcher._cache, FunctionCache):
        return None
    try:
        return Path(dispatcher._cache._cache_file._index_path).relative_to(cache_root())
    except ValueError:
        return None


def _claim_path(claims: Path, rel: Path) -> Path:
    """The claim file of the kernel whose cache index is at ``rel`` (see :func:`_cache_index_rel`)."""
    return Path(claims) / (rel.as_posix().replace("/", "__") + ".claim")


def _claimed_for(claim: Path, pid: int) -> bool:
    """Whether ``claim`` holds ``pid`` (the first group's claims on the forward model, made
    before it compiles it)."""
    try:
        return int(claim.read_text() or 0) == pid
    except (OSError, ValueError):
        return False


def _claim(path: Path) -> bool:
    """Create ``path`` holding this process's pid if it does not exist; whether it did."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(str(os.getpid()))
    return True


def _holder_alive(claim: Path) -> bool:
    """Whether the process whose pid ``claim`` holds still runs (True while it is being
    written or cannot be read: the wait's timeout covers that)."""
    try:
        pid = int(claim.read_text() or 0)
    except (OSError, ValueError):
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _warm_one(spec, index: int, step: bool = True) -> None:
    """Build the game and lineup entry ``index`` and let it decide once (compiling its
    kernels), then (``step``) step the game once."""
    import numpy as np

    from agents.registry import make_agent
    from games.registry import make_game

    seat = spec.lineup[index]
    game = make_game(spec.game, spec.game_config)
    game.reset(np.random.SeedSequence(spec.seed), board_index=0)
    agent = make_agent(seat.agent, seat.config, spec.budget_for(index), spec.game_config)
    players = acting_players(game)
    player = players[0] if players else 0
    agent.begin_game(player, np.random.SeedSequence([spec.seed, index]))
    actions = [0] * game.num_players
    actions[player] = agent.act(observation_for(game, player, agent))
    if step:
        game.step(actions)


def warm_up(spec, ticks: int = 10, plugins=()) -> dict[str, Any]:
    """Compile the lineup's kernels on this node in parallel processes
    (:func:`cluster.run.warm.warm_up_parallel`), then play ``ticks`` ticks with every
    lineup agent so the numba caches on this node are complete before many processes
    would compile into them at once. Never raises: returns what failed."""
    t0 = time.perf_counter()
    errors = []
    try:
        parallel = warm_up_parallel(spec, plugins)
        errors += [f"{label}: parallel compile failed" for label in parallel["failed"]]
        agents = build_agents(spec)
        game = make_game(spec.game, spec.game_config)
        n = game.num_players
        lineup = tuple(i % len(agents) for i in range(n))
        task = GameTask(game_index=0, series_id=0, index_in_series=0, board_seed=0,
                        seat_lineup=lineup, spawn_key=(0,))
        game.reset(board_seed_sequence(spec.seed, task), board_index=task.board_seed)
        seats = agents.seated(lineup)
        for seat, agent in enumerate(seats):
            agent.begin_game(seat, seat_seed_sequence(spec.seed, task, seat))
        for _ in range(ticks):
            if game.done:
                break
            actions = [0] * n
            for seat in acting_players(game):
                try:
                    actions[seat] = seats[seat].act(observation_for(game, seat, seats[seat]))
                except Exception as exc:  # a failing agent is the study's business, not ours
                    errors.append(f"{spec.lineup[lineup[seat]].label}: {exc!r}")
            game.step(actions)
    except Exception as exc:
        errors.append(repr(exc))
    return {"worker": worker_name(), "seconds": time.perf_counter() - t0, "errors": errors}


if __name__ == "__main__":
    job = json.loads(sys.stdin.read())
    _warm_group(job["spec"], [[int(i) for i in item] for item in job["queue"]], job.get("plugins", ()),
                job.get("forward_model"), job.get("peers", ()), job.get("claims"), job.get("taken"),
                job.get("trace"))
