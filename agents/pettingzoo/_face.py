"""The PettingZoo face of any Arena game: AEC and Parallel environments over
:class:`games.api.Game`, built once for every game that fits the contract.

What a PettingZoo user gets, and where it comes from in the contract:

==================  ===========================================================
agents              ``player_0`` .. ``player_{n-1}``, seat ``i`` of the game
action space        ``Discrete(game.num_actions)``
observation         ``{"observation": {field: array}, "action_mask": int8[A]}``:
                    the fields of ``game.observation(seat)`` (the game's own
                    partial observation: Pommerman's fog, Scotland Yard's hidden
                    Mr X, the bird game's hidden cards) that
                    ``Game.observed_fields`` names; the mask is
                    ``legal_actions(seat)`` for a seat in ``acting_players()``,
                    all zeros for a seat that is not asked this step;
                    ``observation="planes"``: one float32 Box,
                    ``game.observation_tensor(seat)`` (Pommerman's featurized
                    planes, OpenSpiel's tensors, other games their observed
                    fields flattened), what a network and SuperSuit's
                    wrappers (``flatten_v0``) take; the mask is then
                    ``infos[agent]["action_mask"]``
chance              a chance step (nobody acts, e.g. an OpenSpiel deal) is
                    played by the game's own seeded generator inside
                    ``reset`` and ``step``: every step asks somebody
is_parallelizable   for a game whose players all act at every step
                    (``Game.simultaneous``: Pommerman, OpenSpiel's
                    simultaneous-move games): ``aec_to_parallel`` then works
rewards             the change of ``game.returns()`` in a step, so that an
                    agent's rewards over a game add up to its ``returns()`` at
                    the end (XCOM's kill rewards arrive when they happen)
terminations        every agent when the game is over (a Pommerman agent that
                    died stays in ``agents``, unasked, until then: its team's
                    result still reaches it); no truncations (every game ends
                    by its own rules, e.g. Pommerman's ``max_steps``)
reset(seed=s)       ``game.reset(s)``: the same game as Arena's own
                    ``reset(s)``; ``reset()`` without a seed draws the next
                    seed from the last seeded reset's SeedSequence (or from
                    fresh entropy before any)
step(action)        an invalid action is counted and replaced as in Arena
                    (``Game.step``), not raised
==================  ===========================================================

The AEC env asks the players of ``acting_players()`` one after another and
applies their joint action when the last of them has chosen: one seat per step
in the turn-based games; in a simultaneous game (``Game.simultaneous``) every agent
per tick, the ones that do not act (a dead Pommerman agent) with an all-zero mask and
their action ignored, so that every step is one cycle over ``agents``, which
``aec_to_parallel`` needs. The Parallel env takes one action per agent per step
and uses those of the acting players.
"""
from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from games.api import Game
from games.registry import make_game

RENDER_MODES = ("ansi",)
#: What an agent observes: the game's observed fields as a Dict, or one float32 Box.
OBSERVATIONS = ("fields", "planes")


def _box(array: np.ndarray) -> gymnasium.spaces.Box:
    """The widest Box of ``array``'s dtype and shape (the layouts declare dtypes, not ranges)."""
    dtype = array.dtype
    if dtype == np.bool_:
        return gymnasium.spaces.Box(0, 1, array.shape, np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return gymnasium.spaces.Box(info.min, info.max, array.shape, dtype)
    if np.issubdtype(dtype, np.floating):
        return gymnasium.spaces.Box(-np.inf, np.inf, array.shape, dtype)
    raise TypeError(f"an observation array of dtype {dtype} has no Box space")


class GameFace:
    """What both environments share: the game, its seats as agent names, the spaces,
    observations with masks, rewards from ``returns()`` and the seeds."""

    def __init__(self, game_name: str, game_options: dict[str, Any], observation: str = "fields"):
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation: expected one of {OBSERVATIONS}, got {observation!r}")
        self.game_name = game_name
        self.planes = observation == "planes"
        self.game: Game = make_game(game_name, **game_options)  # errors name the option
        game = self.game
        self.simultaneous = bool(game.simultaneous)
        self.names = [f"player_{i}" for i in range(game.num_players)]
        self.seat = {name: i for i, name in enumerate(self.names)}
        game.reset(0)  # a probe game: the observation layout (shapes and dtypes are fixed)
        self._resolve_chance()
        probes = [game.observation(seat) for seat in range(game.num_players)]
        probe = probes[0]
        #: (field, index) pairs of a state-layout observation; None: a single array
        self.fields: tuple[tuple[str, int], ...] | None = None
        if isinstance(probe, tuple) and hasattr(probe, "_fields") and all(
                isinstance(a, np.ndarray) for a in probe):
            names = list(probe._fields)
            observed = game.observed_fields if game.observed_fields is not None else names
            unknown = sorted(set(observed) - set(names))
            if unknown:
                raise TypeError(f"game {game_name!r}: observed_fields names fields its observation "
                                f"lacks: {unknown}")
            self.fields = tuple((f, names.index(f)) for f in observed)
        elif not isinstance(probe, np.ndarray):
            raise TypeError(f"game {game_name!r}: the PettingZoo face needs observation() to return "
                            f"the game's state layout (a NamedTuple of numpy arrays) or one numpy "
                            f"array, got {type(probe).__name__}")
        self.observation_spaces = {name: self._observation_space(probes[seat])
                                   for seat, name in enumerate(self.names)}
        self.action_spaces = {name: gymnasium.spaces.Discrete(game.num_actions) for name in self.names}
        self.no_actions = np.zeros(game.num_actions, dtype=np.int8)
        self.acting: set[int] = set()  # the seats asked this step
        self.done = False  # game.done after the last reset or step
        self.returns = np.zeros(game.num_players)
        self.seed_source: np.random.Generator | None = None

    def _observation_space(self, probe) -> gymnasium.spaces.Space:
        if self.planes:
            shape = self.game.observation_tensor(0).shape
            return gymnasium.spaces.Box(-np.inf, np.inf, shape, np.float32)
        observation = (_box(probe) if self.fields is None else
                       gymnasium.spaces.Dict({f: _box(probe[i]) for f, i in self.fields}))
        return gymnasium.spaces.Dict({
            "observation": observation,
            "action_mask": gymnasium.spaces.Box(0, 1, (self.game.num_actions,), np.int8),
        })

    # --- life cycle -------------------------------------------------------
    def reset(self, seed: int | None) -> None:
        """``game.reset(seed)``; without a seed, the next one from :attr:`seed_source`."""
        if seed is not None:
            self.seed_source = np.random.default_rng(np.random.SeedSequence(int(seed)))
        else:
            if self.seed_source is None:
                self.seed_source = np.random.default_rng(np.random.SeedSequence())
            seed = int(self.seed_source.integers(2**31))
        self.game.reset(seed)
        self._resolve_chance()
        self.returns = np.asarray(self.game.returns(), dtype=np.float64).copy()
        self.done = self.game.done
        self.acting = set(self.game.acting_players())

    def _resolve_chance(self) -> None:
        """Step through chance nodes (nobody acts: ``Game.step`` draws the outcome from
        the game's own seeded generator), so that an agent is always asked."""
        game = self.game
        while not game.done and not game.acting_players():
            game.step([0] * game.num_players)

    def apply(self, joint: list) -> np.ndarray:
        """Step the game by ``joint`` (checked by ``Game.step``); the rewards
        (float64[players]) of the step."""
        game = self.game
        game.step(joint)
        self._resolve_chance()
        after = np.asarray(game.returns(), dtype=np.float64)
        rewards = after - self.returns
        self.returns = after.copy()
        self.done = game.done
        self.acting = set() if self.done else set(game.acting_players())
        return rewards

    # --- what an agent sees -------------------------------------------------
    def action_mask(self, seat: int) -> np.ndarray:
        """int8[A]: the legal actions of ``seat`` if it acts this step, else zeros."""
        return self.game.legal_actions(seat).astype(np.int8) if seat in self.acting else self.no_actions.copy()

    def observe(self, seat: int):
        game = self.game
        if self.planes:
            return np.asarray(game.observation_tensor(seat), dtype=np.float32)
        observation = game.observation(seat)
        mask = self.action_mask(seat)
        if self.fields is not None:
            observation = {f: observation[i] for f, i in self.fields}
        return {"observation": observation, "action_mask": mask}


class _FacedEnv:
    """What the AEC and the Parallel env share: the face of the game, its spaces,
    the metadata, rendering. ``_open_face`` is called from each env's ``__init__``."""

    def _open_face(self, game_name: str, render_mode: str | None, game_options: dict,
                   observation: str = "fields") -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode: expected one of {RENDER_MODES} or None, got {render_mode!r}")
        self.face = GameFace(game_name, game_options, observation)
        self.metadata = {"name": f"arena_{game_name}_v0", "render_modes": list(RENDER_MODES),
                         "is_parallelizable": self.face.simultaneous}
        self.render_mode = render_mode
        self.possible_agents = list(self.face.names)
        self.observation_spaces = self.face.observation_spaces
        self.action_spaces = self.face.action_spaces
        self.agents: list[str] = []

    @property
    def game(self) -> Game:
        """The Arena game being played (its state, outcomes, pictures)."""
        return self.face.game

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.action_spaces[agent]

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self.face.game.render()

    def close(self) -> None:
        """Nothing to release (no window, no process)."""


class ArenaAECEnv(_FacedEnv, AECEnv):
    """An Arena game as a PettingZoo AEC env (see the module docstring)."""

    def __init__(self, game_name: str, render_mode: str | None = None, observation: str = "fields",
                 **game_options):
        super().__init__()
        self._open_face(game_name, render_mode, game_options, observation)
        self._pending: list[int] = []
        self._joint: list[Any] = [0] * self.face.game.num_players

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start the game Arena's ``reset(seed)`` starts (``options`` is unused:
        the game's options are given to :func:`env`)."""
        self.face.reset(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._begin_step()

    def _begin_step(self) -> None:
        face = self.face
        self._pending = [face.seat[a] for a in self.agents] if face.simultaneous else sorted(face.acting)
        self._joint = [0] * len(self._joint)
        self.agent_selection = face.names[self._pending[0]]
        if face.planes:
            for agent in self.agents:
                self.infos[agent] = {"action_mask": face.action_mask(face.seat[agent])}

    def observe(self, agent: str) -> dict[str, Any]:
        return self.face.observe(self.face.seat[agent])

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._joint[self.face.seat[agent]] = -1 if action is None else action
        self._pending.pop(0)
        if self._pending:  # more players of this simultaneous step still to choose
            self.agent_selection = self.face.names[self._pending[0]]
            return
        rewards = self.face.apply(self._joint)
        for a in self.agents:
            self.rewards[a] = float(rewards[self.face.seat[a]])
        self._accumulate_rewards()
        if self.face.done:
            for a in self.agents:
                self.terminations[a] = True
                if self.face.planes:
                    self.infos[a] = {"action_mask": self.face.no_actions.copy()}
            self.agent_selection = self.agents[0]
        else:
            self._begin_step()


class ArenaParallelEnv(_FacedEnv, ParallelEnv):
    """An Arena game as a PettingZoo Parallel env (see the module docstring)."""

    def __init__(self, game_name: str, render_mode: str | None = None, observation: str = "fields",
                 **game_options):
        self._open_face(game_name, render_mode, game_options, observation)

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start the game Arena's ``reset(seed)`` starts; (observations, infos)."""
        self.face.reset(seed)
        self.agents = list(self.possible_agents)
        return ({a: self.face.observe(i) for i, a in enumerate(self.agents)}, self._infos(self.agents))

    def _infos(self, agents) -> dict:
        face = self.face
        return {a: {"action_mask": face.action_mask(face.seat[a])} if face.planes else {} for a in agents}

    def step(self, actions: dict[str, Any]):
        """One step with an action per agent (the acting players' are used; a
        missing or invalid one is counted and replaced, as in Arena)."""
        face = self.face
        joint = [0] * face.game.num_players
        for seat in face.acting:
            action = actions.get(face.names[seat])
            joint[seat] = -1 if action is None else action
        rewards = face.apply(joint)
        done = face.done
        agents = self.agents
        observations = {a: face.observe(face.seat[a]) for a in agents}
        step_rewards = {a: float(rewards[face.seat[a]]) for a in agents}
        terminations = {a: done for a in agents}
        truncations = {a: False for a in agents}
        infos = self._infos(agents)
        if done:
            self.agents = []
        return observations, step_rewards, terminations, truncations, infos
