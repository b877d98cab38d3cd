"""Request bodies over real HTTP: slow senders cannot starve the workers; chunked bodies are read."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from typing import Any


def slow_post(port: int, path: str = "/api/v1/events") -> socket.socket:
    """Headers promising a body, then only its first bytes: a client that never finishes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
              "Content-Length: 1000\r\n\r\n{\"events\":".encode())
    return s


def test_slow_request_bodies_do_not_stall_other_requests(server: Any):
    stalled = [slow_post(server.port) for _ in range(40)]  # more than the WSGI worker threads
    try:
        time.sleep(0.5)
        t0 = time.perf_counter()
        with urllib.request.urlopen(server.url + "/api/v1/envs", timeout=10) as r:
            assert r.status == 200
        assert time.perf_counter() - t0 < 5
        client = server.client("alive")
        client.line(X=[0, 1], Y=[1.0, 2.0], win="w")
        assert client.flush(timeout=10)
        client.close_connection(timeout=5)
    finally:
        for s in stalled:
            s.close()


def test_a_body_slower_than_the_deadline_gets_a_408(make_server: Any):
    srv = make_server("deadline", body_deadline_s=1.0)
    s = slow_post(srv.port)
    try:
        s.settimeout(10)
        reply = s.recv(4096).decode()
        assert reply.startswith("HTTP/1.1 408"), reply
        assert '"error"' in reply and "within" in reply
    finally:
        s.close()


def test_a_chunked_body_is_read_like_any_other(server: Any):
    payload = json.dumps({"events": [{"op": "set", "kind": "text", "env": "chunked", "win": "t",
                                      "content": "sent in chunks"}]}).encode()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        s.sendall(f"POST /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                  "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode())
        for k in range(0, len(payload), 16):
            part = payload[k:k + 16]
            s.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        s.sendall(b"0\r\n\r\n")
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    finally:
        s.close()
    assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
    assert server.get_json("/api/v1/envs/chunked/panes/t")["data"]["html"] == "sent in chunks"
