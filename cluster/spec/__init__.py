"""Study and sweep specs as validated, frozen models, and the plan they expand into.

Lives here: the field rules every spec section uses (``fields``), the study model
and its builder (``study``: ``StudySpec``, ``build_spec``, the CLI edits
``set_path`` / ``scale_groups`` / ``check_scale``), seed populations named by a
spec (``seed_populations``: files and MLflow artifacts, checked at validation),
the plan (``plan``: games and seeds of a study, the same whatever the cluster
looks like), the sweep model (``sweep``: a Ray Tune search over a base study, itself
a ``StudySpec``) and a study's stored spec read back (``stored``: ``StoredSpec``, the
typed view that reports, ratings and exports read instead of ``spec.json``'s dict).

May import: ``games`` and ``agents`` (their registries and public APIs) and
``cluster.stats``; nothing else of ``cluster`` (every other room of the floor
builds on specs). Reading users' TOML files is ``jobs``'s job: a spec enters
here as a mapping and leaves as a model.
"""
from cluster.spec.fields import SpecError
from cluster.spec.plan import GameTask, SeriesTask, plan_study
from cluster.spec.stored import StoredGame, StoredSeat, StoredSpec
from cluster.spec.study import (DesignSpec, SeatSpec, SprtSpec, StopSpec, StudySpec, TrackingSpec, build_spec,
                                check_scale, scale_groups, set_path)
from cluster.spec.sweep import SweepError, SweepSpec, build_sweep

__all__ = ["SpecError", "SeatSpec", "DesignSpec", "StopSpec", "SprtSpec", "TrackingSpec", "StudySpec", "build_spec",
           "set_path", "scale_groups", "check_scale", "GameTask", "SeriesTask", "plan_study", "SweepError",
           "SweepSpec", "build_sweep", "StoredSpec", "StoredGame", "StoredSeat"]
