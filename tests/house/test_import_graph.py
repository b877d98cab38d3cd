"""The package's import graph has no cycles (lazy imports inside functions included) and the SDK never
imports the server: the layers import one way, down."""

from __future__ import annotations

import re

from helpers.imports import ROOT, cycles, graph, room_graph


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_import_cycles_even_through_imports_for_type_checking():
    # A circle that only type checking walks is still two modules that cannot be read apart: it is refused too.
    assert cycles(graph(typing=True)) == []


def test_no_server_package_imports_one_that_imports_it_back():
    # Module cycles are one test; this is the house's: commands, runs and panes each import one way.
    assert cycles(room_graph(graph())) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_sdk_never_imports_the_server():
    server_side = [(m, sorted(t for t in targets if t.startswith("paneboard.server")))
                   for m, targets in graph().items() if not m.startswith("paneboard.server")]
    assert [(m, ts) for m, ts in server_side if ts] == []


JS = ROOT / "static" / "js"
_JS_IMPORT = re.compile(r"""(?:\bimport\b[^'"()]*?\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}/[^"']+)["']""")


def js_graph() -> dict[str, set[str]]:
    """Our ES modules and the modules each imports (static and dynamic), as paths under static/js/."""
    out: dict[str, set[str]] = {}
    for f in JS.rglob("*.js"):
        name = f.relative_to(JS).as_posix()
        targets = {(f.parent / spec).resolve().relative_to(JS.resolve()).as_posix()
                   for spec in _JS_IMPORT.findall(f.read_text(encoding="utf-8"))}
        out[name] = targets - {name}
    for targets in out.values():
        targets &= out.keys()
    return out


def test_no_js_import_cycles():
    g = js_graph()
    assert len(g) > 20 and sum(map(len, g.values())) > 20  # the walk found the modules and their imports
    assert cycles(g) == []


def test_producers_submit_through_the_commands_interface_never_the_writer():
    """Only the assembly (services) and the writer's own package import the writer; every producer (sockets,
    HTTP, importers, run watches, retention) hands jobs to commands.jobs.Submit."""
    allowed = {"paneboard.server.services"}
    importers = sorted(m for m, targets in graph().items()
                       if "paneboard.server.ingest.writer" in targets and m not in allowed
                       and not m.startswith("paneboard.server.ingest"))
    assert importers == []


def test_only_the_assembly_lies_loose_in_server():
    loose = sorted(p.stem for p in (ROOT / "server").glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= 7, loose
    assert {"app", "services", "settings"} <= set(loose)
