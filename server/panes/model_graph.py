"""Model graph panes (TensorBoard's Graphs): traced op nodes with module scopes and shapes, laid out by the UI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("model_graph",)
UPDATE_MODES = ("replace",)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_NODES = 20_000      # the browser lays the DAG out itself; a ResNet-152 trace is a few thousand nodes
MAX_INPUTS = 1_000      # per node (a torch.cat of many tensors)
MAX_TEXT = 1_000        # id, label, op, scope
MAX_ATTR = 2_000
TEXT_FIELDS = ("label", "op", "scope")


def _text(node: dict, key: str, i: int, limit: int, default: str | None = "") -> str | None:
    value = node.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str):
        raise EventError(f"model_graph: nodes[{i}].{key} must be a string")
    if len(value) > limit:
        raise EventError(f"model_graph: nodes[{i}].{key} must be at most {limit} characters")
    return value


def validate(cmd: PaneCommand, raw: dict) -> dict:
    return check_graph(raw.get("graph"))


def check_graph(graph: object) -> dict:
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise EventError('model_graph: expected graph: {"nodes": [{"id", "label", "op", "scope", "shape", '
                         '"inputs", "attr"}], "name"}')
    nodes: list[Any] = graph["nodes"]
    if len(nodes) > MAX_NODES:
        raise EventError(f"model_graph: at most {MAX_NODES} nodes (got {len(nodes)})")
    name = graph.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_TEXT:
        raise EventError(f"model_graph: name must be a string of at most {MAX_TEXT} characters")
    out: list[dict] = []
    ids: set[str] = set()
    for i, n in enumerate(nodes):
        if not isinstance(n, dict):
            raise EventError(f"model_graph: nodes[{i}] must be an object")
        nid = n.get("id")
        if not isinstance(nid, str) or not nid or len(nid) > MAX_TEXT:
            raise EventError(f"model_graph: nodes[{i}].id must be a non-empty string of at most {MAX_TEXT} characters")
        if nid in ids:
            raise EventError(f"model_graph: duplicate node id {nid!r} (nodes[{i}])")
        ids.add(nid)
        inputs = n.get("inputs", [])
        if not isinstance(inputs, list) or not all(isinstance(v, str) for v in inputs):
            raise EventError(f"model_graph: nodes[{i}].inputs must be a list of node ids")
        if len(inputs) > MAX_INPUTS:
            raise EventError(f"model_graph: nodes[{i}] has more than {MAX_INPUTS} inputs")
        node: dict[str, Any] = {"id": nid, **{k: _text(n, k, i, MAX_TEXT) for k in TEXT_FIELDS},
                "shape": _text(n, "shape", i, MAX_TEXT, None), "inputs": inputs,
                "attr": _text(n, "attr", i, MAX_ATTR)}
        out.append(node)
    for i, node in enumerate(out):  # after the loop: an input may name a node that comes later
        for ref in node["inputs"]:
            if ref not in ids:
                raise EventError(f"model_graph: nodes[{i}] ({node['id']!r}) has input {ref!r}, which is not a node id")
    return {"nodes": out, "name": name}


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    no_steps("model_graph", steps)
    return check_graph(stored_object(content, "model_graph", ("nodes", "name")))


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    if pane is not None and pane.kind not in KINDS and cmd.op == "update":
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not model_graph")
    if pane is None or cmd.op == "set":
        pane = tx.put_pane(cmd.env, cmd.win, "model_graph", title_of(cmd.opts), cmd.opts, cmd.payload)
    else:
        opts = merged_opts(pane, cmd)
        pane = tx.update_pane(pane, content=cmd.payload, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    content = pane.content or {}
    return {"nodes": content.get("nodes", []), "name": content.get("name", "")}
