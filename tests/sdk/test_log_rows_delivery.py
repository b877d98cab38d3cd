"""paneboard.log rows on the wire: one queue item per call, a run of rows as one `rows` event, exactly once.

A row of K keys takes K sequence numbers (pane j of a row: its first + j); the server keeps only the points whose
own number is above the client's last stored one, so replays (resent frames, a server killed and restarted)
store every point once, and a server without `rows` gets the same points as single appends.
"""

from __future__ import annotations

import json
import signal
import threading
import time
import urllib.parse
from typing import Any

from websockets.sync.client import connect

import paneboard
from paneboard.transport.points import frame
from paneboard.transport.rows import RowSchema

KEYS = [f"metric_{k}" for k in range(10)]


def _xs(server: Any, env: str, win: str) -> tuple[list[float], list[float]]:
    data = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{win}/export?format=json")
    trace = data["traces"][0]
    return trace["x"], trace["y"]


def test_twenty_thousand_rows_of_ten_keys_are_all_stored_in_order(server, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    monkeypatch.delenv("PANEBOARD_MODE", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run = paneboard.init(project="rows", name="big", dir=tmp_path)
    try:
        n = 20_000
        for s in range(n):
            paneboard.log({k: s + j / 10 for j, k in enumerate(KEYS)}, step=s)
        # An ack means stored: flush() returns once the server holds every point (bounded: 60 s; before rows
        # existed this stream took over a minute to drain, one event per point).
        assert run.client.flush(timeout=60)
        assert run.rejected == 0
        frames = run.client.transport.sender.frames_sent
    finally:
        paneboard.finish()
    for j, key in enumerate(KEYS):
        xs, ys = _xs(server, "rows/big", key)
        assert xs == [float(s) for s in range(n)], key  # all there, in order, none twice
        assert ys == [s + j / 10 for s in range(n)], key
    assert frames < 200, frames  # rows travel as a few large events, not one per point


def _schema(env: str, keys: list[str]) -> RowSchema:
    return RowSchema(env, tuple(keys), [{"win": k, "kind": "line", "name": k, "opts": {}, "traces": [
        {"name": k, "style": {"mode": "lines"}}]} for k in keys])


def test_a_replayed_rows_event_stores_only_points_above_the_last_stored_seq(server) -> None:
    """The last stored seq may fall inside a row (a frame stored by an older server as single points): each
    pane keeps exactly its points numbered above it."""
    schema = _schema("rr", ["a", "b"])
    rows = [(2, (schema, 0.0, (1.0, 2.0), 100.0)), (4, (schema, 1.0, (3.0, 4.0), 101.0)),
            (6, (schema, 2.0, (5.0, 6.0), 102.0))]  # seqs: row r, pane j -> 2r + j + 1 (items carry the last)
    with connect(f"ws://127.0.0.1:{server.port}/ingest", open_timeout=5) as ws:
        ws.send(json.dumps({"hello": {"client": "rows-replay", "sdk": "test"}}))
        assert json.loads(ws.recv(timeout=10))["welcome"]["rows"] is True
        # seq 1..4 as single points (as to a server without rows): a@0, b@0, a@1, b@1
        ws.send(frame(rows[:2], rows=False).decode())
        assert json.loads(ws.recv(timeout=30)) == {"ack": 4}
        ws.send(frame([(1, b'{"t":1.0,"op":"close","env":"rr","win":"nothing"}')]).decode())  # stored already: skipped
        assert json.loads(ws.recv(timeout=30)) == {"ack": 1}
        # A row was partly stored: last seq 5 sits inside the last row (pane a of row 2 only)
        ws.send(frame([(5, b'{"t":1.0,"op":"update","env":"rr","win":"a","kind":"line","mode":"append",'
                           b'"name":"a","opts":{},"traces":[{"name":"a","x":[2.0],"y":[5.0]}]}')]).decode())
        assert json.loads(ws.recv(timeout=30)) == {"ack": 5}
        ws.send(frame(rows).decode())  # the whole range 1..6 again as one rows event
        assert json.loads(ws.recv(timeout=30)) == {"ack": 6}
        bad = json.loads(frame([(9, (schema, 3.0, (7.0, 8.0), 103.0))]))["batch"][0]
        bad["s"] = 10  # s0..s covers 3 seqs, 1 row of 2 panes holds 2
        ws.send(json.dumps({"batch": [bad]}))
        reply = json.loads(ws.recv(timeout=30))
    assert reply["ack"] == 10 and "covers 3 points" in reply["rejected"][0]["error"]
    assert _xs(server, "rr", "a") == ([0.0, 1.0, 2.0], [1.0, 3.0, 5.0])
    assert _xs(server, "rr", "b") == ([0.0, 1.0, 2.0], [2.0, 4.0, 6.0])


def test_rows_to_a_server_without_rows_go_out_as_numbered_single_points() -> None:
    schema = _schema("e", ["a", "b", "c"])
    items: list[tuple[int, Any]] = [(3, (schema, 0.0, (1.0, 2.0, 3.0), 10.0)), (6, (schema, 1.0, (4.0, 5.0, 6.0), 11.0))]
    old = json.loads(frame(items, rows=False))["batch"]
    assert [(e["s"], e["win"], e["traces"][0]["y"]) for e in old] == [
        (1, "a", [1.0]), (2, "b", [2.0]), (3, "c", [3.0]), (4, "a", [4.0]), (5, "b", [5.0]), (6, "c", [6.0])]
    new = json.loads(frame(items))["batch"]
    assert len(new) == 1 and (new[0]["s0"], new[0]["s"], new[0]["op"]) == (1, 6, "rows")
    assert [p["y"] for p in new[0]["panes"]] == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]] and new[0]["wall"] == [10.0, 11.0]


def test_a_server_killed_mid_stream_stores_every_row_once(tmp_path, make_server_process, monkeypatch) -> None:
    srv = make_server_process("rows-kill").start()
    monkeypatch.setenv("PANEBOARD_URL", f"http://127.0.0.1:{srv.port}")
    monkeypatch.delenv("PANEBOARD_MODE", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run = paneboard.init(project="rows", name="kill", dir=tmp_path)
    sender = run.client.transport.sender
    n = 4000
    killed, resumed = threading.Event(), threading.Event()

    def chaos() -> None:
        # Kill once part of the stream is stored, restart once more was logged while the server was away.
        deadline = time.monotonic() + 60
        while sender.frames_sent < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        srv.stop(signal.SIGKILL)
        killed.set()
        resumed.wait(60)
        srv.start()

    killer = threading.Thread(target=chaos)
    killer.start()
    try:
        for s in range(n):
            if s == n // 2:
                assert killed.wait(60)
            if s == 3 * n // 4:
                resumed.set()
            row = {"loss": float(s), "acc": s / n}
            if s % 100 == 0:
                row["val"] = -float(s)  # another schema now and then: a run of rows ends there
            paneboard.log(row, step=s)
            if s % 20 == 0:
                time.sleep(0.005)  # rows come in runs, several frames before the kill
        killer.join()
        assert run.client.flush(timeout=60)
        assert run.client.transport.dropped == 0 and run.rejected == 0
    finally:
        resumed.set()
        killer.join()
        paneboard.finish()
    try:
        assert _xs(srv, "rows/kill", "loss") == ([float(s) for s in range(n)], [float(s) for s in range(n)])
        assert _xs(srv, "rows/kill", "acc")[1] == [s / n for s in range(n)]  # none lost, none twice, in order
        assert _xs(srv, "rows/kill", "val")[0] == [float(s) for s in range(0, n, 100)]
    finally:
        srv.stop()
