"""Layout of the test suite: test modules share fixtures through conftest.py and plain helpers through
tests/helpers/, never by importing one another (which registers fixtures twice and couples modules' setups)."""

from __future__ import annotations

import ast

from helpers.paths import TESTS


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level module name) of every absolute import in `tree`, at any depth (inside functions too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module.split(".")[0]))
    return sorted(found)


def test_no_test_module_imports_another():
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 100  # the glob found the suite
    offenders = [f"{path.relative_to(TESTS)}:{line} imports {name}"
                 for path in modules
                 for line, name in imported_modules(ast.parse(path.read_text(), filename=str(path)))
                 if name.startswith("test_") or name == "conftest"]
    assert offenders == [], "move shared fixtures to conftest.py and helpers to tests/helpers/:\n" + "\n".join(
        offenders)


# Folders by area, mirroring the code (tests/sdk/, tests/server/<package>/, tests/browser/, ...): a new test goes
# where the part it tests lives, and the top of tests/ keeps the shared fixtures, helpers and tools.
AREAS = {"browser", "house", "importers", "integrations", "sdk", "security", "server", "visdom"}


def test_tests_live_in_folders_by_area():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    folders = {p.relative_to(TESTS).parts[0] for p in TESTS.rglob("test_*.py")}
    assert folders == AREAS, folders ^ AREAS
    assert len(list(TESTS.iterdir())) <= 40
