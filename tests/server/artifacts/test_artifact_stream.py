"""The streamed blob upload route on the real server: a broken-off request keeps what arrived, one writer per
upload, the same access checks as every other write, and large requests in little server memory."""

from __future__ import annotations

import hashlib
import json
import signal
import socket
import urllib.error
import urllib.request

import paneboard
from helpers.waiting import wait_for
from paneboard.server.web.blob_stream import BLOCK


def upload_url(srv, sha: str, offset: int, last: bool = False) -> str:
    return f"{srv.url}/api/v1/artifact-blobs/{sha}/upload?offset={offset}" + ("&last=1" if last else "")


def put(url: str, data: bytes, headers: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=data, method="PUT", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def state(srv, sha: str) -> dict:
    return srv.get_json(f"/api/v1/artifact-blobs/{sha}/upload")


def start_put(srv, sha: str, offset: int, total: int, first: bytes) -> socket.socket:
    """A PUT announcing `total` bytes of body of which only `first` is sent (the rest: the caller's)."""
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    head = (f"PUT /api/v1/artifact-blobs/{sha}/upload?offset={offset}&last=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/octet-stream\r\nContent-Length: {total}\r\n\r\n")
    sock.sendall(head.encode() + first)
    return sock


def test_a_request_that_breaks_off_keeps_the_bytes_that_arrived(server):
    data = hashlib.sha256(b"seed").digest() * 250_000  # 8 MB: the server writes in blocks of BLOCK (4 MB)
    sha = hashlib.sha256(data).hexdigest()
    sock = start_put(server, sha, 0, len(data), data[:BLOCK + 500_000])
    assert wait_for(lambda: state(server, sha)["offset"] >= BLOCK), state(server, sha)
    sock.close()  # the job died mid-request

    def resumed() -> dict | None:  # as the SDK does: ask where the upload stands, send the rest from there
        offset = state(server, sha)["offset"]
        assert offset >= BLOCK  # what arrived before the break stays
        status, answer = put(upload_url(server, sha, offset, last=True), data[offset:])
        return answer if status == 200 else None  # 409 until the server has seen the break

    assert wait_for(resumed) == {"stored": True, "offset": None}
    with urllib.request.urlopen(f"{server.url}/api/v1/artifact-blobs/{sha}") as r:
        assert r.read() == data


def test_a_second_writer_of_the_same_upload_is_refused_while_the_first_streams(server):
    data = bytes(range(256)) * 24_000  # 6 MB
    sha = hashlib.sha256(data).hexdigest()
    sent = BLOCK + 100_000
    sock = start_put(server, sha, 0, len(data), data[:sent])
    try:
        # The condition itself: the server has a whole block of this request (it records its offset as it goes).
        offset = wait_for(lambda: (state(server, sha)["offset"] or 0) >= BLOCK and state(server, sha)["offset"])
        assert offset >= BLOCK
        # A short body: the refusal comes before the server reads any of it, and a body longer than the socket
        # buffers would still be on its way when the server closes (a broken pipe here, not the answer).
        status, answer = put(upload_url(server, sha, offset), data[offset:offset + 1000])
        assert status == 409 and "another request" in answer["error"]
        sock.sendall(data[sent:])
        reply = sock.recv(65536).decode()
        assert reply.startswith("HTTP/1.1 200") and '"stored":true' in reply.replace(" ", ""), reply
    finally:
        sock.close()
    assert state(server, sha) == {"stored": True, "offset": None}


def test_bytes_that_do_not_hash_to_the_name_are_dropped(server):
    sha = hashlib.sha256(b"the real bytes").hexdigest()
    status, answer = put(upload_url(server, sha, 0, last=True), b"other bytes")
    assert status == 422 and answer["offset"] == 0
    assert state(server, sha) == {"stored": False, "offset": 0}


def test_a_bad_offset_is_refused_with_the_offset_to_resume_from(server):
    sha = hashlib.sha256(b"abc").hexdigest()
    assert put(upload_url(server, sha, 0), b"a") == (200, {"stored": False, "offset": 1})
    status, answer = put(upload_url(server, sha, 0, last=True), b"abc")
    assert status == 409 and answer["offset"] == 1
    status, answer = put(f"{server.url}/api/v1/artifact-blobs/{sha}/upload?offset=x", b"bc")
    assert status == 400
    assert put(upload_url(server, sha, 1, last=True), b"bc") == (200, {"stored": True, "offset": None})
    assert put(upload_url(server, sha, 0, last=True), b"abc") == (200, {"stored": True, "offset": None})  # again


def test_the_streamed_route_refuses_cross_site_and_share_link_writes(make_server):
    open_srv = make_server("open")
    sha = hashlib.sha256(b"x").hexdigest()
    status, answer = put(upload_url(open_srv, sha, 0, last=True), b"x", {"Origin": "http://evil.example"})
    assert status == 403 and "cross-site" in answer["error"]
    guarded = make_server("guarded", token="admin-token")
    status, answer = put(upload_url(guarded, sha, 0, last=True), b"x", {"Authorization": "Bearer pbs_not-a-grant"})
    assert status == 403 and "read-only" in answer["error"]
    assert put(upload_url(guarded, sha, 0, last=True), b"x", {"Authorization": "Bearer admin-token"}) == \
        (200, {"stored": True, "offset": None})


def test_a_request_larger_than_the_body_limit_streams_through(make_server):
    srv = make_server(max_request_bytes=1 << 20)  # buffered requests stop at 1 MB; this one never is buffered
    data = bytes(range(251)) * 20_000  # 5 MB
    sha = hashlib.sha256(data).hexdigest()
    assert put(upload_url(srv, sha, 0, last=True), data) == (200, {"stored": True, "offset": None})
    assert (srv.db.parent / "artifacts" / "objects" / sha[:2] / sha[2:]).read_bytes() == data


def test_uploads_go_through_a_base_url(make_server, tmp_path):
    srv = make_server(base_url="/pb")
    f = tmp_path / "m.pt"
    f.write_bytes(bytes(range(256)) * 5000)
    c = paneboard.Client(server="http://127.0.0.1", port=srv.port, base_url="/pb", env="prefixed", spool_dir=False)
    assert c.log_artifact(f, name="m").wait(30) == "m:v1"
    assert open(c.use_artifact("m:v1", root=tmp_path / "cache"), "rb").read() == f.read_bytes()
    c.close_connection(5)


def test_a_server_killed_mid_upload_keeps_what_it_wrote(server_process):
    data = hashlib.sha256(b"kill").digest() * 250_000  # 8 MB
    sha = hashlib.sha256(data).hexdigest()
    sock = start_put(server_process, sha, 0, len(data), data[:BLOCK + 200_000])
    assert wait_for(lambda: state(server_process, sha)["offset"] >= BLOCK)
    server_process.stop(signal.SIGKILL)
    sock.close()
    server_process.start()
    offset = state(server_process, sha)["offset"]
    assert offset >= BLOCK  # the bytes written before the kill are still there: the upload goes on after them
    assert put(upload_url(server_process, sha, offset, last=True), data[offset:]) == (200, {"stored": True, "offset": None})
    with urllib.request.urlopen(f"{server_process.url}/api/v1/artifact-blobs/{sha}") as r:
        assert r.read() == data
