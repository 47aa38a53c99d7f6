"""The agent contract: what every agent, built-in or plugin, must do on every game it declares.

The counterpart of the games' conformance suite (``tests/games/test_game_contract.py``;
PettingZoo's ``api_test`` and OpenSpiel's bot tests are the models). For an agent
(registry name, installed plugin or import path ``package.module:ClassName``) and
a game from its declared ``Agent.games`` (empty: every game with kernels),
:func:`check_agent` plays a short game with the game's default config (at most
``steps`` steps) and reports one :class:`Check` per clause:

==========================  ====================================================
``config defaults``          ``Config()`` builds, the agent builds from it with a
                             budget and the game's config, ``check_for_game`` accepts
``begin_game``               ``begin_game(seat, SeedSequence)`` in every seat it plays
``legal actions``            every action it returns is legal (none replaced)
``iteration budget``         no decision reports more iterations than the budget
``same seed, same moves``    replayed with the same seed in this process: the same
                             actions and states (iteration budget)
``another process``          the same in a separate Python process (iteration budget)
``learned state .npz``       ``learned_state()`` saved with ``np.savez``, loaded with
                             ``allow_pickle=False``, accepted by ``check_learned_state``
                             and restored by ``load_learned_state`` unchanged
==========================  ====================================================

The agent takes the first seat it may (``Agent.plays_seats``); other seats are
played by copies of it where it may sit, else by ``random``. Agents without an
iteration budget (``supports_iteration_budget = False``) play with ``ms`` and the
determinism clauses do not apply. Whether a millisecond budget is respected is a
measurement, not a pass/fail clause: :func:`measure_decision_ms` (printed by
``arena check-agent`` and ``arena bench plugins``).

``tests/agents/test_agent_contract.py`` runs this over every registered agent and the
example plugin; ``arena check-agent package.module:ClassName --game pommerman``
runs it for a user's agent. ``python -m agents.contract JSON`` prints the traces
of a list of ``[agent, game, iterations, steps, seed]`` (the other process).
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np

from .api import Budget
from .episodes import end_game, play
from .registry import agent_class, make_agent, make_agent_config

__all__ = ["Check", "ContractFailure", "ContractGame", "contract_budget", "declared_games", "seat_lineup", "play_contract_game",
           "check_agent", "traces_in_another_process", "measure_decision_ms", "DEFAULT_ITERATIONS",
           "DEFAULT_STEPS", "DEFAULT_SEED", "FALLBACK_OPPONENT"]

#: Iteration budget per decision of the contract's games (small: the contract tests behaviour).
DEFAULT_ITERATIONS = 8
#: Steps per contract game at most (games usually end later; the contract needs a few decisions).
DEFAULT_STEPS = 24
#: Seed of the contract's games.
DEFAULT_SEED = 35
#: Who plays the seats the agent under test may not take.
FALLBACK_OPPONENT = "random"


@dataclass(frozen=True)
class Check:
    """One clause of the contract: passed (True), failed (False) or not applicable (None)."""

    name: str
    passed: bool | None
    detail: str = ""

    def line(self) -> str:
        status = {True: "PASS", False: "FAIL", None: "n/a "}[self.passed]
        return f"{status}  {self.name}: {self.detail}" if self.detail else f"{status}  {self.name}"


def declared_games(agent: str) -> list[str]:
    """The games agent ``agent`` declares (``Agent.games``); empty declaration: every
    registered game with a kernels module (the agent plays through ``legal_actions``)."""
    from games.registry import game_names

    cls = agent_class(agent)
    return list(cls.games) if cls.games else [g for g in game_names() if cls.plays_game(g)]


def seat_lineup(agent: str, num_players: int) -> tuple[list[str], list[int]]:
    """(agent name per seat, the seats the agent under test plays): the agent in every
    seat it may take (``Agent.plays_seats``), :data:`FALLBACK_OPPONENT` elsewhere."""
    allowed = agent_class(agent).plays_seats or tuple(range(num_players))
    own = [s for s in range(num_players) if s in allowed]
    if not own:
        raise ValueError(f"agent {agent!r} plays seats {list(allowed)}, none of the game's {num_players}")
    return [agent if s in own else FALLBACK_OPPONENT for s in range(num_players)], own


class ContractFailure(Exception):
    """An agent raised during a contract game: ``clause`` is the check it fails."""

    def __init__(self, clause: str, detail: str):
        super().__init__(f"{clause}: {detail}")
        self.clause = clause
        self.detail = detail


def _describe(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


@dataclass
class ContractGame:
    """What a contract game left: the agents, the game, and what happened."""

    game: object
    agents: list
    own_seats: list[int]
    joint_actions: list[list[int]] = field(default_factory=list)
    """The joint action passed to ``step`` at every step."""
    fingerprints: list[int] = field(default_factory=list)
    """``Game.fingerprint()`` before the first step and after every step."""
    illegal: list[str] = field(default_factory=list)
    """One entry per illegal action of the agent under test."""
    max_iterations: int = 0
    """The most iterations one decision of the agent under test reported."""

    def trace(self) -> dict:
        """The JSON-able record two plays of one seed must share."""
        return {"actions": self.joint_actions, "fingerprints": self.fingerprints}


def contract_budget(agent: str, iterations: int, ms: float | None = None) -> Budget:
    """The budget of the agent under test: ``iterations`` per decision, or ``ms`` (10 ms
    by default) when given or when the agent has no iteration budget."""
    if ms is not None or not agent_class(agent).supports_iteration_budget:
        return Budget(ms=ms or 10.0)
    return Budget(iterations=iterations)


def play_contract_game(agent: str, game_name: str, *, iterations: int = DEFAULT_ITERATIONS,
                       steps: int = DEFAULT_STEPS, seed: int = DEFAULT_SEED, ms: float | None = None,
                       learned: dict | None = None, decision_ms: list | None = None) -> ContractGame:
    """Play at most ``steps`` steps of ``game_name`` (default config) with the agent in
    its seats (:func:`seat_lineup`), ``learned`` loaded into those first, and end the
    game for every agent (``end_game``, as the cluster does after the last step).
    ``decision_ms``: a list that receives the agent's milliseconds per decision."""
    from games.registry import make_config, make_game

    game_config = make_config(game_name, {})
    game = make_game(game_name, game_config)
    names, own = seat_lineup(agent, game.num_players)
    budget = contract_budget(agent, iterations, ms)
    agents = [make_agent(name, {}, budget if name == agent else Budget(iterations=1), game_config)
              for name in names]
    if learned is not None:
        for seat in own:
            agents[seat].load_learned_state(learned)
    board_seed, *seat_seeds = np.random.SeedSequence(seed).spawn(1 + game.num_players)
    game.reset(board_seed)
    played = ContractGame(game, agents, own, fingerprints=[int(game.fingerprint())])
    for seat, player in enumerate(agents):
        try:
            player.begin_game(seat, seat_seeds[seat])
        except Exception as exc:
            raise ContractFailure("begin_game", f"{names[seat]} in seat {seat}: {_describe(exc)}") from exc

    def checked(game, seat):
        """The seat's agent's move, its exception a ContractFailure; the agent under test's
        time, iterations and legality recorded."""
        player = agents[seat]
        view = game.true_state_view() if player.reads_true_state else game.observation(seat)
        before = player.total_seconds
        try:
            action = player.act(view)
        except Exception as exc:
            raise ContractFailure("legal actions", f"{names[seat]} in seat {seat} raised at step "
                                                   f"{game.step_count}: {_describe(exc)}") from exc
        if seat in own:
            if decision_ms is not None:
                decision_ms.append(1000.0 * (player.total_seconds - before))
            played.max_iterations = max(played.max_iterations, player.last_iterations)
            if not (0 <= action < game.num_actions and game.is_valid_action(seat, action)):
                played.illegal.append(f"step {game.step_count}, seat {seat}: action {action}")
        return action

    def traced(game, joint):
        played.joint_actions.append([int(a) for a in joint])
        played.fingerprints.append(int(game.fingerprint()))

    play(game, [checked] * game.num_players, max_steps=steps, after_step=traced)
    end_game(game, agents)
    return played


def _npz_round_trip(arrays: dict) -> dict[str, np.ndarray]:
    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _same_arrays(a: dict, b: dict) -> str:
    """'' if ``a`` and ``b`` hold the same arrays, else what differs."""
    if sorted(a) != sorted(b):
        return f"names differ: {sorted(a)} vs {sorted(b)}"
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        if x.dtype != y.dtype or x.shape != y.shape:
            return f"{key}: {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
        if not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return f"{key}: values differ"
    return ""


def _attempt(name: str, checks: list, action):
    """Run ``action``; on an exception append a failed check named ``name`` and return None."""
    try:
        return action()
    except ContractFailure as failure:
        if name != "begin_game":  # a replay failed: the clause being checked fails
            checks.append(Check(name, False, str(failure)))
            return None
        if failure.clause != "begin_game":  # the first game: the clause it broke fails
            checks.append(Check("begin_game", True, "every seat seeded"))
        checks.append(Check(failure.clause, False, failure.detail))
        return None
    except Exception as exc:
        checks.append(Check(name, False, _describe(exc)))
        return None


def check_agent(agent: str, game_name: str, *, iterations: int = DEFAULT_ITERATIONS, steps: int = DEFAULT_STEPS,
                seed: int = DEFAULT_SEED, other_trace: dict | None = None,
                other_process: bool = True) -> list[Check]:
    """The contract's checks of ``agent`` on ``game_name`` (see the module docstring).
    ``other_trace``: the trace another process computed (:func:`traces_in_another_process`);
    else one is computed in a child process when ``other_process``."""
    from games.registry import make_config

    checks: list[Check] = []
    cls = agent_class(agent)
    game_config = make_config(game_name, {})

    def construct():
        config = cls.Config()
        make_agent_config(agent, {})
        make_agent(agent, config, contract_budget(agent, iterations, None), game_config)
        cls.check_for_game(config, game_config)
        return config

    config = _attempt("config defaults", checks, construct)
    if config is None:
        return checks
    checks.append(Check("config defaults", True, f"{cls.Config.__name__}() builds and fits {game_name}"))

    first = _attempt("begin_game", checks, lambda: play_contract_game(
        agent, game_name, iterations=iterations, steps=steps, seed=seed))
    if first is None:
        return checks
    decisions = sum(first.agents[s].decisions for s in first.own_seats)
    checks.append(Check("begin_game", True, f"seeded in seat{'s' * (len(first.own_seats) > 1)} "
                                            f"{', '.join(map(str, first.own_seats))}"))
    checks.append(Check("legal actions", not first.illegal and decisions > 0,
                        f"{decisions} decisions in {len(first.joint_actions)} steps, "
                        + (f"illegal: {'; '.join(first.illegal[:3])}" if first.illegal
                           else "all legal" if decisions else "the agent was never asked")))

    deterministic = cls.supports_iteration_budget
    if deterministic:
        checks.append(Check("iteration budget", first.max_iterations <= iterations,
                            f"at most {first.max_iterations} iterations per decision (budget {iterations})"))
        again = _attempt("same seed, same moves", checks, lambda: play_contract_game(
            agent, game_name, iterations=iterations, steps=steps, seed=seed))
        if again is not None:
            same = again.trace() == first.trace()
            checks.append(Check("same seed, same moves", same,
                                f"{len(first.joint_actions)} steps identical" if same
                                else f"first difference at step {_first_difference(first.trace(), again.trace())}"))
        if other_trace is None and other_process:
            other_trace = _attempt("another process", checks, lambda: traces_in_another_process(
                [(agent, game_name, iterations, steps, seed)])[_key(agent, game_name)])
        if other_trace is not None:
            same = other_trace == first.trace()
            checks.append(Check("another process", same, "identical actions and states" if same
                                else f"first difference at step {_first_difference(first.trace(), other_trace)}"))
    else:
        for name in ("iteration budget", "same seed, same moves", "another process"):
            checks.append(Check(name, None, "no iteration budget (supports_iteration_budget = False)"))

    def round_trip() -> Check:
        state = first.agents[first.own_seats[0]].learned_state()
        if state is None:
            return Check("learned state .npz", None, "learns nothing (learned_state() is None)")
        arrays = _npz_round_trip(state)
        cls.check_learned_state(config, arrays)
        fresh = make_agent(agent, config, contract_budget(agent, iterations, None), game_config)
        fresh.load_learned_state(arrays)
        restored = fresh.learned_state()
        if restored is None:
            return Check("learned state .npz", False, "load_learned_state then learned_state() gave None")
        difference = _same_arrays(_npz_round_trip(restored), arrays)
        return Check("learned state .npz", not difference,
                     difference or f"{len(arrays)} arrays ({', '.join(sorted(arrays))}) restored unchanged")

    check = _attempt("learned state .npz", checks, round_trip)
    if check is not None:
        checks.append(check)
    return checks


def _first_difference(a: dict, b: dict) -> int:
    for i, (x, y) in enumerate(zip(a["fingerprints"], b["fingerprints"])):
        if x != y:
            return i
    for i, (x, y) in enumerate(zip(a["actions"], b["actions"])):
        if x != y:
            return i
    return min(len(a["actions"]), len(b["actions"]))


def _key(agent: str, game_name: str) -> str:
    return f"{agent} @ {game_name}"


def traces_in_another_process(cases, modules=(), timeout: float = 1200.0) -> dict[str, dict]:
    """``{"agent @ game": trace}`` of each ``(agent, game, iterations, steps, seed)``
    of ``cases``, played in a separate Python process (same interpreter, same
    ``sys.path``) after importing ``modules`` (that register agents or games)."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-m", "agents.contract", json.dumps([list(c) for c in cases]),
                          *modules],
                         capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the other process failed: {tail}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_decision_ms(agent: str, game_name: str, ms: float, steps: int = DEFAULT_STEPS,
                        seed: int = DEFAULT_SEED) -> dict:
    """Milliseconds per decision of ``agent`` under a budget of ``ms`` per decision
    (a measurement, not a pass/fail clause: time budgets are the machine's business),
    as ``{budget_ms, decisions, mean_ms, p95_ms, max_ms}`` over one contract game."""
    times: list[float] = []
    played = play_contract_game(agent, game_name, steps=steps, seed=seed, ms=ms, decision_ms=times)
    del played
    times_ms = np.asarray(times or [np.nan])
    return {"budget_ms": ms, "decisions": len(times), "mean_ms": float(np.mean(times_ms)),
            "p95_ms": float(np.percentile(times_ms, 95)), "max_ms": float(np.max(times_ms))}


def _main(argv: list[str]) -> int:
    """``python -m agents.contract CASES [MODULE ...]``: import the modules (e.g. a
    test module that registers agents), play CASES, print their traces as JSON."""
    import importlib

    import agents  # noqa: F401  (registers the built-in agents)

    for module in argv[1:]:
        importlib.import_module(module)
    cases = json.loads(argv[0])
    traces = {}
    for agent, game_name, iterations, steps, seed in cases:
        traces[_key(agent, game_name)] = play_contract_game(agent, game_name, iterations=int(iterations),
                                                            steps=int(steps), seed=int(seed)).trace()
    print(json.dumps(traces))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
