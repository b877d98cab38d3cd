"""Coalesced appends: a run of single-point appends to one trace travels as one event covering seqs s0..s.

The server stores such an event as the calls it stands for: a replay skips the points already stored even when
the range straddles what was stored; through kill -9 and a server absence every point arrives exactly once.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

from websockets.sync.client import connect

import paneboard
from paneboard.transport.points import binary_frame, frame, prefix


def ranged(s0: int, s: int, env: str = "rng", win: str = "w", kind: str = "line") -> dict:
    xs = [float(x) for x in range(s0, s + 1)]
    return {"s": s, "s0": s0, "t": time.time(), "op": "update", "env": env, "win": win, "kind": kind,
            "mode": "append", "name": None, "opts": {}, "traces": [{"name": "a", "x": xs, "y": [x * 2 for x in xs],
                                                                    "wall": [1000.0 + x for x in xs]}]}


def send(ws: Any, events: list[dict]) -> dict:
    ws.send(json.dumps({"batch": events}))
    return json.loads(ws.recv(timeout=30))


def test_a_replayed_range_stores_only_the_calls_not_yet_stored(server) -> None:
    with connect(f"ws://127.0.0.1:{server.port}/ingest", open_timeout=5) as ws:
        ws.send(json.dumps({"hello": {"client": "ranges", "sdk": "test"}}))
        assert json.loads(ws.recv(timeout=10))["welcome"]["last_seq"] == 0
        assert send(ws, [ranged(1, 5)]) == {"ack": 5}
        assert send(ws, [ranged(3, 8)]) == {"ack": 8}  # 3..5 were stored: only 6..8 are new
        assert send(ws, [ranged(6, 8)]) == {"ack": 8}  # wholly stored: skipped
        bad = [ranged(9, 10), {**ranged(11, 12), "s0": 13}, {**ranged(13, 15), "s0": 12},
               {"s": 16, "s0": 16, "t": 0, "op": "update", "env": "rng", "win": "txt", "kind": "text",
                "mode": "append", "name": None, "opts": {}, "content": "hi"}]
        reply = send(ws, bad)
    assert reply["ack"] == 16
    assert [r["s"] for r in reply["rejected"]] == [12, 15, 16]
    assert "s0" in reply["rejected"][0]["error"] and "covers 4 calls" in reply["rejected"][1]["error"]
    data = server.get_json("/api/v1/envs/rng/panes/w/export?format=json")["traces"][0]
    assert data["x"] == [float(x) for x in range(1, 11)]
    assert data["y"] == [2.0 * x for x in range(1, 11)]
    assert data["wall"] == [1000.0 + x for x in range(1, 11)]  # each call keeps its own wall time
    assert server.get_json("/api/v1/envs/rng")["panes"][0]["win"] == "w"  # the text event stored nothing


def test_frames_coalesce_runs_of_points_and_keep_everything_else_as_it_is() -> None:
    a = prefix({"op": "update", "env": "e", "win": "a", "kind": "line", "mode": "append", "name": None, "opts": {},
                "traces": [{"name": "1", "style": {"mode": "lines"}}]})
    b = prefix({"op": "update", "env": "e", "win": "b", "kind": "line", "mode": "append", "name": None, "opts": {},
                "traces": [{"name": "1", "style": {"mode": "lines"}}]})
    close = b'{"t":1.0,"op":"close","env":"e","win":"c"}'
    items: list[tuple[int, Any]] = [(1, (a, 0.0, 1.0, 10.0)), (2, (a, 1.0, float("nan"), 11.0)), (3, (b, 0.0, 5.0, 12.0)),
                                    (4, close), (5, (a, 2.0, 3.0, 13.0)), (7, (a, 3.0, 4.0, 14.0))]
    events = json.loads(frame(items))["batch"]
    assert [(e["s"], e.get("s0"), e["op"], e.get("win")) for e in events] == [
        (2, 1, "update", "a"), (3, None, "update", "b"), (4, None, "close", "c"), (5, None, "update", "a"),
        (7, None, "update", "a")]  # a gap in the seqs (5, 7) ends a run
    run = events[0]["traces"][0]
    assert run["x"] == [0.0, 1.0] and run["y"] == [1.0, None] and run["wall"] == [10.0, 11.0]
    assert events[1]["traces"][0] == {"name": "1", "style": {"mode": "lines"}, "x": [0.0], "y": [5.0]}


def _hello(ws: Any, client: str, frames: list[str] | None) -> dict:
    hello: dict[str, Any] = {"client": client, "sdk": "test"}
    if frames is not None:
        hello["frames"] = frames
    ws.send(json.dumps({"hello": hello}))
    return json.loads(ws.recv(timeout=10))["welcome"]


def test_binary_frames_are_agreed_at_the_handshake_and_store_what_json_would(server) -> None:
    env = {"op": "update", "env": "bin", "win": "w", "kind": "line", "mode": "append", "name": None, "opts": {},
           "traces": [{"name": "1", "style": {"mode": "lines"}}]}
    pre = prefix(env)
    nan = float("nan")
    with connect(f"ws://127.0.0.1:{server.port}/ingest", open_timeout=5) as old:
        assert "frames" not in _hello(old, "json-only", None)  # an SDK that offers nothing gets JSON
    with connect(f"ws://127.0.0.1:{server.port}/ingest", open_timeout=5) as ws:
        assert _hello(ws, "binary", ["bin9", "bin1"])["frames"] == "bin1"
        items: list[tuple[int, Any]] = [(1, (pre, 0.0, 1.5, 100.0)), (2, (pre, 1.0, nan, 101.0)),
                                        (3, (pre, 2.0, -2.0, 102.0)), (4, b'{"t":5.0,"op":"close","env":"bin","win":"x"}')]
        ws.send(binary_frame(items))
        assert json.loads(ws.recv(timeout=30)) == {"ack": 4}
        ws.send(b"PBF1\x01\x00\x00\x00\x01" + b"\x00" * 10)  # a run cut short
        assert "binary frame is malformed" in json.loads(ws.recv(timeout=30))["error"]
        bad = bytearray(binary_frame([(6, (pre, 3.0, 3.0, 103.0)), (7, (pre, 4.0, 4.0, 104.0))]))
        bad[9:17] = (5).to_bytes(8, "little", signed=True)  # s0 (after magic, count, kind) = 5: 3 calls, 2 points
        ws.send(bytes(bad))
        reply = json.loads(ws.recv(timeout=30))
        assert reply["ack"] == 7 and [r["s"] for r in reply["rejected"]] == [7]  # the socket stays open
        ws.send(binary_frame([(8, (pre, 5.0, 5.0, 105.0))]))
        assert json.loads(ws.recv(timeout=30)) == {"ack": 8}
    data = server.get_json("/api/v1/envs/bin/panes/w/export?format=json")["traces"][0]
    assert data["x"] == [0.0, 1.0, 2.0, 5.0] and data["wall"] == [100.0, 101.0, 102.0, 105.0]
    assert data["y"][0] == 1.5 and data["y"][1] is None and data["y"][2:] == [-2.0, 5.0]  # NaN: a gap


def test_kill9_and_an_absence_with_coalesced_frames_store_every_point_once(tmp_path, make_server_process) -> None:
    """Appends in runs to two panes; the server is killed -9 mid-run and stays away while a quarter of the
    stream is logged (bench/faults.py's outage_kill9 runs a 60 s absence); the frames were coalesced."""
    srv = make_server_process("coalesced").start()
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="co", max_queue=500,
                              spool_dir=tmp_path / "spool")
    n = 6000
    killed, resumed = threading.Event(), threading.Event()

    def chaos() -> None:
        # Kill once the server has stored part of the stream, restart once more was logged while it was away:
        # the outage falls mid-stream however fast or slow the machine runs the loop.
        deadline = time.monotonic() + 60
        while client.transport.sender.frames_sent < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        srv.stop(signal.SIGKILL)
        killed.set()
        resumed.wait(60)
        srv.start()

    killer = threading.Thread(target=chaos)
    killer.start()
    try:
        for i in range(n):
            if i == n // 2:
                assert killed.wait(60)  # the rest of the stream is logged while the server is away
            if i == 3 * n // 4:
                resumed.set()
            client.line(X=[i], Y=[float(i)], win="a" if (i // 50) % 2 == 0 else "b", update="append")
            if i % 20 == 0:
                time.sleep(0.01)  # ~2,000 appends/s: calls come in runs the SDK coalesces
        killer.join()
        assert client.flush(timeout=60)
        assert client.transport.dropped == 0
        frames = client.transport.sender.frames_sent
        got = sorted(float(row[1]) for win in ("a", "b") for row in srv.export_rows("co", win))
        assert got == [float(i) for i in range(n)]  # none lost, none twice
        a = [float(row[1]) for row in srv.export_rows("co", "a")]
        assert a == [float(i) for i in range(n) if (i // 50) % 2 == 0]  # in order within the pane
        assert frames < n / 10, frames  # many calls per frame: runs went out as coalesced events
        assert not list((tmp_path / "spool").glob("*.spool"))
        client.close_connection(timeout=5)
    finally:
        resumed.set()
        killer.join()
        srv.stop()
