"""``arena check-game``: the game contract (games/contract.py) for one game, yours included,
with the clauses of the floors above it (a game record replays; PettingZoo's API test
on the game's face). ``tests/games/test_game_contract.py`` runs the same clauses."""
from __future__ import annotations

import os
import sys

from . import UsageError


def add_parser(sub) -> None:
    """Register ``arena check-game`` and its options."""
    p = sub.add_parser(
        "check-game", help="check a game (yours: package.module:GameClass) against the game contract",
        description="Play seeded random games of the game with its default config and print one PASS / "
                    "FAIL / n/a line per clause of the game contract (games/CONTRACT.md): the base class "
                    "and constructor, reset, step's input checks, observations, pictures, legal masks, "
                    "the end (nobody acts after it, outcomes, returns, stepping changes nothing), "
                    "invalid actions, copies and JSON, the same game from the same seed (here and in "
                    "another process), the generic kernels where declared, a game record that replays, "
                    "and PettingZoo's API test on its face. Installs nothing. "
                    "Exit 0 if every clause passes, 1 if one fails, 2 if the game cannot be loaded.")
    p.add_argument("game", help="an import path package.module:GameClass (the module must be importable, "
                                "e.g. installed or in the current directory), an installed plugin's name, "
                                "or a built-in game's name")
    p.add_argument("--seed", type=int, default=None, help="seed of the random games (default 11)")
    p.add_argument("--max-steps", type=int, default=None,
                   help="steps a random game may take before it fails to end (default 2000)")
    p.set_defaults(func=run)


def record_replays(game_name: str, seed: int, max_steps: int):
    """The clause of the replay floor: a recorded random game replays with the same
    fingerprint at every step, and a tampered record is refused."""
    from cluster.replay.records import GameRecorder, ReplayMismatch, fold16, verify
    from games.contract import BOARD, Check, board_seed, fresh, play_random
    from games.registry import make_config

    game = fresh(game_name, seed)
    recorder = GameRecorder(game_name, make_config(game_name, {}), board_seed(seed),
                            [f"p{i}" for i in range(game.num_players)], game.num_actions, board_index=BOARD)
    recorder.start(game)
    prints = play_random(game, seed, max_steps, on_step=recorder.step)
    record = recorder.finish()
    if verify(record) != record.length or list(record.fingerprints) != [fold16(x) for x in prints]:
        return Check("record replays", False, "the replay does not reproduce the recorded game")
    broken = record.fingerprints.copy()
    broken[-1] ^= 1
    record.fingerprints = broken
    try:
        verify(record)
    except ReplayMismatch:
        return Check("record replays", True, f"{record.length} steps re-simulated, a tampered record refused")
    return Check("record replays", False, "a tampered record was not refused")


def pettingzoo_api(game_name: str, seed: int, max_steps: int):
    """The clause of the PettingZoo face: PettingZoo's own ``api_test`` on the AEC env."""
    import warnings

    from pettingzoo.test import api_test

    from agents.pettingzoo import env
    from games.contract import Check

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(game_name), num_cycles=60)
    return Check("PettingZoo api_test", True, "the AEC face passes pettingzoo.test.api_test")


#: The clauses of the floors above ``games`` (name, function(game, seed, max_steps) -> Check).
UPPER_CLAUSES = (("record replays", record_replays), ("PettingZoo api_test", pettingzoo_api))


def game_checks(game_name: str, *, seed: int | None = None, max_steps: int | None = None,
                other_process: bool = True, modules: tuple[str, ...] = ()) -> list:
    """Every clause of the game contract on ``game_name``: :func:`games.contract.check_game`
    and :data:`UPPER_CLAUSES`, one Check each."""
    from games.contract import DEFAULT_MAX_STEPS, DEFAULT_SEED, Check, check_game

    seed = DEFAULT_SEED if seed is None else seed
    max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
    checks = check_game(game_name, seed=seed, max_steps=max_steps, other_process=other_process, modules=modules)
    for name, clause in UPPER_CLAUSES:
        try:
            checks.append(clause(game_name, seed, max_steps))
        except Exception as exc:
            text = (str(exc).strip().splitlines() or [""])[0]
            checks.append(Check(name, False, f"{type(exc).__name__}: {text}" if text else type(exc).__name__))
    return checks


def run(args) -> int:
    from games.plugins import PluginError
    from games.registry import check_game as load_game

    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed: must be >= 0, got {args.seed}")
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError(f"--max-steps: must be >= 1, got {args.max_steps}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # an import path to a module in the current directory
    try:
        load_game(args.game)
    except PluginError as exc:
        raise UsageError(f"game {args.game!r}: {exc}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.game} (default config)")
    checks = game_checks(args.game, seed=args.seed, max_steps=args.max_steps)
    failed = 0
    for check in checks:
        print(f"  {check.line()}")
        failed += check.passed is False
    print(f"{'FAILED' if failed else 'passed'}: {failed} failed check{'s' * (failed != 1)} of {len(checks)}")
    return 1 if failed else 0
