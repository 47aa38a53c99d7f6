"""Budget calibration of the FEMCTS study: forward-model ticks per search iteration.

The study gave every agent 40 ms per decision in the Java framework. On this
machine type the framework does 1,270 MCTS iterations (rollout depth 12) and
676 RHEA iterations in 40 ms (the project's reference notes on the framework's agents).
FEMCTS gets the same forward-model work as that MCTS: its iteration budget is
``round(1270 * mcts_ticks_per_iteration / femcts_ticks_per_iteration)``,
with both ratios measured here on the same positions::

    python -m jobs.femcts.calibration            # JSON on stdout

Positions come from java-ruleset FFA games (board collapse on) played by
rule-based agents; at every ``stride``-th tick the seat-0 observation is
searched by MCTS (depth 12, ``mcts_iterations``) and by each FEMCTS variant
(``mcts_iterations`` iterations, its population carried from position to
position as in a game). A tick is one call of the forward model (tree descent
and rollout alike); an iteration simulates fewer than ``rollout_depth`` ticks
only when its simulated game ends early.
"""
from __future__ import annotations

import json

import numba as nb
import numpy as np

from games.rng import make_rng
from games.pommerman import Pommerman, PommermanConfig
from games.pommerman.kernels import M_STEP, N_ACTIONS, copy_into, heuristic, require_layout_shapes

from agents.api import Budget
from agents.episodes import agent_players, begin_game, play
from agents.pommerman.mcts import simulate
from agents.pommerman.search_model import prepare_search, scratch_state
from agents.registry import make_agent
from agents.search import backup, new_tree, reset_tree

#: The Java framework's iterations per 40 ms decision on this machine type.
JAVA_MCTS_DEPTH12_ITERATIONS = 1270
JAVA_RHEA_ITERATIONS = 676

#: FEMCTS variants measured (label -> params).
VARIANTS = {
    "femcts_unfeatured": {"featured": False},
    "femcts_nea3": {"n_effective": 3, "mutation_variant": "shared", "mutation_strength": 0.001},
    "femcts_nea2": {"n_effective": 2, "mutation_variant": "shared", "mutation_strength": 0.001},
}


@nb.njit(cache=True)
def mcts_ticks(observation, player, tree, root, scratch, iterations, exploration, epsilon,
               rollout_depth, rng):
    """The MCTS search loop of :func:`agents.pommerman.mcts.mcts_search` (same
    phases, iteration budget), returning the forward-model ticks it simulated (int64)."""
    hidden, joint, n_hidden, root_wood = prepare_search(root, observation)
    require_layout_shapes(scratch)  # simulate's ticks are unchecked
    reset_tree(tree)
    root_step = root.meta[M_STEP]
    ticks = 0
    for _ in range(iterations):
        copy_into(scratch, root)
        leaf = simulate(tree, scratch, player, rollout_depth, exploration, epsilon, joint, hidden, n_hidden, rng)
        backup(tree, leaf, heuristic(root, root_wood, scratch, player))
        ticks += scratch.meta[M_STEP] - root_step
    return ticks


def calibrate(games: int = 3, stride: int = 10, mcts_iterations: int = JAVA_MCTS_DEPTH12_ITERATIONS,
              rollout_depth: int = 12, seed: int = 0, ruleset: str = "java") -> dict:
    """Ticks per iteration of MCTS and each FEMCTS variant, and the FEMCTS
    iteration budget that matches MCTS's forward-model work (see the module docstring)."""
    import math

    config = PommermanConfig(ruleset=ruleset)
    budget = Budget(iterations=mcts_iterations)
    tree = new_tree(mcts_iterations + 1, N_ACTIONS)
    root, scratch = scratch_state(), scratch_state()  # what an MCTS agent searches in
    rng = make_rng(seed)
    femcts = {k: make_agent("femcts", {**p, "rollout_depth": rollout_depth}, budget, config)
              for k, p in VARIANTS.items()}
    mcts_total, positions = 0, 0
    fem_ticks = {k: 0 for k in femcts}
    fem_iterations = {k: 0 for k in femcts}
    for g in range(games):
        game = Pommerman(config)
        seeds = np.random.SeedSequence([seed, g]).spawn(6)
        game.reset(seeds[0])
        players = [make_agent("rule_based", {}, budget, config) for _ in range(4)]
        begin_game(players, seeds[1:5])
        for agent in femcts.values():
            agent.begin_game(0, seeds[5])

        def measure(game):
            nonlocal mcts_total, positions
            if game.step_count % stride == 0:
                obs = game.observation(0)
                mcts_total += int(mcts_ticks(obs, 0, tree, root, scratch, mcts_iterations,
                                             math.sqrt(2), 1e-6, rollout_depth, rng))
                for key, agent in femcts.items():
                    before = agent.ticks
                    _, iterations = agent.decide(obs)
                    fem_ticks[key] += agent.ticks - before
                    fem_iterations[key] += iterations
                positions += 1

        play(game, agent_players(players), until=lambda game: not game.is_alive(0), before_step=measure)
    mcts_tpi = mcts_total / (positions * mcts_iterations)
    out = {"ruleset": ruleset, "collapse": config.collapse, "games": games, "stride": stride,
           "positions": positions, "rollout_depth": rollout_depth,
           "mcts_iterations": mcts_iterations, "mcts_ticks_per_iteration": mcts_tpi}
    for key in femcts:
        tpi = fem_ticks[key] / fem_iterations[key]
        out[f"{key}_ticks_per_iteration"] = tpi
        out[f"{key}_iterations_same_ticks"] = int(round(mcts_iterations * mcts_tpi / tpi))
    return out


def main(argv=None) -> None:
    import argparse

    from jobs.commands import non_negative_int, positive_int

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=positive_int, default=3, help="rule-based games (default 3)")
    parser.add_argument("--stride", type=positive_int, default=10,
                        help="search every stride-th tick of seat 0 (default 10)")
    parser.add_argument("--mcts-iterations", type=positive_int, default=JAVA_MCTS_DEPTH12_ITERATIONS,
                        help=f"MCTS's and FEMCTS's budget (default {JAVA_MCTS_DEPTH12_ITERATIONS})")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    args = parser.parse_args(argv)
    print(json.dumps(calibrate(args.games, args.stride, args.mcts_iterations, seed=args.seed),
                     indent=2))


if __name__ == "__main__":
    main()
