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
per hour of each loop (wall clock; Arena's includes its start-up: the Ray actors, the
plan, the store, but not Ray's own ``init``).

    python -m jobs.bench.openspiel                       # the table of games/openspiel/README.md
    python -m jobs.bench.openspiel --games 40 --json     # a quick look, JSON

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

__all__ = ["MATCHUPS", "Matchup", "bench", "main", "play_openspiel_loop", "play_arena"]


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


def play_arena(matchup: Matchup, games: int, seed: int, workers: int, results_dir: Path) -> dict:
    """``games`` games of ``matchup`` as an Arena study on Ray (``games / 2`` seeds, seats
    swapped): the first bot's wins, ties, losses and the wall seconds of ``run_study``."""
    from cluster.results.store import ResultStore
    from cluster.run.driver import run_study
    from cluster.spec.build import build_spec

    spec = build_spec({
        "study": {"name": f"side-by-side-{matchup.game}-{_name(matchup.first)}-{_name(matchup.second)}"
                          .replace("(", "").replace(")", "").lower(),
                  "seed": seed, "results_dir": str(results_dir)},
        "game": {"name": f"openspiel:{matchup.game}"},
        "budget": {"iterations": 1},
        "design": {"seeds": games // 2, "games_per_seed": 2, "rotate_seats": True, "series_by": "game"},
        "lineup": [_lineup_entry(matchup.first, "first"), _lineup_entry(matchup.second, "second")],
        "tracking": {"enabled": False},
    })
    wall = time.perf_counter()
    result = run_study(spec, num_workers=workers, progress=False, tracking=False)
    wall = time.perf_counter() - wall
    rows = ResultStore(result.study_dir).read()
    first = rows[rows["label"] == "first"]
    if (first["result"] == "error").any():
        raise RuntimeError(f"{matchup.label}: a game failed: {first['error'].dropna().iloc[0]}")
    results = [{"win": 1, "tie": 0, "loss": -1}[r] for r in first["result"]]
    return _tally(results) | {"wall_s": wall, "invalid_actions": int(rows["invalid_actions"].sum())
                              if "invalid_actions" in rows else 0}


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


def run(games: int = 200, seed: int = 2026, workers: int = 2, matchups=MATCHUPS) -> dict:
    """Every matchup in both loops; ``{"rows": [...], "load": ...}``."""
    import os

    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=max(2, workers), include_dashboard=False, log_to_driver=False)
    rows = []
    with tempfile.TemporaryDirectory(prefix="arena-side-by-side-") as tmp:
        for i, matchup in enumerate(matchups):
            load_before = os.getloadavg()[0]
            openspiel = play_openspiel_loop(matchup, games, seed + i)
            arena = play_arena(matchup, games, seed + i, workers, Path(tmp))
            rows.append({"matchup": matchup.label, "openspiel": openspiel, "arena": arena,
                         "agreement": agreement(openspiel, arena),
                         "games_per_hour": {"openspiel": 3600 * games / openspiel["wall_s"],
                                            "arena": 3600 * games / arena["wall_s"]},
                         "speedup": openspiel["wall_s"] / arena["wall_s"],
                         "load_1min": [load_before, os.getloadavg()[0]]})
    return {"games_per_matchup": games, "workers": workers, "seed": seed, "rows": rows}


def markdown(figures: dict) -> str:
    """The table of ``games/openspiel/README.md``."""
    def cell(side: dict) -> str:
        return " / ".join(f"{100 * side[f'{o}_rate']:.0f}% ({100 * side[f'{o}_ci'][0]:.0f}-"
                          f"{100 * side[f'{o}_ci'][1]:.0f})" for o in ("win", "tie", "loss"))

    lines = ["| matchup (first bot's W / T / L, 95% intervals) | OpenSpiel's `evaluate_bots` | "
             f"Arena, {figures['workers']} workers | agree (chi-square p) | games/hour OpenSpiel / Arena |",
             "|---|---|---|---|---|"]
    for row in figures["rows"]:
        a, gph = row["agreement"], row["games_per_hour"]
        lines.append(f"| {row['matchup']} | {cell(row['openspiel'])} | {cell(row['arena'])} | "
                     f"{'yes' if a['agree'] else 'NO'} ({a['chi2_p']:.2f}) | "
                     f"{gph['openspiel']:,.0f} / {gph['arena']:,.0f} (x{row['speedup']:.2f}) |")
    return "\n".join(lines)


def bench(options) -> dict:
    """The bench wing's entry: the side-by-side at 200 games per matchup (``quick``: 40)."""
    return run(games=40 if getattr(options, "quick", False) else 200)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.bench.openspiel", description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per matchup and loop (even; default 200)")
    parser.add_argument("--workers", type=int, default=2, help="Arena's game hosts (default 2)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of the table")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        parser.error(f"--games: must be an even number >= 2, got {args.games}")
    figures = run(games=args.games, seed=args.seed, workers=args.workers)
    print(json.dumps(figures, indent=1) if args.json else markdown(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
