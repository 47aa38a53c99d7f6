"""The study driver at scale: its own costs measured on this machine, and a model of a
1,000-worker run checked against what this machine can run.

One driver serves every host of a study, so its costs set the ceiling of a cluster. They
are measured with *virtual hosts*: one asyncio actor that answers ``play_batch`` for any
number of hosts, each "game" a sleep of ``game_seconds`` returning the rows and record of a
real one-tick game, so that the real :class:`~cluster.run.scheduler.HostPool`,
:class:`~cluster.run.driver.Recorder` and :class:`~cluster.results.store.ResultStore` do
all of their work while the hosts cost nothing. Three costs of the driver's wall time
(its loop is one thread; fsyncs included):

* ``driver_ms_per_game``    ``c_game``: unpickling a game's rows, holding, tallying, writing them;
* ``driver_ms_per_batch``   ``c_batch``: a host call returned and the next one sent (Ray, the books);
* ``driver_ms_per_commit``  ``c_commit``: one group commit (a record pack, a Parquet part, fsyncs),

fitted by least squares over saturated runs (instant games) at several batch sizes.

**The model.** ``W`` hosts playing games of ``t`` seconds in batches of ``B`` games
(:class:`~cluster.run.scheduler.BatchSizer`: ``B = max(1, T / t)`` with the call target
``T = max(0.2 s, W x 4 ms)``) ask the driver for ``W B / (B (t + h) + r + c_commit / 2)``
games a second (``h``: a host's own overhead per game, ``r``: a call's round trip, and half
a commit's wait); the driver serves at most ``(1 - c_commit / F) / (c_game + (c_batch + W
c_wait) / B)`` (one turn of its loop, a ``ray.wait`` over every host, per call; the recorder
commits whenever the driver would otherwise wait for a host, so below saturation commits take
idle time, and a saturated driver, never idle, commits once every ``F`` = ``flush_seconds``
(1 s): a commit's wall time, fsyncs included, is then the only share of the loop it takes,
written); on one machine of ``C`` cores the hosts and the driver also share its CPU:
``C / (h + t_cpu + the driver's per game)``. The capacity is the least of them;
:func:`capacity` computes it and :func:`bench_scale` checks it against real one-tick games
on 1 and 2 workers, virtual hosts at 10, 100 and 1,000, and a multi-node
``ray.cluster_utils.Cluster``.
"""
from __future__ import annotations

import asyncio
import inspect
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import ray
from scipy.optimize import nnls

from cluster.replay.records import pack_records
from cluster.run.driver import Recorder, plan_and_resume
from cluster.run.play import build_agents, play_recorded_game
from cluster.run.scheduler import BatchResult, BatchSizer, HostPool, PlayedGame

__all__ = ["DriverCosts", "capacity", "measure_driver_costs", "virtual_study", "bench_scale"]


@dataclass(frozen=True)
class DriverCosts:
    """The driver's wall time per game, per host call and per group commit (seconds)."""

    per_game: float
    per_batch: float
    per_commit: float
    commit_cpu: float = 0.0
    """A commit's CPU (Parquet encoding, the tallies); its wall time ``per_commit`` adds the fsyncs."""
    wait_per_host: float = 0.0
    """``ray.wait`` over the hosts' calls in flight, per host, once per turn of the loop."""
    host_per_game: float = 0.0
    """A host's own CPU per game beyond the game (rows, record, seeds; measured in-process)."""
    round_trip: float = 0.002
    """A host call's latency besides its games (Ray's submit and return)."""
    flush_seconds: float = inspect.signature(Recorder).parameters["flush_seconds"].default
    """How long the recorder holds a game at most (:class:`~cluster.run.driver.Recorder`): a
    saturated driver commits once per this interval."""


def call_target_seconds(hosts: int) -> float:
    """The call length :meth:`BatchSizer.for_hosts` aims at with ``hosts`` hosts."""
    return BatchSizer.for_hosts(hosts).target_seconds


def capacity(costs: DriverCosts, hosts: int, game_seconds: float, cores: float | None = None,
             game_cpu_seconds: float | None = None) -> dict:
    """Games per second of ``hosts`` hosts playing ``game_seconds`` games through one driver
    (see the module docstring): the hosts' demand, the driver's ceiling, the CPU bound of
    one machine of ``cores`` cores (None: hosts on their own machines), the least of them
    with the name of the bound, and the driver's busy share at that rate."""
    sizer = BatchSizer.for_hosts(hosts)
    batch = int(max(1, min(sizer.max_games, round(sizer.target_seconds / max(game_seconds + costs.host_per_game,
                                                                                 1e-7)))))
    # a host waits for the driver's commit when its call returns during one: half a commit on average
    call = batch * (game_seconds + costs.host_per_game) + costs.round_trip
    demand = hosts * batch / (call + 0.5 * costs.per_commit)
    # one turn of the loop (a wait over every host) per call, worst case; commits take the
    # driver's idle moments until it saturates, then one commit per flush interval
    per_call = costs.per_batch + hosts * costs.wait_per_host
    per_game = costs.per_game + per_call / batch
    driver = max(0.0, 1.0 - costs.per_commit / costs.flush_seconds) / per_game
    out = {"hosts": hosts, "game_seconds": game_seconds, "games_per_call": batch,
           "call_seconds": call, "demand_games_per_second": demand, "driver_games_per_second": driver}
    bounds = {"hosts": demand, "driver": driver}
    if cores is not None:
        cpu = (game_seconds if game_cpu_seconds is None else game_cpu_seconds) + costs.host_per_game + per_game
        out["cpu_games_per_second"] = bounds["cpu"] = cores / cpu
    out["bound"] = min(bounds, key=bounds.get)
    out["games_per_second"] = rate = bounds[out["bound"]]
    out["driver_busy"] = rate / driver if driver > 0 else 1.0  # the share of its capacity in use
    return out


@ray.remote(num_cpus=0)
class VirtualHosts:
    """Answers ``play_batch`` for any number of hosts at once: every game sleeps
    ``game_seconds`` and returns a real one-tick game's rows (its indices filled in) and record."""

    def __init__(self, rows: list, record, game_seconds: float):
        self.rows, self.record, self.game_seconds = rows, record, game_seconds

    async def ready(self) -> str:
        return "virtual"

    async def play_batch(self, slices) -> BatchResult:
        tasks = [task for piece in slices for task in piece.tasks]
        if not tasks:  # a call that never returns (wait_cost_per_host)
            await asyncio.sleep(self.game_seconds)
        if self.game_seconds:
            await asyncio.sleep(len(tasks) * self.game_seconds)
        games = [PlayedGame(task, [dict(row, game_index=task.game_index, series_id=task.series_id,
                                        index_in_series=task.index_in_series, board_seed=task.board_seed)
                                   for row in self.rows], {}, self.game_seconds) for task in tasks]
        packs = pack_records([(task.game_index, self.record) for task in tasks])
        return BatchResult(games, packs, len(tasks) * self.game_seconds)


class _VirtualHost:
    """One host of :class:`VirtualHosts`: its own identity in the pool's books."""

    def __init__(self, actor):
        self.ready, self.play_batch = actor.ready, actor.play_batch


def _tick_spec(root: Path, name: str, games: int, tracking: bool = False):
    """A study of ``games`` one-tick games of the bench's ``bench-tick`` game, each its own series."""
    import jobs.bench.cluster  # noqa: F401  (registers the bench-tick game and bench-spin agent)
    from cluster.spec.build import build_spec

    return build_spec({
        "study": {"name": name, "seed": 1, "results_dir": str(root / "studies")},
        "game": {"name": "bench-tick", "max_steps": 1}, "budget": {"iterations": 1},
        "design": {"seeds": games, "games_per_seed": 1, "series_by": "game"},
        "lineup": [{"agent": "bench-spin", "label": "A"}, {"agent": "bench-spin", "label": "B"}],
        "tracking": {"uri": f"sqlite:///{root / 'mlflow.db'}", "experiment": "bench", "enabled": tracking}})


def virtual_study(root: Path, name: str, *, hosts: int, games: int, game_seconds: float,
                  sizer: BatchSizer | None = None) -> dict:
    """Play ``games`` one-tick games' rows on ``hosts`` virtual hosts through the real pool,
    recorder and store; the driver's wall and CPU seconds, games a second between the first
    and the last commit, host calls and commits."""
    spec = _tick_spec(root, name, games)
    agents = build_agents(spec)
    task = plan_and_resume(spec).runs[0].task
    rows, _, record = play_recorded_game(spec, task, agents)
    prepared = plan_and_resume(spec)
    recorder = Recorder(spec, prepared.store, prepared.finished)
    actor = VirtualHosts.options(max_concurrency=max(16, hosts + 8)).remote(rows, record, game_seconds)
    sizer = sizer or BatchSizer.for_hosts(hosts)
    pool = HostPool(lambda: _VirtualHost(actor), size=hosts, sizer=sizer)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        pool.run(prepared.runs, on_batch=recorder.on_batch, on_idle=recorder.flush,
                 wait_seconds=recorder.flush_seconds)
        recorder.flush()
    finally:
        ray.kill(actor)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    times = [t for t, n in recorder.commits if n]
    counted = sum(n for _, n in recorder.commits[1:] if n)
    rate = counted / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else games / wall
    return {"hosts": hosts, "games": recorder.played, "game_seconds": game_seconds, "wall": wall, "cpu": cpu,
            "batches": recorder.batches, "commits": recorder.flushes, "commit_seconds": recorder.commit_seconds,
            "games_per_second": rate, "games_per_call": sizer.games}


def measure_driver_costs(root: Path, games: int = 6000, batch_sizes=(1, 8, 64, 512)) -> tuple[DriverCosts, list]:
    """:class:`DriverCosts` of saturated virtual studies (instant games, 8 hosts) at each of
    ``batch_sizes``: the driver's CPU seconds fitted (least squares, no intercept) to games,
    host calls and commits, and a commit's wall time (its files and fsyncs: I/O waits are
    not CPU) as measured by the recorder. CPU time, because wall time on a shared machine
    measures the other processes; the commits' fsyncs are the one wait the driver's loop
    pays itself."""
    runs = []
    for size in batch_sizes:
        n = games if size > 1 else games // 4  # one game per call is slow: fewer games
        runs.append(virtual_study(root, f"costs-{size}", hosts=8, games=n, game_seconds=0.0,
                                  sizer=BatchSizer(max_games=size, target_seconds=1e9)))
    design = np.array([[r["games"], r["batches"], r["commits"]] for r in runs], dtype=np.float64)
    cpu = np.array([r["cpu"] for r in runs])
    (per_game, per_batch, commit_cpu), _ = nnls(design, cpu)  # costs are not negative
    per_commit = sum(r["commit_seconds"] for r in runs) / sum(r["commits"] for r in runs)
    return DriverCosts(float(per_game), float(per_batch), float(per_commit), commit_cpu=float(commit_cpu)), runs


def wait_cost_per_host(hosts: int = 1000, repeats: int = 50) -> float:
    """Driver CPU seconds of ``ray.wait(..., timeout=0)`` per call in flight (``hosts``
    calls that do not return)."""
    actor = VirtualHosts.options(max_concurrency=hosts + 8).remote([], None, 3600.0)
    try:
        refs = [actor.play_batch.remote([]) for _ in range(hosts)]
        ray.wait(refs, num_returns=len(refs), timeout=0)
        cpu0 = time.process_time()
        for _ in range(repeats):
            ray.wait(refs, num_returns=len(refs), timeout=0)
        return (time.process_time() - cpu0) / repeats / hosts
    finally:
        ray.kill(actor)


def host_cost_per_game(root: Path, games: int = 2000) -> float:
    """A host's CPU seconds per one-tick game, in-process (play_batch's work, record pack included)."""
    from cluster.run.scheduler import GameHost, Slice

    spec = _tick_spec(root, "host-cost", games)
    host_class = GameHost.__ray_metadata__.modified_class
    host = host_class.__new__(host_class)
    host_class.__init__(host, spec, {}, ())
    runs = plan_and_resume(spec).runs
    host.play_batch([Slice(r.series_id, tuple(r.games), True, None, False, True) for r in runs[:50]])  # warm
    slices = [Slice(r.series_id, tuple(r.games), True, None, False, True) for r in runs[50:]]
    cpu0 = time.process_time()
    for lo in range(0, len(slices), 500):
        host.play_batch(slices[lo:lo + 500])
    return (time.process_time() - cpu0) / len(slices)


def _real_ticks(root: Path, name: str, workers: int, games: int, tracking: bool = False) -> dict:
    """A study of one-tick games through :func:`run_study` (what ``arena run`` calls): games a
    second between the first and the last group commit, and the driver's CPU seconds."""
    from cluster.run.driver import run_study
    from jobs.bench.cluster import PLUGINS

    spec = _tick_spec(root, name, games, tracking=tracking)
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample_rss():  # the driver's resident memory every 50 ms
        while not stop.wait(0.05):
            samples.append((time.perf_counter(), _rss_mb()))

    thread = threading.Thread(target=sample_rss, daemon=True)
    thread.start()
    cpu0 = time.process_time()
    try:
        result = run_study(spec, num_workers=workers, progress=False, plugins=PLUGINS)
    finally:
        stop.set()
        thread.join()
    cpu = time.process_time() - cpu0
    commits = [(t, n) for t, n in result.commits if n]
    rate = sum(n for _, n in commits[1:]) / (commits[-1][0] - commits[0][0])
    # RSS growth while games are recorded: from the commit that passes 10% of the games to the last
    done, start = 0, commits[0][0]
    for t, n in commits:
        done += n
        if done >= games // 10:
            start = t
            break
    steady = [m for t, m in samples if start <= t <= commits[-1][0]]
    return {"games": result.games_played, "games_per_second": rate, "batches": result.batches,
            "commits": result.flushes, "driver_cpu_seconds": cpu, "seconds": result.seconds,
            "rss_growth_mb": (steady[-1] - steady[0]) if len(steady) > 1 else 0.0}


def resume_probe(root: Path, games: int) -> dict:
    """A store of ``games`` finished one-tick games (rows appended in parts of 20,000 games,
    as group commits write them), then :func:`plan_and_resume` of the study: its wall and
    CPU seconds and the driver's RSS growth (the plan and the finished-games bitmap)."""
    from cluster.results.store import ResultStore

    spec = _tick_spec(root, f"resume-{games}", games)
    store = ResultStore(spec.study_dir)
    base = {"study_id": spec.study_id, "agent": "bench-spin", "length": 1, "board_seed": 0, "index_in_series": 0}
    for lo in range(0, games, 20000):
        store.append([dict(base, series_id=g, game_index=g, seat=seat, label="AB"[seat],
                           result="win" if seat else "loss")
                      for g in range(lo, min(games, lo + 20000)) for seat in (0, 1)])
    rss0 = _rss_mb()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    prepared = plan_and_resume(spec)
    out = {"resume_games": games, "resume_seconds": time.perf_counter() - wall0,
           "resume_cpu_seconds": time.process_time() - cpu0, "resume_rss_growth_mb": _rss_mb() - rss0}
    if prepared.skipped != games or prepared.runs:
        raise RuntimeError(f"resume probe: {prepared.skipped} of {games} games found, {len(prepared.runs)} runs left")
    return out


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench(options) -> dict:
    """``arena bench cluster``: the cluster bench (:func:`jobs.bench.cluster.bench_cluster`), then the
    driver at scale and the model of a 1,000-worker run (:func:`bench_scale`)."""
    from jobs.bench.cluster import bench_cluster

    out = bench_cluster(quick=options.quick)
    out.update(bench_scale(quick=options.quick))
    return out


def bench_scale(quick: bool = False, multi_node: bool = True) -> dict:
    """The driver's costs, the model's capacity at 1,000 hosts, and the model against what
    this machine runs (a local 2-CPU Ray is started for the first part and shut down; the
    multi-node check builds its own ``ray.cluster_utils.Cluster``). JSON-able figures."""
    out: dict = {}
    games = 2000 if quick else 6000
    with tempfile.TemporaryDirectory(prefix="arena-scale-") as tmp:
        root = Path(tmp)
        started = not ray.is_initialized()
        if started:
            from cluster.run.local_ray import init_local_ray

            init_local_ray(2)  # every listener on 127.0.0.1
        try:
            costs, _ = measure_driver_costs(root, games=games)
            costs = DriverCosts(costs.per_game, costs.per_batch, costs.per_commit, commit_cpu=costs.commit_cpu,
                                wait_per_host=wait_cost_per_host(), host_per_game=host_cost_per_game(root))
            out.update({"driver_ms_per_game": 1e3 * costs.per_game, "driver_ms_per_batch": 1e3 * costs.per_batch,
                        "driver_ms_per_commit": 1e3 * costs.per_commit, "driver_ms_cpu_per_commit": 1e3 * costs.commit_cpu,
                        "driver_us_wait_per_host": 1e6 * costs.wait_per_host,
                        "host_ms_per_tick_game": 1e3 * costs.host_per_game})
            at_scale = capacity(costs, 1000, 1.0)
            # what one driver can take from 1,000 hosts playing one-second games (the target: >= 1,000),
            # what they deliver (at most 1,000: the hosts' own bound), and the driver's busy share then
            out["model_1000_hosts_driver_capacity_games_per_second"] = at_scale["driver_games_per_second"]
            out["model_1000_hosts_delivered_games_per_second"] = at_scale["games_per_second"]
            out["model_1000_hosts_bound"] = at_scale["bound"]
            out["model_1000_hosts_driver_busy"] = at_scale["driver_busy"]
            out["model_1000_hosts_games_per_call"] = at_scale["games_per_call"]
            saturating = next((w for w in (1000, 2000, 5000, 10000, 20000, 50000)
                               if capacity(costs, w, 1.0)["bound"] == "driver"), None)
            out["model_driver_saturates_at_hosts_1s"] = saturating
            # the model against this machine: real one-tick games on 1 and 2 workers ...
            for workers in (1, 2):
                real = _real_ticks(root, f"ticks-{workers}", workers, 10 * games)
                model = capacity(costs, workers, 0.0, cores=os.cpu_count() or 2)
                out[f"check_ticks_{workers}_measured"] = real["games_per_second"]
                out[f"check_ticks_{workers}_model"] = model["games_per_second"]
                out[f"check_ticks_{workers}_driver_ms_cpu_per_game"] = 1e3 * real["driver_cpu_seconds"] / real["games"]
                out[f"tick_study_{workers}_driver_rss_growth_mb"] = real["rss_growth_mb"]
                out["tick_study_games"] = real["games"]
            tracked = _real_ticks(root, "ticks-tracked", 2, 10 * games, tracking=True)
            out["tick_games_per_second_2_tracked"] = tracked["games_per_second"]
            # ... and virtual hosts: the driver's busy share measured (CPU / wall) and modelled
            for hosts, seconds in ((10, 0.05), (100, 0.5), (1000, 1.0)):
                n = int(min(3 * games, hosts / seconds * (10 if quick else 20)))
                run = virtual_study(root, f"virtual-{hosts}", hosts=hosts, games=n, game_seconds=seconds)
                model = capacity(costs, hosts, seconds)
                out[f"check_virtual_{hosts}_measured"] = run["games_per_second"]
                out[f"check_virtual_{hosts}_model"] = model["games_per_second"]
                out[f"check_virtual_{hosts}_driver_busy_measured"] = run["cpu"] / run["wall"]
                out[f"check_virtual_{hosts}_driver_busy_model"] = model["driver_busy"]
                # the transferable figure: the driver's CPU per game at this many hosts, measured
                # and as the model has it (the rate above also depends on the machine's load)
                out[f"check_virtual_{hosts}_driver_ms_cpu_per_game_measured"] = 1e3 * run["cpu"] / run["games"]
                out[f"check_virtual_{hosts}_driver_ms_cpu_per_game_model"] = \
                    1e3 * model["driver_busy"] / model["games_per_second"]
        finally:
            if started:
                ray.shutdown()
        out.update(resume_probe(root, 100_000 if quick else 1_000_000))
        if multi_node:
            out.update(_multi_node_check(root, costs, games=games))
    return out


def _multi_node_check(root: Path, costs: DriverCosts, games: int) -> dict:
    """One-tick games on a ``ray.cluster_utils.Cluster`` of a head without CPUs and three
    one-CPU nodes (all on this machine): measured against the model's CPU-bound figure."""
    from ray.cluster_utils import Cluster

    was_up = ray.is_initialized()
    if was_up:
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        for _ in range(3):
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        real = _real_ticks(root, "ticks-nodes", 3, 10 * games)
        model = capacity(costs, 3, 0.0, cores=os.cpu_count() or 2)
        return {"check_nodes_3_measured": real["games_per_second"], "check_nodes_3_model": model["games_per_second"]}
    finally:
        ray.shutdown()
        cluster.shutdown()
