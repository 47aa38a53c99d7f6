"""The generic kernel contract (games/generic.py): records are checked naming the entry,
and the built-in games' own generic kernels do what they declare (the bird game's
determinization deals exactly the unseen cards, keeping everything the player saw)."""
from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from games.birds.generic import GENERIC_KERNELS as BIRDS, copy_state, determinize
from games.birds.kernels import HIDDEN, M_DECK_POS, P_HAND
from games.generic import GenericKernels, check_generic_kernels
from games.pommerman.generic import GENERIC_KERNELS as POMMERMAN
from games.registry import make_game
from games.rng import make_rng
from games.xcom.generic import GENERIC_KERNELS as XCOM


@nb.njit(cache=True)
def _module_level(state):
    return state


def _closure():
    @nb.njit
    def inner(state):
        return state

    return inner


def test_the_built_in_records_are_complete():
    for kernels in (BIRDS, POMMERMAN, XCOM):
        assert check_generic_kernels(kernels, "k") is kernels
    assert POMMERMAN.simultaneous and BIRDS.determinize is not None and XCOM.chance_outcomes is None


def test_a_broken_record_is_refused_naming_the_entry():
    with pytest.raises(ValueError, match=r"^k\.returns: required"):
        check_generic_kernels(XCOM._replace(returns=None), "k")
    with pytest.raises(ValueError, match=r"^k\.step: must be a numba @njit function"):
        check_generic_kernels(XCOM._replace(step=lambda s, j: None), "k")
    with pytest.raises(ValueError, match=r"^k\.copy_state: must be a module-level function"):
        check_generic_kernels(XCOM._replace(copy_state=_closure()), "k")
    with pytest.raises(ValueError, match=r"^k: chance_outcomes and apply_chance are declared together"):
        check_generic_kernels(XCOM._replace(chance_outcomes=_module_level), "k")
    with pytest.raises(ValueError, match="must be a games.generic.GenericKernels"):
        check_generic_kernels({"step": _module_level}, "k")
    assert isinstance(XCOM, GenericKernels)


def test_the_bird_determinization_deals_exactly_the_unseen_cards():
    game = make_game("birds")
    game.reset(4)
    rng = np.random.default_rng(0)
    for _ in range(7):
        actions = [0, 0]
        player = game.acting_players()[0]
        actions[player] = int(rng.choice(np.flatnonzero(game.legal_actions(player))))
        game.step(actions)
    player = game.acting_players()[0]
    observation = game.observation(player)
    truth = game.state
    worlds = []
    for seed in range(4):
        world = copy_state(observation)
        determinize(world, observation, player, make_rng(seed))
        for field in ("board", "tray", "player", "hand_public", "cards"):
            assert np.array_equal(getattr(world, field), getattr(truth, field)), field
        assert np.array_equal(world.hand[player], truth.hand[player])  # its own hand: as seen
        pos = int(truth.meta[M_DECK_POS])
        opponent = 1 - player
        hidden = [i for i in range(truth.player[opponent, P_HAND]) if observation.hand[opponent, i] == HIDDEN]
        assert hidden, "the opponent holds a face-down card at this point"
        dealt = sorted(world.deck[pos:].tolist() + world.hand[opponent, hidden].tolist())
        unseen = sorted(truth.deck[pos:].tolist() + truth.hand[opponent, hidden].tolist())
        assert dealt == unseen  # the same cards, in a random order
        worlds.append(world.deck[pos:].tolist())
    assert len({tuple(w) for w in worlds}) > 1
