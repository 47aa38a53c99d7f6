"""``arena play``: play one Pommerman game between named agents."""
from __future__ import annotations

import argparse
import sys

from . import positive_int


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
    p.add_argument("--max-steps", type=positive_int,
                   help="end the game (a tie among the living) after this many ticks "
                        "(default: the game's, 800)")
    p.add_argument("--ms", type=float, default=40.0, help="milliseconds per decision (default 40)")
    p.add_argument("--iterations", type=positive_int, help="iterations per decision (reproducible games)")
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


def _spec(args, agents: list[tuple[str, dict]]):
    """The one-game study ``arena play`` is: board 0 of study seed ``--seed``, the lineup
    in seat order (validated like any spec; errors name the field)."""
    from cluster.spec.build import build_spec

    game = {"name": "pommerman", "mode": args.mode, "ruleset": args.ruleset}
    if args.view_range is not None:
        game["view_range"] = args.view_range
    if args.collapse is not None:
        game["collapse"] = args.collapse
    if args.max_steps:
        game["max_steps"] = args.max_steps
    budget = {"iterations": args.iterations} if args.iterations else {"ms": args.ms}
    return build_spec({
        "study": {"name": "arena-play", "seed": args.seed},
        "game": game, "budget": budget,
        "design": {"seeds": 1, "games_per_seed": 1, "rotate_seats": False},
        "lineup": [{"agent": name, "params": params} for name, params in agents],
        "tracking": {"enabled": False},
    }, check_files=False)


def run(args) -> int:
    """Play the game with the cluster's game loop (:func:`cluster.run.play.play_recorded_game`)
    and the plan's seeding (:mod:`cluster.spec.plan`: board and seat seeds of game 0), then
    print the boards (``--show``, ``--show-view``) by replaying its record."""
    from cluster.spec.plan import plan_study
    from cluster.run.play import build_agents, play_recorded_game
    from cluster.replay.records import replay, save_record
    from cluster.run.warm import warm_up_parallel

    try:
        specs = [_parse_agent_spec(s) for s in args.agents.split(",")]
        spec = _spec(args, specs)
    except ValueError as exc:
        print(f"arena play: {exc}", file=sys.stderr)
        return 2
    cfg = spec.game_config
    print(f"pommerman {cfg.mode} / {cfg.ruleset}  view range "
          f"{'full' if cfg.view_range is None else cfg.view_range}  collapse "
          f"{'on' if cfg.collapse else 'off'}  max steps {cfg.max_steps}  seed {args.seed}")
    if args.show_view is not None and not 0 <= args.show_view < spec.num_players:
        print(f"arena play: --show-view: seat must be 0..{spec.num_players - 1}, got {args.show_view}",
              file=sys.stderr)
        return 2
    warm_up_parallel(spec)  # a fresh numba cache: the agents' kernels compile side by side
    agents = build_agents(spec)
    task = plan_study(spec)[0].games[0]
    rows, _, record = play_recorded_game(spec, task, agents, worker="arena play")
    if rows[0]["error"]:
        raise RuntimeError(rows[0]["error"].splitlines()[0])
    if args.show or args.show_view is not None:
        for step, game in replay(record):
            if step:
                print(f"actions {[int(a) for a in record.actions[step - 1]]}")
            if args.show:
                print(game.render(), "\n")
            if args.show_view is not None:
                print(f"seat {args.show_view} sees ({specs[args.show_view][0]}):")
                print(game.render(game.observation(args.show_view)), "\n")
    print(f"seed {args.seed}  {args.mode} / {args.ruleset}  length {rows[0]['length']}")
    print(f"{'seat':<5}{'agent':<14}{'team':<6}{'result':<8}{'reward':>7}{'it/dec':>9}{'ms/dec':>9}{'invalid':>9}"
          f"{'overruns':>9}")
    for row in rows:
        print(f"{row['seat']:<5}{row['agent']:<14}{row['team']:<6}{row['result']:<8}{row['reward']:>7.0f}"
              f"{row['mean_iterations']:>9.0f}{row['mean_ms']:>9.2f}{row['invalid_actions']:>9}{row['overruns']:>9}")
    if args.record:
        path = save_record(args.record, record)
        print(f"record: {path}  (arena replay {path} --html)")
    return 0
