"""Model graphs: trace_model_graph on a small CNN, torch's real add_graph GraphDef converted, the pane via the API."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from helpers.model_graph import Net  # noqa: E402
from paneboard.tensorboard.graph_trace import trace_model_graph  # noqa: E402
from paneboard.tensorboard.graphdef import GraphDefError, graph_from_graphdef  # noqa: E402

HIDDEN_OPS = {"prim::Constant", "prim::GetAttr", "prim::ListConstruct", "prim::TupleConstruct"}


def one(nodes: list[dict], **match) -> dict:
    found = [n for n in nodes if all(n[k] == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


@pytest.fixture(scope="module")
def traced() -> dict:
    torch.manual_seed(0)
    return trace_model_graph(Net(), torch.randn(2, 3, 32, 32))


def test_trace_has_module_scopes_shapes_and_the_residual_edge(traced):
    nodes = traced["nodes"]
    assert traced["name"] == "Net"
    ids = {n["id"] for n in nodes}
    assert len(ids) == len(nodes) and all(i in ids for n in nodes for i in n["inputs"])
    assert not HIDDEN_OPS & {n["op"] for n in nodes}
    x = one(nodes, op="input")
    assert x["shape"] == "[2, 3, 32, 32]" and x["scope"] == ""
    conv0 = one(nodes, op="aten::_convolution", scope="Net/Sequential[features]/Conv2d[0]")
    assert conv0["shape"] == "[2, 8, 32, 32]" and x["id"] in conv0["inputs"]
    relu = one(nodes, op="aten::relu", scope="Net/Sequential[features]/ReLU[1]")
    pool = one(nodes, op="aten::max_pool2d", scope="Net/Sequential[features]/MaxPool2d[2]")
    assert relu["inputs"] == [conv0["id"]] and pool["inputs"] == [relu["id"]] and pool["shape"] == "[2, 8, 16, 16]"
    assert pool["attr"].startswith("[2, 2], [2, 2]")  # kernel and stride, from the hidden constants
    conv = one(nodes, op="aten::_convolution", scope="Net/Block[res]/Conv2d[conv]")
    bn = one(nodes, op="aten::batch_norm", scope="Net/Block[res]/BatchNorm2d[bn]")
    add = one(nodes, op="aten::add", scope="Net/Block[res]")
    assert pool["id"] in conv["inputs"] and conv["id"] in bn["inputs"]
    assert add["inputs"] == [bn["id"], pool["id"]]  # the skip connection is an edge of its own
    flat = one(nodes, op="aten::flatten", scope="Net")
    assert flat["shape"] == "[2, 2048]"
    head = one(nodes, op="aten::linear", scope="Net/Linear[head]")
    weight = one(nodes, op="parameter", scope="Net/Linear[head]", label="weight")
    assert weight["shape"] == "[10, 2048]" and head["inputs"][:2] == [flat["id"], weight["id"]]
    out = one(nodes, op="output")
    assert out["inputs"] == [head["id"]] and out["shape"] == "[2, 10]"
    assert {n["label"] for n in nodes if n["op"] == "parameter" and n["scope"].endswith("BatchNorm2d[bn]")} == \
        {"weight", "bias", "running_mean", "running_var"}


def test_trace_restores_training_mode_and_reports_untraceable_models():
    model = Net().train()
    trace_model_graph(model, torch.randn(1, 3, 32, 32))
    assert model.training

    class Talker(nn.Module):
        def forward(self, x):
            return "not a tensor"

    with pytest.raises(ValueError, match="could not trace Talker"):
        trace_model_graph(Talker(), torch.randn(1))
    with pytest.raises(ValueError, match="could not trace Net"):
        trace_model_graph(Net(), torch.randn(1, 5, 32, 32))  # wrong channel count: the conv fails
    with pytest.raises(ValueError, match="needs a torch.nn.Module"):
        trace_model_graph(lambda x: x, torch.randn(1))


def _real_graphdef(tmp_path) -> bytes:
    tb = pytest.importorskip("torch.utils.tensorboard")
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    torch.manual_seed(0)
    with tb.SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Net(), torch.randn(2, 3, 32, 32))
    (path,) = tmp_path.glob("events.out.tfevents.*")
    graphs = [e.graph_def for e in EventFileLoader(str(path)).Load() if e.HasField("graph_def")]
    assert len(graphs) == 1
    return graphs[0]


def _edges(g: dict) -> set[tuple]:
    by_id = {n["id"]: n for n in g["nodes"]}
    return {(by_id[i]["scope"], by_id[i]["op"], n["scope"], n["op"]) for n in g["nodes"] for i in n["inputs"]}


def test_graphdef_from_torch_add_graph_matches_the_trace(tmp_path, traced):
    converted = graph_from_graphdef(_real_graphdef(tmp_path))
    assert converted["name"] == "Net"
    nodes = converted["nodes"]
    ids = {n["id"] for n in nodes}
    assert all(i in ids for n in nodes for i in n["inputs"])
    assert not HIDDEN_OPS & {n["op"] for n in nodes}
    key = lambda g: sorted((n["scope"], n["op"], n["label"]) for n in g["nodes"])  # noqa: E731
    assert key(converted) == key(traced)
    assert _edges(converted) == _edges(traced)
    # Shapes of every op and IO node agree (the GraphDef has none for parameters).
    shapes = lambda g: sorted((n["scope"], n["op"], n["shape"]) for n in g["nodes"] if n["op"] != "parameter")  # noqa: E731
    assert shapes(converted) == shapes(traced)
    assert one(nodes, op="aten::add", scope="Net/Block[res]")["shape"] == "[2, 8, 16, 16]"


def test_graphdef_reader_rejects_garbage():
    with pytest.raises(GraphDefError):
        graph_from_graphdef(b"\x0a\xff\xff\xff")  # field 1, a length past the end
    assert graph_from_graphdef(b"") == {"nodes": [], "name": "model"}


# ------------------------------------------------------------------------------------------ the pane, via the API

def send(api, graph, win="graph") -> dict:
    r = api.post("/api/v1/events", json={"events": [{"op": "set", "env": "g", "win": win, "kind": "model_graph",
                                                      "opts": {"title": "graph"}, "graph": graph}]})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def test_pane_is_stored_and_rendered(api, traced):
    assert send(api, traced)["ok"]
    r = api.get("/api/v1/envs/g/panes/graph")
    assert r.status_code == 200
    pane = r.get_json()
    assert pane["kind"] == "model_graph" and pane["title"] == "graph"
    assert pane["data"] == {"nodes": traced["nodes"], "name": "Net"}


def _node(i: str, inputs=()) -> dict:
    return {"id": i, "label": i, "op": "aten::relu", "scope": "M", "shape": None, "inputs": list(inputs), "attr": ""}


@pytest.mark.parametrize("graph, message", [
    ([], "expected graph"),
    ({"nodes": "x"}, "expected graph"),
    ({"nodes": [_node("a"), _node("a")]}, "duplicate node id 'a'"),
    ({"nodes": [_node("a", ["zz"])]}, "has input 'zz', which is not a node id"),
    ({"nodes": [{**_node("a"), "inputs": "b"}]}, "inputs must be a list"),
    ({"nodes": [{**_node("a"), "shape": [1, 2]}]}, "nodes[0].shape must be a string"),
    ({"nodes": [{**_node("a"), "id": ""}]}, "nodes[0].id must be a non-empty string"),
    ({"nodes": [_node(f"n{i}") for i in range(20_001)]}, "at most 20000 nodes"),
])
def test_bad_graphs_are_rejected_with_a_message(api, graph, message):
    res = send(api, graph, win="bad")
    assert not res["ok"] and message in res["errors"][0]["error"], res
    assert api.get("/api/v1/envs/g/panes/bad").status_code == 404


def test_forward_references_are_fine(api):
    # Inputs may name nodes listed later (a GraphDef is not topologically sorted).
    assert send(api, {"nodes": [_node("b", ["a"]), _node("a")], "name": "M"})["ok"]
