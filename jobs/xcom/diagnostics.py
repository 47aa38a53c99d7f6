"""Does the learned value reach the search? Per board, over runs of rounds of a TD agent
against MCTS (issue 23, point 5)::

    python -m jobs.xcom.diagnostics --rounds 40 --runs 2          # JSON on stdout

For every decision of the TD agent (default Conv-AE+FA) it records, from the search
statistics of ``mcts.xcom_search`` (``search_stats``):

* ``share_reading_v_at_root``: decisions in which UCT selected at the root at least once,
  i.e. the root's children (one ply below the root, each carrying its command's value as
  ``node_bonus``) were compared with the value term. Before that, every iteration expands
  an untried root command at random and the value is never read.
* ``share_reading_v_deeper``: decisions in which UCT selected at one of the agent's own
  nodes two or more plies below the root (reading the values of its children there).
* ``share_reading_v``: either of the two.
* ``share_differs_from_mcts``: decisions in which plain MCTS (no value term), searching the
  same observation with the same budget from the same generator state, chooses another
  command. The two searches draw the same random numbers until a selection differs; after
  that their rollouts differ, so this share includes the search's own noise:
* ``share_mcts_differs_from_mcts``: the noise floor, decisions in which plain MCTS from
  that generator state and plain MCTS from an independent one (a stream of its own per
  run) choose different commands.
* ``median_legal_commands``: of the agent at its decisions.

With ``move_encoding = "two_level"`` (``--move-encoding two_level``) the root decision is
the unit node and the command nodes below it: "at the root" counts UCT selections at either
(the units' bonuses are their best commands' values), "deeper" at the agent's own nodes of
later plies; plain MCTS searches with the same encoding.

and the agent's wins / draws / losses (humans' seat) over the rounds. The agent learns and
carries its weights across the rounds of a run as in a study; run ``r`` round ``k`` plays
board seed ``k`` (the first mover alternates), seats seeded from
``SeedSequence(seed).spawn`` by (run, round). Iteration budgets only: a diagnostic is a pure
function of its arguments.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from games.rng import make_rng
from games.xcom.kernels import legal_actions

from agents.episodes import agent_player, end_game, play
from agents.search import new_tree
from agents.xcom.mcts import (
    MOVE_ENCODINGS, SEARCH_STATS, STAT_OWN_SELECTIONS_BELOW, STAT_ROOT_SELECTIONS, TARGET_NEXT_STATE, VALUE_NONE,
    dummy_encoder, fresh_state, search_kernel,
)

BOARDS = {"6x6": "mini", "18x18": "large"}
NOISE_STREAM = 1  # spawn_key of the independent generator of the noise floor, per run


class PlainReference:
    """Plain MCTS's choice for one of ``agent``'s decisions, from a given generator state
    (with the agent's ``move_encoding``, so that only the value term differs)."""

    def __init__(self, agent):
        self.agent = agent
        self.tree = new_tree(agent.search_tree.node_visits.shape[0], agent.search_tree.children.shape[1])
        self.root = fresh_state(agent.game_config)
        self.scratch = fresh_state(agent.game_config)
        self.stats = np.zeros(SEARCH_STATS, dtype=np.int64)
        self.weights = np.zeros(1)
        self.encoder = dummy_encoder()
        self.search = search_kernel(agent.config.move_encoding)

    def choose(self, observation, rng) -> int:
        params = self.agent.search_params()._replace(value_kind=VALUE_NONE, value_target=TARGET_NEXT_STATE,
                                                      gamma=0.0, value_weight=0.0)
        action, _ = self.search(observation, self.agent.seat, self.tree, self.root, self.scratch, params,
                                self.weights, self.encoder, self.stats, rng)
        return int(action)


def diagnose(board: str, agent_name: str = "xcom_convae_fa", params: dict | None = None,
             runs: int = 1, rounds: int = 40, iterations: int = 100, seed: int = 2024) -> dict:
    """The shares above for ``agent_name`` (humans) against ``xcom_mcts`` (aliens) on
    ``board`` (``mini`` or ``large``)."""
    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_game

    for name, value in (("runs", runs), ("rounds", rounds), ("iterations", iterations)):
        if not (isinstance(value, int) and value >= 1):
            raise ValueError(f"{name}: must be an int >= 1, got {value!r}")
    game = make_game("xcom", board=board)
    budget = Budget(iterations=iterations)
    root_seeds = np.random.SeedSequence(seed).spawn(runs)
    at_root = deeper = either = differs = noise = decisions = 0
    legal_counts: list[int] = []
    results = {"wins": 0, "draws": 0, "losses": 0}
    t0 = time.perf_counter()
    for run in range(runs):
        agent = make_agent(agent_name, dict(params or {}), budget, game.config)
        rival = make_agent("xcom_mcts", {}, budget, game.config)
        reference = PlainReference(agent)
        noise_rng = make_rng(np.random.SeedSequence(seed, spawn_key=(run, NOISE_STREAM)))
        round_seeds = root_seeds[run].spawn(rounds)
        for k in range(rounds):
            game.reset(k)
            seats = round_seeds[k].spawn(2)
            agent.begin_game(0, seats[0])
            rival.begin_game(1, seats[1])

            def diagnosed(game, side, agent=agent, reference=reference, noise_rng=noise_rng):
                """Seat 0's move, with its search's statistics and the plain reference's choice."""
                nonlocal decisions, at_root, deeper, either, differs, noise
                observation = game.observation(side)
                rng = agent.generator_state()
                action = agent.act(observation)
                plain = reference.choose(observation, rng)
                stats = agent.search_stats
                decisions += 1
                at_root += stats[STAT_ROOT_SELECTIONS] > 0
                deeper += stats[STAT_OWN_SELECTIONS_BELOW] > 0
                either += (stats[STAT_ROOT_SELECTIONS] + stats[STAT_OWN_SELECTIONS_BELOW]) > 0
                differs += plain != action
                noise += plain != reference.choose(observation, noise_rng)
                legal_counts.append(int(legal_actions(observation, 0).sum()))
                return action

            play(game, [diagnosed, agent_player(rival)])
            end_game(game, [agent, rival])
            returns = game.returns()
            key = "wins" if returns[0] > returns[1] else "losses" if returns[0] < returns[1] else "draws"
            results[key] += 1
    share = (lambda x: round(float(x) / decisions, 4)) if decisions else (lambda x: float("nan"))
    return {
        "board": board, "agent": agent_name, "params": dict(params or {}), "runs": runs,
        "rounds": rounds, "iterations": iterations, "seed": seed, "decisions": decisions,
        "share_reading_v_at_root": share(at_root), "share_reading_v_deeper": share(deeper),
        "share_reading_v": share(either), "share_differs_from_mcts": share(differs),
        "share_mcts_differs_from_mcts": share(noise),
        "median_legal_commands": float(np.median(legal_counts)) if legal_counts else float("nan"),
        **results, "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m jobs.xcom.diagnostics",
                                description="How often an XCOM TD agent's search reads its value, "
                                            "and how often its choice differs from plain MCTS's "
                                            "(JSON on stdout).")
    p.add_argument("--agent", default="xcom_convae_fa",
                   help="registry name of the TD agent (humans; default xcom_convae_fa)")
    p.add_argument("--board", choices=sorted(BOARDS), action="append",
                   help="6x6 and/or 18x18 (default both)")
    p.add_argument("--value-target", choices=["td_target", "next_state"], action="append",
                   help="the reading(s) to measure (default both)")
    p.add_argument("--move-encoding", choices=list(MOVE_ENCODINGS), action="append",
                   help="the move encoding(s) of the agent and of the plain reference "
                        "(default flat)")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--seed", type=int, default=2024)
    args = p.parse_args(argv)
    out = []
    for key in args.board or list(BOARDS):
        for target in args.value_target or ["td_target", "next_state"]:
            for encoding in args.move_encoding or ["flat"]:
                params = {"value_target": target}
                if encoding != "flat":
                    params["move_encoding"] = encoding
                try:
                    result = diagnose(BOARDS[key], args.agent, params, args.runs, args.rounds,
                                      args.iterations, args.seed)
                except ValueError as exc:
                    print(f"error: {exc}", file=sys.stderr)
                    return 2
                out.append({"board_size": key, "value_target": target, "move_encoding": encoding,
                            **result})
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
