"""Export learned populations (e.g. FEMCTS's) from a study as ``.npz`` seed files.

A study saves every learning seat's state after every game of a series
(``learned/`` in the study directory). :func:`export_population` picks

* by default, the population as it stood after the last win of the longest
  winning streak of the seat, over all series (the FEMCTS study's "seeded"
  runs start from such a population);
  the seat's agent says what its saved state exports and its streak
  (:meth:`agents.api.Agent.population_to_export`): only the agent reads its layout;
* with ``series`` and ``game``, the population after that game of that series
  (``which = "final"``) or the best-streak one recorded by then.

The file holds one array ``population`` (float64 ``[P, n_effective, features]``)
plus provenance as plain string/int arrays, and loads with
``np.load(..., allow_pickle=False)``; a spec names it as ``seed_population``.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from agents.registry import agent_class, agent_names
from cluster.results.store import ResultStore, atomic_write

WHICH = ("best_streak", "final")


class PopulationExportError(ValueError):
    """Nothing exportable matches the request."""


def _candidates(store: ResultStore, label: str, series: int | None, game: int | None):
    """Yield (series_id, index_in_series, arrays) of ``label``'s saved states."""
    for sid in store.learned_series():
        if series is not None and sid != series:
            continue
        if game is not None:
            states = store.learned_state_at(sid, game)
            index = game
        else:
            latest = store.latest_learned_state(sid)
            states, index = (latest[1], latest[0]) if latest else (None, None)
        if states and label in states:
            yield sid, index, states[label]


def _agent_of(store: ResultStore, label: str):
    """The agent class of seat ``label`` in the study's stored spec (None if unknown)."""
    stored = store.read_spec()
    seat = stored.seat(label) if stored is not None else None
    if seat is None or seat.agent not in agent_names():
        return None
    return agent_class(seat.agent)


def select_population(study_dir, label: str, which: str = "best_streak", series: int | None = None,
                      game: int | None = None) -> tuple[np.ndarray, dict]:
    """(population, provenance) of seat ``label`` (see the module docstring)."""
    if which not in WHICH:
        raise PopulationExportError(f"which: must be one of {WHICH}, got {which!r}")
    store = ResultStore(study_dir)
    agent = _agent_of(store, label)
    best = None
    for sid, index, arrays in _candidates(store, label, series, game):
        exported = agent.population_to_export(arrays, best_streak=which == "best_streak") \
            if agent is not None else None
        if exported is None:
            continue
        pop, streak = exported
        key = (sid, index) if which == "final" else (streak, -sid)
        if best is None or key > best[0]:
            best = (key, pop, {"series_id": sid, "index_in_series": index, "best_streak": streak})
    if best is None:
        where = f" in series {series}" if series is not None else ""
        at = f" after game {game}" if game is not None else ""
        raise PopulationExportError(f"no learned population of seat {label!r}{where}{at} in {study_dir}")
    return np.asarray(best[1], dtype=np.float64), best[2]


def export_population(study_dir, label: str, out, which: str = "best_streak",
                      series: int | None = None, game: int | None = None) -> dict:
    """Write the selected population to ``out`` (.npz); return its provenance."""
    population, provenance = select_population(study_dir, label, which, series, game)
    provenance = {"study_dir": str(Path(study_dir).resolve()), "label": label, "which": which,
                  **provenance, "shape": list(population.shape)}
    sink = io.BytesIO()
    np.savez(sink, population=population,
             source_study=np.asarray([provenance["study_dir"]]), source_label=np.asarray([label]),
             source_which=np.asarray([which]),
             source_position=np.asarray([provenance["series_id"], provenance["index_in_series"],
                                         provenance["best_streak"]], dtype=np.int64))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, sink.getvalue())
    provenance["out"] = str(out)
    return provenance
