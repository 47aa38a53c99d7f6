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
"""
from __future__ import annotations

import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.api import Agent
from agents.registry import register as register_agent
from cluster.run.driver import run_study
from cluster.spec.study import build_spec
from games.api import LOSS, TIE, WIN
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


class TickGame:
    """Two players add their actions to a score for ``max_steps`` ticks; higher wins."""

    num_players = 2
    num_actions = 3

    def __init__(self, config: TickConfig):
        self.config = config
        self.invalid_actions = np.zeros(2, dtype=np.int64)
        self.reset(0)

    def reset(self, seed) -> None:
        self.scores = np.zeros(2, dtype=np.int64)
        self.t = 0

    def step(self, actions) -> None:
        self.scores += np.asarray(actions, dtype=np.int64) % 3
        self.t += 1

    def observation(self, player):
        return self.t

    def legal_actions(self, player):
        return np.ones(3, dtype=bool)

    @property
    def done(self) -> bool:
        return self.t >= self.config.max_steps

    @property
    def step_count(self) -> int:
        return self.t

    def outcomes(self):
        a, b = self.scores
        return [TIE, TIE] if a == b else ([WIN, LOSS] if a > b else [LOSS, WIN])

    def returns(self):
        return np.array([{WIN: 1.0, TIE: 0.0, LOSS: -1.0}[o] for o in self.outcomes()])

    def teams(self):
        return [0, 1]

    def copy(self):  # pragma: no cover - not used by the cluster
        other = TickGame(self.config)
        other.scores, other.t = self.scores.copy(), self.t
        return other

    def to_json(self) -> str:  # pragma: no cover
        return "{}"

    def render(self) -> str:  # pragma: no cover
        return f"t={self.t} {self.scores.tolist()}"


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


def _throughput(result) -> tuple[float, float, float]:
    """(games/hour, wall seconds, in-game seconds) between the first and last recorded game."""
    times = result.recorded_at
    wall = times[-1] - times[0]
    games = len(times) - 1
    return 3600.0 * games / wall, wall, float(sum(result.game_times[1:]))


def _rss_mb() -> float:
    try:
        import psutil
        return psutil.Process().memory_info().rss / 2**20
    except ImportError:  # pragma: no cover
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def bench_cluster(quick: bool = False) -> dict:
    """Run the three measurements on a local 2-CPU Ray; returns a JSON-able dict."""
    import ray

    started = False
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=max(2, min(2, os.cpu_count() or 2)), include_dashboard=False, log_to_driver=False)
        started = True
    out: dict = {}
    try:
        with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
            root = Path(tmp)
            run = dict(progress=False, plugins=PLUGINS)
            # (a) ~1 s games on one worker: 10 ticks x 2 players x 50 ms.
            n = 4 if quick else 8
            res = run_study(_spec(root, "overhead", max_steps=10, seeds=1, games_per_seed=n,
                                  params={"sleep_ms": 50.0}, series_by="game"),
                            num_workers=1, tracking=False, **run)
            _, wall, in_game = _throughput(res)
            out["game_seconds_mean"] = float(np.mean(res.game_times))
            out["overhead_fraction"] = (wall - in_game) / in_game

            # (b) CPU-bound games (10 ticks x 2 players x 25 ms spin = 0.5 s) on 1 and 2 workers,
            # independent games (an even count, so two workers share the work evenly).
            n = 12 if quick else 40
            for workers in (1, 2):
                res = run_study(_spec(root, f"throughput-{workers}", max_steps=10, seeds=n, games_per_seed=1,
                                      params={"spin_ms": 25.0}, series_by="game"),
                                num_workers=workers, tracking=False, **run)
                out[f"games_per_hour_{workers}"], _, _ = _throughput(res)
            out["speedup_2_workers"] = out["games_per_hour_2"] / out["games_per_hour_1"]

            # (c) driver memory over 1,000 very short games, tracked to SQLite.
            n = 200 if quick else 1000
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
            res = run_study(spec, num_workers=2, **run)
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
    finally:
        if started:
            ray.shutdown()
    return out
