"""Layout of the test suite: test modules share fixtures through conftest.py and plain helpers through
tests/helpers/, never by importing one another (which registers fixtures twice and couples modules' setups)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


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
    modules = sorted(TESTS.glob("test_*.py"))
    assert len(modules) > 10  # the glob found the suite
    offenders = [f"{path.name}:{line} imports {name}"
                 for path in modules
                 for line, name in imported_modules(ast.parse(path.read_text(), filename=str(path)))
                 if name.startswith("test_") or name == "conftest"]
    assert offenders == [], "move shared fixtures to conftest.py and helpers to tests/helpers/:\n" + "\n".join(
        offenders)
