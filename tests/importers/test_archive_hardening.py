"""Imported archives are untrusted: blob types come from the bytes (never the archive's text/html or script), and
bombs (huge declared members, gzip bombs, too many members) are refused in bounded memory with the limit named."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import urllib.error
import urllib.request

import numpy as np
import pytest

from helpers.archives import make_tar

HTML = b"<html><script>fetch('/api/v1/tokens',{method:'POST',body:'{}'})</script></html>"
JS = b"fetch('/api/v1/envs/victim',{method:'DELETE'})"


def request(srv, method, path, data=None, ctype="application/json"):
    req = urllib.request.Request(srv.url + path, data=data, method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def members_of(tar: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers()}


@pytest.fixture
def image_archive(make_server):
    """(source server, the archive of env `pics`: one image pane, its PNG blob)."""
    src = make_server("source")
    c = src.client("pics")
    c.image(np.random.default_rng(1).random((3, 4, 4)), win="a")
    c.image(np.random.default_rng(2).random((3, 4, 4)), win="b")
    assert c.flush(timeout=20)
    c.close_connection(timeout=5)
    status, _, tar = request(src, "GET", "/api/v1/archive?envs=pics")
    assert status == 200
    return src, tar


def _relabel(tar: bytes, payloads: list[tuple[bytes, str]]) -> tuple[bytes, list[str]]:
    """The archive with its blobs swapped for `payloads` (bytes, the type the archive claims)."""
    members = members_of(tar)
    manifest = json.loads(members["manifest.json"])
    panes = members["envs/0000/panes.jsonl"]
    shas = []
    for entry, (data, claimed) in zip(manifest["blobs"], payloads, strict=True):
        old, new = entry["sha256"], hashlib.sha256(data).hexdigest()
        del members[f"blobs/{old}"]
        members[f"blobs/{new}"] = data
        panes = panes.replace(old.encode(), new.encode())
        entry.update(sha256=new, mime=claimed)
        shas.append(new)
    members["manifest.json"] = json.dumps(manifest).encode()
    members["envs/0000/panes.jsonl"] = panes
    return make_tar(members), shas


def _as_text_panes(tar: bytes) -> bytes:
    """The archive with each image pane turned into a text pane whose html is its blob's sha256 (a reference)."""
    members = members_of(tar)
    lines = [json.loads(line) for line in members["envs/0000/panes.jsonl"].splitlines() if line.strip()]
    for p in lines:
        p.update(kind="text", content={"html": p["content"]["blob"]})
    members["envs/0000/panes.jsonl"] = b"\n".join(json.dumps(p).encode() for p in lines) + b"\n"
    return make_tar(members)


def test_imported_blobs_are_served_by_their_bytes_never_as_html_or_script(image_archive, make_server):
    src, tar = image_archive
    # A real picture is shown inline, typed by its bytes (asked before the target starts: the fixture's
    # thread check counts the source's pool threads started after it as the target's).
    real = json.loads(members_of(tar)["manifest.json"])["blobs"][0]["sha256"]
    status, headers, _ = request(src, "GET", f"/api/v1/blobs/{real}")
    assert status == 200 and headers.get_content_type() == "image/png" and headers["Content-Disposition"] is None
    assert headers["X-Content-Type-Options"] == "nosniff"
    target = make_server("target")
    hostile, shas = _relabel(tar, [(HTML, "text/html"), (JS, "text/javascript")])
    # Image panes must hold pictures (import checks them as live ones); a text pane can still name any blob.
    hostile = _as_text_panes(hostile)
    status, _, body = request(target, "POST", "/api/v1/archive", hostile, "application/x-tar")
    assert status == 200, body
    for sha in shas:
        status, headers, data = request(target, "GET", f"/api/v1/blobs/{sha}")
        assert status == 200 and data in (HTML, JS)
        assert headers.get_content_type() == "application/octet-stream", headers["Content-Type"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Content-Disposition"].startswith("attachment")
        assert "sandbox" in headers["Content-Security-Policy"]


def declared_member_tar(size: int, name: str = "blobs/" + "0" * 64) -> bytes:
    """A few KB of tar whose one member declares `size` bytes (a bomb that relies on the reader trusting it)."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT) + bytes(8192)


def gz_tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_archive_bombs_get_413_naming_the_limit(image_archive, make_server):
    _, good = image_archive
    srv = make_server("small", archive_member_bytes=1 << 20, archive_total_bytes=4 << 20, archive_members=50)
    zeros = bytes(900 << 10)
    bombs = [
        (declared_member_tar(1 << 30), "per-member limit of 1,048,576 bytes"),
        (gz_tar({f"blobs/{i:064x}": zeros for i in range(8)}), "total size limit of 4,194,304 bytes"),
        (gz_tar({f"m{i}": b"x" for i in range(60)}), "member-count limit of 50"),
    ]
    for body, reason in bombs:
        status, _, answer = request(srv, "POST", "/api/v1/archive", body, "application/x-tar")
        assert status == 413 and reason in json.loads(answer)["error"], (status, answer)
    assert srv.get_json("/api/v1/envs")["envs"] == []
    status, _, answer = request(srv, "POST", "/api/v1/archive", good, "application/x-tar")  # within the limits
    assert status == 200, answer
    # The default limits refuse a member of a gigabyte declared in a few KB.
    status, _, answer = request(make_server("default"), "POST", "/api/v1/archive", declared_member_tar(8 << 30),
                                "application/x-tar")
    assert status == 413 and "per-member limit" in json.loads(answer)["error"]


def test_cli_import_refuses_a_bomb_naming_the_limit(tmp_path, capsys):
    from paneboard.server.cli.main import main as dash_server

    bomb = tmp_path / "bomb.tar"
    bomb.write_bytes(declared_member_tar(8 << 30))
    assert dash_server(["import-envs", str(bomb), "--db", str(tmp_path / "x.db")]) == 2
    assert "per-member limit of 536,870,912 bytes" in capsys.readouterr().err
