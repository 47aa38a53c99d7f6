"""Study and sweep specs as validated, frozen models, and the plan they expand into.

Lives here, lowest first: the field rules every spec section uses (``fields``: names,
labels, counts), the sizes a spec may set and its ``[limits]`` table (``limits``), the
design's two shapes (``design``), the study model (``study``: ``StudySpec`` and its
section classes), a sweep's search space (``search_space``), the command line's edits
of a raw spec (``edits``: ``--set``, ``--unset``, and ``--scale``, one rule for studies
and sweeps), seed populations named by a spec (``seed_populations``: files and MLflow
artifacts, checked at validation), the study builder (``build``: ``build_spec``, every
check before any game), the plan (``plan``: games and seeds of a study, the same
whatever the cluster looks like), tournaments (``tournament``: the formats' tables of
entrants, the plan they expand into round by round, the check that a changed tournament
only adds entrants), the sweep model with its builder (``sweep``: a Ray
Tune search over a base study, itself a ``StudySpec``) and a study's stored spec read
back (``stored``: ``StoredSpec``, the typed view that reports, ratings and exports read
instead of ``spec.json``'s dict).

May import: ``games`` and ``agents`` (their registries and public APIs),
``cluster.stats`` and ``cluster.tracking``'s rule for MLflow keys (labels that would
share a key are refused); nothing else of ``cluster`` (every other room of the floor
builds on specs). Reading users' TOML files is ``jobs``'s job: a spec enters
here as a mapping and leaves as a model.
"""
from cluster.spec.build import build_spec, spec_from_dict
from cluster.spec.edits import check_scale, scale_groups, scale_study, scale_sweep, set_path, unset_path
from cluster.spec.fields import SpecError, SweepError
from cluster.spec.plan import GameTask, SeriesTask, plan_study
from cluster.spec.stored import StoredGame, StoredSeat, StoredSpec
from cluster.spec.study import DesignSpec, SeatSpec, SprtSpec, StopSpec, StudySpec, TrackingSpec
from cluster.spec.sweep import SweepSpec, build_sweep

__all__ = ["SpecError", "SeatSpec", "DesignSpec", "StopSpec", "SprtSpec", "TrackingSpec", "StudySpec", "build_spec",
           "spec_from_dict", "set_path", "unset_path", "scale_groups", "check_scale", "scale_study", "scale_sweep",
           "GameTask", "SeriesTask", "plan_study", "SweepError", "SweepSpec", "build_sweep", "StoredSpec",
           "StoredGame", "StoredSeat"]
