"""The op table: every op a producer may send parses through it, the server's own ops never do, and the
writer applies every op through it (no op is handled anywhere else)."""

from __future__ import annotations

import ast

import pytest

from helpers.paths import ROOT
from paneboard.server.commands.envelope import EventError
from paneboard.server.dispatch.parse import parse_event
from paneboard.server.dispatch.table import OPS, PRODUCER_OPS

SERVER = ROOT / "server"


def test_every_op_a_producer_may_send_is_documented_in_the_wire_spec():
    wire = (SERVER.parent / "docs" / "WIRE.md").read_text(encoding="utf-8")
    assert [op for op in PRODUCER_OPS if f"`{op}`" not in wire and f'"{op}"' not in wire] == []


@pytest.mark.parametrize("op", sorted(set(OPS) - set(PRODUCER_OPS)))
def test_a_producer_cannot_forge_a_server_op(op):
    with pytest.raises(EventError, match="op must be one of"):
        parse_event({"op": op, "env": "e", "status": "crashed", "client": "c"})


def test_every_row_parses_to_its_own_op():
    samples = {
        "set": {"win": "w", "kind": "text", "content": "hi"}, "update": {"win": "w", "kind": "text",
                                                                       "mode": "append", "content": "x"},
        "close": {"win": "w"}, "delete_env": {}, "fork_env": {"from": "src"}, "rename_env": {"to": "new"},
        "layout": {"win": "w", "layout": None}, "save_view": {"name": "v"}, "load_view": {"name": "v"},
        "set_meta": {"meta": {}}, "custom_scalars": {"layout": {"c": {"t": ["Multiline", ["a"]]}}},
        "hparams": {"hparams": {"lr": 0.1}}, "run_start": {}, "run_end": {}, "run_config": {"config": {"a": 1}},
        "run_tags": {"add": ["x"]}, "run_note": {"note": "n"}, "run_best": {"series": "loss"}, "run_color": {"color": "#123abc"},
        "run_rewind": {"step": 250}, "run_fork": {"from": "src", "step": 100},
        "artifact": {"name": "m", "uid": "0123456789abcdef",
                     "files": [{"path": "m.pt", "sha256": "0" * 64, "size": 1}]},
        "artifact_use": {"name": "m", "version": 1},
        "console": {"lines": [[1, 0.0, "stdout", "hi"]]},
        "run_import": {"status": "finished"},
        "rows": {"s": 2, "s0": 1, "wall": [0.0], "panes": [
            {"win": "a", "kind": "line", "traces": [{"name": "a"}], "x": [0], "y": [1.0]},
            {"win": "b", "kind": "line", "traces": [{"name": "b"}], "x": [0], "y": [2.0]}]},
    }
    assert sorted(samples) == sorted(PRODUCER_OPS)
    for op, fields in samples.items():
        assert parse_event({"op": op, "env": "e", **fields}).op == op


def test_nothing_outside_the_table_dispatches_on_an_op_name():
    """An if/elif chain over op names outside dispatch/table.py would be a second place to add an op to."""
    offenders = []
    for path in SERVER.rglob("*.py"):
        if path.parent.name == "panes":  # a pane kind tells its own set from update: that is its semantics
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and isinstance(node.orelse, list) and node.orelse \
                    and isinstance(node.orelse[0], ast.If):
                tests = [node.test, node.orelse[0].test]
                if all({n.value for n in ast.walk(t) if isinstance(n, ast.Constant)} & set(OPS) for t in tests):
                    offenders.append(f"{path.relative_to(SERVER)}:{node.lineno}")
    assert offenders == []
