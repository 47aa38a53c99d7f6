"""Speed of the Pommerman search agents on this machine.

    python -m jobs.bench.pommerman.search           # prints the dict as JSON
    python -m jobs.bench.pommerman.search --feature-speed --ruleset java
                      # featured FEMCTS's CPU time per iteration against unfeatured's

Each measured agent sits in seat 0 against three ``opponent`` agents
(default ``rule_based``: they survive, so the board stays busy; random
opponents blow themselves up within ~20 ticks and flatter the figures); the game is
stepped with everybody's actions and stopped after ``decisions_per_game``
decisions of the measured agent (or at its death / the end of the game).
The first decision of a process compiles (or loads) the kernels and is not
timed. Reported numbers are medians over all timed decisions.
"""
from __future__ import annotations

import json
import statistics
import time

import numpy as np

from games.pommerman import Pommerman, PommermanConfig

from agents.api import Budget
from agents.episodes import agent_players, begin_game, play
from agents.registry import make_agent
from agents.search import depth_summary


FEMCTS_VARIANTS = {"unfeatured": {"featured": False}, "nea6": {}, "nea3": {"n_effective": 3},
                   "nea2": {"n_effective": 2}}
"""The FEMCTS variants the benchmarks compare, by short name (agent params)."""
BENCH_KEYS = {"unfeatured": "femcts_unfeatured", "nea6": "femcts", "nea3": "femcts_nea3",
              "nea2": "femcts_nea2"}
"""Their names in :func:`bench_agents`'s keys (``femcts``: featured, nEA = 6)."""


def _decisions(agent_name, params, budget, game_config, games, decisions_per_game, seed, opponent,
               shapes=None):
    """(iterations, seconds) of every timed decision of ``agent_name`` in seat 0;
    with a list ``shapes``, also appends ``depth_summary`` of the agent's tree
    after each timed decision (agents with a ``search_tree``)."""
    records = []
    for g in range(games):
        game = Pommerman(game_config)
        seeds = np.random.SeedSequence([seed, g]).spawn(5)
        game.reset(seeds[0])
        agents = [make_agent(agent_name, params, budget, game_config)]
        agents += [make_agent(opponent, {}, budget, game_config) for _ in range(3)]
        begin_game(agents, seeds[1:])
        agents[0].decide(game.observation(0))  # warm-up: compile or load the cache

        def timed(game, seat, measured=agents[0]):
            obs = game.observation(seat)
            t0 = time.perf_counter()
            action, iterations = measured.decide(obs)
            records.append((iterations, time.perf_counter() - t0))
            if shapes is not None:
                shapes.append(depth_summary(measured.search_tree))
            return action

        # one decision of seat 0 per step while it lives (the others are asked only while they do)
        play(game, [timed] + agent_players(agents)[1:], max_steps=decisions_per_game,
             until=lambda game: not game.is_alive(0))
    return records


def bench_agents(games: int = 3, decisions_per_game: int = 40, ms: float = 40.0,
                 ruleset: str = "canonical", mode: str = "ffa", seed: int = 0,
                 opponent: str = "rule_based") -> dict:
    """Median speed figures of the default MCTS, RHEA and FEMCTS variants.

    Returns a dict with ``mcts_iters_per_40ms`` (iterations per ``ms``
    decision; the key keeps its name whatever ``ms``), ``rhea_iters_per_40ms``,
    ``femcts*_iters_per_40ms``, ``femcts*_vs_unfeatured`` (featured FEMCTS's
    iterations per ``ms`` relative to unfeatured's on the same positions, see
    :func:`paired_femcts_iterations`), ``ms_per_decision_mcts_200`` (wall ms of
    a 200-iteration MCTS decision), ``rhea_ms_per_decision_200``, the
    settings used, ``*_tree_depth_mean`` / ``*_tree_depth_max`` of the MCTS and
    FEMCTS trees and what one iteration contains (:func:`iteration_contents`).
    """
    config = PommermanConfig(mode=mode, ruleset=ruleset)
    out = {"ruleset": ruleset, "mode": mode, "budget_ms": ms, "games": games,
           "decisions_per_game": decisions_per_game, "opponent": opponent}
    timed = [("mcts", "mcts", {}), ("rhea", "rhea", {})]
    timed += [(BENCH_KEYS[short], "femcts", params) for short, params in FEMCTS_VARIANTS.items()]
    for key, name, params in timed:
        shapes = None if name == "rhea" else []
        recs = _decisions(name, params, Budget(ms=ms), config, games, decisions_per_game, seed, opponent,
                          shapes)
        out[f"{key}_iters_per_40ms"] = float(statistics.median(r[0] for r in recs))
        out[f"{key}_decision_ms_timed"] = 1000.0 * float(statistics.median(r[1] for r in recs))
        if shapes:
            out[f"{key}_tree_depth_mean"] = round(float(statistics.median(s[0] for s in shapes)), 2)
            out[f"{key}_tree_depth_max"] = int(statistics.median(s[1] for s in shapes))
    out.update(iteration_contents(config))
    # featured FEMCTS's iterations relative to unfeatured's at equal time (issue 8:
    # at least 0.9), on the same positions: the medians above come from each
    # variant's own games, whose positions (bombs, flames) differ in cost
    paired = paired_femcts_iterations(config, ms, seed=seed)
    out["femcts_paired_positions"] = paired.pop("positions")
    for short, ratio in paired.items():
        out[f"{BENCH_KEYS[short]}_vs_unfeatured"] = ratio
    for name in ("mcts", "rhea"):
        recs = _decisions(name, {}, Budget(iterations=200), config, games, decisions_per_game, seed, opponent)
        key = "ms_per_decision_mcts_200" if name == "mcts" else "rhea_ms_per_decision_200"
        out[key] = 1000.0 * float(statistics.median(r[1] for r in recs))
    return out


def iteration_contents(game_config) -> dict:
    """What one iteration of each benchmarked agent contains, from the agents'
    default configs (issue 22, point 6: so that figures compare fairly with
    the Java framework's, in the project's reference notes on the framework's agents).

    ``*_ticks_per_iteration``: forward-model ticks an iteration plays at most
    (fewer when the simulated game, or with the java profile the searcher's own
    game, ends first); ``*_state_copies_per_iteration``: root-state copies;
    ``iteration``: the same in words. The measured tree depths are
    ``*_tree_depth_mean`` / ``*_tree_depth_max`` (median over the timed decisions).
    """
    from agents.pommerman.femcts import FEMCTSConfig
    from agents.pommerman.mcts import MCTSConfig
    from agents.pommerman.rhea import RHEAConfig

    m, r, f = MCTSConfig(), RHEAConfig(), FEMCTSConfig()
    evaluations = r.offspring_count + r.population_size
    mc = r.mc_rollouts_length * r.mc_rollouts_repeat if r.mc_rollouts else 0
    return {
        "mcts_ticks_per_iteration": m.rollout_depth,
        "mcts_state_copies_per_iteration": 1,
        "rhea_ticks_per_iteration": evaluations * (r.individual_length + mc),
        "rhea_state_copies_per_iteration": evaluations,
        "femcts_ticks_per_iteration": f.rollout_depth,
        "femcts_state_copies_per_iteration": 1,
        "iteration": {
            "mcts": f"copy the root; descend by UCT re-simulating each action, expand one node; random "
                    f"rollout (own moves avoid flames, opponents uniform) to {m.rollout_depth} ticks "
                    f"from the root in all (tree + rollout, the Java default; its study runner uses 12); "
                    f"heuristic of the last state; back up",
            "rhea": f"one generation: {r.offspring_count} offspring + {r.population_size} parent(s) "
                    f"re-evaluated, each {r.individual_length} ticks from a copy of the root "
                    f"(opponents uniform){' + Monte Carlo rollouts' if mc else ''}: "
                    f"{evaluations * (r.individual_length + mc)} ticks",
            "femcts": f"as mcts with the evolved rollout policy, {f.rollout_depth} ticks from the root "
                      f"(the FEMCTS study's depth)",
        },
    }


def _rule_based_positions(config, games: int, stride: int, seed: int) -> list:
    """Seat 0's observations, every ``stride``-th tick, of ``games`` games of four
    rule-based players (until seat 0 dies or the game ends)."""
    positions = []

    def keep(game):
        if game.step_count % stride == 0:
            positions.append(game.observation(0))

    for g in range(games):
        game = Pommerman(config)
        seeds = np.random.SeedSequence([seed, g]).spawn(5)
        game.reset(seeds[0])
        players = [make_agent("rule_based", {}, Budget(iterations=1), config) for _ in range(4)]
        begin_game(players, seeds[1:])
        play(game, agent_players(players), until=lambda game: not game.is_alive(0), before_step=keep)
    return positions


def paired_femcts_iterations(config, ms: float = 40.0, games: int = 2, stride: int = 16,
                             seed: int = 0) -> dict:
    """Featured FEMCTS's iterations per ``ms`` decision relative to unfeatured's,
    on the same positions (seat 0 of rule-based games, every ``stride``-th tick),
    the variants interleaved position by position. Returns ``{variant: total
    iterations / unfeatured's total}`` for ``nea6``, ``nea3``, ``nea2``, and
    ``positions``."""
    positions = _rule_based_positions(config, games, stride, seed)
    agents = {k: make_agent("femcts", p, Budget(ms=ms), config) for k, p in FEMCTS_VARIANTS.items()}
    for agent in agents.values():
        agent.begin_game(0, np.random.SeedSequence(1))
        agent.decide(positions[0])  # compile or load the cache
    total = dict.fromkeys(agents, 0)
    for obs in positions:
        for key, agent in agents.items():
            total[key] += agent.decide(obs)[1]
    out = {key: total[key] / total["unfeatured"] for key in ("nea6", "nea3", "nea2")}
    out["positions"] = len(positions)
    return out


def feature_speed(ruleset: str = "java", iterations: int = 600, games: int = 4, stride: int = 8,
                  seed: int = 7, rounds: int = 7) -> dict:
    """CPU time per FEMCTS iteration, featured (nEA = 6, 3, 2) against unfeatured,
    at a fixed iteration budget on the same positions (seat 0 of rule-based games,
    every ``stride``-th tick).

    Each of ``rounds`` rounds searches every position once with every variant,
    the variants interleaved position by position, so that a slow spell of a
    shared machine hits all of them alike. Process CPU time is summed per round
    and variant; ``*_vs_unfeatured`` (featured iterations per unfeatured
    iteration at equal time) is the median over rounds of the round's ratio,
    and ``*_us_per_iteration`` the median round's figure. Every agent keeps its
    population from decision to decision, as in a game.
    """
    config = PommermanConfig(ruleset=ruleset)
    variants = FEMCTS_VARIANTS
    agents = {k: make_agent("femcts", p, Budget(iterations=iterations), config)
              for k, p in variants.items()}
    positions = _rule_based_positions(config, games, stride, seed)
    for agent in agents.values():
        agent.begin_game(0, np.random.SeedSequence(1))
        agent.decide(positions[0])  # compile or load the cache
    per_round = {key: [] for key in variants}
    for _ in range(rounds):
        cpu = dict.fromkeys(variants, 0.0)
        for obs in positions:
            for key, agent in agents.items():
                t0 = time.process_time()
                agent.decide(obs)
                cpu[key] += time.process_time() - t0
        for key in variants:
            per_round[key].append(cpu[key])
    n = len(positions) * iterations
    out = {"ruleset": ruleset, "positions": len(positions), "iterations": iterations, "rounds": rounds}
    for key in variants:
        out[f"{key}_us_per_iteration"] = 1e6 * statistics.median(per_round[key]) / n
    for key in ("nea6", "nea3", "nea2"):
        ratios = [u / f for u, f in zip(per_round["unfeatured"], per_round[key])]
        out[f"{key}_vs_unfeatured"] = statistics.median(ratios)
        out[f"{key}_vs_unfeatured_range"] = [min(ratios), max(ratios)]
    return out


def main(argv=None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--decisions", type=int, default=40)
    parser.add_argument("--ms", type=float, default=40.0)
    parser.add_argument("--ruleset", default="canonical")
    parser.add_argument("--mode", default="ffa")
    parser.add_argument("--opponent", default="rule_based")
    parser.add_argument("--rounds", type=int, default=7, help="--feature-speed: interleaved rounds")
    parser.add_argument("--iterations", type=int, default=600,
                        help="--feature-speed: iterations per decision (the study's specs: 1270)")
    parser.add_argument("--feature-speed", action="store_true",
                        help="FEMCTS featured vs unfeatured CPU time per iteration instead")
    args = parser.parse_args(argv)
    if args.feature_speed:
        print(json.dumps(feature_speed(args.ruleset, iterations=args.iterations, rounds=args.rounds),
                         indent=2))
        return
    print(json.dumps(bench_agents(args.games, args.decisions, args.ms, args.ruleset, args.mode,
                                 opponent=args.opponent), indent=2))


if __name__ == "__main__":
    main()
