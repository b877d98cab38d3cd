"""A bare /ingest connection and small builders of frames and requests, for the ingest and memory tests."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from websockets.sync.client import connect

from paneboard.protocol import PointRun, pack_frame


class Ingest:
    """A bare /ingest connection speaking docs/WIRE.md §1 (hello, welcome, batch, ack)."""

    def __init__(self, port: int, client: str) -> None:
        self.ws = connect(f"ws://127.0.0.1:{port}/ingest", open_timeout=5, max_size=None,
                          compression=None).__enter__()
        self.ws.send(json.dumps({"hello": {"client": client, "sdk": "test"}}))
        self.hello_answer = json.loads(self.ws.recv(timeout=10))

    def send_text(self, text: str) -> tuple[dict, int]:
        """One frame as given; the server's reply and its size in bytes."""
        self.ws.send(text)
        reply = self.ws.recv(timeout=60)
        return json.loads(reply), len(reply)

    def close(self) -> None:
        self.ws.close()


def point(s: int, env: str, x: float) -> dict:
    return {"s": s, "t": time.time(), "op": "update", "env": env, "win": "w", "kind": "line", "mode": "append",
            "traces": [{"name": "a", "x": [x], "y": [1.0]}]}


def batch(events: list[dict | str]) -> str:
    return '{"batch":[' + ",".join(e if isinstance(e, str) else json.dumps(e) for e in events) + "]}"


def request(srv: Any, method: str, path: str, data: bytes | None = None,
            ctype: str = "application/json") -> tuple[int, Any, bytes]:
    req = urllib.request.Request(srv.url + path, data=data, method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def import_frame(srv: Any, client: str, events: list[bytes | PointRun]) -> tuple[int, Any]:
    status, _, body = request(srv, "POST", f"/api/v1/import/frames?client={client}", pack_frame(events),
                              "application/octet-stream")
    return status, json.loads(body)
