"""The package's module import graph (lazy imports inside functions included) and its cycle finder, for
tests/house/test_import_graph.py and bench/import_graph.py."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = (("client_sdk", "paneboard"), ("server", "paneboard.server"))


def modules() -> dict[str, tuple[Path, bool]]:
    """Installed module name -> (file, is a package's __init__)."""
    out = {}
    for folder, package in PACKAGES:
        for f in (ROOT / folder).rglob("*.py"):
            parts = list(f.relative_to(ROOT / folder).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            parts = parts[:-1] if is_pkg else parts
            out[".".join([package, *parts])] = (f, is_pkg)
    return out


def imports(name: str, path: Path, is_pkg: bool, known: dict, typing: bool = False) -> Iterator[str]:
    """Our modules that `name` imports anywhere in its source; under `if TYPE_CHECKING:` too with `typing`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = name if is_pkg else name.rpartition(".")[0]
    typing_only = set() if typing else {
        id(n) for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    yield sub
                elif target in known:
                    yield target


def graph(typing: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports (with `typing`, also those it imports only for type checking)."""
    known = modules()
    return {name: set(imports(name, *where, known, typing)) - {name} for name, where in known.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def room_of(module: str) -> str | None:
    """The server's first-level package (or loose module) a module lies in; None outside the server."""
    parts = module.split(".")
    if parts[:2] != ["paneboard", "server"] or len(parts) < 3:
        return None
    return parts[2]


def room_arrows(g: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    """(importing room, imported room) -> how many module imports make that arrow."""
    arrows: dict[tuple[str, str], int] = {}
    for module, targets in g.items():
        src = room_of(module)
        for target in targets:
            dst = room_of(target)
            if src and dst and src != dst:
                arrows[(src, dst)] = arrows.get((src, dst), 0) + 1
    return arrows


def room_graph(g: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each room and the rooms it imports."""
    rooms: dict[str, set[str]] = {r: set() for r in (room_of(m) for m in g) if r}
    for src, dst in room_arrows(g):
        rooms[src].add(dst)
    return rooms
