"""An import into a running server over HTTP (`dash-server import --server URL`): stored counts asked from
/api/v1/import/state, events sent as binary frames whose float64 columns carry NaN and ±inf exactly."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from paneboard.protocol import PointRun, pack_frame

from .target import PeerImportError, file_sha256

CHUNK = 8 << 20  # bytes per blob upload request (the server holds one request in memory)
RETRY_PAUSES = (1.0, 3.0, 10.0)  # seconds before each resend of a frame (a restarting or busy server)


class _Transient(PeerImportError):
    """A failure that a resend may get past: no connection, or the server's store was busy (503)."""


def _json_default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def event_json(seq: int, raw: dict[str, Any]) -> bytes:
    """An event as JSON with its sequence number first (the server finds it without decoding). Python's
    encoder writes NaN and Infinity literals, which the server's decoder reads back as the same floats."""
    return json.dumps({"s": seq, **{k: v for k, v in raw.items() if k != "s"}}, default=_json_default,
                      separators=(",", ":")).encode()


def point_run(seq: int, raw: dict[str, Any]) -> PointRun | None:
    """A one-trace line append as a run of points s0..seq (one per point), or None for any other event."""
    traces = raw.get("traces")
    if raw.get("op") != "update" or raw.get("mode") != "append" or not isinstance(traces, list) or len(traces) != 1:
        return None
    trace = traces[0]
    x, y, wall = (trace.get(k) for k in ("x", "y", "wall"))
    if not all(isinstance(c, np.ndarray) for c in (x, y, wall)) or not len(x) == len(y) == len(wall) >= 1:
        return None
    envelope = {k: v for k, v in raw.items() if k not in ("traces", "s", "s0", "t")}
    envelope["traces"] = [{k: v for k, v in trace.items() if k not in ("x", "y", "wall")}]
    columns = b"".join(np.ascontiguousarray(c, "<f8").tobytes() for c in (x, y, wall))
    return PointRun(seq - len(x) + 1, seq, float(raw.get("t") or 0.0),
                    json.dumps(envelope, default=_json_default).encode(), columns)


class HttpTarget:
    """A running paneboard server, with the SDK's token (Authorization: Bearer)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 600.0) -> None:
        if "://" not in url:
            url = "http://" + url
        self.base = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("PANEBOARD_TOKEN")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: bytes | None = None, kind: str = "application/json") -> Any:
        req = urllib.request.Request(self.base + path, data=body, method=method)
        if body is not None:
            req.add_header("Content-Type", kind)
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", "")
            except ValueError:
                message = ""
            hint = {401: " (give the server's token: --token or $PANEBOARD_TOKEN)",
                    404: " (is it a paneboard server with the import API?)"}.get(exc.code, "")
            error = _Transient if exc.code == 503 else PeerImportError
            raise error(f"{self.base}: HTTP {exc.code} {message or exc.reason}{hint}") from None
        except ValueError:
            raise PeerImportError(f"{self.base}{path}: the answer is not JSON (is it a paneboard server?)") from None
        except OSError as exc:
            raise _Transient(f"{self.base}: {exc}") from None

    def _retried(self, method: str, path: str, body: bytes, kind: str) -> Any:
        """Sent again after a lost connection or a 503: the server skips what it stored already (exactly once)."""
        for pause in RETRY_PAUSES:
            try:
                return self._call(method, path, body, kind)
            except _Transient:
                time.sleep(pause)
        return self._call(method, path, body, kind)

    def _state(self, clients: list[str], envs: list[str]) -> dict[str, Any]:
        return self._call("POST", "/api/v1/import/state", json.dumps({"clients": clients, "envs": envs}).encode())

    def check(self) -> None:
        """Fail early (wrong URL, token, or a server without the import API)."""
        self._state([], [])

    def stored(self, cid: str) -> int:
        return int(self._state([cid], [])["clients"][cid])

    def env_state(self, env: str) -> tuple[bool, str | None]:
        found = self._state([], [env])["envs"][env]
        return bool(found["exists"]), found["import"]

    def write(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> list[str]:
        events: list[bytes | PointRun] = []
        for raw in raws:
            run = point_run(seq, raw)
            events.append(run if run is not None else event_json(seq, raw))
        query = urllib.parse.urlencode({"client": cid})
        answer = self._retried("POST", f"/api/v1/import/frames?{query}", pack_frame(events), "application/octet-stream")
        problems = [f"not stored: {r.get('error')}" for r in answer.get("rejected") or []]
        # The server's count is the proof: every item up to seq landed (or was refused for good, above).
        if int(answer.get("last_seq", -1)) < seq:
            raise PeerImportError(f"{self.base}: stored {answer.get('last_seq')} items of {cid}, not {seq}")
        return problems

    def write_events(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> list[str]:
        """Events that share one sequence number (a TensorBoard batch: its end offset in the event file), sent
        as JSON: stored together, or skipped together when the server holds `seq` of `cid` already."""
        query = urllib.parse.urlencode({"client": cid})
        frame = pack_frame([event_json(seq, raw) for raw in raws])
        answer = self._retried("POST", f"/api/v1/import/frames?{query}", frame, "application/octet-stream")
        if int(answer.get("last_seq", -1)) < seq:
            raise PeerImportError(f"{self.base}: stored {answer.get('last_seq')} of {cid}, not {seq}")
        return [f"not stored: {r.get('error')}" for r in answer.get("rejected") or []]

    def put_blob(self, path: Path) -> tuple[str, int]:
        sha, size = file_sha256(path), path.stat().st_size
        state = self._call("GET", f"/api/v1/artifact-blobs/{sha}/upload")
        if state.get("stored"):
            return sha, size
        offset = int(state.get("offset") or 0)
        with open(path, "rb") as f:
            f.seek(offset)
            while True:
                block = f.read(CHUNK)
                last = f.tell() >= size
                answer = self._call("PUT", f"/api/v1/artifact-blobs/{sha}/upload?offset={offset}"
                                    + ("&last=1" if last else ""), block, "application/octet-stream")
                if answer.get("stored"):
                    return sha, size
                offset = int(answer["offset"])
                if last:
                    raise PeerImportError(f"{self.base}: the server did not keep the upload of {path.name}")
