"""Install the worked plugin example (``tests/plugin_example``) into the test environment.

The suite tests Arena's plugin path the way a user meets it: a separate
distribution, installed with pip, whose entry points add the ``bandit`` agent and
the ``tictactoe`` game. ``conftest.pytest_configure`` calls
:func:`ensure_example_installed` before collection (so the agent and game contract
tests, parametrized over the registries, include them): it runs
``pip install --no-deps -e tests/plugin_example`` once per environment (skipped when
this checkout's copy is already installed; a file lock serializes the xdist
processes). Subprocesses and Ray workers import it through the installed ``.pth``;
this process, already started, is given the package directory on ``sys.path``
(what the editable install maps ``arena_example`` to).
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib
import importlib.util
import json
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

EXAMPLE_DIR = Path(__file__).resolve().parent / "plugin_example"
DISTRIBUTION = "arena-example"


def installed_from_here() -> bool:
    """Whether this checkout's example is installed (editable) in this environment."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return False
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    return direct.get("url") == EXAMPLE_DIR.as_uri() and direct.get("dir_info", {}).get("editable", False)


def ensure_example_installed() -> None:
    """pip-install the example unless it is already installed from this checkout."""
    key = hashlib.sha1(f"{sys.prefix}|{EXAMPLE_DIR}".encode()).hexdigest()[:12]
    lock_path = Path(tempfile.gettempdir()) / f"arena-plugin-example-{key}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed_from_here():
            out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e",
                                  str(EXAMPLE_DIR)], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"pip install -e {EXAMPLE_DIR} failed:\n{out.stderr[-3000:]}")
    importlib.invalidate_caches()
    if importlib.util.find_spec("arena_example") is None:
        sys.path.append(str(EXAMPLE_DIR))
