"""The project runs from its own files: no module, spec, config or test (other than the
golden-trajectory conformance tests, through ``tests/golden_data.py``) names the
developers' ``../shared`` folder, and every file a shipped spec or default config needs
is package data, so a non-editable install has it too."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A path into the developers' shared folder, written in any of the ways code spells one.
SHARED_PATH = re.compile(
    r"""\.\./shared"""                                          # "../shared/..."
    r"""|["']shared["']\s*/|/\s*["']shared["']"""                # root / "shared" / ...
    r"""|["']\.\.["']\s*,\s*["']shared["']"""                    # Path("..", "shared")
    r"""|["']shared["']\s*,\s*["'](?:data|golden|reference|tools)["']"""
    r"""|\bshared/(?:data|golden|reference|tools)\b""")
SCANNED = ("games", "agents", "cluster", "jobs", "tests", "infra", ".ci")
SUFFIXES = {".py", ".toml", ".yaml", ".yml", ".json", ".sh", ".cfg", ".txt", ""}
#: The golden helper, and this file (its examples of the pattern).
ALLOWED = {Path("tests/golden_data.py"), Path("tests/test_self_contained.py")}


def scanned_files() -> list[Path]:
    files = [ROOT / "pyproject.toml"]
    for top in SCANNED:
        files += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and "__pycache__" not in p.parts]
    return [p for p in files if p.relative_to(ROOT) not in ALLOWED]


def test_the_scan_sees_the_code_and_the_pattern_catches_the_ways_of_naming_shared():
    names = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    assert {"games/scotland_yard/__init__.py", "jobs/cli.py", "jobs/scotland_yard/trees_shared.toml",
            ".ci/run", "tests/games/test_scotland_yard.py", "pyproject.toml"} <= names
    for text in ('root.parent / "shared" / "data"', "'../shared/data/x.csv'", "p / 'shared'",
                 "see shared/golden/pommerman", 'Path("..", "shared", "golden")'):
        assert SHARED_PATH.search(text), text
    for text in ('mutation_variant = "shared"', '{"mutation_variant": "shared", "n": 2}', "a shared tree",
                 "trees_shared.toml", "shared=True", '== "shared", path.name'):
        assert not SHARED_PATH.search(text), text


def test_nothing_outside_the_golden_helper_names_the_shared_folder():
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
            for p in scanned_files()
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            if SHARED_PATH.search(line)]
    assert not hits, "the project must not name the developers' shared folder:\n" + "\n".join(hits)


def test_golden_data_is_read_only_by_the_golden_conformance_tests():
    users = {p.relative_to(ROOT / "tests").as_posix() for p in (ROOT / "tests").rglob("test_*.py")
             if re.search(r"^from golden_data import", p.read_text(), re.M)}
    assert users == {"jobs/test_cli.py", "jobs/test_cli_errors.py", "games/test_pommerman_canonical.py",
                     "games/test_pommerman_java.py", "agents/test_simple_player.py"}


def _package_data_patterns() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]


def _is_package_data(path: Path, patterns: dict[str, list[str]]) -> bool:
    rel = path.relative_to(ROOT)
    package, inside = rel.parts[0], Path(*rel.parts[1:])
    return any(inside.match(pattern) and len(inside.parts) == len(Path(pattern).parts)
               for pattern in patterns.get(package, []))


@pytest.mark.parametrize("folder", ["games", "agents", "jobs"])
def test_every_data_file_is_package_data(folder):
    """Everything but Python source in a package folder ships with a non-editable install
    (board, layouts, encoders, specs, seed populations, tables, the birds policy)."""
    patterns = _package_data_patterns()
    data = [p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix not in {".py", ".pyc", ".nbi", ".nbc"}
            and "__pycache__" not in p.parts]
    assert data, folder
    missing = [str(p.relative_to(ROOT)) for p in data if not _is_package_data(p, patterns)]
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"


def test_the_default_scotland_yard_board_is_the_packaged_one():
    import games.scotland_yard as sy

    config = sy.ScotlandYardConfig()
    assert config.board_path == Path(sy.__file__).resolve().parent / "board" / "scotland_yard_edges.csv"
    assert config.setup_path == config.board_path.parent / "scotland_yard_setup.json"
    assert config.board_path.is_file() and config.setup_path.is_file()
