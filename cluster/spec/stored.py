"""A study's stored spec read back: the typed view that reports, ratings and exports use.

A study directory keeps the spec it was started with (``spec.json``, written from
:meth:`cluster.spec.study.StudySpec.to_dict` by the results store). Readers of a
finished or interrupted study ask it which game with which options was played, what
the design was and which agent sat behind a label. :class:`StoredSpec` answers with
attributes, not dict look-ups, and is built without the registries, so a study of a
game or agent that is not importable here (a plugin) still reports and rates::

    >>> stored = StoredSpec.from_dict({"game": {"name": "birds", "start_food": 3},
    ...                                "design": {"seeds": 2, "games_per_seed": 2},
    ...                                "lineup": [{"agent": "mcts", "label": "A"}]})
    >>> stored.game.name, stored.game.options, stored.design.games_per_condition
    ('birds', {'start_food': 3}, 4)
    >>> stored.seat("A").agent
    'mcts'

Sections are validated as when the study was started (:class:`DesignSpec` is the same
model), and a field added since then with a default reads as that default: a spec
written by an earlier release, without the newer fields, reads back (and resumes, see
:meth:`StoredSpec.study_spec`). ``design`` and ``lineup`` may be absent (a spec
written by hand, e.g. in a test): ``design`` is then None and ``lineup`` empty.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from cluster.spec.fields import SpecError, Text, config_class, section, table
from cluster.spec.build import build_design, spec_from_dict
from cluster.spec.study import SECTIONS, DesignSpec, StudySpec

__all__ = ["StoredGame", "StoredSeat", "StoredSpec"]


@dataclass(frozen=True)
class StoredGame:
    """The ``[game]`` table of a stored spec: the game's registry name and its options
    as stored (every field of its config when the cluster wrote it)."""

    name: str
    """Registry name of the game."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The game's options (``{"mode": "ffa", "view_range": 2, ...}``)."""

    def with_options(self, **options) -> "StoredGame":
        """The same game with ``options`` set (e.g. one condition's varied options)."""
        return StoredGame(self.name, {**self.options, **options})

    def table(self) -> dict:
        """``{"name": ..., **options}``: the TOML ``[game]`` table (for JSON and MLflow)."""
        return {"name": self.name, **self.options}

    def first_difference(self, other: "StoredGame") -> tuple[str, Any, Any] | None:
        """``(what, mine, theirs)`` of the first difference from ``other``, the game's name
        first (``what = "games"``), then its options in order (``what = "game.<option>"``,
        an option one side lacks is None there); None when the two are the same game."""
        if self.name != other.name:
            return "games", self.name, other.name
        for key in sorted(set(self.options) | set(other.options)):
            mine, theirs = self.options.get(key), other.options.get(key)
            if mine != theirs:
                return f"game.{key}", mine, theirs
        return None


@config_class
class StoredSeat:
    """One stored ``[[lineup]]`` entry (what the readers need of it)."""

    agent: Text
    """Registry name or import path of the agent."""
    label: Text | None = None
    """The seat's label (the cluster always stores it; default: the agent name)."""
    params: Any = None
    """The parameters as given in the spec."""
    seed_population: Text | None = None
    """The seed population's resolved path, if any."""
    budget: Any = None
    """The seat's own budget table, if any."""

    def __post_init__(self):
        if self.label is None:
            object.__setattr__(self, "label", self.agent)
        object.__setattr__(self, "params", table("params", {} if self.params is None else self.params))


@dataclass(frozen=True)
class StoredSpec:
    """A stored ``spec.json``, typed (see the module docstring)."""

    game: StoredGame
    """The game and its options."""
    design: DesignSpec | None
    """The validated design (None when the stored spec has none)."""
    lineup: tuple[StoredSeat, ...]
    """The lineup entries in seat order (empty when the stored spec has none)."""
    data: Mapping = field(repr=False, compare=False)
    """The stored dict itself, for :meth:`study_spec` only."""

    @classmethod
    def from_dict(cls, data: Mapping) -> "StoredSpec":
        """Read a stored spec's dict (raises SpecError naming the field)."""
        data = table("spec", data)
        for key in data:
            if key not in SECTIONS and key != "source":
                raise SpecError(f"{key}: unknown section; known: {list(SECTIONS)}")
        if "game" not in data:
            raise SpecError("game: required section is missing")
        options = table("game", data["game"])
        name = options.pop("name", None)
        if not isinstance(name, str) or not name.strip():
            raise SpecError(f"game.name: must be a non-empty string, got {name!r}")
        design = build_design(data["design"]) if "design" in data else None
        raw_lineup = data.get("lineup", [])
        if not isinstance(raw_lineup, list):
            raise SpecError(f"lineup: must be an array of tables, got {type(raw_lineup).__name__}")
        lineup = tuple(section(StoredSeat, item, f"lineup[{i}]", required={"agent": "the agent's name"})
                       for i, item in enumerate(raw_lineup))
        return cls(game=StoredGame(name, options), design=design, lineup=lineup, data=data)

    def seat(self, label: str) -> StoredSeat | None:
        """The lineup entry labelled ``label`` (None if there is none)."""
        return next((seat for seat in self.lineup if seat.label == label), None)

    def study_spec(self) -> StudySpec:
        """The whole :class:`StudySpec`, rebuilt through the registries with this release's
        defaults (seed population files are not opened). Raises SpecError, e.g. when the
        game or an agent is a plugin that is not importable here."""
        return spec_from_dict(self.data)
