"""The scripts beside recorded games (``tests/data/<folder>/make_records.py``): what made the
records, and the series a replay test plays again."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DATA = Path(__file__).resolve().parent / "data"


def records_script(folder: str) -> ModuleType:
    """``tests/data/<folder>/make_records.py``, imported as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"{folder}_make_records", DATA / folder / "make_records.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
