"""Make the worked plugin example (``tests/plugin_example``) visible to the tests, installing nothing.

The suite tests Arena's plugin path the way a user meets it: a separate distribution
whose entry points add the ``bandit`` agent and the ``tictactoe`` game. Instead of
``pip install``-ing it into the environment (a side effect on the user's Python),
:func:`make_example_visible` writes the example's *metadata only* (a ``.dist-info``
directory with its ``METADATA`` and ``entry_points.txt``, read from its
``pyproject.toml``) into a temporary directory, and puts that directory and the
example's source directory first on ``sys.path`` and on ``PYTHONPATH``:
``importlib.metadata`` finds distributions on the path, so the entry points resolve
as if the example were installed, in this process, its subprocesses and Ray workers
(which inherit ``PYTHONPATH``). ``conftest.pytest_configure`` calls it before
collection, so the agent and game contract tests, parametrized over the registries,
include the example.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import tomllib
from pathlib import Path

EXAMPLE_DIR = Path(__file__).resolve().parent / "plugin_example"
DISTRIBUTION = "arena-example"


def _metadata_dir() -> Path:
    """A temporary directory holding the example's ``.dist-info`` (rewritten when its
    pyproject changes; one per checkout and pyproject)."""
    pyproject = (EXAMPLE_DIR / "pyproject.toml").read_bytes()
    key = hashlib.sha1(str(EXAMPLE_DIR).encode() + pyproject).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / f"arena-plugin-example-{key}"
    project = tomllib.loads(pyproject.decode())["project"]
    name, version = project["name"], project["version"]
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    if not (info / "entry_points.txt").exists():
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        lines = []
        for group, points in project.get("entry-points", {}).items():
            lines.append(f"[{group}]")
            lines += [f"{k} = {v}" for k, v in points.items()]
            lines.append("")
        tmp = info / f".entry_points.{os.getpid()}.txt"
        tmp.write_text("\n".join(lines))
        os.replace(tmp, info / "entry_points.txt")
    return root


def make_example_visible() -> None:
    """Put the example's metadata and sources first on ``sys.path`` and ``PYTHONPATH``."""
    paths = [str(_metadata_dir()), str(EXAMPLE_DIR)]
    for path in reversed(paths):
        if path not in sys.path:
            sys.path.insert(0, path)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    importlib.invalidate_caches()
