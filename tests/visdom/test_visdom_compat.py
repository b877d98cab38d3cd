"""The unmodified `visdom` client from PyPI against dash-server: what it stores, read back via /win_data and our API."""

from __future__ import annotations

import base64
import io
import json
import time
import urllib.request

import numpy as np
import pytest
import visdom  # required, not optional: a missing client must fail these tests, not skip them
from PIL import Image


@pytest.fixture
def viz(server):
    v = visdom.Visdom(server="http://127.0.0.1", port=server.port, env="compat", raise_exceptions=True)
    yield v
    v.use_socket = False  # stops the client's reconnect loop
    if getattr(v, "socket", None) is not None:
        v.socket.close()


def post_raw(server, path: str, body: bytes) -> tuple[int, str]:
    req = urllib.request.Request(server.url + path, data=body, method="POST")  # no Content-Type, as visdom
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def window(viz, win: str, env: str = "compat") -> dict:
    return json.loads(viz.get_window_data(win, env=env))


def export(server, win: str, env: str = "compat") -> dict[str, tuple[list, list]]:
    out = server.get_json(f"/api/v1/envs/{env}/panes/{win}/export?format=json")
    return {t["name"]: (t["x"], t["y"]) for t in out["traces"]}


def pane(server, win: str, env: str = "compat") -> dict:
    return server.get_json(f"/api/v1/envs/{env}/panes/{win}")


def test_constructor_gets_the_alive_handshake_at_once(server):
    t0 = time.monotonic()
    v = visdom.Visdom(server="http://127.0.0.1", port=server.port, env="compat", raise_exceptions=True)
    elapsed = time.monotonic() - t0
    try:
        assert v.check_connection() is True
        assert elapsed < 2.0, f"constructor took {elapsed:.1f}s (no alive message?)"
    finally:
        v.use_socket = False


def test_line_create_and_append_positional_and_named(server, viz):
    win = viz.line(Y=np.array([[1.0, 10.0], [2.0, 20.0]]), X=np.array([0, 1]), win="loss",
                   opts={"title": "loss", "legend": ["train", "val"]})
    assert win == "loss"
    # positional: the i-th sent column extends the i-th stored trace
    assert viz.line(Y=np.array([[3.0, 30.0]]), X=np.array([[2, 2]]), win="loss", update="append") == "loss"
    assert viz.line(Y=np.array([4.0]), X=np.array([3]), win="loss", update="append", name="val") == "loss"
    viz.line(Y=np.array([7.0]), X=np.array([0]), win="loss", update="append", name="test")  # new name: new trace
    assert export(server, "loss") == {"train": ([0, 1, 2], [1, 2, 3]), "val": ([0, 1, 2, 3], [10, 20, 30, 4]),
                                      "test": ([0], [7])}
    w = window(viz, "loss")
    assert w["id"] == "loss" and w["type"] == "plot" and w["title"] == "loss"
    assert [(t["name"], t["x"], t["y"], t["mode"]) for t in w["content"]["data"]] == [
        ("train", [0, 1, 2], [1, 2, 3], "lines"), ("val", [0, 1, 2, 3], [10, 20, 30, 4], "lines"),
        ("test", [0], [7], "lines")]
    assert pane(server, "loss")["kind"] == "line"  # chunked xy storage, not a blob of Visdom JSON


def test_line_replace_remove_and_append_to_a_missing_window(server, viz):
    viz.line(Y=np.array([5.0, 6.0]), X=np.array([5, 6]), win="fresh", update="append")  # creates it
    viz.line(Y=np.array([1.0, 2.0]), X=np.array([0, 1]), win="fresh", update="new", name="b")
    viz.line(Y=np.array([9.0]), X=np.array([9]), win="fresh", update="replace", name="1")
    assert export(server, "fresh") == {"1": ([9], [9]), "b": ([0, 1], [1, 2])}
    viz.line(X=None, Y=None, win="fresh", update="remove", name="b")
    assert export(server, "fresh") == {"1": ([9], [9])}


def test_scatter_labels_become_traces_and_append_by_name(server, viz):
    pts = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 4.0]])
    viz.scatter(X=pts, Y=np.array([1, 2, 1]), win="sc", opts={"legend": ["a", "b"], "markersize": 5})
    viz.scatter(X=np.array([[3.0, 9.0]]), win="sc", update="append", name="b")
    assert export(server, "sc") == {"a": ([0, 2], [0, 4]), "b": ([1, 3], [1, 9])}
    w = window(viz, "sc")
    assert [t["mode"] for t in w["content"]["data"]] == ["markers", "markers"]
    assert pane(server, "sc")["kind"] == "scatter"


def test_text_and_append(server, viz):
    assert viz.text("first <b>bold</b>", win="log", opts={"title": "log"}) == "log"
    assert viz.text("second", win="log", append=True) == "log"
    assert window(viz, "log")["content"] == "first <b>bold</b><br>second"
    assert pane(server, "log")["data"]["html"] == "first <b>bold</b><br>second"


def test_image_is_stored_as_a_blob_and_served_back_as_a_data_uri(server, viz):
    img = np.zeros((3, 12, 20))
    img[0] = 1.0  # red
    assert viz.image(img, win="pic", opts={"caption": "red", "title": "p"}) == "pic"
    w = window(viz, "pic")
    assert w["type"] == "image" and w["content"]["caption"] == "red"
    header, b64 = w["content"]["src"].split(",", 1)
    assert header == "data:image/png;base64"
    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        assert im.size == (20, 12) and im.convert("RGB").getpixel((3, 3)) == (255, 0, 0)
    data = pane(server, "pic")["data"]
    assert (data["width"], data["height"], data["mime"]) == (20, 12, "image/png")


def test_image_store_history_keeps_every_image(server, viz):
    for shade in (0.0, 0.5, 1.0):
        viz.image(np.full((3, 4, 6), shade), win="hist", opts={"store_history": True, "caption": f"s{shade}"})
    w = window(viz, "hist")
    assert w["type"] == "image_history" and w["selected"] == 2
    assert [c["caption"] for c in w["content"]] == ["s0.0", "s0.5", "s1.0"]
    grays = []
    for c in w["content"]:
        with Image.open(io.BytesIO(base64.b64decode(c["src"].split(",", 1)[1]))) as im:
            grays.append(im.convert("L").getpixel((0, 0)))
    assert grays == [0, 127, 255] or grays == [0, 128, 255]
    data = pane(server, "hist")["data"]
    assert len(data["history"]) == 3 and data["src"] == data["history"][-1]["src"]
    viz.image(np.zeros((3, 4, 6)), win="hist")  # without store_history: overwrites, history gone (as Visdom)
    assert window(viz, "hist")["type"] == "image"


def test_heatmap_updates_rows_and_columns(server, viz):
    viz.heatmap(np.array([[1, 2], [3, 4]]), win="hm", opts={"columnnames": ["a", "b"], "rownames": ["r1", "r2"]})
    viz.heatmap(np.array([[5, 6]]), win="hm", update="appendRow", opts={"rownames": ["r3"]})
    viz.heatmap(np.array([[0], [0], [0]]), win="hm", update="prependColumn", opts={"columnnames": ["z"]})
    tr = window(viz, "hm")["content"]["data"][0]
    assert tr["type"] == "heatmap"
    assert tr["z"] == [[0, 1, 2], [0, 3, 4], [0, 5, 6]]
    assert tr["x"] == ["z", "a", "b"] and tr["y"] == ["r1", "r2", "r3"]
    got = pane(server, "hm")
    assert got["kind"] == "figure" and got["data"]["data"][0]["z"] == tr["z"]
    # a wrong shape is refused (logged, 400) and the stored heatmap is unchanged
    reply = viz.heatmap(np.array([[1, 2]]), win="hm", update="appendRow", opts={"rownames": ["r4"]})
    assert "columns" in json.loads(reply)["error"]  # the client hands the body to the caller
    assert window(viz, "hm")["content"]["data"][0]["z"] == tr["z"]
    viz.heatmap(np.array([[1]]), win="hm", update="remove")
    assert window(viz, "hm")["content"]["data"] == []


def test_bar_histogram_boxplot_surf_pie_are_figures(server, viz):
    viz.bar(X=np.array([[1, 2], [3, 4], [5, 6]]), win="bar", opts={"stacked": True, "legend": ["p", "q"]})
    viz.histogram(X=np.random.default_rng(0).random(100), win="hist", opts={"numbins": 10})
    viz.boxplot(X=np.random.default_rng(1).random((20, 2)), win="box")
    viz.surf(X=np.outer(np.arange(4), np.arange(5)), win="surf")
    viz.pie(X=np.array([1, 2, 3]), win="pie", opts={"legend": ["x", "y", "z"]})
    bar = window(viz, "bar")["content"]
    assert [t["y"] for t in bar["data"]] == [[1, 3, 5], [2, 4, 6]] and bar["layout"]["barmode"] == "stack"
    assert sum(window(viz, "hist")["content"]["data"][0]["y"]) == 100
    assert [t["type"] for t in window(viz, "box")["content"]["data"]] == ["box", "box"]
    assert window(viz, "surf")["content"]["data"][0]["type"] == "surface"
    assert pane(server, "pie")["data"]["data"][0]["labels"] == ["x", "y", "z"]
    assert {p["kind"] for p in server.get_json("/api/v1/envs/compat")["panes"]} == {"figure"}


def test_close_win_exists_env_state_delete_env(server, viz):
    viz.text("a", win="t1")
    viz.text("b", win="t2")
    assert viz.win_exists("t1") is True and viz.win_exists("nope") is False
    viz.close("t1")
    assert viz.win_exists("t1") is False and viz.win_exists("t2") is True
    viz.text("c", win="other", env="main")
    assert viz.get_env_list() == ["main", "compat"]
    viz.close(None)  # every window of the env
    assert viz.win_exists("t2") is False
    viz.delete_env("main")
    assert viz.get_env_list() == [] or "main" not in viz.get_env_list()
    assert "main" not in [e["name"] for e in server.get_json("/api/v1/envs")["envs"]]


def test_fork_env_and_save(server, viz):
    viz.line(Y=np.array([1.0, 2.0]), X=np.array([0, 1]), win="L")
    assert viz.fork_env("compat", "copy") == "copy"
    viz.line(Y=np.array([3.0]), X=np.array([2]), win="L", update="append")  # the fork does not follow
    assert export(server, "L", env="copy") == {"1": ([0, 1], [1, 2])}
    assert export(server, "L") == {"1": ([0, 1, 2], [1, 2, 3])}
    assert json.loads(viz.save(["compat", "missing"])) == ["compat"]


def test_update_window_opts_and_win_data_set_round_trip(server, viz):
    viz.line(Y=np.array([1.0, 2.0]), X=np.array([0, 1]), win="L", opts={"title": "old"})
    viz.update_window_opts("L", {"title": "new", "xlabel": "step"})
    w = window(viz, "L")
    assert w["title"] == "new" and w["content"]["layout"]["title"] == "new"
    assert export(server, "L") == {"1": ([0, 1], [1, 2])}  # the points are untouched
    viz.text("test one", win="st")
    data = viz.get_window_data("st")
    viz.text("changed", win="st")
    viz.set_window_data(data.replace("test one", "test two"), win="st")
    assert window(viz, "st")["content"] == "test two"


def test_raw_bodies_nan_literals_eid_and_errors(server):
    status, text = post_raw(server, "/events", b'{"data": [{"type": "text", "content": "x"}], "win": "w", '
                                               b'"eid": "a/b", "opts": {"title": NaN}}')
    assert (status, text) == (200, "w")
    assert pane(server, "w", env="a_b")["data"]["html"] == "x"  # "/" -> "_", as Visdom's extract_eid
    status, text = post_raw(server, "/events", b'{"data": [{"type": "text", "content": "m"}]}')
    assert status == 200 and text.startswith("window_") and pane(server, text, env="main")["kind"] == "text"
    status, text = post_raw(server, "/events", b"{not json")
    assert status == 400 and "error" in json.loads(text)
    status, text = post_raw(server, "/update", b'{"win": "nope", "eid": "a_b", "data": [{"x": [1], "y": [1]}]}')
    assert (status, text) == (200, "win does not exist")
    status, text = post_raw(server, "/events", b'{"data": [{"type": "image", "content": {"src": "data:x"}}], '
                                               b'"win": "w", "eid": "a_b"}')
    assert status == 400 and pane(server, "w", env="a_b")["data"]["html"] == "x"  # stored data survives
    assert "data: URI" in server.log()  # the cause is logged


def test_polling_socket_wrap(server):
    status, text = post_raw(server, "/vis_socket_wrap", b'{"message_type": "init"}')
    sid = json.loads(text)["sid"]
    status, text = post_raw(server, "/vis_socket_wrap", json.dumps({"message_type": "query", "sid": sid}).encode())
    assert json.loads(text) == {"success": True, "messages": ['{"command": "alive", "data": "vis_alive"}']}
    status, text = post_raw(server, "/vis_socket_wrap", b'{"message_type": "query", "sid": "gone"}')
    assert json.loads(text) == {"success": False, "reason": "closed"}


PROPS = [{"type": "text", "name": "Text input", "value": "initial"}, {"type": "number", "name": "n", "value": 12},
         {"type": "button", "name": "go", "value": "Start"}, {"type": "checkbox", "name": "on", "value": True},
         {"type": "select", "name": "color", "value": 1, "values": ["Red", "Green", "Blue"]}]


def wait_for(pred, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_properties_pane_and_callback_events_reach_the_handlers(server, viz):
    assert viz.properties(PROPS, win="props") == "props"
    w = window(viz, "props")
    assert w["type"] == "properties" and w["content"] == PROPS
    assert pane(server, "props")["data"]["properties"] == PROPS
    got = []
    viz.register_event_handler(got.append, "props")
    wait_for(lambda: viz.socket_alive)
    # what our browser UI posts when a field changes (the same fields Visdom's UI sends)
    status, text = post_raw(server, "/vis_event", json.dumps(
        {"event_type": "PropertyUpdate", "target": "props", "eid": "compat", "propertyId": 0, "value": "edited"}).encode())
    assert status == 200 and json.loads(text)["delivered"] >= 1
    wait_for(lambda: got)
    ev = got[0]
    assert (ev["event_type"], ev["propertyId"], ev["value"], ev["eid"]) == ("PropertyUpdate", 0, "edited", "compat")
    assert ev["pane_data"]["content"] == PROPS  # the stored window goes along, as in Visdom
    status, text = post_raw(server, "/vis_event", b'{"event_type": "Evil", "target": "props", "eid": "compat"}')
    assert status == 400


def test_graph_becomes_a_network_pane(server, viz):
    viz.graph([(0, 1), (1, 2), (2, 0)], nodeLabels=["a", "b", "c"], edgeLabels=["x", "y", "z"],
              opts={"directed": True}, win="net")
    w = window(viz, "net")
    assert w["type"] == "network" and w["directed"] is True
    assert [n["label"] for n in w["content"]["nodes"]] == ["a", "b", "c"]
    # visdom pairs edgeLabels with networkx's edge order, so only the set of labels is certain
    assert {(e["source"], e["target"]) for e in w["content"]["edges"]} == {(0, 1), (1, 2), (0, 2)}
    assert sorted(e["label"] for e in w["content"]["edges"]) == ["x", "y", "z"]
    assert len(pane(server, "net")["data"]["edges"]) == 3
    bad = viz._send({"data": [{"type": "network", "content": {"nodes": [{}], "edges": [{"source": 0, "target": 5}]}}],
                     "win": "net", "eid": "compat"})
    assert "error" in json.loads(bad) and len(pane(server, "net")["data"]["edges"]) == 3  # refused, nothing lost
