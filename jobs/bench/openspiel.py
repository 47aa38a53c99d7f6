"""OpenSpiel's own evaluation loop beside Arena's cluster, on the same bots and games.

For each matchup (MCTS(n) against random and MCTS(a) against MCTS(b), on tic-tac-toe
and connect four), the same number of games is played twice:

* **OpenSpiel's loop**: ``pyspiel.evaluate_bots`` (its C++ game loop, one game at a
  time in this process), seats alternating, fresh seeds per game;
* **Arena**: a study of the same two OpenSpiel bots (``openspiel_mcts``,
  ``openspiel_random``) on ``openspiel:NAME``, every seed played from both seats, on
  Ray with ``--workers`` game hosts (default 2).

It reports, per matchup and per loop, the first bot's wins, ties and losses with 95%
Wilson intervals (SciPy), whether the two loops agree (the intervals of each outcome
overlap, and a chi-square test of the two W/T/L rows, ``p`` above 0.01), and the games
per hour of each loop, per wall-clock hour and per CPU-hour. Arena's wall clock
includes its start-up (the Ray actors, the warm-up, the plan, the store, the report;
not Ray's own ``init``); its CPU seconds are the driver's and every process under it
(the Ray workers: :class:`jobs.bench.process_cpu.ProcessTreeCPU`), so on a machine
loaded by others the CPU figures still compare the two loops' work.

The **throughput** matchup (:data:`THROUGHPUT`, MCTS(10000) against itself on connect
four) has games long enough to amortise Arena's start-up, and the **start-up** itself
is timed on a study of two near-instant games (:func:`time_startup`). From the two, the
break-even: how many seconds of OpenSpiel's serial loop a run must last before Arena
on the workers plays more games per hour, and before it plays 1.8x as many, when the
workers get their cores.

    python -m jobs.bench.openspiel                       # the table of games/openspiel/README.md
    python -m jobs.bench.openspiel --games 40 --throughput-games 20 --json   # a quick look, JSON

``bench(options)`` is the entry of ``arena bench openspiel`` (the bench wing's registry).
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

__all__ = ["MATCHUPS", "THROUGHPUT", "Matchup", "bench", "break_even", "main", "play_openspiel_loop", "play_arena",
           "time_startup"]


@dataclass(frozen=True)
class Matchup:
    """Two OpenSpiel bots on one game: ``first`` is the one whose results are reported."""

    game: str
    """OpenSpiel's short name."""
    first: tuple[str, int]
    """(``mcts`` or ``random``, simulations per move)."""
    second: tuple[str, int]

    @property
    def label(self) -> str:
        return f"{self.game}: {_name(self.first)} vs {_name(self.second)}"


def _name(bot: tuple[str, int]) -> str:
    return f"MCTS({bot[1]})" if bot[0] == "mcts" else "random"


#: The matchups of the side-by-side table.
MATCHUPS = (
    Matchup("tic_tac_toe", ("mcts", 100), ("random", 0)),
    Matchup("tic_tac_toe", ("mcts", 300), ("mcts", 30)),
    Matchup("connect_four", ("mcts", 100), ("random", 0)),
    Matchup("connect_four", ("mcts", 400), ("mcts", 100)),
)
#: The matchup whose games are long enough to amortise Arena's start-up (about 1 CPU-second a game).
THROUGHPUT = Matchup("connect_four", ("mcts", 10000), ("mcts", 10000))
#: OpenSpiel's MCTSBot settings on both sides (examples/mcts.py: c = 2, one random rollout, solver on).
UCT_C, ROLLOUTS, SOLVE, MAX_MEMORY_MB = 2.0, 1, True, 1000


def _openspiel_bot(game, bot: tuple[str, int], player: int, seed: int):
    import pyspiel

    if bot[0] == "random":
        return pyspiel.make_uniform_random_bot(player, seed)
    evaluator = pyspiel.RandomRolloutEvaluator(ROLLOUTS, seed)
    mcts = pyspiel.MCTSBot(game, evaluator, UCT_C, bot[1], MAX_MEMORY_MB, SOLVE, seed, False)
    return mcts, evaluator


def play_openspiel_loop(matchup: Matchup, games: int, seed: int) -> dict:
    """``games`` games of ``matchup`` with ``pyspiel.evaluate_bots``, the first bot in seat
    ``i % 2`` of game ``i``: its wins, ties, losses and the wall and CPU seconds."""
    import pyspiel

    game = pyspiel.load_game(matchup.game)
    seeds = np.random.SeedSequence(seed).generate_state(3 * games, dtype=np.uint32) % (2**31 - 1)
    results = []
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(games):
        seat = i % 2
        bots = [None, None]
        keep = []
        for player, bot in ((seat, matchup.first), (1 - seat, matchup.second)):
            made = _openspiel_bot(game, bot, player, int(seeds[3 * i + player]))
            bots[player] = made[0] if isinstance(made, tuple) else made
            keep.append(made)
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, int(seeds[3 * i + 2]))
        results.append(np.sign(returns[seat]))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return _tally(results) | {"wall_s": wall, "cpu_s": cpu}


def _lineup_entry(bot: tuple[str, int], label: str) -> dict:
    if bot[0] == "random":
        return {"agent": "openspiel_random", "label": label}
    return {"agent": "openspiel_mcts", "label": label, "budget": {"iterations": bot[1]},
            "params": {"exploration": UCT_C, "rollouts": ROLLOUTS, "solve": SOLVE, "max_memory_mb": MAX_MEMORY_MB}}


def _arena_spec(matchup: Matchup, games: int, seed: int, results_dir: Path, lineup=None):
    from cluster.spec.build import build_spec

    return build_spec({
        "study": {"name": f"side-by-side-{matchup.game}-{_name(matchup.first)}-{_name(matchup.second)}"
                          .replace("(", "").replace(")", "").lower(),
                  "seed": seed, "results_dir": str(results_dir)},
        "game": {"name": f"openspiel:{matchup.game}"},
        "budget": {"iterations": 1},
        "design": {"seeds": games // 2, "games_per_seed": 2, "rotate_seats": True, "series_by": "game"},
        "lineup": lineup or [_lineup_entry(matchup.first, "first"), _lineup_entry(matchup.second, "second")],
        "tracking": {"enabled": False},
    })


def _timed_study(spec, workers: int) -> tuple:
    """``run_study(spec)`` on ``workers`` hosts: (result, wall seconds, CPU seconds of the
    driver and every process under it)."""
    from cluster.run.driver import run_study

    from .process_cpu import ProcessTreeCPU

    wall = time.perf_counter()
    with ProcessTreeCPU() as cpu:
        result = run_study(spec, num_workers=workers, progress=False, tracking=False)
    return result, time.perf_counter() - wall, cpu.seconds


def play_arena(matchup: Matchup, games: int, seed: int, workers: int, results_dir: Path) -> dict:
    """``games`` games of ``matchup`` as an Arena study on Ray (``games / 2`` seeds, seats
    swapped): the first bot's wins, ties, losses and the wall and CPU seconds of ``run_study``."""
    from cluster.results.store import ResultStore

    result, wall, cpu = _timed_study(_arena_spec(matchup, games, seed, results_dir), workers)
    rows = ResultStore(result.study_dir).read()
    first = rows[rows["label"] == "first"]
    if (first["result"] == "error").any():
        raise RuntimeError(f"{matchup.label}: a game failed: {first['error'].dropna().iloc[0]}")
    results = [{"win": 1, "tie": 0, "loss": -1}[r] for r in first["result"]]
    return _tally(results) | {"wall_s": wall, "cpu_s": cpu, "invalid_actions": int(rows["invalid_actions"].sum())
                              if "invalid_actions" in rows else 0}


def time_startup(workers: int, results_dir: Path, repeats: int = 3) -> dict:
    """Arena's fixed cost per study: a study of 2 games of OpenSpiel's random bot on
    tic-tac-toe (microseconds of play), ``repeats`` times after one untimed run (the
    warm-up's marker and the OS's file cache as in a user's second study): the median
    wall and CPU seconds, and each run's."""
    matchup = Matchup("tic_tac_toe", ("random", 0), ("random", 0))
    runs = []
    for k in range(repeats + 1):
        spec = _arena_spec(matchup, 2, 1, results_dir / f"startup-{k}")
        _, wall, cpu = _timed_study(spec, workers)
        if k:
            runs.append({"wall_s": wall, "cpu_s": cpu})
    return {"wall_s": float(np.median([r["wall_s"] for r in runs])),
            "cpu_s": float(np.median([r["cpu_s"] for r in runs])), "runs": runs}


def ray_idle_cpu(seconds: float) -> float:
    """CPU seconds per second that the local Ray (raylet, GCS, its agents, idle workers)
    spends doing nothing for us: Arena's CPU figures include it for as long as a study
    runs, so on a loaded machine, where a study's wall clock stretches, they grow by it."""
    from .process_cpu import ProcessTreeCPU

    with ProcessTreeCPU() as cpu:
        time.sleep(seconds)
    return cpu.seconds / seconds


def break_even(startup: dict, row: dict, workers: int, ray_idle: float = 0.0) -> dict:
    """From the start-up ``S`` and a matchup's per-game CPU seconds of OpenSpiel's loop
    (``g``) and of Arena (``a``: its CPU less ``S``'s and less the idle Ray's ``ray_idle``
    CPU-s a second over the rest of its wall clock): when its workers get their cores,
    Arena takes ``S + n a / (workers - ray_idle)`` for ``n`` games (the idle Ray takes its
    share of the cores), the loop ``n g``. The serial seconds ``n g`` a run must last for
    Arena to play more games per hour, and 1.8x as many; with ``S`` as measured (wall, on
    this machine's load) and as CPU (what an idle machine would pay at least). None where
    Arena never gets there."""
    n = row["openspiel"]["games"]
    g = row["openspiel"]["cpu_s"] / n
    background = ray_idle * max(0.0, row["arena"]["wall_s"] - startup["wall_s"]) if ray_idle else 0.0
    a = max(0.0, (row["arena"]["cpu_s"] - startup["cpu_s"] - background) / n)
    cores = max(1e-9, workers - ray_idle)

    def serial_seconds(ratio: float, s: float) -> float | None:
        margin = g - ratio * a / cores
        return None if margin <= 0 else ratio * s * g / margin

    return {"openspiel_cpu_s_per_game": g, "arena_cpu_s_per_game": a,
            "arena_over_openspiel_cpu": a / g if g else float("nan"),
            "arena_idle_ray_cpu_s": background,
            "serial_s_to_pull_ahead": {"startup_wall": serial_seconds(1.0, startup["wall_s"]),
                                       "startup_cpu": serial_seconds(1.0, startup["cpu_s"])},
            "serial_s_for_1.8x": {"startup_wall": serial_seconds(1.8, startup["wall_s"]),
                                  "startup_cpu": serial_seconds(1.8, startup["cpu_s"])},
            "best_ratio": g * cores / a if a else float("inf")}


def _tally(results) -> dict:
    results = np.asarray(results)
    n = len(results)
    out = {"games": n}
    for name, value in (("win", 1), ("tie", 0), ("loss", -1)):
        k = int((results == value).sum())
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson") if n else None
        out[name] = k
        out[f"{name}_rate"] = k / n if n else float("nan")
        out[f"{name}_ci"] = [float(ci.low), float(ci.high)] if ci else [float("nan")] * 2
    return out


def agreement(openspiel: dict, arena: dict) -> dict:
    """Whether the two loops' results agree: each outcome's 95% intervals overlap, and a
    chi-square test of homogeneity of the two W/T/L rows (outcomes neither loop saw left out)."""
    overlap = all(openspiel[f"{o}_ci"][0] <= arena[f"{o}_ci"][1] and arena[f"{o}_ci"][0] <= openspiel[f"{o}_ci"][1]
                  for o in ("win", "tie", "loss"))
    table = np.array([[openspiel[o] for o in ("win", "tie", "loss")], [arena[o] for o in ("win", "tie", "loss")]])
    table = table[:, table.sum(axis=0) > 0]
    p = float(stats.chi2_contingency(table).pvalue) if table.shape[1] > 1 else 1.0
    return {"intervals_overlap": overlap, "chi2_p": p, "agree": bool(overlap and p > 0.01)}


def _row(matchup: Matchup, games: int, seed: int, workers: int, results_dir: Path) -> dict:
    import os

    load_before = os.getloadavg()[0]
    openspiel = play_openspiel_loop(matchup, games, seed)
    arena = play_arena(matchup, games, seed, workers, results_dir)
    return {"matchup": matchup.label, "openspiel": openspiel, "arena": arena,
            "agreement": agreement(openspiel, arena),
            "games_per_hour": {"openspiel": 3600 * games / openspiel["wall_s"],
                               "arena": 3600 * games / arena["wall_s"]},
            "games_per_cpu_hour": {"openspiel": 3600 * games / openspiel["cpu_s"],
                                   "arena": 3600 * games / arena["cpu_s"]},
            "speedup": openspiel["wall_s"] / arena["wall_s"],
            "load_1min": [load_before, os.getloadavg()[0]]}


def run(games: int = 200, seed: int = 2026, workers: int = 2, matchups=MATCHUPS,
        throughput_games: int = 100) -> dict:
    """Every matchup in both loops, then Arena's start-up and the throughput matchup
    (``throughput_games`` of them; 0: neither): ``{"rows", "startup", "throughput",
    "break_even", ...}``."""
    import os

    import ray

    if not ray.is_initialized():
        from cluster.run.local_ray import init_local_ray

        init_local_ray(max(2, workers))  # every listener on 127.0.0.1
    out = {"games_per_matchup": games, "workers": workers, "seed": seed, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="arena-side-by-side-") as tmp:
        out["rows"] = [_row(matchup, games, seed + i, workers, Path(tmp)) for i, matchup in enumerate(matchups)]
        if throughput_games:
            out["ray_idle_cpu_per_s"] = ray_idle_cpu(10.0)
            out["startup"] = time_startup(workers, Path(tmp))
            out["throughput"] = _row(THROUGHPUT, throughput_games, seed + len(matchups), workers, Path(tmp))
            out["break_even"] = break_even(out["startup"], out["throughput"], workers, out["ray_idle_cpu_per_s"])
    return out


def markdown(figures: dict) -> str:
    """The tables of ``games/openspiel/README.md``."""
    def cell(side: dict) -> str:
        return " / ".join(f"{100 * side[f'{o}_rate']:.0f}% ({100 * side[f'{o}_ci'][0]:.0f}-"
                          f"{100 * side[f'{o}_ci'][1]:.0f})" for o in ("win", "tie", "loss"))

    rows = figures["rows"] + ([figures["throughput"]] if "throughput" in figures else [])
    lines = ["| matchup (first bot's W / T / L, 95% intervals) | OpenSpiel's `evaluate_bots` | "
             f"Arena, {figures['workers']} workers | agree (chi-square p) |", "|---|---|---|---|"]
    for row in rows:
        a = row["agreement"]
        lines.append(f"| {row['matchup']} | {cell(row['openspiel'])} | {cell(row['arena'])} | "
                     f"{'yes' if a['agree'] else 'NO'} ({a['chi2_p']:.2f}) |")
    lines += ["", "| matchup | games | OpenSpiel wall / CPU s | Arena wall / CPU s | games per hour, "
              "OpenSpiel / Arena (Arena's speed-up) | games per CPU-hour, OpenSpiel / Arena | load |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        o, r, gph, gpc = row["openspiel"], row["arena"], row["games_per_hour"], row["games_per_cpu_hour"]
        lines.append(f"| {row['matchup']} | {o['games']} | {o['wall_s']:.1f} / {o['cpu_s']:.1f} | "
                     f"{r['wall_s']:.1f} / {r['cpu_s']:.1f} | {gph['openspiel']:,.0f} / {gph['arena']:,.0f} "
                     f"(x{row['speedup']:.2f}) | {gpc['openspiel']:,.0f} / {gpc['arena']:,.0f} | "
                     f"{row['load_1min'][0]:.0f}-{row['load_1min'][1]:.0f} |")
    if "startup" in figures:
        s, b = figures["startup"], figures["break_even"]

        def secs(x):
            return "never" if x is None else f"{x:,.0f} s"

        lines += ["", f"Arena's start-up per study (2 near-instant games, median of {len(s['runs'])}): "
                      f"{s['wall_s']:.1f} s wall, {s['cpu_s']:.1f} CPU-s (of which the idle Ray's "
                      f"{figures['ray_idle_cpu_per_s']:.2f} CPU-s a second). Per game of {figures['throughput']['matchup']}: "
                      f"{b['openspiel_cpu_s_per_game']:.2f} CPU-s in OpenSpiel's loop, {b['arena_cpu_s_per_game']:.2f} "
                      f"in Arena (x{b['arena_over_openspiel_cpu']:.2f}; the idle Ray's {b['arena_idle_ray_cpu_s']:.0f} "
                      f"CPU-s over the run left out). With its workers on free cores, Arena plays "
                      f"more games per hour than the serial loop once a run is longer than "
                      f"{secs(b['serial_s_to_pull_ahead']['startup_wall'])} of serial play (start-up as measured here; "
                      f"{secs(b['serial_s_to_pull_ahead']['startup_cpu'])} at its CPU cost), and 1.8x as many past "
                      f"{secs(b['serial_s_for_1.8x']['startup_wall'])} ({secs(b['serial_s_for_1.8x']['startup_cpu'])}); "
                      f"at most x{b['best_ratio']:.2f} however long the run."]
    return "\n".join(lines)


def bench(options) -> dict:
    """The bench wing's entry (``arena bench openspiel``): the side-by-side at 200 games per
    matchup and 100 of the throughput matchup (``quick``: 40 and 20)."""
    quick = getattr(options, "quick", False)
    return run(games=40 if quick else 200, throughput_games=20 if quick else 100)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.bench.openspiel", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per matchup and loop (even; default 200)")
    parser.add_argument("--throughput-games", type=int, default=100,
                        help="games of the throughput matchup per loop (even; 0: neither it nor the start-up; "
                             "default 100)")
    parser.add_argument("--only-throughput", action="store_true",
                        help="the start-up and the throughput matchup only, not the agreement matchups")
    parser.add_argument("--workers", type=int, default=2, help="Arena's game hosts (default 2)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the tables")
    args = parser.parse_args(argv)
    for name in ("games", "throughput_games"):
        value = getattr(args, name)
        if value < 0 or value % 2 or (name == "games" and value < 2):
            parser.error(f"--{name.replace('_', '-')}: must be an even number >= {2 if name == 'games' else 0}, "
                         f"got {value}")
    figures = run(games=args.games, seed=args.seed, workers=args.workers,
                  matchups=() if args.only_throughput else MATCHUPS, throughput_games=args.throughput_games)
    print(json.dumps(figures, indent=1) if args.json else markdown(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
