"""The agents over OpenSpiel's bots (see the package docstring)."""
from __future__ import annotations

import dataclasses
import math
from typing import Annotated

import numpy as np
from pydantic import Field

from games.validation import Real, config_class, one_of

from ..api import Agent
from ..registry import register

#: The games the agent contract plays these agents on (``Agent.games``).
CONTRACT_GAMES = ("openspiel:tic_tac_toe", "openspiel:kuhn_poker")
#: The largest seed OpenSpiel's bots take (an int).
_SEED_RANGE = 2**31 - 1

Rollouts = Annotated[int, Field(ge=1, le=10_000)]


def _openspiel():
    """:mod:`games.openspiel` (imports pyspiel); ValueError naming the extra without it."""
    try:
        from games import openspiel
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    return openspiel


def _check_openspiel_game(agent: str, game_config) -> None:
    openspiel = _openspiel()
    name = getattr(game_config, "openspiel_game", None)
    if not isinstance(name, str) or type(game_config) is not openspiel.config_class_for(name):
        raise ValueError(f"{agent} plays OpenSpiel games only ([game] name = \"openspiel:NAME\"), "
                         f"not {type(game_config).__name__}")


def _check_sequential(agent: str, game_config) -> None:
    import pyspiel

    if _openspiel().load(game_config).get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        raise ValueError(f"{agent}: OpenSpiel's search bots play sequential games; "
                         f"openspiel:{game_config.openspiel_game} has simultaneous moves "
                         f"(mcts_generic searches them with decoupled UCT)")


def _seed(seed: np.random.SeedSequence) -> int:
    return int(seed.generate_state(1, dtype=np.uint32)[0]) % _SEED_RANGE


class _OpenSpielBotAgent(Agent):
    """What the bot agents share: the OpenSpiel game of the agent's game config, a
    state rebuilt from each observation, a generator for the worlds of hidden information."""

    games = CONTRACT_GAMES
    uses_forward_model = False  # no numba kernels: nothing for the warm-up to compile
    compile_seconds = 0.0
    plays_any_description = "any OpenSpiel game (openspiel:NAME) its bot supports"

    @classmethod
    def plays(cls, game_name: str) -> bool:
        """Any OpenSpiel game (``games`` lists only the contract's; :meth:`check_for_game`
        refuses a game the bot cannot play, e.g. simultaneous moves)."""
        return game_name.startswith("openspiel:")

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        _check_openspiel_game(cls.name, game_config)

    def __init__(self, config, budget, game_config):
        super().__init__(config, budget, game_config)
        self._game = None

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        if self._game is None:
            from games.registry import make_game

            _check_openspiel_game(self.name, self.game_config)
            self._openspiel = _openspiel()
            self._game = make_game(_openspiel().PREFIX + self.game_config.openspiel_game, self.game_config)
        bot_seed, world_seed = seed.spawn(2)
        self._worlds = np.random.default_rng(world_seed)
        self._bot = self.make_bot(self._game.spiel, seat, _seed(bot_seed))

    def make_bot(self, game, seat: int, seed: int):
        """The OpenSpiel bot of this agent for ``game`` in ``seat``, seeded."""
        raise NotImplementedError

    def state(self, observation):
        """The ``pyspiel.State`` this agent's player plans on."""
        game = self._game
        if observation.legal.shape != (game.num_actions,) or observation.history.shape != (game.max_history,):
            # An agent built for another game (parameters that change the game's size) would
            # plan on the wrong game; the cluster builds a series' agents for its condition.
            raise ValueError(f"{self.name}: the observation is not of the game this agent was built for "
                             f"({game.openspiel_game} with {dataclasses.asdict(self.game_config)})")
        return self._openspiel.state_from_observation(self._game, observation, self.seat, self._worlds)

    def budget_args(self) -> tuple[int, float]:
        """(max_simulations, max_wall_clock_time in s; -1: none) of the bots."""
        if self.budget.iterations is not None:
            return int(self.budget.iterations), -1.0
        return 2**30, float(self.budget.ms) / 1000.0

    def decide(self, observation):
        return int(self._bot.step(self.state(observation))), 0


@config_class
class OpenSpielMCTSConfig:
    """OpenSpiel's C++ MCTSBot (defaults: OpenSpiel's ``examples/mcts.py``)."""

    exploration: Annotated[Real, Field(ge=0, le=100)] = 2.0
    """UCT constant ``uct_c`` (on OpenSpiel's returns, e.g. -1/0/1 for win/draw/loss)."""
    rollouts: Rollouts = 1
    """Random rollouts per leaf of OpenSpiel's ``RandomRolloutEvaluator`` (their returns averaged)."""
    solve: bool = True
    """MCTS-Solver: back up proven wins and losses (OpenSpiel's ``solve``)."""
    child_selection: Annotated[str, one_of(("uct", "puct"))] = "uct"
    """``uct``, or ``puct`` (the evaluator's prior is uniform)."""
    max_memory_mb: Annotated[int, Field(ge=1, le=1_000_000)] = 1000
    """The tree stops growing past this many MB (OpenSpiel's ``max_memory_mb``)."""


@register
class OpenSpielMCTSAgent(_OpenSpielBotAgent):
    """OpenSpiel's C++ MCTSBot with random rollouts, on any sequential OpenSpiel game (`openspiel:NAME`; the games listed are the contract's)."""

    name = "openspiel_mcts"
    Config = OpenSpielMCTSConfig

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        _check_openspiel_game(cls.name, game_config)
        _check_sequential(cls.name, game_config)

    def make_bot(self, game, seat, seed):
        import pyspiel

        c = self.config
        simulations, seconds = self.budget_args()
        policy = pyspiel.ChildSelectionPolicy.UCT if c.child_selection == "uct" else pyspiel.ChildSelectionPolicy.PUCT
        evaluator = pyspiel.RandomRolloutEvaluator(int(c.rollouts), seed)
        self._evaluator = evaluator  # the bot holds a reference; keep the Python object alive too
        return pyspiel.MCTSBot(game, evaluator, float(c.exploration), simulations, int(c.max_memory_mb),
                               bool(c.solve), seed, False, policy, seconds)

    def decide(self, observation):
        # MCTSBot.step is mcts_search then the root's best child; searching here gives the
        # simulations done and the chosen child's value as well.
        state = self.state(observation)
        root = self._bot.mcts_search(state)
        best = root.best_child()
        if best is None:  # one simulation leaves the root unexpanded: OpenSpiel's own step decides
            self.last_value = math.nan
            return int(self._bot.step(state)), int(root.explore_count)
        self.last_value = best.total_reward / best.explore_count if best.explore_count else math.nan
        return int(best.action), int(root.explore_count)


@config_class
class OpenSpielISMCTSConfig:
    """OpenSpiel's C++ ISMCTSBot (information-set MCTS)."""

    exploration: Annotated[Real, Field(ge=0, le=100)] = 2.0
    """UCT constant ``uct_c``."""
    rollouts: Rollouts = 1
    """Random rollouts per leaf of OpenSpiel's ``RandomRolloutEvaluator``."""
    max_world_samples: Annotated[int, Field(ge=-1, le=1_000_000)] = -1
    """Distinct worlds the search keeps resampling among (-1: a fresh one every simulation)."""
    final_policy: Annotated[str, one_of(("normalized_visit_count", "max_visit_count", "max_value"))] = \
        "max_visit_count"
    """How the move is chosen from the root's statistics (``normalized_visit_count`` samples it)."""
    use_observation_string: bool = False
    """Key the information sets by observation strings instead of information-state strings."""
    allow_inconsistent_action_sets: bool = False
    """Allow worlds of one information set to have different legal actions (some games need it)."""


@register
class OpenSpielISMCTSAgent(_OpenSpielBotAgent):
    """OpenSpiel's C++ ISMCTSBot, on OpenSpiel games whose states resample from an information state (the games listed are the contract's)."""

    name = "openspiel_ismcts"
    Config = OpenSpielISMCTSConfig
    games = ("openspiel:kuhn_poker", "openspiel:leduc_poker")

    @classmethod
    def check_for_game(cls, config, game_config, arrays=None) -> None:
        _check_openspiel_game(cls.name, game_config)
        _check_sequential(cls.name, game_config)
        if not _resamples(game_config):
            raise ValueError(f"{cls.name} needs a game whose OpenSpiel state resamples itself from an "
                             f"information state (ResampleFromInfostate): "
                             f"openspiel:{game_config.openspiel_game} does not")

    def make_bot(self, game, seat, seed):
        import pyspiel

        c = self.config
        simulations, seconds = self.budget_args()
        policy = {"normalized_visit_count": pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT,
                  "max_visit_count": pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "max_value": pyspiel.ISMCTSFinalPolicyType.MAX_VALUE}[c.final_policy]
        evaluator = pyspiel.RandomRolloutEvaluator(int(c.rollouts), seed)
        self._evaluator = evaluator
        return pyspiel.ISMCTSBot(seed, evaluator, float(c.exploration), simulations, int(c.max_world_samples),
                                 policy, bool(c.use_observation_string), bool(c.allow_inconsistent_action_sets),
                                 seconds)

    def decide(self, observation):
        action = int(self._bot.step(self.state(observation)))
        simulations, _ = self.budget_args()
        return action, simulations if self.budget.iterations is not None else 0


def _resamples(game_config) -> bool:
    """Whether OpenSpiel's state of the game resamples from an information state (asked at
    the first decision node of a game played with first legal moves)."""
    import pyspiel

    openspiel = _openspiel()
    state = openspiel.load(game_config).new_initial_state()
    while state.is_chance_node() or state.is_simultaneous_node():
        if state.is_terminal():
            return False
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_actions([state.legal_actions(p)[0] for p in range(state.num_players())])
    if state.is_terminal():
        return False
    try:
        state.resample_from_infostate(state.current_player(), pyspiel.UniformProbabilitySampler(0.0, 1.0))
    except pyspiel.SpielError:
        return False
    return True


@register
class OpenSpielRandomAgent(_OpenSpielBotAgent):
    """OpenSpiel's `uniform_random` bot, on any OpenSpiel game (the games listed are the contract's)."""

    name = "openspiel_random"
    games = ("openspiel:tic_tac_toe", "openspiel:goofspiel")

    def make_bot(self, game, seat, seed):
        import pyspiel

        return pyspiel.make_uniform_random_bot(seat, seed)

