"""What bench/redteam.py's areas share: the results table, a server handle, and small request builders."""

from __future__ import annotations

import http.client
import io
import json
import sys
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import stop  # noqa: E402

ADMIN = "redteam-admin-token"
RESULTS: dict[str, list[tuple[str, bool, str]]] = {}


def check(area: str, name: str, fn: Callable[[], tuple[bool, str]]) -> None:
    try:
        held, note = fn()
    except Exception as exc:  # a crash of the check is a failure of the area, never of the suite
        held, note = False, f"{type(exc).__name__}: {exc}"
    RESULTS.setdefault(area, []).append((name, held, note))


class Srv:
    def __init__(self, url: str, pid: int) -> None:
        self.url, self.pid = url, pid

    def call(self, method: str, path: str, body: Any = None, token: str | None = ADMIN, raw: bytes | None = None,
             ctype: str = "application/json", headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        hdrs = {"Content-Type": ctype, **(headers or {})}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                payload = r.read()
                return r.status, r.headers, _json(payload)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, _json(exc.read())
        except (OSError, http.client.HTTPException) as exc:
            # No answer in time, a dropped connection, a header too long to read: status 0, so that the check
            # fails and the suite goes on to the next one (an older server must give a table, not a traceback).
            return 0, http.client.HTTPMessage(), {"error": f"{type(exc).__name__}: {exc}"}


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def line(env: str) -> dict:
    return {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append",
            "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}


def make_tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def declared(size: int) -> bytes:
    info = tarfile.TarInfo("blobs/" + "0" * 64)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT) + bytes(8192)


def up(srv: Srv, proc: Any) -> Srv:
    deadline_up = time.monotonic() + 60
    while True:  # up once it answers at all (401 without the token counts)
        try:
            if srv.call("GET", "/api/v1/envs")[0] == 200:
                return srv
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline_up:
            stop(proc)
            raise RuntimeError("dash-server did not start")
        time.sleep(0.1)


def revoke_closes_socket(srv: Srv, token: str, revoke: Callable[[], Any], wait: float = 5.0,
                         what: str = "the revoke") -> tuple[bool, str]:
    """Hold a websocket on `srv` with `token`, subscribed, then `revoke()` (on this server, another one or the
    CLI): held if the server closes the socket within `wait` seconds."""
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{srv.url.rsplit(':', 1)[1]}/ws", open_timeout=5, origin=srv.url,
                 additional_headers={"Cookie": f"paneboard_token={token}"}) as ws:
        ws.send(json.dumps({"subscribe": "pub"}))
        ws.recv(timeout=5)
        revoke()
        try:
            while True:
                ws.recv(timeout=wait)
        except TimeoutError:
            return False, f"still open {wait:g} s after {what}"
        except Exception:
            return True, ""
