"""Probe: ``mcts_generic`` against OpenSpiel's C++ ``MCTSBot`` on connect four, in one sitting.

Both search the same positions with UCT c = 2, random rollouts to the end (OpenSpiel:
``RandomRolloutEvaluator`` with one rollout; Arena: ``rollout = "random"``), no solver,
and the same number of simulations per decision (``--simulations``, 10,000 as in
issue 53). The positions are the first one and those after ``k`` random plies
(``--positions``), applied to both games column by column. Rounds interleave the two
searches (and Arena's pure-Python path, with ``--python-simulations`` per decision, on the
plugin game and on OpenSpiel's own connect four through the bridge, ``openspiel:connect_four``:
what ``mcts_generic`` costs on an OpenSpiel game) so that load changes hit them alike; the figure of each is simulations per CPU-second of
this process (``time.process_time``), the median over rounds, and the ratio
Arena / OpenSpiel per position. Prints one JSON object.

    pip install 'arena[openspiel]'        # open_spiel 2.0.2
    python jobs/bench/probes/generic_mcts_vs_openspiel.py --rounds 5

The connect-four game is the tests' plugin (``tests/plugin_games/connect_four.py``),
loaded by import path from ``--plugin-dir`` (default: the repository's ``tests``).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

GAME = "plugin_games.connect_four:ConnectFour"


def positions(count: int, seed: int) -> list[list[int]]:
    """Column sequences: the empty board, then random openings of 2, 4, ... plies (random
    players through the shared game loop, ``agents.episodes``)."""
    from agents.episodes import play, random_players
    from games.registry import make_config, make_game

    rng = np.random.default_rng(seed)
    out = [[]]
    for k in range(1, count):
        game = make_game(GAME, make_config(GAME, {}))
        game.reset(0)
        columns: list[int] = []
        play(game, random_players(rng, 2), max_steps=2 * k,
             after_step=lambda g, joint: columns.append(int(sum(joint))))
        out.append(columns)
    return out


def arena_timer(columns: list[int], simulations: int, path: str, seed: int, game_name: str = GAME):
    """A function that runs one decision of mcts_generic on ``game_name`` from the
    position and returns its CPU seconds (the agent is built, and its search loaded,
    beforehand)."""
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_config, make_game

    config = make_config(game_name, {})
    game = make_game(game_name, config)
    game.reset(0)
    for col in columns:
        actions = [0, 0]
        actions[game.acting_players()[0]] = col
        game.step(actions)
    seat = game.acting_players()[0]
    agent = make_agent("mcts_generic", {"exploration": 2.0, "path": path}, Budget(iterations=simulations), config)
    agent.begin_game(seat, np.random.SeedSequence(seed))
    observation = game.observation(seat)

    def run() -> float:
        start = time.process_time()
        agent.act(observation)
        assert agent.last_iterations == simulations
        return time.process_time() - start

    return run


def openspiel_timer(columns: list[int], simulations: int, seed: int):
    import pyspiel

    game = pyspiel.load_game("connect_four")
    state = game.new_initial_state()
    for col in columns:
        state.apply_action(col)
    evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
    bot = pyspiel.MCTSBot(game, evaluator, 2.0, simulations, 10 ** 9, False, seed, False)

    def run() -> float:
        start = time.process_time()
        bot.step(state)
        return time.process_time() - start

    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=10_000)
    parser.add_argument("--python-simulations", type=int, default=1_000,
                        help="simulations of the pure-Python path per decision (0: skip it)")
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plugin-dir", default=str(Path(__file__).resolve().parents[3] / "tests"))
    args = parser.parse_args(argv)
    sys.path[:0] = [str(Path(__file__).resolve().parents[3]), args.plugin_dir]  # this tree's Arena first
    import agents  # noqa: F401  (registers mcts_generic)
    import pyspiel

    result = {"game": "connect_four", "simulations": args.simulations, "uct_c": 2.0, "rounds": args.rounds,
              "openspiel": pyspiel.__version__ if hasattr(pyspiel, "__version__") else "2.x", "positions": []}
    for i, columns in enumerate(positions(args.positions, args.seed)):
        timers = {"arena": arena_timer(columns, args.simulations, "kernels", args.seed + i),
                  "openspiel": openspiel_timer(columns, args.simulations, args.seed + i)}
        if args.python_simulations:
            timers["arena_python"] = arena_timer(columns, args.python_simulations, "python", args.seed + i)
            timers["arena_python_openspiel_game"] = arena_timer(columns, args.python_simulations, "python",
                                                                args.seed + i, "openspiel:connect_four")
        for run in timers.values():  # warm: compile or load the search, fill caches
            run()
        seconds = {name: [] for name in timers}
        for _ in range(args.rounds):
            for name, run in timers.items():
                seconds[name].append(run())
        simulations = {"arena": args.simulations, "openspiel": args.simulations,
                       "arena_python": args.python_simulations,
                       "arena_python_openspiel_game": args.python_simulations}
        rate = {name: simulations[name] / statistics.median(s) for name, s in seconds.items()}
        row = {"columns": columns, **{f"{name}_per_cpu_s": round(r) for name, r in rate.items()},
               "ratio_arena_openspiel": round(rate["arena"] / rate["openspiel"], 2)}
        if "arena_python" in rate:
            row["ratio_kernels_python"] = round(rate["arena"] / rate["arena_python"], 1)
            row["ratio_openspiel_python_on_its_game"] = round(rate["openspiel"] / rate["arena_python_openspiel_game"], 1)
        result["positions"].append(row)
    ratios = [row["ratio_arena_openspiel"] for row in result["positions"]]
    result["ratio_arena_openspiel_min"] = min(ratios)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
