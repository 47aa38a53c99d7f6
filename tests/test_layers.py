"""The import structure of the lower floors: ``games`` <- ``agents``, no circles.

Every import statement of ``games/`` and ``agents/`` (module level and inside
functions) is read with ``ast``; a package's ``__init__`` importing its own
submodules (how built-ins register) is the one edge allowed back up.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("games", "agents")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``games`` / ``agents`` it imports (anywhere in it)."""
    modules = {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges.add(target)
        graph[name] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle_below_the_cluster():
    graph = import_graph()
    # A package's __init__ loading its submodules is registration, not a dependency.
    acyclic = {m: {t for t in edges if not (ROOT / m.replace(".", "/") / "__init__.py").is_file()
                   or not t.startswith(m + ".")} for m, edges in graph.items()}
    assert _cycle(acyclic) is None, " -> ".join(_cycle(acyclic))
    assert graph["agents.registry"] <= {"agents.api", "agents.plugins", "games.validation", "games"}, \
        graph["agents.registry"]
    assert graph["agents.plugins"] <= {"agents.api", "games.plugins", "games"}, graph["agents.plugins"]
    for name, edges in graph.items():
        if name.startswith("games"):
            assert not any(t.startswith("agents") for t in edges), f"{name} imports {edges}"


_CHILD = """
import importlib, json, pkgutil, sys
import games
names = [m.name for m in pkgutil.walk_packages(games.__path__, "games.")
         if not m.name.endswith(("_speed", ".image", "conformance"))]
for name in names:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("agents", "cluster", "jobs"))))
"""


def test_games_load_without_the_floors_above():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
