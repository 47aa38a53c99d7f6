"""The import structure of every floor: ``games`` <- ``agents`` <- ``cluster`` <- ``jobs``, no circles.

Every import statement of ``games/``, ``agents/``, ``cluster/`` and ``jobs/``
(module level and inside functions) is read with ``ast``; a package's
``__init__`` importing its own submodules (how built-ins register, how a
sub-package re-exports) is the one edge allowed back up. Inside ``cluster/`` the
sub-packages keep an order too (:data:`CLUSTER_ORDER`), and nobody imports
another package's private names or modules.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("games", "agents", "cluster", "jobs")
#: The rooms of ``cluster/``, lowest first: a room imports only rooms before it (and itself).
#: ``stats`` is a leaf module; ``tracking`` is MLflow plumbing that knows no study.
CLUSTER_ORDER = ("stats", "tracking", "spec", "results", "replay", "analysis", "run", "sweep")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for layer in LAYERS for p in (ROOT / layer).rglob("*.py")}


def imported_names(modules: dict[str, Path] | None = None) -> dict[str, set[tuple[str, str]]]:
    """Module -> (imported module, name) for every ``from M import name`` of the floors
    (absolute and relative; name is "" for ``import M``)."""
    modules = modules or _modules()
    out = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        pairs = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs |= {(a.name, "") for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                pairs |= {(base, a.name) for a in node.names}
        out[name] = pairs
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the floors it imports (anywhere in it)."""
    modules = _modules()
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


def _acyclic(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without a package's ``__init__`` loading its own submodules (registration,
    re-exports: not a dependency)."""
    return {m: {t for t in edges if not (ROOT / m.replace(".", "/") / "__init__.py").is_file()
                or not t.startswith(m + ".")} for m, edges in graph.items()}


def test_no_import_circle_below_the_cluster():
    graph = {m: {t for t in e if t.split(".")[0] in ("games", "agents")}
             for m, e in import_graph().items() if m.split(".")[0] in ("games", "agents")}
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
         if not m.name.endswith((".image", "conformance"))]
for name in names:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("agents", "cluster", "jobs"))))
"""


def test_games_load_without_the_floors_above():
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_no_import_circle_and_no_arrow_back_up():
    """No circle anywhere in the four floors; no floor imports a floor above it
    (``cluster`` never imports ``jobs``)."""
    graph = _acyclic(import_graph())
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))
    for name, edges in graph.items():
        floor = LAYERS.index(name.split(".")[0])
        above = sorted(t for t in edges if LAYERS.index(t.split(".")[0]) > floor)
        assert not above, f"{name} imports the floor above: {above}"


def _room(module: str) -> str:
    """``cluster.run.driver`` -> ``run``; ``cluster.stats`` -> ``stats``."""
    return module.split(".")[1] if module.count(".") else ""


def test_cluster_rooms_import_downward_only():
    """Each sub-package of ``cluster/`` imports only the rooms below it in
    :data:`CLUSTER_ORDER` (so no circle between rooms either), and every room is listed."""
    graph = _acyclic(import_graph())
    rooms = {_room(m) for m in graph if m.startswith("cluster.")}
    assert rooms == set(CLUSTER_ORDER), sorted(rooms ^ set(CLUSTER_ORDER))
    for name, edges in graph.items():
        if not name.startswith("cluster."):
            continue
        rank = CLUSTER_ORDER.index(_room(name))
        for target in edges:
            if target.startswith("cluster.") and target != "cluster":
                assert CLUSTER_ORDER.index(_room(target)) <= rank, \
                    f"{name} ({_room(name)}) imports {target} ({_room(target)}), a room above it"
    room_graph = {r: set() for r in CLUSTER_ORDER}
    for name, edges in graph.items():
        if name.startswith("cluster."):
            room_graph[_room(name)] |= {_room(t) for t in edges if t.startswith("cluster.")} - {_room(name)}
    assert _cycle(room_graph) is None, " -> ".join(_cycle(room_graph))


def _private_part(module: str, name: str) -> str | None:
    """The private part an import reaches: an underscore module on the path, or an
    underscore name (dunders are not private)."""
    for part in module.split(".") + ([name] if name else []):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return part
    return None


def private_imports_across_packages(modules: dict[str, Path] | None = None) -> list[str]:
    """``"<importer>: <module>[.<name>]"`` for every import, in any of the four floors, of
    an underscore module or name from outside the package (folder) that holds it."""
    modules = modules or _modules()
    offences = []
    for name, pairs in imported_names(modules).items():
        importer = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
        for module, imported in pairs:
            if module.split(".")[0] not in LAYERS:
                continue
            part = _private_part(module, imported)
            if part is None:
                continue
            # the package that owns the private part: the folder the underscore module or
            # the module defining the underscore name sits in
            path = module.split(".")
            owner = ".".join(path[:path.index(part)]) if part in path else (
                module if module in modules and modules[module].name == "__init__.py" else module.rpartition(".")[0])
            if not (importer == owner or importer.startswith(owner + ".")):
                offences.append(f"{name}: {module}{'.' + imported if imported else ''}")
    return sorted(offences)


def test_no_private_imports_across_packages():
    """An underscore module or name is private to the package that holds it: nobody
    outside that package (folder) imports it, in any floor: ``agents`` never imports
    ``games._anything`` (the kernels' toolkit is the public ``games.lowlevel``),
    ``jobs`` never imports ``agents.pommerman._common``, ``cluster.sweep`` never
    imports a ``_helper`` of ``cluster.run``."""
    offences = private_imports_across_packages()
    assert not offences, "private imports across packages:\n" + "\n".join(offences)


def test_the_private_import_check_catches_both_forms(tmp_path):
    """The check itself: an underscore module of another top-level package, and an
    underscore name from another package's public module, are both reported; a
    package's own underscore module is not."""
    files = {
        "games/__init__.py": "",
        "games/_kernel.py": "def _fast(): pass\n",
        "games/api.py": "from games._kernel import _fast\n_private = 1\n",
        "agents/__init__.py": "",
        "agents/search.py": "import games._kernel\nfrom games.api import _private\nfrom games import api\n",
    }
    modules = {}
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        parts = list(Path(relative).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    assert private_imports_across_packages(modules) == ["agents.search: games._kernel",
                                                        "agents.search: games.api._private"]
