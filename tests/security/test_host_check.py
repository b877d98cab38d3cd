"""DNS-rebinding guard: a server without a token answers only loopback Host names and --allowed-host ones."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

REBIND = "rebind.evil.example"


def http_status(port: int, method: str, path: str, host: str, **headers: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, headers={"Host": host, **headers})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, json.loads(body) if resp.getheader("content-type", "").startswith("application/json") \
            else {}
    finally:
        conn.close()


def ws_handshake_status(port: int, path: str, host: str) -> int:
    """The HTTP status answering a websocket upgrade asked for `host` (101 when accepted)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Origin: http://{host}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        status_line = s.recv(4096).split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1])


@pytest.fixture
def proxied(make_server_process: Any) -> Iterator[Any]:
    # The CLI flag itself is under test here, so a real dash-server process.
    srv = make_server_process("proxied", extra_args=["--allowed-host", "dash.example.org"]).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_a_rebinding_host_is_refused_over_http_even_with_a_matching_origin(server: Any):
    client = server.client("kept")
    client.text("secret", win="t")
    assert client.flush(timeout=30)
    client.close_connection(timeout=5)
    host = f"{REBIND}:{server.port}"
    status, body = http_status(server.port, "GET", "/api/v1/envs", host)
    assert status == 400 and "DNS rebinding" in body["error"] and "--allowed-host" in body["error"]
    status, _ = http_status(server.port, "DELETE", "/api/v1/envs/kept", host, Origin=f"http://{host}")
    assert status == 400
    assert http_status(server.port, "GET", "/", host)[0] == 400
    assert server.get_json("/api/v1/envs/kept")["env"]["name"] == "kept"


@pytest.mark.parametrize("path", ["/ingest", "/ws", "/vis_socket"])
def test_a_rebinding_host_is_refused_on_websockets(server: Any, path: str):
    assert ws_handshake_status(server.port, path, f"{REBIND}:{server.port}") == 403
    assert ws_handshake_status(server.port, path, f"127.0.0.1:{server.port}") == 101


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "127.1.2.3", "app.localhost", "LOCALHOST."])
def test_loopback_names_are_answered_with_any_port(server: Any, host: str):
    for port in (server.port, 80):
        assert http_status(server.port, "GET", "/api/v1/envs", f"{host}:{port}")[0] == 200
    assert http_status(server.port, "GET", "/api/v1/envs", host)[0] == 200
    assert ws_handshake_status(server.port, "/ingest", f"{host}:{server.port}") == 101


def test_an_allowed_host_is_answered_and_others_still_refused(proxied: Any):
    assert http_status(proxied.port, "GET", "/api/v1/envs", "dash.example.org")[0] == 200
    assert http_status(proxied.port, "GET", "/api/v1/envs", "Dash.Example.org:443")[0] == 200
    assert ws_handshake_status(proxied.port, "/ws", "dash.example.org") == 101
    assert http_status(proxied.port, "GET", "/api/v1/envs", "other.example.org")[0] == 400
    assert ws_handshake_status(proxied.port, "/ws", "other.example.org") == 403


def test_with_a_token_any_host_may_ask(make_server: Any):
    srv = make_server("token", token="s3cret")
    status, _ = http_status(srv.port, "GET", "/api/v1/envs", "dash.example.org", Authorization="Bearer s3cret")
    assert status == 200
    assert http_status(srv.port, "GET", "/api/v1/envs", "dash.example.org")[0] == 401
