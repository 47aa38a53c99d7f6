"""Benchmarks of the cluster layer (``arena bench cluster [--quick] [--json]``).

Measured on a local Ray with a synthetic game and agent (registered here,
imported by the Ray workers as a plugin) so that game durations are exact:

* ``overhead_fraction``: scheduling + recording overhead as a fraction of game
  time, for ~1 s games on one worker: ``(wall - game time) / game time`` between
  the first and the last recorded game (Ray start-up and actor creation excluded).
* ``games_per_hour_1`` / ``games_per_hour_2`` / ``speedup_2_workers``: CPU-bound
  games (the agent spins) with 1 and 2 workers.
* ``driver_peak_rss_mb`` / ``driver_rss_growth_mb``: the driver's resident memory
  over a 1,000-game study of very short games (MLflow tracking on, to SQLite):
  the peak over the whole study (report included) and the growth while games
  are recorded (from 10% of the games to the last); ``driver_rss_total_growth_mb``
  includes one-time costs (MLflow store set-up, the final report and plot).
* ``tick_games_per_second_1`` / ``_2``, ``overhead_ms_per_game_1`` / ``_2``: studies of
  1-tick games (no agent work), so a game's wall time is all scheduling, hosting and
  recording: games per second and milliseconds of overhead per game, with 1 and 2 workers.
* ``real_games_per_hour_1`` / ``_2`` / ``real_speedup_2_workers``, ``real_game_seconds_mean``:
  Pommerman FFA games of four rule-based agents (the framework's SimpleAgent), on 1 and 2
  workers (from the group commit by which every host has delivered once: a host's first call
  pays its imports and kernel loading).
* ``scaling_*``: how the cost of a game grows with the games already planned and stored.
  ``scaling_ms_per_game_first_decile`` / ``_last_decile`` / ``scaling_growth_ratio``: the
  time per recorded game (a tenth's span over its games) in the first and the last tenth of the
  memory study (1,000 games of 1 tick; 5,000 with ``--quick`` off), its ratio (1.0: no
  per-game cost that grows with the store); ``plan_seconds_per_1000_games`` (best of 3) at 1,000 and
  20,000 games (``plan_growth_ratio``: per-game planning cost at 20k over 1k); and
  ``store_append_ms_first`` / ``_last`` / ``store_growth_ratio``: one game's rows appended
  to a ``ResultStore`` directly (the durable write, fsync included), median over the first
  and the last 200 of 2,000 appends (5,000 without ``--quick``).
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from agents.api import Agent
from agents.registry import register as register_agent
from cluster.run.driver import run_study
from cluster.spec.build import build_spec
from games.api import LOSS, TIE, WIN, Game
from games.registry import register as register_game

PLUGINS = (__name__,)  # the Ray workers import this module: it registers the bench game and agent


@dataclass(frozen=True)
class TickConfig:
    """Options of the synthetic ``bench-tick`` game."""

    max_steps: int = 10
    """Ticks per game."""

    def __post_init__(self):
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"max_steps: must be a positive int, got {self.max_steps!r}")


class TickState(NamedTuple):
    t: np.ndarray
    """int64[1]: ticks played."""
    scores: np.ndarray
    """int64[2]: each player's score."""


class TickGame(Game):
    """Two players add their actions to a score for ``max_steps`` ticks; higher wins.
    A game on the :class:`games.api.Game` contract (what the cluster's game loop calls)
    whose cost is negligible, so that a game's wall time is the cluster's."""

    num_players = 2
    num_actions = 3

    def new_state(self, seed) -> TickState:
        return TickState(np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64))

    def apply(self, joint: np.ndarray) -> None:
        self.state.scores[:] += joint % 3
        self.state.t[0] += 1

    def observation(self, player):
        return int(self.state.t[0])

    def legal_actions(self, player):
        return np.ones(3, dtype=bool)

    @property
    def done(self) -> bool:
        return int(self.state.t[0]) >= self.config.max_steps

    @property
    def step_count(self) -> int:
        return int(self.state.t[0])

    def outcomes(self):
        a, b = self.state.scores
        return [TIE, TIE] if a == b else ([WIN, LOSS] if a > b else [LOSS, WIN])

    def returns(self):
        return np.array([{WIN: 1.0, TIE: 0.0, LOSS: -1.0}[o] for o in self.outcomes()])

    def copy(self):  # pragma: no cover - not used by the cluster
        other = TickGame(self.config)
        other.state = TickState(*(a.copy() for a in self.state))
        return other

    def to_json(self) -> str:  # pragma: no cover - the bench records no game
        return json.dumps({"t": int(self.state.t[0]), "scores": self.state.scores.tolist()})

    @classmethod
    def from_json(cls, text: str) -> "TickGame":  # pragma: no cover
        data = json.loads(text)
        game = cls(TickConfig())
        game.state = TickState(np.array([data["t"]], dtype=np.int64), np.array(data["scores"], dtype=np.int64))
        return game

    def render(self, state=None) -> str:  # pragma: no cover
        return f"t={int(self.state.t[0])} {self.state.scores.tolist()}"


@dataclass(frozen=True)
class SpinConfig:
    """Parameters of the ``bench-spin`` agent."""

    spin_ms: float = 0.0
    """Busy-loop this long per decision (CPU-bound)."""
    sleep_ms: float = 0.0
    """Sleep this long per decision (no CPU)."""


@register_agent
class SpinAgent(Agent):
    """Random actions after spinning or sleeping for a fixed time."""

    name = "bench-spin"
    Config = SpinConfig

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = np.random.default_rng(seed)

    def decide(self, observation):
        if self.config.sleep_ms:
            time.sleep(self.config.sleep_ms / 1000.0)
        if self.config.spin_ms:
            end = time.perf_counter() + self.config.spin_ms / 1000.0
            while time.perf_counter() < end:
                pass
        return int(self._rng.integers(3)), 1


register_game("bench-tick", TickConfig, TickGame)


def _pommerman_spec(root: Path, name: str, *, seeds: int):
    """FFA Pommerman, four rule-based agents (no search: a game costs its forward model and
    the rule-based player), one game per board seed."""
    return build_spec({
        "study": {"name": name, "seed": 1, "results_dir": str(root / "studies")},
        "game": {"name": "pommerman", "mode": "ffa"},
        "budget": {"iterations": 1},
        "design": {"seeds": seeds, "games_per_seed": 1, "series_by": "game"},
        "lineup": [{"agent": "rule_based", "label": f"R{i}"} for i in range(4)],
        "tracking": {"enabled": False, "uri": f"sqlite:///{root / 'mlflow.db'}", "experiment": "bench"},
    })


def _decile_ms_per_game(recorded_at: list[float]) -> tuple[float, float]:
    """Milliseconds per recorded game over the first and over the last tenth of the games: the
    time the tenth spans divided by the games in it. Games are recorded in group commits, so
    many share one timestamp and the gaps between consecutive games are mostly zero; a tenth's
    span is not (at least two games a tenth)."""
    t = np.sort(np.asarray(recorded_at, dtype=np.float64))
    k = max(2, len(t) // 10)
    first, last = t[:k], t[-k:]
    return (1000.0 * (first[-1] - first[0]) / (len(first) - 1),
            1000.0 * (last[-1] - last[0]) / (len(last) - 1))


def _plan_seconds_per_1000(root: Path, games: int, clock=time.perf_counter) -> float:
    """Seconds to plan a study of ``games`` 1-tick games (best of 3 by ``clock``), per 1,000 games."""
    from cluster.spec.plan import plan_study

    spec = _spec(root, f"plan-{games}", max_steps=1, seeds=games // 10, games_per_seed=10, params={})
    plan_study(spec)  # warm (imports, caches)
    best = float("inf")
    for _ in range(3):
        t0 = clock()
        plan_study(spec)
        best = min(best, clock() - t0)
    return best * 1000.0 / games


def _store_append_ms(root: Path, appends: int, clock=time.perf_counter) -> tuple[float, float]:
    """Median ms (by ``clock``) of one game's ``ResultStore.append`` over the first and
    the last 200 appends (half of them each when fewer than 400)."""
    from cluster.results.store import ResultStore

    store = ResultStore(root / "store-bench")
    times = np.empty(appends)
    for g in range(appends):
        rows = [{"study_id": "store-bench", "series_id": g, "game_index": g, "index_in_series": 0,
                 "board_seed": g, "seat": seat, "label": "AB"[seat], "agent": "bench-spin",
                 "result": "win" if seat else "loss", "length": 1} for seat in range(2)]
        t0 = clock()
        store.append(rows)
        times[g] = (clock() - t0) * 1000.0
    k = min(200, appends // 2)
    return float(np.median(times[:k])), float(np.median(times[-k:]))


def _spec(root: Path, name: str, *, max_steps: int, seeds: int, games_per_seed: int,
          params: dict, tracking: bool = False, series_by: str = "seed"):

    return build_spec({
        "study": {"name": name, "seed": 1, "results_dir": str(root / "studies")},
        "game": {"name": "bench-tick", "max_steps": max_steps},
        "budget": {"iterations": 1},
        "design": {"seeds": seeds, "games_per_seed": games_per_seed, "series_by": series_by},
        "lineup": [{"agent": "bench-spin", "label": "A", "params": params},
                   {"agent": "bench-spin", "label": "B", "params": params}],
        "tracking": {"uri": f"sqlite:///{root / 'mlflow.db'}", "experiment": "bench", "enabled": tracking},
    })


def _checked(result):
    """``result``, if every game of it ended without error (a bench of failing games times
    their failures, not the cluster)."""
    if result.error_games:
        raise RuntimeError(f"bench study {result.study_id}: {result.error_games} of {result.games_played} "
                           f"games ended in an error; see {result.study_dir}")
    return result


def _throughput(result) -> tuple[float, float, float]:
    """(games/hour, wall seconds, in-game seconds) between the first and last recorded game
    (the first game's recording starts the clock, so it counts in neither)."""
    times = result.recorded_at
    wall = times[-1] - times[0]
    games = len(times) - 1
    return 3600.0 * games / wall, wall, float(sum(result.game_times[1:]))


def _overhead_fraction(result) -> float:
    """Scheduling and recording time as a fraction of game time, between the first and
    the last recorded game: (wall - in-game) / in-game."""
    _, wall, in_game = _throughput(result)
    return (wall - in_game) / in_game


def _tick_figures(recorded_at: list[float]) -> tuple[float, float]:
    """(games per second, ms per game) of a study of 1-tick games, between the first and
    the last recorded game."""
    wall = recorded_at[-1] - recorded_at[0]
    return (len(recorded_at) - 1) / wall, 1000.0 * wall / (len(recorded_at) - 1)


def _real_games_per_hour(recorded_at: list[float], workers: int) -> float:
    """Games per hour once every host has delivered: each host's first call pays its imports
    and kernel loading, so the clock starts at the ``workers``-th group commit (games are
    recorded a batch at a time, many at one timestamp) and counts the games recorded after it."""
    times = np.asarray(recorded_at, dtype=np.float64)
    commits = np.unique(times)
    start = commits[min(workers, len(commits)) - 1]
    later = int(np.count_nonzero(times > start))
    return 3600.0 * later / (times[-1] - start) if later else float("nan")


def _rss_mb() -> float:
    try:
        import psutil
        return psutil.Process().memory_info().rss / 2**20
    except ImportError:  # pragma: no cover
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_cluster(quick: bool = False) -> dict:
    """Run the measurements above on a local 2-CPU Ray; returns a JSON-able dict."""
    import ray

    started = False
    if not ray.is_initialized():
        from cluster.run.local_ray import init_local_ray

        init_local_ray(2)  # every listener on 127.0.0.1
        started = True
    out: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
            root = Path(tmp)
            run = dict(progress=False, plugins=PLUGINS)
            # (a) ~1 s games on one worker: 10 ticks x 2 players x 50 ms.
            n = 4 if quick else 8
            res = _checked(run_study(_spec(root, "overhead", max_steps=10, seeds=1, games_per_seed=n,
                                  params={"sleep_ms": 50.0}, series_by="game"),
                            num_workers=1, tracking=False, **run))
            out["game_seconds_mean"] = float(np.mean(res.game_times))
            out["overhead_fraction"] = _overhead_fraction(res)

            # (b) CPU-bound games (10 ticks x 2 players x 25 ms spin = 0.5 s) on 1 and 2 workers,
            # independent games (an even count, so two workers share the work evenly).
            n = 12 if quick else 40
            for workers in (1, 2):
                res = _checked(run_study(_spec(root, f"throughput-{workers}", max_steps=10, seeds=n, games_per_seed=1,
                                      params={"spin_ms": 25.0}, series_by="game"),
                                num_workers=workers, tracking=False, **run))
                out[f"games_per_hour_{workers}"], _, _ = _throughput(res)
            out["speedup_2_workers"] = out["games_per_hour_2"] / out["games_per_hour_1"]

            # (d) 1-tick games: all of a game's wall time is scheduling, hosting and recording
            # (enough games for many batches of ~0.2 s each).
            n = 5000 if quick else 20000
            for workers in (1, 2):
                res = _checked(run_study(_spec(root, f"tick-{workers}", max_steps=1, seeds=n, games_per_seed=1,
                                      params={}, series_by="game"),
                                num_workers=workers, tracking=False, **run))
                out[f"tick_games_per_second_{workers}"], out[f"overhead_ms_per_game_{workers}"] = \
                    _tick_figures(res.recorded_at)

            # (e) real games: Pommerman FFA, four rule-based players, 1 and 2 workers.
            n = 64 if quick else 160  # several seconds of play per host after its start-up
            for workers in (1, 2):
                res = _checked(run_study(_pommerman_spec(root, f"pommerman-{workers}", seeds=n),
                                num_workers=workers, tracking=False, progress=False))
                out[f"real_games_per_hour_{workers}"] = _real_games_per_hour(res.recorded_at, workers)
                if workers == 1:
                    out["real_game_seconds_mean"] = float(np.mean(res.game_times[1:]))
            out["real_speedup_2_workers"] = out["real_games_per_hour_2"] / out["real_games_per_hour_1"]

            # (f) planning and the store as the study grows.
            small, large = 1000, 20000
            out["plan_seconds_per_1000_games"] = _plan_seconds_per_1000(root, small)
            out["plan_growth_ratio"] = _plan_seconds_per_1000(root, large) / out["plan_seconds_per_1000_games"]
            first, last = _store_append_ms(root, 2000 if quick else 5000)
            out["store_append_ms_first"], out["store_append_ms_last"] = first, last
            out["store_growth_ratio"] = last / first

            # (c) driver memory over 1,000 very short games, tracked to SQLite (5,000 without
            # --quick), and the time per game as the store fills.
            n = 1000 if quick else 5000
            import mlflow.tracking  # noqa: F401  (imported before the baseline sample)
            samples = [(time.perf_counter(), _rss_mb())]
            stop = threading.Event()

            def sample():
                while not stop.wait(0.05):
                    samples.append((time.perf_counter(), _rss_mb()))

            spec = _spec(root, "memory", max_steps=1, seeds=n // 20, games_per_seed=20, params={},
                         tracking=True)
            thread = threading.Thread(target=sample, daemon=True)
            thread.start()
            t0 = time.perf_counter()
            res = _checked(run_study(spec, num_workers=2, **run))
            stop.set()
            thread.join()
            samples.append((time.perf_counter(), _rss_mb()))
            rss = [m for _, m in samples]
            # Steady-state growth: from 10% of the games recorded to the last one (one-time
            # imports, Ray start-up and the final report excluded); peak over everything.
            t10, t_end = res.recorded_at[len(res.recorded_at) // 10], res.recorded_at[-1]
            steady = [m for t, m in samples if t10 <= t <= t_end] or rss
            out["memory_study_games"] = res.games_played
            out["memory_study_games_per_second"] = res.games_played / (time.perf_counter() - t0)
            out["driver_start_rss_mb"] = rss[0]
            out["driver_peak_rss_mb"] = max(rss)
            out["driver_rss_growth_mb"] = steady[-1] - steady[0]
            out["driver_rss_total_growth_mb"] = rss[-1] - rss[0]
            first, last = _decile_ms_per_game(res.recorded_at)
            out["scaling_ms_per_game_first_decile"] = first
            out["scaling_ms_per_game_last_decile"] = last
            out["scaling_growth_ratio"] = last / first if first > 0 else float("nan")
    finally:
        if started:
            ray.shutdown()
    return out


def bench(options) -> dict:
    """:func:`bench_cluster` (``options.quick``: shorter studies); ``arena bench cluster`` runs
    :func:`jobs.bench.cluster_scale.bench`, which adds the driver at scale."""
    return bench_cluster(quick=options.quick)
