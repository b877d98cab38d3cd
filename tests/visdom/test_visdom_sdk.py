"""paneboard.Visdom's Visdom-only methods (heatmap, bar, ..., win_exists, get_window_data) against dash-server."""

from __future__ import annotations

import json

import numpy as np
import pytest

import paneboard


@pytest.fixture
def client(server):
    c = paneboard.Visdom(server="http://127.0.0.1", port=server.port, env="sdkv")
    yield c
    c.close_connection(timeout=5)


def fig(server, win: str, env: str = "sdkv") -> dict:
    got = server.get_json(f"/api/v1/envs/{env}/panes/{win}")
    assert got["kind"] == "figure"
    return got["data"]


def test_heatmap_create_and_row_column_updates(server, client):
    client.heatmap(np.array([[1, 2], [3, np.nan]]), win="hm", opts={"title": "h", "columnnames": ["a", "b"],
                                                                     "rownames": ["r1", "r2"]})
    client.heatmap(np.array([[5, 6]]), win="hm", update="appendRow", opts={"rownames": ["r3"]})
    client.heatmap(np.array([[7], [8], [9]]), win="hm", update="appendColumn", opts={"columnnames": ["c"]})
    assert client.flush(10)
    tr = fig(server, "hm")["data"][0]
    assert tr["z"] == [[1, 2, 7], [3, None, 8], [5, 6, 9]]
    assert tr["x"] == ["a", "b", "c"] and tr["y"] == ["r1", "r2", "r3"] and tr["type"] == "heatmap"
    assert server.get_json("/api/v1/envs/sdkv/panes/hm")["title"] == "h"
    client.heatmap(None, win="hm", update="remove")
    assert client.flush(10)
    assert fig(server, "hm")["data"] == []


def test_plot_kinds_store_their_traces(server, client):
    client.bar(X=np.array([[1, 2], [3, 4]]), win="bar", opts={"stacked": True, "legend": ["p", "q"]})
    client.histogram(X=np.arange(100), win="hist", opts={"numbins": 4})
    client.boxplot(X=np.ones((5, 3)), win="box")
    client.surf(X=np.ones((3, 3)), win="surf")
    client.contour(X=np.eye(3), win="cont")
    client.pie(X=[1, 2], win="pie", opts={"legend": ["a", "b"]})
    client.sunburst(labels=["r", "a", "b"], parents=["", "r", "r"], values=[3, 1, 2], win="sun")
    client.mesh(X=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]]), Y=np.array([[0, 1, 2]]), win="mesh")
    client.stem(X=np.array([1.0, 2.0]), win="stem")
    client.quiver(X=np.ones((2, 2)), Y=np.zeros((2, 2)), win="quiv")
    client.dual_axis_lines(X=[0, 1], Y1=[1, 2], Y2=[10, 20], win="dual")
    assert client.flush(10)
    bar = fig(server, "bar")
    assert [t["y"] for t in bar["data"]] == [[1, 3], [2, 4]] and bar["layout"]["barmode"] == "stack"
    assert sum(fig(server, "hist")["data"][0]["y"]) == 100
    assert [t["type"] for t in fig(server, "box")["data"]] == ["box"] * 3
    assert fig(server, "surf")["data"][0]["type"] == "surface" and "scene" in fig(server, "surf")["layout"]
    assert fig(server, "cont")["data"][0]["type"] == "contour"
    assert fig(server, "pie")["data"][0]["labels"] == ["a", "b"]
    assert fig(server, "sun")["data"][0]["parents"] == ["", "r", "r"]
    assert fig(server, "mesh")["data"][0]["i"] == [0]
    assert fig(server, "stem")["data"][0]["y"] == [0, 1, None, 0, 2, None]
    assert fig(server, "quiv")["data"][0]["x"][:3] == [0, 1, None]
    assert fig(server, "dual")["data"][1]["yaxis"] == "y2"


def test_queries_see_earlier_calls(server, client):
    client.line(Y=[1.0, 2.0], X=[0, 1], win="L", opts={"title": "t"})
    assert client.win_exists("L") is True and client.win_exists("nope") is False  # flushes first
    w = json.loads(client.get_window_data("L"))
    assert w["content"]["data"][0]["y"] == [1, 2]
    assert "sdkv" in client.get_env_list()
    assert len(client.win_hash("L")) == 32
    client.update_window_opts("L", {"title": "renamed"})
    assert server.get_json("/api/v1/envs/sdkv/panes/L")["title"] == "renamed"
    client.svg('<?xml?><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4"/></svg>', win="s")
    assert json.loads(client.save(["sdkv", "nope"])) == ["sdkv"]
    assert json.loads(client.get_window_data("s"))["content"].startswith("<svg xmlns")  # stored as sent
    assert client._send({"data": [{"type": "bar", "x": [1], "y": [2]}], "layout": {}, "win": "raw"}) == "raw"
    assert fig(server, "raw")["data"][0]["type"] == "bar"
    client.fork_env("sdkv", "sdkv2")
    assert client.flush(10)
    assert server.get_json("/api/v1/envs/sdkv2/panes/L")["title"] == "renamed"


def test_properties_pane(server, client):
    props = [{"type": "number", "name": "lr", "value": 0.1}, {"type": "select", "name": "c", "value": 0,
                                                               "values": ["a", "b"]}]
    client.properties(props, win="p", opts={"title": "settings"})
    assert client.flush(10)
    got = server.get_json("/api/v1/envs/sdkv/panes/p")
    assert got["kind"] == "properties" and got["title"] == "settings" and got["data"]["properties"] == props
    client.properties([{"type": "bogus"}], win="p")  # rejected by the server; the stored pane stays
    client.flush(10)
    assert server.get_json("/api/v1/envs/sdkv/panes/p")["data"]["properties"] == props


def test_graph(server, client):
    client.graph([(0, 1), (1, 3)], nodeLabels=["a", "b", "c", "d"], win="g", opts={"directed": True})
    assert client.flush(10)
    got = server.get_json("/api/v1/envs/sdkv/panes/g")
    assert got["kind"] == "network" and got["opts"]["directed"] is True
    assert [n["label"] for n in got["data"]["nodes"]] == ["a", "b", "c", "d"]
    assert got["data"]["edges"] == [{"source": 0, "target": 1, "label": "0-1"}, {"source": 1, "target": 3, "label": "1-3"}]
    rejected = client.rejected
    assert client.graph([(0, 1)], nodeLabels=["only one"], win="g") == "g"  # rejected, not raised
    assert client.rejected == rejected + 1
