"""``arena play``: play one Pommerman game between named agents."""
from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    """Register ``arena play`` and its options."""
    p = sub.add_parser("play", help="play one Pommerman game between named agents")
    p.add_argument("--agents", default="mcts,rhea,osla,rule_based",
                   help="four agents, comma separated; parameters as name:key=value;key=value "
                        "(default: mcts,rhea,osla,rule_based)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the board and of every agent (default 0); with --iterations a "
                        "game is a pure function of it")
    p.add_argument("--mode", default="ffa", choices=["ffa", "team"],
                   help="ffa: four players each on their own (default); team: seats 0+2 against 1+3")
    p.add_argument("--ruleset", default="canonical", choices=["canonical", "java"],
                   help="canonical: the NeurIPS 2018 rules (default); java: the Java framework's")
    p.add_argument("--collapse", action=argparse.BooleanOptionalAction, default=None,
                   help="java ruleset: board collapse (default: on for java, as in the framework)")
    p.add_argument("--view-range", type=int, choices=[0, 1, 2, 3, 4],
                   help="partial observability: each agent sees the square of this radius around "
                        "itself (0: its own cell); leave it out for full observability")
    p.add_argument("--max-steps", type=int,
                   help="end the game (a tie among the living) after this many ticks "
                        "(default: the game's, 800)")
    p.add_argument("--ms", type=float, default=40.0, help="milliseconds per decision (default 40)")
    p.add_argument("--iterations", type=int, help="iterations per decision (reproducible games)")
    p.add_argument("--show", action="store_true", help="print the true board every step")
    p.add_argument("--show-view", type=int, metavar="SEAT",
                   help="print the board as seat SEAT (0-3) observes it every step ('?' is fog)")
    p.add_argument("--record", metavar="FILE",
                   help="write the game's record (.npz) for `arena replay FILE`")
    p.set_defaults(func=run)


def _parse_agent_spec(text: str):
    """``name`` or ``name:key=value;key=value`` -> (name, params)."""
    from jobs.overrides import parse_value

    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(";")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"--agents: expected key=value in {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def run(args) -> int:
    import numpy as np

    from agents.api import Budget
    from agents.registry import make_agent
    from games.registry import make_game

    options = {"mode": args.mode, "ruleset": args.ruleset}
    if args.view_range is not None:
        options["view_range"] = args.view_range
    if args.collapse is not None:
        options["collapse"] = args.collapse
    if args.max_steps:
        options["max_steps"] = args.max_steps
    try:
        game = make_game("pommerman", **options)
        budget = Budget(iterations=args.iterations) if args.iterations else Budget(ms=args.ms)
        specs = [_parse_agent_spec(s) for s in args.agents.split(",")]
        if len(specs) != game.num_players:
            raise ValueError(f"--agents: expected {game.num_players} agents, got {len(specs)}")
        agents = [make_agent(name, params, budget, game.config) for name, params in specs]
    except ValueError as exc:
        print(f"arena play: {exc}", file=sys.stderr)
        return 2
    board_seed = np.random.SeedSequence(args.seed, spawn_key=(0,))
    game.reset(board_seed)
    for seat, agent in enumerate(agents):
        agent.begin_game(seat, np.random.SeedSequence(args.seed, spawn_key=(1, seat)))
    cfg = game.config
    header = (f"pommerman {cfg.mode} / {cfg.ruleset}  view range "
              f"{'full' if cfg.view_range is None else cfg.view_range}  collapse "
              f"{'on' if cfg.collapse else 'off'}  max steps {cfg.max_steps}  seed {args.seed}")
    print(header)
    if args.show_view is not None and not 0 <= args.show_view < game.num_players:
        print(f"arena play: --show-view: seat must be 0..{game.num_players - 1}, got {args.show_view}",
              file=sys.stderr)
        return 2

    def show(actions=None) -> None:
        if actions is not None:
            print(f"actions {actions}")
        if args.show:
            print(game.render(), "\n")
        if args.show_view is not None:
            print(f"seat {args.show_view} sees ({specs[args.show_view][0]}):")
            print(game.render(game.observation(args.show_view)), "\n")

    if args.show or args.show_view is not None:
        show()
    from cluster.play import acting_players
    from cluster.replay import GameRecorder, save_record

    recorder = None
    if args.record:
        recorder = GameRecorder("pommerman", game.config, board_seed, [name for name, _ in specs],
                                game.num_actions)
        recorder.start(game)
    while not game.done:
        actions = [0] * len(agents)
        for i in acting_players(game):
            actions[i] = agents[i].act(game.observation(i))
            if recorder is not None:
                recorder.decision(i, agents[i])
        game.step(actions)
        if recorder is not None:
            recorder.step(game, actions)
        if args.show or args.show_view is not None:
            show(actions)
    outcomes = game.outcomes()
    rewards = game.returns()
    print(f"seed {args.seed}  {args.mode} / {args.ruleset}  length {game.step_count}")
    print(f"{'seat':<5}{'agent':<14}{'team':<6}{'result':<8}{'reward':>7}{'it/dec':>9}{'ms/dec':>9}{'invalid':>9}")
    for i, agent in enumerate(agents):
        print(f"{i:<5}{specs[i][0]:<14}{game.teams()[i]:<6}{outcomes[i]:<8}{rewards[i]:>7.0f}"
              f"{agent.mean_iterations:>9.0f}{agent.mean_ms:>9.2f}{int(game.invalid_actions[i]):>9}")
    if recorder is not None:
        path = save_record(args.record, recorder.finish())
        print(f"record: {path}  (arena replay {path} --html)")
    return 0
