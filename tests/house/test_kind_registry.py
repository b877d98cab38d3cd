"""The browser's pane-kind registry (static/js/panes/registry.js) and the server's (paneboard.server.panes) list
the same kinds: a kind the server accepts but the UI lacks shows as "unsupported", and one the UI knows but the
server rejects is dead code, so a kind added on one side only must fail here."""

from __future__ import annotations

import re

from helpers.paths import ROOT
from paneboard.server.panes import known_kinds

REGISTRY_JS = ROOT / "static" / "js" / "panes" / "registry.js"

# The body of `const KINDS = new Map([ ... ]);` and each `["kind", module]` entry in it.
KINDS_MAP = re.compile(r"const\s+KINDS\s*=\s*new\s+Map\(\s*\[(?P<body>.*?)\]\s*\)\s*;", re.S)
ENTRY = re.compile(r"\[\s*([\"'])(?P<kind>[^\"']+)\1\s*,")


def js_kinds(source: str) -> list[str]:
    found = KINDS_MAP.search(source)
    assert found, f"no `const KINDS = new Map([...]);` in {REGISTRY_JS}"
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", found.group("body"), flags=re.S)  # a commented-out kind is no kind
    return [m.group("kind") for m in ENTRY.finditer(body)]


def test_js_and_python_kind_registries_match():
    js = js_kinds(REGISTRY_JS.read_text(encoding="utf-8"))
    assert js, f"KINDS in {REGISTRY_JS} lists no kinds"
    assert len(js) == len(set(js)), f"kinds listed twice in registry.js: {sorted({k for k in js if js.count(k) > 1})}"
    py = set(known_kinds())
    only_py = sorted(py - set(js))
    only_js = sorted(set(js) - py)
    assert not only_py and not only_js, (
        f"pane kind registries differ: missing in static/js/panes/registry.js: {only_py or 'none'}; "
        f"missing in paneboard.server.panes (a module's KINDS in PANE_KINDS): {only_js or 'none'}")


def test_js_kinds_parser_reads_entries_and_skips_comments():
    src = 'const KINDS = new Map([\n  ["line", xy],\n  // ["gone", old],\n  [\'text\', text],\n]);'
    assert js_kinds(src) == ["line", "text"]


def test_the_shared_protocol_lists_exactly_the_server_kinds():
    # paneboard.protocol is what the SDK knows; the server's pane registry must own each of those kinds.
    from paneboard.protocol import KIND_NAMES

    assert sorted(KIND_NAMES) == known_kinds()
