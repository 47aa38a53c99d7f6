"""Game records and their replays: what a game was, re-simulated and checked, and rendered.

Lives here: ``records`` (``GameRecorder`` records a game as it is played,
``GameRecord`` / ``save_record`` / ``load_record`` keep it as one compressed file,
``replay`` re-simulates it and checks every step) and ``view`` (frames, GIFs and
HTML pages of a record; Pillow).

May import: ``games`` (registry and public API), ``cluster.results`` (atomic
writes). ``view`` is not re-exported here: game hosts record games without
loading Pillow.
"""
from cluster.replay.records import (GameRecord, GameRecorder, RecordError, ReplayMismatch, fingerprint, load_record,
                                    record_path, replay, save_record)

__all__ = ["GameRecorder", "GameRecord", "ReplayMismatch", "RecordError", "fingerprint", "load_record",
           "record_path", "replay", "save_record"]
