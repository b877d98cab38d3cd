"""Network (graph) panes, Visdom's `graph`: nodes 0..n-1 with labels, edges with optional labels; drawn by the UI."""

from __future__ import annotations

from collections.abc import Mapping

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import no_steps, replace_content, stored_object
from .contract import ReadOptions, StoredStep

KINDS = ("network",)
UPDATE_MODES = ("replace",)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_NODES = 10_000   # the browser lays the graph out itself: beyond this it would stall the page
MAX_EDGES = 50_000


def validate(cmd: PaneCommand, raw: dict) -> dict:
    return check_graph(raw.get("graph"))


def check_graph(graph: object) -> dict:
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list) \
            or not isinstance(graph.get("edges", []), list):
        raise EventError('network: expected graph: {"nodes": [...], "edges": [...]}')
    nodes, edges = graph["nodes"], graph.get("edges", [])
    if len(nodes) > MAX_NODES or len(edges) > MAX_EDGES:
        raise EventError(f"network: at most {MAX_NODES} nodes and {MAX_EDGES} edges")
    out_nodes = []
    for i, n in enumerate(nodes):
        if not isinstance(n, dict):
            raise EventError(f"network: nodes[{i}] must be an object")
        label = n.get("label")
        out_nodes.append({**n, "name": i, "label": None if label is None else str(label)})
    out_edges = []
    for i, e in enumerate(edges):
        if not isinstance(e, dict):
            raise EventError(f"network: edges[{i}] must be an object")
        s, t = e.get("source"), e.get("target")
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(nodes) for v in (s, t)):
            raise EventError(f"network: edges[{i}] must join two of the nodes 0..{len(nodes) - 1}")
        label = e.get("label")
        out_edges.append({"source": s, "target": t, "label": None if label is None else str(label)})
    return {"nodes": out_nodes, "edges": out_edges}


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    no_steps("network", steps)
    return check_graph(stored_object(content, "network", ("nodes", "edges")))


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    replace_content(tx, cmd, deltas, "network", KINDS)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    content = pane.content or {}
    return {"nodes": content.get("nodes", []), "edges": content.get("edges", [])}
