"""With --token, a request is authenticated before its body is read: a caller without credentials (or with a
read-only share token) is refused at the headers, so it cannot make the server buffer bodies."""

from __future__ import annotations

import json
import socket
import urllib.request

from paneboard.server.sharing import tokens

ADMIN = "admin-token-for-preauth"
BIG = 60 << 20


def answer_to_headers_alone(srv, headers: dict[str, str]) -> tuple[int, dict]:
    """Send only the headers of a 60 MB POST and read the answer, never sending a byte of the body."""
    lines = ["POST /api/v1/events HTTP/1.1", f"Host: 127.0.0.1:{srv.port}", "Content-Type: application/json",
             f"Content-Length: {BIG}", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
            chunk = s.recv(65536)  # a timeout here: the server waits for the body instead of refusing
            if not chunk:
                break
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(rest[:_length(data)])


def _length(data: bytes) -> int:
    for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            return int(value)
    return 1 << 30


def test_unauthenticated_bodies_are_refused_before_they_are_read(make_server):
    srv = make_server(token=ADMIN)
    share, _ = tokens.create(srv.app.services.store, None)
    status, body = answer_to_headers_alone(srv, {})
    assert status == 401 and "authentication required" in body["error"]
    status, body = answer_to_headers_alone(srv, {"Authorization": "Bearer wrong"})
    assert status == 401
    status, body = answer_to_headers_alone(srv, {"Authorization": f"Bearer {share}"})
    assert status == 403 and "read-only" in body["error"]
    status, body = answer_to_headers_alone(srv, {"Cookie": f"paneboard_token={share}"})
    assert status == 403
    # The admin token still writes.
    req = urllib.request.Request(srv.url + "/api/v1/events", data=b'{"events": []}', method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
