"""/ingest against poison events and storage failures, with a real server over a real websocket.

An ack promises storage: a poison event is rejected alone (with its reason) and the rest of its batch is
stored; a storage failure is never acked, and what it held arrives exactly once after it clears.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


class Ingest:
    """A bare /ingest connection speaking docs/WIRE.md §1 (hello, welcome, batch, ack)."""

    def __init__(self, port: int, client: str) -> None:
        self.ws = connect(f"ws://127.0.0.1:{port}/ingest", open_timeout=5, max_size=None,
                          compression=None).__enter__()
        self.ws.send(json.dumps({"hello": {"client": client, "sdk": "test"}}))
        self.welcome = json.loads(self.ws.recv(timeout=10))["welcome"]

    def send(self, events: list[dict | str]) -> dict:
        """One batch frame; events given as text go on the wire as they are. Returns the server's reply."""
        parts = [e if isinstance(e, str) else json.dumps(e) for e in events]
        self.ws.send('{"batch":[' + ",".join(parts) + "]}")
        return json.loads(self.ws.recv(timeout=60))

    def close(self) -> None:
        self.ws.close()


def point(s: int, env: str, x: float | None = None, win: str = "w") -> dict:
    return {"s": s, "t": time.time(), "op": "update", "env": env, "win": win, "kind": "line", "mode": "append",
            "name": None, "opts": {}, "traces": [{"name": "a", "x": [float(s if x is None else x)], "y": [1.0]}]}


def xs(srv: Any, env: str, win: str = "w") -> list[float]:
    return [float(row[1]) for row in srv.export_rows(env, win)]


def png_claiming(width: int, height: int) -> bytes:
    """A valid PNG header that claims width x height grey pixels, with almost no data (a decompression bomb)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


def nested(env: str, depth: int) -> str:
    """A text event whose opts hold a list nested `depth` deep (as wire text: json.dumps would recurse)."""
    head = json.dumps({"s": 2, "op": "set", "env": env, "win": "t", "kind": "text", "content": "x"})[:-1]
    return head + ', "opts": {"a": ' + "[" * depth + "1" + "]" * depth + "}}"


def wav() -> bytes:
    return b"RIFF" + b"\0" * 40


# Each poison event (as wire text, `s` = 2), the text its rejection reason must contain.
POISON = {
    "image_bomb": (lambda env: json.dumps({"s": 2, "op": "set", "env": env, "win": "img", "kind": "image",
                                           "image": {"mime": "image/png",
                                                     "data": base64.b64encode(png_claiming(13500, 13500)).decode()}}),
                   "pixels"),
    "nested_beyond_the_parser": (lambda env: nested(env, 5000), "nested too deeply"),
    "nested_100": (lambda env: nested(env, 100), "nested more than 64 levels"),
    "integer_beyond_float": (lambda env: json.dumps(point(2, env)).replace("[2.0]", "[1" + "0" * 400 + "]"),
                             "integer out of range"),
    "audio_mime_not_a_string": (lambda env: json.dumps(
        {"s": 2, "op": "update", "mode": "append", "env": env, "win": "audio", "kind": "media",
         "records": [{"step": 1, "type": "audio", "mime": ["audio/wav"], "data": base64.b64encode(wav()).decode()}]}),
        "audio mime must be one of"),
    "event_over_the_size_limit": (lambda env: json.dumps({"s": 2, "op": "set", "env": env, "win": "t", "kind": "text",
                                                          "content": "x" * (1536 * 1024)}),
                                  "larger than the server's limit"),
    "not_json": (lambda env: '{"s":2,"op":"set","env":' + json.dumps(env) + ',"content":tru}', "not valid JSON"),
}


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory, server_types: Any) -> Iterator[Any]:
    """One server for the poison cases (each uses its own env and client), events limited to 1 MB."""
    srv = server_types.ServerProcess(db=tmp_path_factory.mktemp("faults") / "faults.db", extra_args=["--max-request-mb", "1"])
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.parametrize("case", sorted(POISON))
def test_a_poison_event_is_rejected_alone_and_the_connection_lives(small_server: Any, case: str):
    make, reason = POISON[case]
    env = f"poison_{case}"
    conn = Ingest(small_server.port, client=f"c-{case}")
    try:
        assert conn.welcome["last_seq"] == 0 and conn.welcome["max_event_bytes"] == 1024 * 1024
        reply = conn.send([point(1, env), make(env), point(3, env)])
        assert reply["ack"] == 3, reply
        (rejected,) = reply["rejected"]
        assert rejected["s"] == 2 and reason in rejected["error"], rejected
        assert reply["errors"] == reply["rejected"]  # older SDKs read "errors"
        assert xs(small_server, env) == [1.0, 3.0]
        # The same connection takes the next 1,000 points.
        for b in range(10):
            reply = conn.send([point(s, env) for s in range(4 + 100 * b, 104 + 100 * b)])
            assert reply == {"ack": 103 + 100 * b}
        assert xs(small_server, env) == [1.0, 3.0, *map(float, range(4, 1004))]
    finally:
        conn.close()
    # Nothing of the poison was stored, and the client's last_seq covers it (a resend skips it).
    assert Ingest(small_server.port, client=f"c-{case}").welcome["last_seq"] == 1003


def test_an_event_with_a_lone_surrogate_is_rejected_alone(small_server: Any):
    """A window name holding a lone surrogate (which UTF-8 cannot encode) is refused when the frame is decoded;
    it used to fail inside the store. Either way only that event is rejected, its neighbours are stored."""
    env = "apply_poison"
    conn = Ingest(small_server.port, client="c-apply")
    try:
        bad = '{"s":2,"op":"set","env":' + json.dumps(env) + ',"win":"\\ud800","kind":"text","content":"x"}'
        reply = conn.send([point(1, env), bad, point(3, env), point(4, env)])
        assert reply["ack"] == 4, reply
        (rejected,) = reply["rejected"]
        assert rejected["s"] == 2 and "surrogate" in rejected["error"], rejected
        assert xs(small_server, env) == [1.0, 3.0, 4.0]
        assert [p["win"] for p in small_server.get_json(f"/api/v1/envs/{env}")["panes"]] == ["w"]
        assert conn.send([point(5, env)]) == {"ack": 5}
    finally:
        conn.close()


# ------------------------------------------------------------------------------------ storage failures

FAIL_TRIGGER = ("CREATE TRIGGER simulated_failure BEFORE INSERT ON env WHEN NEW.name = 'blocked' "
                "BEGIN SELECT RAISE(ABORT, 'simulated storage failure'); END")


def sql(db: Path, *statements: str) -> None:
    con = sqlite3.connect(db, timeout=30)
    try:
        for stmt in statements:
            con.execute(stmt)
        con.commit()
    finally:
        con.close()


def test_a_storage_failure_is_never_acked_and_last_seq_stops_below_it(server: Any):
    sql(server.db, FAIL_TRIGGER)
    conn = Ingest(server.port, client="c-raw")
    reply = conn.send([point(1, "ok"), point(2, "ok"), point(3, "blocked"), point(4, "ok")])
    assert "ack" not in reply and reply["retry"] is True, reply
    assert reply["error"].startswith("could not be stored:") and "s=3" in reply["error"], reply
    with pytest.raises(ConnectionClosed):  # the server closed the connection
        conn.ws.recv(timeout=10)
    # The events before the failed one are stored, the one after it is not (it would jump last_seq past 3).
    assert xs(server, "ok") == [1.0, 2.0]
    conn = Ingest(server.port, client="c-raw")
    assert conn.welcome["last_seq"] == 2
    sql(server.db, "DROP TRIGGER simulated_failure")
    assert conn.send([point(1, "ok"), point(2, "ok"), point(3, "blocked"), point(4, "ok")]) == {"ack": 4}
    assert xs(server, "ok") == [1.0, 2.0, 4.0]
    assert xs(server, "blocked") == [3.0]
    conn.close()


def test_the_sdk_delivers_everything_exactly_once_across_a_storage_failure(server: Any):
    sql(server.db, FAIL_TRIGGER)
    client = server.client("ok")
    try:
        for i in range(300):
            client.line(X=[i], Y=[i], win="w", update="append")
        assert client.flush(timeout=30)
        for i in range(300, 600):
            if i == 400:
                client.line(X=[i], Y=[i], win="w", update="append", env="blocked")
            client.line(X=[i], Y=[i], win="w", update="append")
        assert client.flush(timeout=3) is False  # never acked while the failure lasts
        time.sleep(1.0)
        assert xs(server, "ok") == list(map(float, range(400)))  # nothing after the failed event
        sql(server.db, "DROP TRIGGER simulated_failure")
        assert client.flush(timeout=60)
        assert xs(server, "ok") == list(map(float, range(600)))
        assert xs(server, "blocked") == [400.0]
    finally:
        client.close_connection(timeout=5)


def test_a_database_locked_by_another_process_for_seconds_loses_nothing(server: Any):
    client = server.client("locked")
    try:
        client.line(X=[0], Y=[0], win="w", update="append")
        assert client.flush(timeout=30)
        con = sqlite3.connect(server.db, timeout=30, isolation_level=None, check_same_thread=False)
        con.execute("BEGIN EXCLUSIVE")
        released = threading.Timer(3.0, con.execute, args=("COMMIT",))
        released.start()
        try:
            for i in range(1, 2001):
                client.line(X=[i], Y=[i], win="w", update="append")
            assert client.flush(timeout=1) is False  # the writer waits for the lock: no ack meanwhile
            assert client.flush(timeout=60)
        finally:
            released.join()
            con.close()
        assert xs(server, "locked") == list(map(float, range(2001)))
    finally:
        client.close_connection(timeout=5)
