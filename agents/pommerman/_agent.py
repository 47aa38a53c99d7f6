"""The Python side shared by the Pommerman agents: seeded generator, preallocated
model states, the search agents' shared config (profile, max_woods). (The kernels they share are in ``_common.py``.)

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
from games.validation import config_class, one_of
from games.pommerman.kernels import A_ALIVE, DEFAULT_MAX_STEPS, M_DONE, empty_state

from ..api import Agent, Budget
from ._common import PROFILES, QUIRK_FIRST_ROOT_WOOD, first_root_wood, resolve_profile

PROFILE_CHOICES = ("auto", "java", "arena")


def scratch_state():
    """An empty state with the capacity of any observation of the game (the step limit's
    ticks), which ``prepare_search`` and ``copy_into`` fill: a searcher's root and scratch."""
    return empty_state(0, 0, 0, DEFAULT_MAX_STEPS)


def can_act(observation, seat) -> bool:
    return bool(observation.agents[seat, A_ALIVE]) and not observation.meta[M_DONE]


#: A search agent's ``profile`` field.
Profile = Annotated[str, one_of(PROFILE_CHOICES)]
#: A search agent's ``max_woods`` field (the heuristic's wood divisor; 0: the profile's rule).
MaxWoods = Annotated[int, Field(ge=0, le=1000)]


@config_class
class PommermanSearchConfig:
    """The fields every Pommerman search agent shares (MCTS, RHEA, OSLA, FEMCTS): which
    behaviour to search with, and the heuristic's wood divisor."""

    profile: Profile = "auto"
    """``java``: the Java framework's behaviour (its switches, ``QUIRK_*`` in
    ``agents/pommerman/_common.py``: the slips of its search, its heuristic's wood
    divisor, hidden power-ups kept in the model at full observability, a tie death
    scored by the heuristic); ``arena``: Arena's corrected search; ``auto``: ``java``
    in the java ruleset, else ``arena``."""
    max_woods: MaxWoods = 0
    """The heuristic's wood divisor, if > 0 (wood destroyed / max_woods). 0: the
    profile's rule (``java``: the wood of the agent's first decision of the game
    + 1; ``arena``: the board's initial wood). The framework's divisor is static,
    set once per process (JVM) by its first decision: give that value here to
    replay a particular framework run (e.g. 3 at view range 2 in the
    side-by-side of jobs/femcts/framework_side_by_side.md)."""


class PommermanAgent(Agent):
    """Shared glue: the seeded generator and the preallocated model states. ``profile``
    is ``""`` and ``quirks`` 0 here; a search agent (:class:`PommermanSearchAgent`)
    sets them from its config."""

    games = ("pommerman",)
    uses_forward_model = False  # the rule players; a search agent (below) steps the game

    def __init__(self, config, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        self._root = scratch_state()
        self._scratch = scratch_state()
        self._rng = make_rng(0)
        self.profile = ""
        self.quirks = 0

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._rng = make_rng(seed)


class PommermanSearchAgent(PommermanAgent):
    """A search agent: its config is a :class:`PommermanSearchConfig`. ``profile`` is
    the resolved profile (``"java"`` / ``"arena"``) and ``quirks`` its ``QUIRK_*``
    bits (see ``_common``)."""

    Config = PommermanSearchConfig
    uses_forward_model = True

    def __init__(self, config, budget: Budget, game_config):
        super().__init__(config, budget, game_config)
        self.profile = resolve_profile(config.profile, game_config)
        self.quirks = PROFILES[self.profile]
        self._max_wood = 0
        self._tree = None  # a tree search (MCTS, FEMCTS) preallocates its tree here

    @property
    def search_tree(self):
        """The tree of the last decision (MCTS, FEMCTS); None for the searches that keep
        none (OSLA, RHEA). See :attr:`agents.api.Agent.search_tree`."""
        return self._tree

    def begin_game(self, seat, seed):
        super().begin_game(seat, seed)
        self._max_wood = 0

    @classmethod
    def resolved_params(cls, config, game_config) -> dict:
        """``{"profile": "java" | "arena"}`` (logged to MLflow in place of ``auto``)."""
        return {"profile": resolve_profile(config.profile, game_config)}

    def row_fields(self) -> dict:
        """``{"profile": "java" | "arena"}`` (the result rows' ``profile`` column)."""
        return {"profile": self.profile}

    def model_max_wood(self, observation) -> int:
        """The heuristic's wood divisor: the config's ``max_woods`` if > 0, else
        under ``QUIRK_FIRST_ROOT_WOOD`` the wood of this agent's first root of
        the game + 1, else 0 (the board's initial wood)."""
        if self.config.max_woods > 0:
            return int(self.config.max_woods)
        if self.quirks & QUIRK_FIRST_ROOT_WOOD and self._max_wood == 0:
            self._max_wood = int(first_root_wood(observation))
        return self._max_wood
