"""HTTP for artifact uploads and downloads: the server's base URL, JSON requests, and streamed PUTs of file slices."""

from __future__ import annotations

import http.client
import io
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, BinaryIO

SEND_BLOCK = 1 << 20  # bytes per socket write (http.client's default, 8 KB, costs a syscall each)
HTTP_TIMEOUT = 60.0


def http_base(ws_url: str) -> str:
    """http(s)://host:port/base of an ingest websocket URL."""
    scheme, rest = ws_url.split("://", 1)
    return {"ws": "http", "wss": "https"}[scheme] + "://" + rest[: -len("/ingest")]


def request(client: Any, method: str, path: str, data: bytes | None = None) -> Any:
    headers = {"Content-Type": "application/octet-stream"}
    if client.transport.token:
        headers["Authorization"] = f"Bearer {client.transport.token}"
    req = urllib.request.Request(http_base(client.url) + path, data=data, method=method, headers=headers)
    return urllib.request.urlopen(req, timeout=HTTP_TIMEOUT)


class Slice(io.RawIOBase):
    """The next `left` bytes of a file, read as http.client sends a body (in SEND_BLOCK reads)."""

    def __init__(self, f: BinaryIO, left: int) -> None:
        self.f, self.left = f, left

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n) if n else b""
        self.left -= len(data)
        return data


class Connection:
    """One kept-alive HTTP connection for an upload's requests (urllib opens one per request)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        parts = urllib.parse.urlsplit(http_base(client.url))
        self.prefix = parts.path.rstrip("/")
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = kind(parts.hostname or "localhost", parts.port, timeout=HTTP_TIMEOUT, blocksize=SEND_BLOCK)

    def put(self, path: str, body: Slice) -> Any:
        """PUT the slice; its JSON answer, or urllib.error.HTTPError as urllib.request would raise it."""
        headers = {"Content-Type": "application/octet-stream", "Content-Length": str(body.left)}
        if self.client.transport.token:
            headers["Authorization"] = f"Bearer {self.client.transport.token}"
        try:
            self.conn.request("PUT", self.prefix + path, body=body, headers=headers)
            r = self.conn.getresponse()
            data = r.read()
        except Exception:
            self.conn.close()
            raise
        if r.status >= 400:
            self.conn.close()
            raise urllib.error.HTTPError(path, r.status, r.reason, r.headers, io.BytesIO(data))
        return json.loads(data)

    def close(self) -> None:
        self.conn.close()


def get_json(client: Any, path: str) -> Any:
    with request(client, "GET", path) as r:
        return json.loads(r.read())
