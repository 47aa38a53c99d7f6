"""Where the golden (reference) trajectories are: the one place the tests look outside the
repository, and only the golden-trajectory conformance tests import it.

The trajectories recorded from the reference implementations are not part of the project;
they sit beside a developer's or CI's clone, in ``../shared/golden/``, or wherever
``ARENA_GOLDEN_DIR`` points. Without them the tests that replay them skip, saying why; every
other test runs from the repository alone (``tests/test_self_contained.py`` checks that).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN_ROOT = (Path(os.environ["ARENA_GOLDEN_DIR"]).expanduser() if os.environ.get("ARENA_GOLDEN_DIR")
               else Path(__file__).resolve().parents[2] / "shared" / "golden")
POMMERMAN = GOLDEN_ROOT / "pommerman"
POMMERMAN_JAVA = GOLDEN_ROOT / "pommerman-java"


def skip_reason(path: Path) -> str:
    return (f"golden trajectories not found at {path} (they sit beside the clone, in "
            f"../shared/golden, or where ARENA_GOLDEN_DIR points)")


#: The mark of every golden-trajectory test (``pytest -m golden`` runs just those).
golden = pytest.mark.golden


def requires(path: Path):
    """Marks a test that replays the golden file or folder ``path``: ``golden``, and a skip
    saying why when ``path`` is absent."""
    def mark(test):
        return golden(pytest.mark.skipif(not path.exists(), reason=skip_reason(path))(test))
    return mark
