"""Artifact files over HTTP: downloads honour Range (206, 416 past the end, If-Range by the sha256 ETag), and an
artifact whose file path holds a control character (NUL, ESC, C1) is refused with its reason, nothing stored."""

from __future__ import annotations

import hashlib
import json

import pytest

import paneboard
from helpers.http import request_raw

DATA = bytes(range(256)) * 400  # 102,400 bytes, every offset's byte known


@pytest.fixture
def stored(make_server, tmp_path):
    """(server, the sha256 of DATA, logged as artifact `weights`)."""
    srv = make_server()
    (tmp_path / "w.bin").write_bytes(DATA)
    c = paneboard.Client(port=srv.port, env="train", spool_dir=False)
    assert c.log_artifact(tmp_path / "w.bin", name="weights").wait(30) == "weights:v1"
    c.close_connection(5)
    return srv, hashlib.sha256(DATA).hexdigest()


def get(srv, path, headers=None):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(srv.url + path, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_artifact_downloads_honour_range(stored):
    srv, sha = stored
    path = f"/api/v1/artifact-blobs/{sha}?name=w.bin"
    status, headers, body = get(srv, path)
    assert status == 200 and body == DATA and headers["Accept-Ranges"] == "bytes"
    assert headers["ETag"] == f'"{sha}"'
    n = len(DATA)
    for ask, start, end in (("bytes=100-199", 100, 199), ("bytes=-10", n - 10, n - 1), ("bytes=102000-", 102000, n - 1),
                            ("bytes=5-999999", 5, n - 1)):
        status, headers, body = get(srv, path, {"Range": ask})
        assert status == 206, ask
        assert headers["Content-Range"] == f"bytes {start}-{end}/{n}", ask
        assert body == DATA[start:end + 1] and int(headers["Content-Length"]) == end - start + 1, ask
    # A download resumed against the same file (If-Range: its ETag) gets the rest; a changed one the whole file.
    status, _, body = get(srv, path, {"Range": "bytes=50000-", "If-Range": f'"{sha}"'})
    assert status == 206 and body == DATA[50000:]
    status, _, body = get(srv, path, {"Range": "bytes=50000-", "If-Range": '"another"'})
    assert status == 200 and body == DATA
    status, headers, body = get(srv, path, {"Range": f"bytes={n}-"})
    assert status == 416 and headers["Content-Range"] == f"bytes */{n}"
    assert "range not satisfiable" in json.loads(body)["error"]


def artifact_event(path: str, sha: str) -> dict:
    return {"op": "artifact", "env": "train", "name": "hostile", "uid": "hostile-uid-1", "type": "model",
            "files": [{"path": path, "sha256": sha, "size": len(DATA)}]}


@pytest.mark.parametrize("path", ["a\x00b.bin", "ckpt/\x1b]52;c;aGk=\x07.bin", "x\r\ny.bin", "del\x7f.bin",
                                  "c1\x85.bin", "csi\x9b2J.bin"])
def test_control_characters_in_artifact_paths_are_refused(stored, path):
    srv, sha = stored
    status, answer = request_raw(srv.url + "/api/v1/events", "POST",
                                 json.dumps({"events": [artifact_event(path, sha)]}).encode(),
                                 {"Content-Type": "application/json"})
    answer = json.loads(answer)
    assert status == 200 and answer["ok"] is False
    (error,) = answer["errors"]
    assert "control character" in error["error"], error
    assert srv.get_json("/api/v1/artifacts/hostile/versions")["versions"] == []


def test_a_clean_path_beside_them_is_stored(stored):
    srv, sha = stored
    status, answer = request_raw(srv.url + "/api/v1/events", "POST",
                                 json.dumps({"events": [artifact_event("ckpt/é ü.bin", sha)]}).encode(),
                                 {"Content-Type": "application/json"})
    assert status == 200 and json.loads(answer)["ok"] is True, answer
    (version,) = srv.get_json("/api/v1/artifacts/hostile/versions")["versions"]
    assert version["files"][0]["path"] == "ckpt/é ü.bin"
