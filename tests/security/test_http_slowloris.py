"""Slow and hoarding clients: request headers have a deadline (408, then closed), and one address cannot hold
more than its cap of open connections, while everyone else is still served."""

from __future__ import annotations

import contextlib
import socket
import time


def closed_within(sock: socket.socket, seconds: float) -> bytes:
    """Everything the server sent until it closed the socket (socket.timeout if it kept it open)."""
    sock.settimeout(seconds)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def test_half_sent_headers_get_408_and_are_closed(make_server):
    srv = make_server(header_deadline_s=1.0)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as slow, \
            socket.create_connection(("127.0.0.1", srv.port), timeout=5) as silent:
        slow.sendall(b"GET /api/v1/envs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
        t0 = time.monotonic()
        answer = closed_within(slow, 15)
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - t0 < 10
        assert closed_within(silent, 15).startswith(b"HTTP/1.1 408")  # connected, never sent a byte
    assert srv.get_json("/api/v1/envs")["envs"] == []  # a complete request is still served


def test_one_address_cannot_hold_more_than_its_cap(make_server):
    srv = make_server(max_connections_per_address=8, header_deadline_s=60.0)
    hoard = [socket.create_connection(("127.0.0.1", srv.port), timeout=5) for _ in range(8)]
    try:
        for s in hoard:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half-sent: each holds its connection
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as extra:
            assert closed_within(extra, 15) == b""  # the 9th is closed at once, unanswered
    finally:
        for s in hoard:
            s.close()
    deadline = time.monotonic() + 15
    while True:  # the hoard's slots free up as the server sees those sockets close
        try:
            assert srv.get_json("/api/v1/envs")["envs"] == []
            break
        except OSError:
            assert time.monotonic() < deadline, "the server never freed the closed connections' slots"


def test_upgraded_websockets_count_toward_the_cap(make_server):
    from websockets.sync.client import connect

    srv = make_server(max_connections_per_address=4, header_deadline_s=60.0)
    origin = f"http://127.0.0.1:{srv.port}"
    with contextlib.ExitStack() as stack:
        for _ in range(4):
            stack.enter_context(connect(f"ws://127.0.0.1:{srv.port}/ws", open_timeout=5, origin=origin))
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as extra:
            assert closed_within(extra, 15) == b""  # four open websockets fill the cap: the 5th is closed
    deadline = time.monotonic() + 15
    while True:  # closed websockets give their slots back
        try:
            assert srv.get_json("/api/v1/envs")["envs"] == []
            break
        except OSError:
            assert time.monotonic() < deadline, "closed websockets never gave their slots back"
