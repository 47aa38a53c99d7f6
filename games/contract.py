"""The game contract: what every game, built-in or plugin, must do (``games/CONTRACT.md``).

The counterpart of the agent contract (:mod:`agents.contract`; pgx's ``api_test`` is
the model). For a game (registry name, installed plugin or import path
``package.module:GameClass``) with its default config, :func:`check_game` reports one
:class:`Check` per clause:

=================================  =============================================================
``declares``                       a :class:`games.api.Game` subclass whose constructor ran the
                                   base's (``config``, ``state`` None, ``board_index`` None,
                                   ``invalid_actions`` int64 zeros), with ``num_players`` and
                                   ``num_actions`` positive ints
``step checks its input``          ``step`` before ``reset`` raises RuntimeError, a joint action
                                   of the wrong length ValueError naming ``actions``
``reset``                          not done, ``step_count`` 0, no invalid action, ``teams`` and
                                   ``death_ticks`` one per player, someone acts (or chance)
``board index``                    ``reset(seed, board_index)`` keeps the index (an int seed
                                   names its board), a bad index is refused naming it
``observation``                    a NamedTuple of numpy arrays or one numpy array, per player
``render``                         ``render()`` a str, ``render_image()`` a picture
``legal actions``                  at every step of a random game, every acting player's
                                   ``legal_actions`` is bool[num_actions] with a legal action
``a random game ends``             within the step limit, no invalid action counted
``nobody acts after the end``      ``acting_players()`` empty once done
``outcomes and returns``           ``outcomes()`` one of WIN / TIE / LOSS per player,
                                   ``returns()`` float[num_players]
``stepping after the end``         changes nothing (state, step count, invalid actions)
``invalid action replaced``        an invalid action is counted and replaced by
                                   ``replacement_action`` (the same state as playing it)
``copy and JSON``                  ``copy()`` and ``from_json(to_json())`` equal and independent
``same seed, same game``           a seeded random game replayed gives the same fingerprints
``another process``                ... in a separate Python process too
``generic kernels``                where declared: a complete ``GenericKernels`` whose kernels
                                   agree with the Python API along a random game (n/a if none)
=================================  =============================================================

A random game here is played by a seeded player choosing uniformly among the legal
actions of each acting player (chance resolved by the game's own ``step``).
``tests/games/test_game_contract.py`` runs this over every registered game;
``arena check-game NAME|package.module:GameClass`` runs it (and the clauses of the
floors above: a game record replays, PettingZoo's API test on its face) for yours.
``python -m games.contract '["NAME", ...]' SEED MAX_STEPS [MODULE ...]`` prints the
random games' fingerprints (the other process).
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .api import LOSS, TIE, WIN, Game
from .registry import make_config, make_game

__all__ = ["Check", "CLAUSES", "check_game", "play_random", "fingerprints_in_another_process",
           "DEFAULT_SEED", "DEFAULT_MAX_STEPS"]

DEFAULT_SEED = 11
#: Steps of a random game at most (a game that does not end by then fails).
DEFAULT_MAX_STEPS = 2000


@dataclass(frozen=True)
class Check:
    """One clause: passed (True), failed (False) or not applicable (None)."""

    name: str
    passed: bool | None
    detail: str = ""

    def line(self) -> str:
        status = {True: "PASS", False: "FAIL", None: "n/a "}[self.passed]
        return f"{status}  {self.name}: {self.detail}" if self.detail else f"{status}  {self.name}"


class ClauseFailed(Exception):
    """A clause's finding (the message is its detail)."""


def _require(condition, message: str) -> None:
    if not condition:
        raise ClauseFailed(message)


def _describe(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


#: The board index of the contract's games (what a study's plan passes for its board seed 3).
BOARD = 3


def board_seed(seed: int) -> np.random.SeedSequence:
    """The board seed of the contract's games (as the plan gives one, for board :data:`BOARD`)."""
    return np.random.SeedSequence(seed, spawn_key=(0, BOARD))


def fresh(name: str, seed: int = DEFAULT_SEED) -> Game:
    """Game ``name`` with its default config, reset from the contract's board seed and index."""
    game = make_game(name, make_config(name, {}))
    game.reset(board_seed(seed), board_index=BOARD)
    return game


def random_joint(game: Game, rng: np.random.Generator) -> list[int]:
    """A joint action: a uniformly random legal action per acting player, checking the masks."""
    actions = [0] * game.num_players
    for p in game.acting_players():
        mask = np.asarray(game.legal_actions(p))
        _require(mask.dtype == np.bool_ and mask.shape == (game.num_actions,),
                 f"legal_actions({p}) is {mask.dtype}{list(mask.shape)}, not bool[{game.num_actions}]")
        _require(mask.any(), f"player {p} acts at step {game.step_count} with no legal action")
        actions[p] = int(rng.choice(np.flatnonzero(mask)))
    return actions


def play_random(game: Game, seed: int, max_steps: int = DEFAULT_MAX_STEPS,
                on_step: Callable | None = None) -> list[int]:
    """Play ``game`` (already reset) on with random legal actions until it ends (or
    ``max_steps``); the fingerprint before the first step and after every step."""
    rng = np.random.default_rng(seed)
    prints = [int(game.fingerprint())]
    while not game.done and len(prints) <= max_steps:
        actions = random_joint(game, rng)
        game.step(actions)
        if on_step is not None:
            on_step(game, actions)
        prints.append(int(game.fingerprint()))
    return prints


# --- the clauses (each returns its detail, or raises ClauseFailed) -------------------
def _declares(name, seed, max_steps):
    config = make_config(name, {})
    game = make_game(name, config)
    _require(isinstance(game, Game), f"{type(game).__name__} is not a games.api.Game")
    base = "does not call the base constructor (super().__init__(config))"
    _require(hasattr(game, "invalid_actions") and hasattr(game, "board_index"), f"{type(game).__name__}.__init__ {base}")
    _require(game.config == config and game.state is None and game.board_index is None,
             f"{type(game).__name__}: config, state None and board_index None after construction ({base}?)")
    invalid = np.asarray(game.invalid_actions)
    _require(invalid.dtype == np.int64 and invalid.shape == (game.num_players,) and not invalid.any(),
             f"invalid_actions is {invalid.dtype}{list(invalid.shape)}, not int64 zeros per player")
    for attr in ("num_players", "num_actions"):
        value = getattr(game, attr, None)
        _require(isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1,
                 f"{attr} must be a positive int, got {value!r}")
    return f"{type(game).__name__}: {game.num_players} players, {game.num_actions} actions"


def _step_checks_input(name, seed, max_steps):
    game = make_game(name, make_config(name, {}))
    try:
        game.step([0] * game.num_players)
    except RuntimeError:
        pass
    else:
        raise ClauseFailed("step() before reset() did not raise RuntimeError")
    game.reset(seed)
    try:
        game.step([0] * (game.num_players + 1))
    except ValueError as exc:
        _require(str(exc).startswith("actions:"), f"the error does not name actions: {exc}")
    else:
        raise ClauseFailed("a joint action of the wrong length did not raise ValueError")
    return "RuntimeError before reset, ValueError for a wrong length"


def _reset(name, seed, max_steps):
    game = fresh(name, seed)
    _require(not game.done and game.step_count == 0, f"done={game.done}, step_count={game.step_count} after reset")
    _require(list(game.invalid_actions) == [0] * game.num_players, "invalid actions counted at reset")
    _require(len(game.teams()) == len(game.death_ticks()) == game.num_players,
             "teams() and death_ticks() must have one entry per player")
    acting = list(game.acting_players())
    _require(1 <= len(acting) <= game.num_players or (not acting and game.is_chance_node()),
             f"acting_players() after reset is {acting}")
    return f"acting {acting}"


def _board_index(name, seed, max_steps):
    game = make_game(name, make_config(name, {}))
    spawned = np.random.SeedSequence(seed, spawn_key=(0, 5))
    game.reset(spawned, board_index=2)
    _require(game.board_index == 2, f"reset(seed, board_index=2) left board_index {game.board_index}")
    game.reset(spawned)
    _require(game.board_index is None, "reset(seed) without an index kept one")
    game.reset(7)
    _require(game.board_index == 7, "an int seed does not name its board")
    for bad in (-1, True, 1.5):
        try:
            game.reset(spawned, board_index=bad)
        except ValueError as exc:
            _require(str(exc).startswith("board_index:"), f"the error does not name board_index: {exc}")
        else:
            raise ClauseFailed(f"reset accepted board_index={bad!r}")
    return "reset(seed, board_index) keeps it; bad indices refused"


def _observation(name, seed, max_steps):
    game = fresh(name, seed)
    for p in range(game.num_players):
        obs = game.observation(p)
        if isinstance(obs, np.ndarray):
            continue
        _require(isinstance(obs, tuple) and hasattr(obs, "_fields") and obs
                 and all(isinstance(a, np.ndarray) for a in obs),
                 f"observation({p}) is a {type(obs).__name__}: a NamedTuple of numpy arrays or one numpy "
                 f"array is expected")
    obs = game.observation(0)
    return "one array" if isinstance(obs, np.ndarray) else f"{type(obs).__name__} of {len(obs)} arrays"


def _render(name, seed, max_steps):
    game = fresh(name, seed)
    text = game.render()
    _require(isinstance(text, str), f"render() returned {type(text).__name__}, not str")
    _require(game.render_image().size[0] > 0, "render_image() is empty")
    return "text and image"


def _random_game(name, seed, max_steps):
    game = fresh(name, seed)
    play_random(game, seed, max_steps)
    return game


def _legal_actions(name, seed, max_steps):
    game = _random_game(name, seed, max_steps)
    return f"{game.step_count} steps, every acting player had a legal action"


def _ends(name, seed, max_steps):
    game = _random_game(name, seed, max_steps)
    _require(game.done, f"the random game did not end in {max_steps} steps")
    _require(list(game.invalid_actions) == [0] * game.num_players,
             f"legal actions were counted invalid: {list(game.invalid_actions)}")
    return f"ended after {game.step_count} steps"


def _nobody_after_end(name, seed, max_steps):
    game = _random_game(name, seed, max_steps)
    _require(game.done, "the random game did not end")
    acting = list(game.acting_players())
    _require(acting == [], f"acting_players() names {acting} after the end (must be empty)")
    return "acting_players() == []"


def _outcomes(name, seed, max_steps):
    game = _random_game(name, seed, max_steps)
    outcomes = list(game.outcomes())
    _require(len(outcomes) == game.num_players and set(outcomes) <= {WIN, TIE, LOSS},
             f"outcomes() is {outcomes}: one of {WIN!r}, {TIE!r}, {LOSS!r} per player expected")
    returns = np.asarray(game.returns())
    _require(returns.shape == (game.num_players,) and returns.dtype.kind == "f",
             f"returns() is {returns.dtype}{list(returns.shape)}, not float[{game.num_players}]")
    return f"outcomes {outcomes}, returns {returns.tolist()}"


def _after_end(name, seed, max_steps):
    game = _random_game(name, seed, max_steps)
    length, text, print_ = game.step_count, game.to_json(), game.fingerprint()
    game.step([0] * game.num_players)
    _require(game.step_count == length and game.to_json() == text and game.fingerprint() == print_,
             "step() after the end changed the game")
    _require(list(game.invalid_actions) == [0] * game.num_players, "step() after the end counted invalid actions")
    return "unchanged"


def _invalid_replaced(name, seed, max_steps):
    game = fresh(name, seed)
    while not game.acting_players():  # a chance node first: the game resolves it
        game.step([0] * game.num_players)
    player = list(game.acting_players())[0]
    reference = game.copy()
    replacement = game.replacement_action(player)
    actions = [0] * game.num_players
    actions[player] = -1
    game.step(actions)
    _require(game.invalid_actions[player] == 1 and game.invalid_actions.sum() == 1,
             f"invalid actions counted: {list(game.invalid_actions)} (expected 1 for player {player})")
    actions[player] = replacement
    reference.step(actions)
    _require(game.fingerprint() == reference.fingerprint(), "the invalid action was not replaced by replacement_action()")
    return f"player {player}: -1 counted, replaced by {replacement}"


def _copy_and_json(name, seed, max_steps):
    game = fresh(name, seed)
    rng = np.random.default_rng(3)
    for _ in range(3):
        if game.done:
            break
        game.step(random_joint(game, rng))
    copy = game.copy()
    again = type(game).from_json(game.to_json())
    _require(copy.fingerprint() == again.fingerprint() == game.fingerprint(),
             "copy() or from_json(to_json()) differs from the game")
    _require(again.to_json() == game.to_json(), "from_json(to_json()).to_json() differs")
    before = copy.fingerprint()
    play_random(game, 5, max_steps)
    _require(copy.fingerprint() == before, "a copy shares state with its original")
    _require(play_random(copy, 5, max_steps) == play_random(again, 5, max_steps),
             "a copy and a JSON round trip play on differently")
    return "equal and independent"


def _same_seed(name, seed, max_steps):
    first = play_random(fresh(name, seed), seed, max_steps)
    _require(play_random(fresh(name, seed), seed, max_steps) == first, "two random games of one seed differ")
    return f"{len(first) - 1} steps identical"


def _same_state(game: Game, state) -> bool:
    """Whether ``state`` is the game's state as the game itself tells states apart (its
    fingerprint: a game may leave unused rows out of it, and its kernels may leave them stale)."""
    probe = game.copy()
    probe.state = state
    return probe.fingerprint() == game.fingerprint()


def _generic_kernels(name, seed, max_steps):
    from .generic import CHANCE_PLAYER, SIMULTANEOUS, check_generic_kernels

    game = fresh(name, seed)
    kernels = type(game).generic_kernels
    if kernels is None:
        return None
    check_generic_kernels(kernels, f"{type(game).__name__}.generic_kernels")
    rng = np.random.default_rng(seed)
    steps = 0
    while True:
        state = kernels.copy_state(game.state)
        _require(bool(kernels.is_terminal(state)) == game.done, f"step {steps}: is_terminal disagrees with done")
        if game.done:
            _require(np.allclose(kernels.returns(state), game.returns()), "returns kernel disagrees at the end")
            break
        acting = list(game.acting_players())
        mover = int(kernels.current_player(state))
        if not acting:
            _require(mover == CHANCE_PLAYER and kernels.chance_outcomes is not None,
                     f"step {steps}: nobody acts but current_player is {mover}")
            probs = np.asarray(kernels.chance_outcomes(state))
            _require(abs(probs.sum() - 1.0) < 1e-9 and (probs >= 0).all()
                     and len(probs) <= kernels.max_chance_outcomes, f"step {steps}: chance_outcomes {probs}")
        else:
            _require(mover == (acting[0] if len(acting) == 1 and mover != SIMULTANEOUS else SIMULTANEOUS),
                     f"step {steps}: current_player is {mover}, acting_players() {acting}")
            for p in acting:
                _require(np.array_equal(kernels.legal_actions(state, p), game.legal_actions(p)),
                         f"step {steps}: legal_actions kernel disagrees for player {p}")
        if steps >= max_steps:
            break
        actions = random_joint(game, rng)
        if acting:
            joint = np.asarray(actions, dtype=np.int64)
            kernels.step(state, joint)
            game.step(actions)
            _require(_same_state(game, state), f"step {steps}: the step kernel and Game.step reach different states")
            other = kernels.copy_state(state)
            kernels.copy_into(other, kernels.copy_state(game.state))
            _require(_same_state(game, other), f"step {steps}: copy_into does not copy the state")
        else:
            game.step(actions)
        steps += 1
    declared = [e for e in ("chance_outcomes", "determinize", "heuristic") if getattr(kernels, e) is not None]
    return f"agree with the Python API over {steps} steps" + (f"; declares {', '.join(declared)}" if declared else "")


#: The clauses, in the order they are reported (name, function(name, seed, max_steps) ->
#: detail, or None for not applicable).
CLAUSES: tuple[tuple[str, Callable], ...] = (
    ("declares", _declares),
    ("step checks its input", _step_checks_input),
    ("reset", _reset),
    ("board index", _board_index),
    ("observation", _observation),
    ("render", _render),
    ("legal actions", _legal_actions),
    ("a random game ends", _ends),
    ("nobody acts after the end", _nobody_after_end),
    ("outcomes and returns", _outcomes),
    ("stepping after the end", _after_end),
    ("invalid action replaced", _invalid_replaced),
    ("copy and JSON", _copy_and_json),
    ("same seed, same game", _same_seed),
    ("generic kernels", _generic_kernels),
)


def run_clause(name: str, function: Callable, game_name: str, seed: int, max_steps: int) -> Check:
    """One clause as a Check (an exception in the game fails the clause, naming it)."""
    try:
        detail = function(game_name, seed, max_steps)
    except ClauseFailed as exc:
        return Check(name, False, str(exc))
    except Exception as exc:
        return Check(name, False, _describe(exc))
    if detail is None:
        return Check(name, None, "not declared")
    return Check(name, True, detail if isinstance(detail, str) else "")


def check_game(game_name: str, *, seed: int = DEFAULT_SEED, max_steps: int = DEFAULT_MAX_STEPS,
               other_process: bool = True, modules: tuple[str, ...] = ()) -> list[Check]:
    """The contract's checks of ``game_name`` (see the module docstring). ``modules``:
    what the other process imports first (modules that register games)."""
    checks = [run_clause(name, function, game_name, seed, max_steps) for name, function in CLAUSES]
    if other_process:
        try:
            here = play_random(fresh(game_name, seed), seed, max_steps)
            there = fingerprints_in_another_process([game_name], seed, max_steps, modules)[game_name]
            checks.append(Check("another process", here == there,
                                f"{len(here) - 1} steps identical" if here == there
                                else "the same seed plays another game in another process"))
        except Exception as exc:
            checks.append(Check("another process", False, _describe(exc)))
    return checks


def fingerprints_in_another_process(game_names: list[str], seed: int, max_steps: int, modules=(),
                                    timeout: float = 600.0) -> dict[str, list[int]]:
    """The fingerprints of the contract's random game of each of ``game_names``, played
    in one new Python process (same interpreter and ``sys.path``) after importing
    ``modules`` (that register games)."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-m", "games.contract", json.dumps(list(game_names)), str(seed),
                          str(max_steps), *modules], capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the other process failed: {tail}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _main(argv: list[str]) -> int:
    import importlib

    for module in argv[3:]:
        importlib.import_module(module)
    names, seed, max_steps = json.loads(argv[0]), int(argv[1]), int(argv[2])
    print(json.dumps({name: play_random(fresh(name, seed), seed, max_steps) for name in names}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
