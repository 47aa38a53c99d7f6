"""The Python side shared by the Pommerman agents: seeded generator, preallocated
model states, the profile fields' rules. (The kernels they share are in ``_common.py``.)

Each agent plans from its observation only (``observe`` output: fog, no hidden
power-ups, bombs without owner). All randomness comes from one ``uint64[2]``
generator seeded in ``begin_game`` from the seat's SeedSequence, so with an
iteration budget a game is a pure function of its seeds. Each decision is one
numba call.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from games.rng import make_rng
from games.validation import one_of
from games.pommerman.kernels import A_ALIVE, DEFAULT_MAX_STEPS, M_DONE, empty_state

from ..api import Agent, Budget
from ._common import PROFILES, QUIRK_FIRST_ROOT_WOOD, first_root_wood, resolve_profile

PROFILE_CHOICES = ("auto", "java", "arena")


def scratch_state():
    return empty_state(0, 0, 0, DEFAULT_MAX_STEPS)


def can_act(observation, seat) -> bool:
    return bool(observation.agents[seat, A_ALIVE]) and not observation.meta[M_DONE]


#: A search agent's ``profile`` field.
Profile = Annotated[str, one_of(PROFILE_CHOICES)]
#: A search agent's ``max_woods`` field (the heuristic's wood divisor; 0: the profile's rule).
MaxWoods = Annotated[int, Field(ge=0, le=1000)]


class PommermanAgent(Agent):
    """Shared glue: the seeded generator, the preallocated model states and, for
    agents whose config has a ``profile`` field, the profile's switches.

    ``profile`` is the resolved profile (``"java"`` / ``"arena"``; ``""`` for
    agents without one) and ``quirks`` its ``QUIRK_*`` bits (see ``_common``).
    """

    games = ("pommerman",)

    def __init__(self, config, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        self._root = scratch_state()
        self._scratch = scratch_state()
        self._rng = make_rng(0)
        requested = getattr(config, "profile", None)
        self.profile = resolve_profile(requested, game_config) if requested else ""
        self.quirks = PROFILES.get(self.profile, 0)
        self._max_wood = 0

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)
        self._max_wood = 0

    @classmethod
    def resolved_params(cls, config, game_config) -> dict:
        """``{"profile": "java" | "arena"}`` for agents with a profile (logged
        to MLflow in place of ``auto``), else ``{}``."""
        requested = getattr(config, "profile", None)
        return {"profile": resolve_profile(requested, game_config)} if requested else {}

    def row_fields(self) -> dict:
        """``{"profile": "java" | "arena"}`` for agents with a profile (the result
        rows' ``profile`` column), else none."""
        return {"profile": self.profile} if self.profile else {}

    def model_max_wood(self, observation) -> int:
        """The heuristic's wood divisor: the config's ``max_woods`` if > 0, else
        under ``QUIRK_FIRST_ROOT_WOOD`` the wood of this agent's first root of
        the game + 1, else 0 (the board's initial wood)."""
        fixed = int(getattr(self.config, "max_woods", 0) or 0)
        if fixed > 0:
            return fixed
        if self.quirks & QUIRK_FIRST_ROOT_WOOD and self._max_wood == 0:
            self._max_wood = int(first_root_wood(observation))
        return self._max_wood


