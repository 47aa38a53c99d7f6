"""The bird card game: a simplified Wingspan for two players.

    >>> from games.birds import Birds, BirdsConfig
    >>> game = Birds(BirdsConfig())
    >>> game.reset(seed=7)
    >>> game.acting_players()
    [0]
    >>> game.step([16, 0])          # player 0 gains a food
    >>> game.step_count
    1

Rules (see ``_rules.py``): 180 bird cards with points 0-9 and a generic food
cost 0-3 (generated from a seeded distribution, see ``_cards.py``, or read
from ``cards_csv``); each player starts with 2 cards and ``start_food`` food;
a feeder of 5 food refills when empty; a face-up tray of 3 cards is refilled
from the deck after every turn. On a turn a player plays a bird from hand onto
a free slot of its 5-slot board paying its cost, gains one food, or draws a
bird from the tray or the top of the deck. After 10 turns each the higher
board score wins (reward 1, tie 0.5, loss 0). An observation hides the deck
order and the opponent's cards that were not taken face up from the tray.

The game is turn-based: :meth:`Birds.acting_players` names the player to move
and :meth:`Birds.step` uses only that entry of the joint action.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from typing import Annotated

import numpy as np
from pydantic import Field

from ..rng import make_rng
from ..api import LOSS, TIE, WIN, Game
from ..validation import NonBlank, config_class
from . import kernels as K
from .generic import GENERIC_KERNELS
from .generic import determinize as generic_determinize

__all__ = ["Birds", "BirdsConfig"]


@lru_cache(maxsize=16)
def _cards_for(cards_csv: str | None, card_seed: int) -> np.ndarray:
    cards = K.load_cards_csv(cards_csv, "cards_csv") if cards_csv else K.generate_cards(card_seed)
    cards.setflags(write=False)
    return cards


#: A card set file: a non-blank path, or None (the generated set).
CardsCsv = NonBlank | None


@config_class
class BirdsConfig:
    """Options of a bird card game."""

    cards_csv: CardsCsv = None
    """CSV file of the card set (columns ``points``, ``cost``; see ``games/birds/_cards.py``);
    None: the generated set of 180 birds."""
    card_seed: Annotated[int, Field(ge=0)] = 2026
    """Seed of the generated card set (the same set in every game of a study)."""
    start_food: Annotated[int, Field(ge=0, le=20)] = 3
    """Food each player starts with (the public game: 5 minus the starting hand)."""

    def __post_init__(self):
        self.cards()  # a malformed CSV fails here, naming its row and column

    def cards(self) -> np.ndarray:
        """int16[C, 2] (points, cost) per card (read-only, cached)."""
        return _cards_for(self.cards_csv, int(self.card_seed))


class Birds(Game):
    """The ergonomic wrapper over the bird game kernels (see :class:`games.api.Game`).
    An illegal or malformed action becomes GAIN_FOOD (always legal) and is counted."""

    num_players = K.N_PLAYERS
    num_actions = K.N_ACTIONS
    #: mcts_generic searches it in numba, over determinizations (games/birds/generic.py),
    #: or through the Python members (``path = "python"``, :meth:`determinize` below).
    generic_kernels = GENERIC_KERNELS
    searchable = True
    action_names = tuple([f"play hand {i}" for i in range(K.MAX_HAND)]
                         + [f"take tray {j}" for j in range(K.TRAY_SLOTS)] + ["draw deck", "gain food"])

    def __init__(self, config: BirdsConfig | None = None, **options):
        super().__init__(config if config is not None else BirdsConfig(**options))

    # --- life cycle -----------------------------------------------------
    def new_state(self, seed) -> K.BirdsState:
        state = K.empty_state(self.config.cards().copy())
        K.deal(state, int(self.config.start_food), make_rng(seed))
        return state

    def is_valid_action(self, player: int, action: int) -> bool:
        return bool(K.is_legal(self.state, player, action))

    def replacement_action(self, player: int) -> int:
        return K.GAIN_FOOD

    def apply(self, joint) -> None:
        K.step(self.state, int(joint[K.to_move(self.state)]))

    # --- queries --------------------------------------------------------
    def acting_players(self) -> list[int]:
        return [] if self.done else [int(K.to_move(self.state))]

    def observation(self, player: int) -> K.BirdsState:
        return K.observe(self.state, int(player))

    def determinize(self, observation, player: int, rng: np.random.Generator) -> None:
        """The state: ``player``'s observation with the cards it has not seen dealt at
        random (the generic kernel's determinization, seeded from ``rng``)."""
        state = K.copy_state(observation)
        generic_determinize(state, observation, int(player), make_rng(int(rng.integers(2**63))))
        self.state = state

    def true_state_view(self) -> K.BirdsState:
        """A copy of the true state, hidden cards included: what an agent that reads
        the true state (an upper bound, ``cluster.run.play.observation_for``) is shown."""
        return K.copy_state(self.state)

    def legal_actions(self, player: int) -> np.ndarray:
        return K.legal_actions(self.state, int(player))

    @property
    def done(self) -> bool:
        return bool(K.is_terminal(self.state))

    @property
    def step_count(self) -> int:
        return int(self.state.meta[K.M_TURN])

    def returns(self) -> np.ndarray:
        return K.returns(self.state)

    def scores(self) -> list[int]:
        """Board points of each player."""
        return [int(self.state.player[p, K.P_SCORE]) for p in range(K.N_PLAYERS)]

    def outcomes(self) -> list[str]:
        r = self.returns()
        if not self.done:
            return [TIE] * K.N_PLAYERS
        return [WIN if x == 1.0 else TIE if x == 0.5 else LOSS for x in r]

    # --- copies and serialisation ---------------------------------------
    def copy(self) -> "Birds":
        other = Birds(self.config)
        other.state = K.copy_state(self.state)
        other.invalid_actions = self.invalid_actions.copy()
        return other

    def to_json(self) -> str:
        d = {name: np.asarray(getattr(self.state, name)).tolist() for name in K.BirdsState._fields}
        d["config"] = asdict(self.config)
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "Birds":
        d = json.loads(text)
        game = cls(BirdsConfig(**d.get("config", {})))
        template = K.empty_state(np.asarray(d["cards"], dtype=np.int16))
        game.state = K.BirdsState(*(np.asarray(d[name], dtype=getattr(template, name).dtype)
                                    for name in K.BirdsState._fields))
        return game

    def render(self, state: K.BirdsState | None = None) -> str:
        return render_state(self.state if state is None else state)

    def render_image(self, state: K.BirdsState | None = None, title: str | None = None):
        """A PIL image of the table: boards, hands (face down where hidden), tray,
        feeder and deck; ``observation(p)`` draws what player ``p`` knows
        (see :mod:`games.birds.image`)."""
        from .image import state_image

        return state_image(self.state if state is None else state, title=title)


def _card_text(cards, c) -> str:
    if c == K.HIDDEN:
        return "??"
    if c < 0:
        return "--"
    return f"{int(cards[c, K.C_POINTS])}/{int(cards[c, K.C_COST])}"


def render_state(s: K.BirdsState) -> str:
    """Text picture; a card is ``points/cost``, ``??`` hidden, ``--`` empty."""
    lines = [f"turn {int(s.meta[K.M_TURN])}/{K.TOTAL_TURNS}, to move {int(s.meta[K.M_TO_MOVE])}, "
             f"feeder {int(s.meta[K.M_FEEDER])}, deck {s.deck.shape[0] - int(s.meta[K.M_DECK_POS])}",
             "tray  " + " ".join(_card_text(s.cards, c) for c in s.tray)]
    for p in range(K.N_PLAYERS):
        hand = " ".join(_card_text(s.cards, c) for c in s.hand[p, : s.player[p, K.P_HAND]])
        board = " ".join(_card_text(s.cards, c) for c in s.board[p, : s.player[p, K.P_BOARD]])
        lines.append(f"P{p}: score {int(s.player[p, K.P_SCORE])} food {int(s.player[p, K.P_FOOD])} "
                     f"| board {board} | hand {hand}")
    return "\n".join(lines)
