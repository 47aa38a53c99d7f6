"""An OpenSpiel game as an Arena game: :class:`OpenSpielGame` over a ``pyspiel.State``.

The rules are OpenSpiel's (its C++ state, through ``pyspiel``); what Arena adds is
what its cluster needs from every game:

* **seeded chance**: at a chance node nobody acts (:meth:`acting_players` is empty)
  and :meth:`step` draws the outcome from the game's own generator, seeded by
  :meth:`reset` (:mod:`games.rng`, the one every Arena game uses), never from
  OpenSpiel's; so a game is a pure function of its seed and the players' actions,
  and a record replays it;
* **what a player may know** (:class:`OpenSpielObservation`): OpenSpiel's
  information-state and observation tensors as OpenSpiel defines them, the player's
  legal actions, and OpenSpiel's history with every entry the player cannot tell
  apart from another replaced by :data:`HIDDEN`. An entry is hidden from a player
  when another action (or chance outcome) in its place would have left the player's
  view (OpenSpiel's observation string, else its information-state string) the
  same; in a perfect-information game nothing is hidden. An agent rebuilds a
  ``pyspiel.State`` from it (:func:`state_from_observation`): the state itself where
  nothing is hidden, else a *world* (:func:`sample_world`) with the hidden entries
  drawn so that the player's view after every entry is the one recorded
  (``view_crc``): the determinization a search plans on;
* the members searches that play any game use (``games/CONTRACT.md``): chance
  nodes, :meth:`determinize`, copies.

Simultaneous-move games (goofspiel, oshi_zumo, the matrix games) take the joint
action of every player with a legal action; OpenSpiel's history holds one entry per
player of such a node, in player order.
"""
from __future__ import annotations

import dataclasses
import json
import zlib
from typing import NamedTuple

import numpy as np
import pyspiel

from ..api import LOSS, TIE, WIN, Game
from ..rng import make_rng, rng_uniform
from ._config import PREFIX, config_class_for, load, short_name

#: A history entry the player cannot tell apart from another (``history`` of an observation).
HIDDEN = -1
#: ``history`` past the game's current length.
NO_ENTRY = -2
#: States :func:`sample_world` tries before it gives up on a world consistent with a view.
MAX_WORLD_NODES = 100_000

_PERFECT = pyspiel.GameType.Information.PERFECT_INFORMATION
_SIMULTANEOUS = pyspiel.GameType.Dynamics.SIMULTANEOUS


class OpenSpielObservation(NamedTuple):
    """What a player of an OpenSpiel game sees (sizes fixed per game and parameters)."""

    information_state_tensor: np.ndarray
    """float32[I]: OpenSpiel's ``information_state_tensor(player)`` (size 0 where the game
    provides none)."""
    observation_tensor: np.ndarray
    """float32[O]: OpenSpiel's ``observation_tensor(player)`` (size 0 where it provides none)."""
    legal: np.ndarray
    """bool[num_actions]: the player's legal actions now (all False when it does not act)."""
    history: np.ndarray
    """int64[max_history_length]: OpenSpiel's history (chance outcomes and actions, one
    entry per player at a simultaneous node) as the player knows it: :data:`HIDDEN` for an
    entry it cannot tell, :data:`NO_ENTRY` past the end."""
    view_crc: np.ndarray
    """uint32[max_history_length]: CRC-32 of the player's view after each entry (games with
    hidden information; zeros where nothing is hidden), what a world drawn for the player
    must reproduce."""


class _Kernels:
    """What agents written for any game call (``random``): the legal mask of an observation."""

    @staticmethod
    def legal_actions(observation: OpenSpielObservation, player: int) -> np.ndarray:
        return np.array(observation.legal, dtype=np.bool_)


KERNELS = _Kernels()


def _draw(outcomes, rng: np.ndarray) -> int:
    """A chance outcome of ``outcomes`` ((action, probability) pairs) drawn with ``rng``."""
    u = float(rng_uniform(rng))
    total = 0.0
    for action, probability in outcomes:
        total += probability
        if u < total:
            return int(action)
    return int(outcomes[-1][0])


class OpenSpielGame(Game):
    """An OpenSpiel game (see the module docstring). ``config`` is the game's config
    class (:func:`games.openspiel.config_class_for`)."""

    kernels = KERNELS
    searchable = True
    #: The bridge's scheme: CRC-32 of OpenSpiel's history (which determines the state).
    fingerprint_version = 1

    def __init__(self, config):
        self.openspiel_game = config.openspiel_game
        self.spiel = load(config)
        spiel, kind = self.spiel, self.spiel.get_type()
        self.num_players = int(spiel.num_players())
        super().__init__(config)
        self.num_actions = int(spiel.num_distinct_actions())
        self.max_history = max(1, int(spiel.max_history_length()))
        self.max_chance_outcomes = int(spiel.max_chance_outcomes())
        self.perfect_information = kind.information == _PERFECT
        self.simultaneous = kind.dynamics == _SIMULTANEOUS
        self.has_information_state = bool(kind.provides_information_state_tensor)
        self.has_observation = bool(kind.provides_observation_tensor)
        self.information_state_size = int(spiel.information_state_tensor_size()) if self.has_information_state else 0
        self.observation_size = int(spiel.observation_tensor_size()) if self.has_observation else 0
        self.observed_fields = tuple(name for name, present in (
            ("information_state_tensor", self.has_information_state), ("observation_tensor", self.has_observation)) if present)
        if kind.provides_observation_string:
            self._view_string = lambda state, p: state.observation_string(p)
        elif kind.provides_information_state_string:
            self._view_string = lambda state, p: state.information_state_string(p)
        else:
            self._view_string = lambda state, p: ""
        self._rng = np.zeros(2, dtype=np.uint64)
        self._steps = 0
        self._track_views = not self.perfect_information
        self._views: list[list[int]] = []
        self._crcs: list[list[int]] = []

    @property
    def name(self) -> str:
        return PREFIX + self.openspiel_game

    # --- life cycle ------------------------------------------------------------
    def new_state(self, seed):
        self._rng = make_rng(seed)
        self._steps = 0
        self._views = [[] for _ in range(self.num_players)]
        self._crcs = [[] for _ in range(self.num_players)]
        return self.spiel.new_initial_state()

    def apply(self, joint: np.ndarray) -> None:
        state = self.state
        if state.is_chance_node():
            self._play([_draw(state.chance_outcomes(), self._rng)])
        elif state.is_simultaneous_node():
            self._play([int(joint[p]) if state.legal_actions(p) else 0 for p in range(self.num_players)])
        else:
            self._play([int(joint[state.current_player()])])
        self._steps += 1

    def _play(self, entries: list[int]) -> None:
        """Apply one node's entries (one, or one per player at a simultaneous node) and
        extend every player's view of the history."""
        state = self.state
        before = state.clone() if self._track_views else None
        actors = list(range(self.num_players)) if state.is_simultaneous_node() else [state.current_player()]
        if len(entries) > 1:
            state.apply_actions(entries)
        else:
            state.apply_action(entries[0])
        if before is None:
            return
        for p in range(self.num_players):
            crc = self._view_crc(state, p)
            for i, (actor, action) in enumerate(zip(actors, entries)):
                seen = actor == p or not self._confusable(before, entries, i, p, crc)
                self._views[p].append(action if seen else HIDDEN)
                self._crcs[p].append(crc)

    def _view_crc(self, state, player: int) -> int:
        try:
            return zlib.crc32(self._view_string(state, player).encode())
        except pyspiel.SpielError:  # a view OpenSpiel does not define here (e.g. some terminal states)
            return 0

    def _confusable(self, before, entries: list[int], i: int, player: int, crc: int) -> bool:
        """Whether another choice for entry ``i`` of the node after ``before`` leaves
        ``player``'s view as it is (``crc``): the player cannot tell the entry then."""
        if before.is_chance_node():
            alternatives = [a for a, p in before.chance_outcomes() if p > 0]
        elif before.is_simultaneous_node():
            alternatives = before.legal_actions(i)
        else:
            alternatives = before.legal_actions()
        for alternative in alternatives:
            if alternative == entries[i]:
                continue
            child = before.clone()
            if len(entries) > 1:
                child.apply_actions([alternative if k == i else a for k, a in enumerate(entries)])
            else:
                child.apply_action(alternative)
            if self._view_crc(child, player) == crc:
                return True
        return False

    # --- queries -----------------------------------------------------------------
    def observation(self, player: int) -> OpenSpielObservation:
        state = self.state
        history = np.full(self.max_history, NO_ENTRY, dtype=np.int64)
        view_crc = np.zeros(self.max_history, dtype=np.uint32)
        if self.perfect_information:
            entries = state.history()
            history[:len(entries)] = entries
        else:
            history[:len(self._views[player])] = self._views[player]
            view_crc[:len(self._crcs[player])] = self._crcs[player]
        return OpenSpielObservation(
            information_state_tensor=self._tensor(state.information_state_tensor, player, self.information_state_size),
            observation_tensor=self._tensor(state.observation_tensor, player, self.observation_size),
            legal=self.legal_actions(player), history=history, view_crc=view_crc)

    @staticmethod
    def _tensor(query, player: int, size: int) -> np.ndarray:
        if size == 0:
            return np.zeros(0, dtype=np.float32)
        try:
            return np.asarray(query(player), dtype=np.float32)
        except pyspiel.SpielError:  # e.g. at a chance node of some games
            return np.zeros(size, dtype=np.float32)

    def observation_tensor(self, player: int) -> np.ndarray:
        """float32: OpenSpiel's information-state tensor (else its observation tensor) of
        ``player``, in OpenSpiel's shape (connect four: [3, 6, 7])."""
        state = self.state
        if self.has_information_state:
            return self._tensor(state.information_state_tensor, player, self.information_state_size).reshape(
                self.spiel.information_state_tensor_shape())
        if self.has_observation:
            return self._tensor(state.observation_tensor, player, self.observation_size).reshape(
                self.spiel.observation_tensor_shape())
        raise ValueError(f"OpenSpiel's {self.openspiel_game!r} provides no tensor observation")

    def legal_actions(self, player: int) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=np.bool_)
        state = self.state
        if state.is_terminal() or state.is_chance_node():
            return mask
        if not state.is_simultaneous_node() and state.current_player() != player:
            return mask
        mask[state.legal_actions(player)] = True
        return mask

    def acting_players(self):
        state = self.state
        if state.is_terminal() or state.is_chance_node():
            return []
        if state.is_simultaneous_node():
            return [p for p in range(self.num_players) if state.legal_actions(p)]
        return [state.current_player()]

    @property
    def done(self) -> bool:
        return bool(self.state.is_terminal())

    @property
    def step_count(self) -> int:
        return self._steps

    def returns(self) -> np.ndarray:
        """OpenSpiel's returns (the rewards so far, final at the end)."""
        return np.asarray(self.state.returns(), dtype=np.float64)

    def outcomes(self) -> list[str]:
        """WIN for the one player with the highest return, TIE for several (or all
        equal), LOSS below the highest."""
        returns = self.returns()
        best = returns.max()
        leaders = int((returns == best).sum())
        return [LOSS if r < best else WIN if leaders == 1 else TIE for r in returns]

    def scores(self) -> list[float]:
        """OpenSpiel's returns (chips in poker, points in goofspiel)."""
        return [float(r) for r in self.returns()]

    def action_name(self, action: int) -> str:
        state = self.state
        if state is None or state.is_terminal() or state.is_chance_node() or state.is_simultaneous_node():
            return str(action)
        try:
            return state.action_to_string(state.current_player(), int(action))
        except pyspiel.SpielError:
            return str(action)

    # --- search on any game --------------------------------------------------------
    def is_chance_node(self) -> bool:
        return bool(self.state.is_chance_node())

    def chance_outcomes(self) -> np.ndarray:
        probabilities = np.zeros(max(1, self.max_chance_outcomes), dtype=np.float64)
        for action, probability in self.state.chance_outcomes():
            probabilities[action] = probability
        return probabilities

    def apply_chance(self, outcome: int) -> None:
        self._play([int(outcome)])
        self._steps += 1

    def determinize(self, observation: OpenSpielObservation, player: int, rng) -> None:
        """The state (perfect information) or a world ``player``'s ``observation`` is
        consistent with (:func:`sample_world`, hidden entries drawn from ``rng``, a
        ``numpy.random.Generator``). The copy plans: it tracks no views."""
        self.state = state_from_observation(self, observation, player, rng)
        self._track_views = False
        self._steps = 0

    # --- copies, serialisation, pictures ---------------------------------------------
    def copy(self) -> "OpenSpielGame":
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.state = None if self.state is None else self.state.clone()
        other._rng = self._rng.copy()
        other.invalid_actions = self.invalid_actions.copy()
        other._views = [list(v) for v in self._views]
        other._crcs = [list(c) for c in self._crcs]
        return other

    def to_json(self) -> str:
        return json.dumps({
            "game": self.name, "config": dataclasses.asdict(self.config),
            "history": [int(a) for a in self.state.history()], "steps": self._steps,
            "rng": [int(x) for x in self._rng], "invalid_actions": [int(x) for x in self.invalid_actions]})

    @classmethod
    def from_json(cls, text: str) -> "OpenSpielGame":
        data = json.loads(text)
        game = cls(config_class_for(short_name(data["game"]))(**data["config"]))
        game.reset(0)
        replay_history(game, data["history"])
        game._steps = int(data["steps"])
        game._rng = np.asarray(data["rng"], dtype=np.uint64)
        game.invalid_actions[:] = data["invalid_actions"]
        return game

    def fingerprint(self) -> int:
        """CRC-32 of OpenSpiel's history (chance outcomes and actions), which determines
        the state, and of the step count."""
        return zlib.crc32(f"{self._steps}:{self.state.history_str()}".encode())

    def render(self, state=None) -> str:
        if state is None:
            return str(self.state)
        if isinstance(state, OpenSpielObservation):
            known = [int(a) for a in state.history if a != NO_ENTRY]
            if all(a != HIDDEN for a in known):
                world = self.spiel.new_initial_state()
                _apply_entries(world, known, self.num_players)
                return str(world)
            return "history as seen: " + " ".join("?" if a == HIDDEN else str(a) for a in known)
        return str(state)


def _apply_entries(state, entries: list[int], num_players: int) -> None:
    """Apply OpenSpiel history ``entries`` (a simultaneous node takes one per player)."""
    i = 0
    while i < len(entries):
        if state.is_simultaneous_node():
            state.apply_actions(entries[i:i + num_players])
            i += num_players
        else:
            state.apply_action(entries[i])
            i += 1


def replay_history(game: OpenSpielGame, history: list[int]) -> None:
    """Play OpenSpiel ``history`` on ``game`` (just reset), views included."""
    entries = [int(a) for a in history]
    i = 0
    while i < len(entries):
        width = game.num_players if game.state.is_simultaneous_node() else 1
        game._play(entries[i:i + width])
        i += width


def state_from_observation(game: OpenSpielGame, observation: OpenSpielObservation, player: int, rng=None):
    """A ``pyspiel.State`` for ``player`` to plan on: the state itself when its history
    hides nothing, else a world drawn with ``rng`` (:func:`sample_world`)."""
    history = observation.history
    known = history[history != NO_ENTRY]
    state = game.spiel.new_initial_state()
    if not (known == HIDDEN).any():
        _apply_entries(state, [int(a) for a in known], game.num_players)
        return state
    if rng is None:
        raise ValueError(f"openspiel:{game.openspiel_game}: the observation hides entries of the "
                         f"history; a world is drawn with a generator (rng)")
    return sample_world(game, observation, player, rng)


def sample_world(game: OpenSpielGame, observation: OpenSpielObservation, player: int,
                 rng: np.random.Generator):
    """A state whose history agrees with ``player``'s ``observation``: the entries it
    knows as they are, each hidden one drawn (a chance outcome by its probability, a
    player's action uniformly) among those that leave the player's view after it as
    recorded (``view_crc``), and, where the player acts, a state where it acts with the
    legal actions it sees (a hidden move must not have ended the game: phantom
    tic-tac-toe's opponent may have three in a row on cells the player cannot see).
    The determinization of ``mcts_generic`` and of the agents of OpenSpiel's bots: a
    world consistent with what the player saw, not a draw from the posterior
    (opponents' choices are not weighted by how they play).

    A draw that reaches a dead end (a later entry the world cannot explain) backs up to
    the last hidden entry and takes its next candidate in the drawn order (a depth-first
    search, so a consistent world is found whenever one exists; forward draws restarted
    from the root failed 2% of the time in phantom tic-tac-toe past its middle game).
    RuntimeError after :data:`MAX_WORLD_NODES` states tried."""
    history = observation.history
    n = int((history != NO_ENTRY).sum())
    entries = [int(a) for a in history[:n]]
    crcs = [int(c) for c in observation.view_crc[:n]]
    acts = bool(np.any(observation.legal))
    legal = np.flatnonzero(observation.legal).tolist()
    remaining = MAX_WORLD_NODES

    def complete(state) -> bool:
        if not acts:
            return True
        if state.is_terminal() or state.is_chance_node():
            return False
        if not state.is_simultaneous_node() and state.current_player() != player:
            return False
        return sorted(state.legal_actions(player)) == legal

    # an explicit stack of (entry index, iterator over the children to try there)
    stack = [(0, iter([game.spiel.new_initial_state()]))]
    while stack:
        i, children = stack[-1]
        state = next(children, None)
        if state is None:
            stack.pop()
            continue
        if i == len(entries):
            if complete(state):
                return state
            continue
        remaining -= 1
        if remaining < 0:
            break
        if state.is_terminal():
            continue
        width = game.num_players if state.is_simultaneous_node() else 1
        stack.append((i + width, _children(game, state, entries[i:i + width], crcs[i + width - 1], player, rng)))
    raise RuntimeError(f"openspiel:{game.openspiel_game}: no world consistent with player {player}'s "
                       f"view found in {MAX_WORLD_NODES} states")


def _children(game: OpenSpielGame, state, group: list[int], want: int, player: int, rng):
    """The children of ``state`` by the entries ``group`` (one, or one per player at a
    simultaneous node) whose view for ``player`` is ``want``, hidden entries filled in a
    drawn order (chance outcomes weighted by their probabilities, moves uniformly)."""
    hidden = [k for k, a in enumerate(group) if a == HIDDEN]
    if not hidden:
        if _legal_group(state, group):
            child = state.clone()
            _apply_group(child, group)
            if game._view_crc(child, player) == want:
                yield child
        return
    if state.is_simultaneous_node():
        options = [state.legal_actions(k) for k in hidden]
        joints = [list(group) for _ in range(int(np.prod([len(o) for o in options])))]
        for j, joint in enumerate(joints):
            rest = j
            for k, option in zip(hidden, options):
                rest, pick = divmod(rest, len(option))
                joint[k] = int(option[pick])
        candidates, weights = joints, np.ones(len(joints))
    elif state.is_chance_node():
        outcomes = [(int(a), float(p)) for a, p in state.chance_outcomes() if p > 0]
        candidates, weights = [[a] for a, _ in outcomes], np.array([p for _, p in outcomes])
    else:
        candidates = [[int(a)] for a in state.legal_actions()]
        weights = np.ones(len(candidates))
    # a weighted order without replacement (Efraimidis-Spirakis keys u ** (1 / w))
    keys = rng.random(len(candidates)) ** (1.0 / weights)
    for j in np.argsort(-keys):
        joint = candidates[int(j)]
        if not _legal_group(state, joint):
            continue
        child = state.clone()
        _apply_group(child, joint)
        if game._view_crc(child, player) == want:
            yield child


def _legal_group(state, group: list[int]) -> bool:
    if state.is_chance_node():
        return any(a == group[0] and p > 0 for a, p in state.chance_outcomes())
    if state.is_simultaneous_node():
        return all(a in state.legal_actions(p) for p, a in enumerate(group))
    return group[0] in state.legal_actions()


def _apply_group(state, group: list[int]) -> None:
    if len(group) > 1:
        state.apply_actions(group)
    else:
        state.apply_action(group[0])
