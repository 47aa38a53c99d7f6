"""``arena check-agent``: the agent contract (agents/contract.py) for one agent, yours included."""
from __future__ import annotations

import sys

from . import UsageError


def add_parser(sub) -> None:
    """Register ``arena check-agent`` and its options."""
    p = sub.add_parser(
        "check-agent", help="check an agent (yours: package.module:ClassName) against the agent contract",
        description="Play short seeded games with the agent on each game it declares (Agent.games; "
                    "--game for one) and print one PASS / FAIL / n/a line per clause of the agent "
                    "contract: construction from its Config defaults, begin_game with a seed, legal "
                    "actions, the iteration budget, the same moves from the same seed (in this "
                    "process and in another one), learned state through .npz. With --ms, the "
                    "milliseconds per decision under that budget are printed as a measurement. "
                    "Exit 0 if every clause passes, 1 if one fails.")
    p.add_argument("agent", help="an import path package.module:ClassName (the module must be importable, "
                                 "e.g. installed or in the current directory), an installed plugin's "
                                 "name, or a built-in agent's name")
    p.add_argument("--game", action="append", metavar="GAME",
                   help="a game to check on (repeatable; default: every game the agent declares)")
    p.add_argument("--iterations", type=int, default=None,
                   help="iteration budget per decision (default 8)")
    p.add_argument("--steps", type=int, default=None, help="steps per game at most (default 24)")
    p.add_argument("--seed", type=int, default=None, help="seed of the games (default 35)")
    p.add_argument("--ms", type=float, default=None, metavar="MS",
                   help="also measure milliseconds per decision under a budget of MS per decision")
    p.set_defaults(func=run)


def _positive(name: str, value, default):
    if value is None:
        return default
    if value < 1:
        raise UsageError(f"--{name}: must be >= 1, got {value}")
    return value


def run(args) -> int:
    import os

    import agents  # noqa: F401  (registers the built-in agents)
    from agents.contract import (DEFAULT_ITERATIONS, DEFAULT_SEED, DEFAULT_STEPS, check_agent, contract_budget,
                                 declared_games, measure_decision_ms)
    from agents.registry import agent_class
    from games.plugins import PluginError
    from games.registry import check_game

    iterations = _positive("iterations", args.iterations, DEFAULT_ITERATIONS)
    steps = _positive("steps", args.steps, DEFAULT_STEPS)
    seed = DEFAULT_SEED if args.seed is None else args.seed
    if args.ms is not None and not 0 < args.ms <= 600_000:
        raise UsageError(f"--ms: must be in (0, 600000], got {args.ms}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # an import path to a module in the current directory
    try:
        cls = agent_class(args.agent)
    except PluginError as exc:
        raise UsageError(f"agent {args.agent!r}: {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc).removeprefix("agent: ")) from None
    games = declared_games(args.agent)
    for game in args.game or ():
        try:
            check_game(game)
        except ValueError as exc:
            raise UsageError(f"--game: {exc}") from None
        if cls.games and game not in cls.games:
            raise UsageError(f"--game: {args.agent!r} declares the games {list(cls.games)} "
                             f"(Agent.games), not {game!r}")
    games = args.game or games
    if not games:
        raise UsageError(f"{args.agent!r} declares no game and no registered game has kernels")
    failed = 0
    for game in games:
        budget = contract_budget(args.agent, iterations).describe()
        print(f"{args.agent} on {game} ({budget} per decision, at most {steps} steps, seed {seed})")
        for check in check_agent(args.agent, game, iterations=iterations, steps=steps, seed=seed):
            print(f"  {check.line()}")
            failed += check.passed is False
        if args.ms is not None:
            figure = measure_decision_ms(args.agent, game, args.ms, steps=steps, seed=seed)
            print(f"  info  ms budget {args.ms:g}: mean {figure['mean_ms']:.2f} ms, p95 {figure['p95_ms']:.2f} ms, "
                  f"max {figure['max_ms']:.2f} ms per decision over {figure['decisions']} decisions "
                  f"(a measurement, not a check)")
    print(f"{'FAILED' if failed else 'passed'}: {failed} failed check{'s' * (failed != 1)} "
          f"on {len(games)} game{'s' * (len(games) != 1)}")
    return 1 if failed else 0
