"""Deleting artifact versions and cleaning up the bytes no version names (`dash-server artifacts delete|gc`),
beside a running server: what is in use, being uploaded or just asked for stays."""

from __future__ import annotations

import hashlib
import os
import socket
import time

import paneboard
from helpers.waiting import wait_for
from paneboard.server.cli.main import main as dash_server
from paneboard.server.web.blob_stream import BLOCK

DAY = 86400


def blob_path(srv, data: bytes):
    sha = hashlib.sha256(data).hexdigest()
    return srv.db.parent / "artifacts" / "objects" / sha[:2] / sha[2:]


def age(path, days: float = 2) -> None:
    old = time.time() - days * DAY
    os.utime(path, (old, old))


def gc(srv, *extra: str) -> int:
    return dash_server(["artifacts", "gc", "--db", str(srv.db), *extra])


def test_deleting_a_version_moves_latest_and_gc_removes_only_the_bytes_no_version_names(server, tmp_path, capsys):
    c = paneboard.Client(port=server.port, env="train", spool_dir=False)
    shared, own = b"shared weights" * 1000, b"only in v2" * 1000
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "w.pt").write_bytes(shared)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "w.pt").write_bytes(shared)
    (tmp_path / "b" / "extra.pt").write_bytes(own)
    assert c.log_artifact(tmp_path / "a", name="m").wait(30) == "m:v1"
    assert c.log_artifact(tmp_path / "b", name="m", aliases=["best"]).wait(30) == "m:v2"
    c.use_artifact("m:v2", root=tmp_path / "cache")
    assert c.flush(30)
    for data in (shared, own):
        age(blob_path(server, data))

    assert dash_server(["artifacts", "delete", "m:v2", "--db", str(server.db)]) == 0
    assert server.get_json("/api/v1/artifact?ref=m:latest")["version"] == 1
    assert [v["ref"] for v in server.get_json("/api/v1/artifacts/m/versions")["versions"]] == ["m:v1"]
    assert server.get_json("/api/v1/envs/train/artifacts")["used"] == []
    assert dash_server(["artifacts", "delete", "m:v2", "--db", str(server.db)]) == 1  # gone already

    assert gc(server, "--dry-run") == 0
    assert "would remove 1 unused blob(s)" in capsys.readouterr().out
    assert blob_path(server, own).is_file()
    assert gc(server) == 0
    assert "removed 1 unused blob(s)" in capsys.readouterr().out
    assert not blob_path(server, own).is_file() and blob_path(server, shared).is_file()
    assert open(c.use_artifact("m:v1", root=tmp_path / "again"), "rb").read() == shared
    c.close_connection(5)


def test_gc_keeps_what_is_being_uploaded_or_was_just_asked_for(server, tmp_path, capsys):
    c = paneboard.Client(port=server.port, env="train", spool_dir=False)
    kept, dropped = tmp_path / "kept.pt", tmp_path / "dropped.pt"
    kept.write_bytes(b"asked for again" * 1000)
    dropped.write_bytes(b"nobody wants me" * 1000)
    for f in (kept, dropped):
        assert c.log_artifact(f, name=f.stem).wait(30)
        assert dash_server(["artifacts", "delete", f"{f.stem}:v1", "--db", str(server.db)]) == 0
        age(blob_path(server, f.read_bytes()))
    abandoned = server.db.parent / "artifacts" / "uploads" / f"{'a' * 64}.part"
    abandoned.write_bytes(b"half a file")
    age(abandoned)
    # A new version of `kept` is on its way: the client finds its bytes stored (the upload's first question).
    assert c.log_artifact(kept, name="again").wait(30) == "again:v1"
    data = hashlib.sha256(b"streaming").digest() * 200_000  # and an upload streams right now, into a partial file
    sha = hashlib.sha256(data).hexdigest()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(f"PUT /api/v1/artifact-blobs/{sha}/upload?offset=0&last=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data[:BLOCK + 1000])
    assert wait_for(lambda: server.get_json(f"/api/v1/artifact-blobs/{sha}/upload")["offset"] >= BLOCK)

    assert dash_server(["artifacts", "delete", "again:v1", "--db", str(server.db)]) == 0  # nothing names it now
    assert gc(server) == 0
    assert "removed 1 unused blob(s)" in capsys.readouterr().out
    assert not blob_path(server, dropped.read_bytes()).is_file()
    assert blob_path(server, kept.read_bytes()).is_file()  # touched by the "already stored" answer
    assert not abandoned.exists()
    sock.sendall(data[BLOCK + 1000:])
    assert b'"stored":true' in sock.recv(65536).replace(b" ", b"")
    sock.close()
    assert blob_path(server, data).read_bytes() == data
    c.close_connection(5)
