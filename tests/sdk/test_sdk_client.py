"""Unit tests of paneboard.Client: the events it queues (read from its own transport) and offline behaviour."""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import re
import socket
import time
from collections.abc import Iterator

import numpy as np
import pytest
import torch  # in the dev extra: the torch paths must run, never skip
from PIL import Image

import paneboard
from helpers.waiting import wait_for
from paneboard.client import ingest_url
from paneboard.transport.outbox import Batch
from paneboard.transport.sender import frame


def closed_port() -> int:
    """A port nobody listens on: connects are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_client(**kw) -> paneboard.Client:
    kw.setdefault("env", "exp1")
    # No run (its start is queued once the provenance is read) and no console (a warning printed meanwhile would
    # be a console event): only the calls under test are among the events these tests read back.
    kw.setdefault("capture", False)
    kw.setdefault("console", False)
    # strict: bad input raises, so these tests see each call's own error (by default it is a counted rejection:
    # tests/sdk/test_client_never_raises.py)
    kw.setdefault("strict", True)
    return paneboard.Client(server="http://127.0.0.1", port=closed_port(), **kw)


@pytest.fixture
def client() -> Iterator[paneboard.Client]:
    c = make_client()
    yield c
    c.close_connection(timeout=0)


def events(c: paneboard.Client) -> list[dict]:
    return c.transport.pending_events()


def last(c: paneboard.Client) -> dict:
    return events(c)[-1]


def paneboard_records(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "paneboard" and r.levelno >= level]


def wire_nan(v) -> bool:
    """NaN on the wire: null with orjson, the NaN literal with the stdlib encoder (the server reads both)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


# ---------------------------------------------------------------------------------------------- API


def test_package_exports():
    assert paneboard.Visdom is paneboard.Client
    assert paneboard.__version__ == "0.1.0"
    from paneboard.transport.sender import SDK_VERSION

    assert SDK_VERSION == paneboard.__version__


def test_constructor_rejects_unknown_kwargs_but_takes_visdom_ones():
    with pytest.raises(TypeError):
        paneboard.Client(port=closed_port(), bogus=1)
    c = paneboard.Client(port=closed_port(), use_incoming_socket=False, raise_exceptions=True)
    c.close_connection(timeout=0)


def test_ingest_url(monkeypatch: pytest.MonkeyPatch):
    assert ingest_url() == "ws://localhost:8097/ingest"
    assert ingest_url("localhost", 9000, "/") == "ws://localhost:9000/ingest"
    assert ingest_url("https://example.org", 443, "/pb/") == "wss://example.org:443/pb/ingest"
    assert ingest_url("http://[::1]", 8097, "") == "ws://[::1]:8097/ingest"
    monkeypatch.setenv("PANEBOARD_URL", "http://host:8098/pb")
    assert ingest_url("http://ignored", 1, "/x") == "ws://host:8098/pb/ingest"
    c = paneboard.Client()
    assert c.url == "ws://host:8098/pb/ingest"
    c.close_connection(timeout=0)
    monkeypatch.setenv("PANEBOARD_URL", "https://secure.example/")
    assert ingest_url() == "wss://secure.example/ingest"


# --------------------------------------------------------------------------------------------- line


def test_line_append_hot_path_event(client):
    t0 = time.time()
    win = client.line(X=[3], Y=[0.5], win="loss", update="append", opts={"title": "loss"})
    assert win == "loss"
    ev = last(client)
    assert ev.pop("t") >= t0
    assert ev == {"s": 1, "op": "update", "env": "exp1", "win": "loss", "kind": "line", "mode": "append",
                  "name": None, "opts": {"title": "loss"},
                  "traces": [{"name": "1", "x": [3.0], "y": [0.5], "style": {"mode": "lines"}}]}


def test_line_create_multi_trace_with_legend_and_shared_x(client):
    Y = np.array([[1, 10], [2, 20], [3, 30]])
    client.line(Y, X=[0, 1, 2], win="L", opts={"legend": ["train", "val"], "markers": True})
    ev = last(client)
    assert ev["op"] == "set" and ev["kind"] == "line" and "mode" not in ev
    assert [t["name"] for t in ev["traces"]] == ["train", "val"]
    assert ev["traces"][1] == {"name": "val", "x": [0.0, 1.0, 2.0], "y": [10.0, 20.0, 30.0],
                               "style": {"mode": "lines+markers"}}
    assert ev["opts"] == {"legend": ["train", "val"], "markers": True}


def test_line_default_names_x_and_per_trace_x(client):
    client.line(np.ones((2, 3)), win="a")
    ev = last(client)
    assert [t["name"] for t in ev["traces"]] == ["1", "2", "3"]
    assert ev["traces"][0]["x"] == [0.0, 1.0]  # default X = 0..N-1
    client.line([[1, 2], [3, 4]], X=[[0, 5], [1, 6]], win="b")
    assert [t["x"] for t in last(client)["traces"]] == [[0.0, 1.0], [5.0, 6.0]]
    client.line([4, 5, 6], win="c")
    assert last(client)["traces"][0]["x"] == [0.0, 1.0, 2.0]


def test_line_name_for_single_trace(client):
    client.line(Y=[1.0], X=[2.0], win="L", update="append", name="val")
    ev = last(client)
    assert ev["name"] == "val" and ev["traces"][0]["name"] == "val"
    client.line(Y=[1.0, 2.0], win="M", name="only")
    assert last(client)["traces"][0]["name"] == "only"
    with pytest.raises(ValueError, match="name"):
        client.line(Y=np.ones((2, 2)), win="L", name="x")


@pytest.mark.parametrize(("update", "mode"), [("replace", "replace"), ("new", "replace"), ("insert", "replace"),
                                              ("append", "append")])
def test_line_update_modes(client, update, mode):
    client.line(Y=np.array([1.0, 2.0]), X=np.array([0.0, 1.0]), win="L", update=update, name="tr")
    ev = last(client)
    assert (ev["op"], ev["mode"], ev["name"]) == ("update", mode, "tr")
    assert ev["traces"][0]["y"] == [1.0, 2.0]


def test_line_remove_needs_name(client):
    client.line(None, win="L", update="remove", name="old")
    ev = last(client)
    assert (ev["op"], ev["mode"], ev["name"], ev["traces"]) == ("update", "remove", "old", [])
    with pytest.raises(ValueError, match="name"):
        client.line(None, win="L", update="remove")


def test_line_bad_input_raises_in_caller(client):
    with pytest.raises(ValueError, match="update"):
        client.line([1], X=[1], win="L", update="prepend")
    with pytest.raises(ValueError, match="needs win"):
        client.line([1.0], X=[1.0], update="append")
    with pytest.raises(ValueError, match="does not match"):
        client.line([1.0, 2.0], X=[1.0], win="L", update="append")
    with pytest.raises(TypeError):
        client.line(["a"], X=[1], win="L", update="append")
    with pytest.raises(TypeError):
        client.line([1.0], X=[1.0], win="L", opts="title")
    with pytest.raises(ValueError):
        client.line(np.ones((2, 2, 2)), win="L")
    assert events(client) == []  # nothing half-built was queued


def test_line_numpy_torch_and_nan(client):
    loss = (torch.ones(2, requires_grad=True) * 0.75).mean()
    client.line(Y=[loss], X=[np.int64(7)], win="L", update="append")
    assert last(client)["traces"][0]["x"] == [7.0] and last(client)["traces"][0]["y"] == [0.75]
    client.line(Y=torch.tensor([1.0, float("nan")]), X=torch.arange(2), win="L", update="append")
    y = last(client)["traces"][0]["y"]
    assert y[0] == 1.0 and wire_nan(y[1])
    client.line(Y=[float("nan")], X=[1], win="L", update="append")
    assert wire_nan(last(client)["traces"][0]["y"][0])


def test_opts_are_copied_and_style_opts_become_trace_style(client):
    opts = {"title": "t", "legend": ["a", "b"], "dash": ["dot", "dash"],
            "linecolor": np.array([[255, 0, 0], [0, 0, 255]])}
    client.line(np.ones((2, 2)), X=[0, 1], win="L", opts=opts)
    opts["title"] = "changed later"
    ev = last(client)
    assert ev["opts"] == {"title": "t", "legend": ["a", "b"]}
    assert ev["traces"][0]["style"] == {"mode": "lines", "line": {"dash": "dot", "color": "#ff0000"}}
    assert ev["traces"][1]["style"]["line"] == {"dash": "dash", "color": "#0000ff"}


def test_auto_window_ids_are_returned_and_unique(client):
    wins = [client.line([1.0, 2.0]) for _ in range(3)] + [client.text("x"), client.image(np.zeros((4, 4)))]
    assert all(re.fullmatch(r"window_[0-9a-f]{12}", w) for w in wins)
    assert len(set(wins)) == 5
    assert [e["win"] for e in events(client)] == wins


def test_env_override_and_sequence_numbers(client):
    client.text("a", win="T")
    client.text("b", win="T", env="other")
    client.close(win="T")
    evs = events(client)
    assert [e["env"] for e in evs] == ["exp1", "other", "exp1"]
    assert [e["s"] for e in evs] == [1, 2, 3]
    assert all(isinstance(e["t"], float) for e in evs)


# ------------------------------------------------------------------------------------------ scatter


def test_scatter_labels_split_traces(client):
    X = np.array([[0, 0], [1, 1], [2, 2], [3, 3]])
    client.scatter(X, Y=[1, 2, 1, 3], win="S", opts={"legend": ["a", "b"], "markersize": 4})
    ev = last(client)
    assert (ev["op"], ev["kind"]) == ("set", "scatter")
    assert [t["name"] for t in ev["traces"]] == ["a", "b", "3"]
    assert ev["traces"][0]["x"] == [0.0, 2.0] and ev["traces"][0]["y"] == [0.0, 2.0]
    assert ev["traces"][2]["x"] == [3.0]
    assert ev["traces"][1]["style"] == {"mode": "markers", "marker": {"size": 4}}


def test_scatter_single_trace_and_update(client):
    client.scatter(torch.zeros(3, 2), win="S")
    ev = last(client)
    assert len(ev["traces"]) == 1 and ev["traces"][0]["name"] == "1"
    client.scatter([[5, 6]], win="S", update="append", name="pts")
    ev = last(client)
    assert (ev["mode"], ev["name"], ev["traces"][0]["name"]) == ("append", "pts", "pts")


def test_scatter_bad_input(client):
    with pytest.raises(ValueError, match="3-D"):
        client.scatter(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="N×2"):
        client.scatter(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="labels"):
        client.scatter(np.zeros((2, 2)), Y=[0, 1])
    with pytest.raises(ValueError, match="labels"):
        client.scatter(np.zeros((2, 2)), Y=[1.5, 1])
    with pytest.raises(ValueError, match="one label per point"):
        client.scatter(np.zeros((2, 2)), Y=[1])


# --------------------------------------------------------------------------------- text and images


def test_text_set_and_append(client):
    client.text("<b>epoch 1 done</b>", win="log")
    client.text("epoch 2", win="log", append=True)
    a, b = events(client)
    assert (a["op"], a["kind"], a["content"], a["opts"]) == ("set", "text", "<b>epoch 1 done</b>", {})
    assert (b["op"], b["mode"], b["content"]) == ("update", "append", "epoch 2")
    with pytest.raises(TypeError):
        client.text(123, win="log")


def test_image_event_decodes_to_the_pixels(client):
    img = np.zeros((3, 4, 5))
    img[0] = 1.0
    client.image(img, win="sample", opts={"caption": "red"})
    ev = last(client)
    assert (ev["op"], ev["kind"], ev["opts"]) == ("set", "image", {"caption": "red"})
    wire = ev["image"]
    assert (wire["mime"], wire["width"], wire["height"]) == ("image/png", 5, 4)
    px = np.asarray(Image.open(io.BytesIO(base64.b64decode(wire["data"]))))
    assert px.shape == (4, 5, 3) and (px[..., 0] == 255).all() and (px[..., 1:] == 0).all()


def test_images_grid_event(client):
    client.images(torch.rand(10, 3, 6, 6), nrow=4, padding=2, win="batch")
    wire = last(client)["image"]
    assert (wire["width"], wire["height"]) == (4 * 10, 3 * 10)
    client.images([np.zeros((1, 4, 4))] * 3, nrow=8, padding=0, win="b2")
    assert (last(client)["image"]["width"], last(client)["image"]["height"]) == (12, 4)
    with pytest.raises(ValueError):
        client.images(np.zeros((2, 3, 4, 4, 1)))


def test_close_and_delete_env_events(client):
    assert client.close(win="loss") == "loss"
    client.close()
    client.delete_env("exp1")
    a, b, c = events(client)
    assert (a["op"], a["win"], a["env"]) == ("close", "loss", "exp1")
    assert (b["op"], b["win"]) == ("close", None)
    assert (c["op"], c["env"], c["win"]) == ("delete_env", "exp1", None)


# ------------------------------------------------------------------------------ transport, offline


def test_bounded_queue_drops_oldest(caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")
    c = make_client(max_queue=5, spool_dir=False)  # memory only: the spool has its own tests
    c.transport.on_drop = None  # the drop alert is an event too: tests/sdk/test_delivery_faults.py checks it
    try:
        for i in range(8):
            c.line(Y=[float(i)], X=[i], win="L", update="append")
        assert [e["s"] for e in events(c)] == [4, 5, 6, 7, 8]
        assert [e["traces"][0]["y"][0] for e in events(c)] == [3.0, 4.0, 5.0, 6.0, 7.0]
        assert c.transport.dropped == 3
        assert wait_for(lambda: any("buffer full" in r.getMessage() for r in paneboard_records(caplog)), timeout=3,
                        every=0.01)
        drops = [r for r in paneboard_records(caplog) if "buffer full" in r.getMessage()]
        assert len(drops) == 1 and "3 so far" in drops[0].getMessage()
    finally:
        c.close_connection(timeout=0)


def test_server_down_calls_return_fast_and_warn_once(caplog):
    caplog.set_level(logging.DEBUG, logger="paneboard")
    c = make_client()
    try:
        t0 = time.perf_counter()
        for step in range(10_000):
            c.line(X=[step], Y=[step * 0.5], win="loss", update="append", opts={"title": "loss"})
        assert time.perf_counter() - t0 < 0.5
        t1 = time.perf_counter()
        assert c.flush(timeout=0.2) is False
        assert 0.15 < time.perf_counter() - t1 < 1.0
        assert c.transport.pending_count() == 10_000
        time.sleep(0.5)  # a few reconnect attempts (backoff 0.2 s, 0.4 s...) happen meanwhile
        warnings = paneboard_records(caplog)
        assert len(warnings) == 1, [r.getMessage() for r in warnings]
        assert c.url in warnings[0].getMessage() and "cannot connect" in warnings[0].getMessage()
    finally:
        c.close_connection(timeout=0)


def test_flush_without_events_is_true_and_close_gives_up_quickly(caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")
    c = make_client(exit_timeout=10.0, spool_dir=False)
    assert c.flush(timeout=0) is True
    c.text("pending", win="T")
    t0 = time.perf_counter()
    assert c.close_connection() is False  # unreachable: gives up after ~1 s, not exit_timeout
    assert time.perf_counter() - t0 < 2.5
    assert any("1 event(s) were not delivered" in r.getMessage() for r in paneboard_records(caplog))
    assert c.flush(timeout=None) is False  # closed: returns at once instead of waiting forever


def test_context_manager_closes():
    with make_client(exit_timeout=0.1) as c:
        assert c.transport.sender.thread.is_alive()
    assert c.transport._closed and not c.transport.sender.thread.is_alive()


def test_acks_release_events_and_log_server_errors(client, caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")
    for i in range(3):
        client.text(f"t{i}", win="T")
    t = client.transport
    ob = t.outbox
    with ob.lock:  # what the sender does when it takes a batch (it is offline, so it will not race us)
        ob.inflight.append(Batch([ob.queue.popleft() for _ in range(2)]))
    assert client.flush(timeout=0) is False
    t.sender.on_message('{"ack": 2, "rejected": [{"s": 2, "error": "text: content must be a string"}]}')
    assert [e["s"] for e in events(client)] == [3]
    assert client.transport.rejected == 1
    assert client.flush(timeout=0) is False  # s=3 is still pending
    msgs = [r.getMessage() for r in paneboard_records(caplog)]
    assert any("s=2" in m and "content must be a string" in m for m in msgs)
    t.sender.on_message("not json")
    assert not t.sender.server_error
    t.sender.on_message('{"error": "hello.client must be ..."}')  # nothing in flight: just a warning
    assert not t.sender.server_error
    with ob.lock:
        ob.inflight.append(Batch([ob.queue.popleft()]))
    t.sender.on_message('{"error": "database is locked", "retry": true}')  # not stored: will never be acked
    assert any("database is locked" in r.getMessage() for r in paneboard_records(caplog))
    assert t.sender.server_error and not t.connected  # → reconnect, read last_seq from the welcome, resend


def test_flush_returns_true_once_acked(client):
    import threading

    client.text("x", win="T")
    t = client.transport
    with t.outbox.lock:
        t.outbox.inflight.append(Batch([t.outbox.queue.popleft()]))
    threading.Timer(0.1, t.sender.on_message, args=('{"ack": 1}',)).start()
    t0 = time.perf_counter()
    assert client.flush(timeout=5.0) is True
    assert time.perf_counter() - t0 < 2.0


def test_batches_respect_byte_and_count_limits_and_frame_is_wire_json(client):
    t = client.transport.outbox
    t.batch_bytes, t.batch_events = 1000, 2000
    for i in range(8):
        client.text("x" * 200, win=f"T{i}")  # ~300 bytes per event: 3 fit in 1000
    batch = t.take_batch()
    assert [s for s, _ in batch.items] == [1, 2, 3] and batch.last_s == 3
    data = frame(batch.items)
    assert len(data) <= 1000
    sent = json.loads(data)["batch"]
    assert [e["s"] for e in sent] == [1, 2, 3]
    assert sent[0] == events(client)[0]  # pending_events() shows exactly what goes on the wire
    assert set(sent[0]) == {"s", "t", "op", "env", "win", "kind", "opts", "content"}
    t.batch_events = 2
    assert [s for s, _ in t.take_batch().items] == [4, 5]
    assert [e["s"] for e in events(client)] == list(range(1, 9))  # in flight first, then queued, in order


def test_unencodable_or_oversized_input_is_rejected_with_a_warning_never_raised(client, caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")

    class Weird:
        pass

    loop: dict = {}
    loop["self"] = loop
    client.text("x", win="T", opts={"bad": loop})  # a training loop never sees an exception for its data
    client.text("x", win="T", opts={"obj": Weird()})  # unknown objects are sent as their str()
    assert "Weird" in last(client)["opts"]["obj"]
    client.transport.max_event_bytes = 1000
    client.text("x" * 2000, win="T")
    assert client.transport.rejected == 2
    assert [e["opts"] for e in events(client)] == [{"obj": last(client)["opts"]["obj"]}]
    client.line(X=[0, 1], Y=[10**310, -(10**310)], win="L")  # ints beyond float range are infinite
    assert last(client)["traces"][0]["y"] in ([math.inf, -math.inf], [None, None])
    warnings = [r.getMessage() for r in paneboard_records(caplog)]
    assert len([m for m in warnings if "event not sent" in m]) == 1  # logged once, then counted
    assert client.flush(timeout=0) is False


def test_concurrent_callers_keep_seq_order(client):
    import threading

    def work(k: int) -> None:
        for i in range(2000):
            client.line(Y=[float(i)], X=[i], win=f"w{k}", update="append")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    evs = events(client)
    assert [e["s"] for e in evs] == list(range(1, 8001))  # queue order == seq order, no gaps
    for k in range(4):
        assert [e["traces"][0]["y"][0] for e in evs if e["win"] == f"w{k}"] == [float(i) for i in range(2000)]


def test_use_after_close_restarts_the_sender():
    c = make_client()
    c.close_connection(timeout=0)
    assert c.transport._closed
    c.text("late", win="T")
    assert not c.transport._closed and c.transport.sender.thread.is_alive()
    assert [e["content"] for e in events(c)] == ["late"]
    c.close_connection(timeout=0)


def test_import_does_not_import_torch():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys, paneboard; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_fork_child_gets_a_fresh_identity(client):
    client.text("x", win="T")
    parent_id = client.client_id
    client.transport._reinit_after_fork()
    assert client.client_id != parent_id and events(client) == []
    client.text("y", win="T")  # restarts the sender lazily
    assert client.transport.sender.thread is not None and last(client)["s"] == 1
