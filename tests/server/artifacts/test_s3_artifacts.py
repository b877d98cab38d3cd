"""Artifacts in an S3 bucket: a real dash-server app with --artifacts-url s3://..., the real SDK, and moto's S3
server on loopback as the endpoint (log and use, resumed uploads, Range downloads, bad input)."""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from paneboard.server.artifacts import s3_blobs
from paneboard.server.artifacts.locate import ArtifactsUrlError, parse_artifacts_url


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


def put(server: Any, sha: str, offset: int, body: bytes, last: bool = False) -> tuple[int, dict]:
    url = f"{server.url}/api/v1/artifact-blobs/{sha}/upload?offset={offset}{'&last=1' if last else ''}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method="PUT")) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(server: Any, sha: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, Any]:
    req = urllib.request.Request(f"{server.url}/api/v1/artifact-blobs/{sha}", headers=headers or {})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def test_logged_artifacts_live_in_the_bucket_and_are_used_from_it(s3, make_server, tmp_path):
    srv = make_server(artifacts_url=f"s3://{s3.bucket}/team/a")
    train = paneboard.Client(port=srv.port, env="train", spool_dir=False)
    big, small, empty = tmp_path / "model.pt", tmp_path / "opt.pt", tmp_path / "empty.txt"
    big.write_bytes(bytes(range(256)) * 100_000)  # 25.6 MB: parts of a multipart upload
    small.write_bytes(b"optimizer state")
    empty.write_bytes(b"")
    assert train.log_artifact(big, name="model").wait(60) == "model:v1"
    assert train.log_artifact(small, name="opt").wait(60) == "opt:v1"
    assert train.log_artifact(empty, name="empty").wait(60) == "empty:v1"
    shas = sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in (big, small, empty))
    assert s3.keys("team/a/") == [f"team/a/objects/{sha}" for sha in shas]  # nothing left of the uploads
    assert s3.multipart_uploads() == []
    assert not (srv.db.parent / "artifacts").exists()  # no local copy of the bytes
    evaluate = paneboard.Client(port=srv.port, env="eval", spool_dir=False)
    for name, f in (("model", big), ("opt", small), ("empty", empty)):
        assert Path(evaluate.use_artifact(f"{name}:latest", root=tmp_path / "cache")).read_bytes() == f.read_bytes()
    # The same file again: found stored (and touched for a cleanup's grace), not uploaded twice.
    assert train.log_artifact(big, name="model").wait(60) == "model:v2"
    assert len(s3.keys("team/a/objects/")) == 3
    assert s3.keys("team/a/touched/") == [f"team/a/touched/{hashlib.sha256(big.read_bytes()).hexdigest()}"]
    train.close_connection(5)
    evaluate.close_connection(5)


def test_an_upload_resumes_across_a_restart_from_the_bytes_in_the_bucket(s3, make_server, tmp_path):
    data = bytes(range(251)) * 120_000  # 30 MB
    sha = hashlib.sha256(data).hexdigest()
    first = make_server("first", artifacts_url=f"s3://{s3.bucket}")
    # A first life sent 18 MB (two 8 MiB parts and a tail), then another 3 MB, then died.
    assert put(first, sha, 0, data[:18_000_000]) == (200, {"stored": False, "offset": 18_000_000})
    assert put(first, sha, 18_000_000, data[18_000_000:21_000_000]) == (200, {"stored": False, "offset": 21_000_000})
    assert put(first, sha, 0, b"again") == (409, {"error": f"upload of {sha[:12]} is at byte 21000000, not 0",
                                                  "offset": 21_000_000})
    first.stop()
    # Another server on the bucket (its hash of the first bytes is gone) takes the rest from the SDK.
    second = make_server("second", artifacts_url=f"s3://{s3.bucket}")
    f = tmp_path / "big.bin"
    f.write_bytes(data)
    c = paneboard.Client(port=second.port, env="resumed", spool_dir=False)
    assert c.log_artifact(f, name="big").wait(60) == "big:v1"
    assert s3.keys() == [f"objects/{sha}"] and s3.multipart_uploads() == []
    assert get(second, sha)[1] == data
    c.close_connection(5)


def test_downloads_take_ranges(s3, make_server):
    srv = make_server(artifacts_url=f"s3://{s3.bucket}")
    data = bytes(range(256)) * 80_000  # 20 MB
    sha = hashlib.sha256(data).hexdigest()
    assert put(srv, sha, 0, data, last=True) == (200, {"stored": True, "offset": None})
    status, body, headers = get(srv, sha, {"Range": "bytes=17000000-17000099"})
    assert status == 206 and body == data[17_000_000:17_000_100]
    assert headers["Content-Range"] == f"bytes 17000000-17000099/{len(data)}"
    status, body, _ = get(srv, sha, {"Range": f"bytes={len(data) - 10}-"})
    assert status == 206 and body == data[-10:]
    status, body, _ = get(srv, sha, {"Range": "bytes=-5"})
    assert status == 206 and body == data[-5:]
    status, body, headers = get(srv, sha, {"Range": f"bytes={len(data)}-"})
    assert status == 416 and headers["Content-Range"] == f"bytes */{len(data)}"
    assert get(srv, sha)[:2] == (200, data)


def test_bytes_that_do_not_hash_to_their_name_are_refused_and_nothing_is_kept(s3, make_server):
    srv = make_server(artifacts_url=f"s3://{s3.bucket}")
    wrong = hashlib.sha256(b"something else").hexdigest()
    status, answer = put(srv, wrong, 0, b"x" * 20_000_000, last=True)
    assert status == 422 and "hashes to" in answer["error"]
    small_status, _ = put(srv, wrong, 0, b"tiny", last=True)
    assert small_status == 422
    assert s3.keys() == [] and s3.multipart_uploads() == []
    assert get(srv, wrong)[0] == 404


def test_artifact_urls_are_checked(s3, make_server, tmp_path):
    assert parse_artifacts_url("s3://bucket/a/b/") == ("s3", "bucket", "a/b")
    assert parse_artifacts_url(f"file://{tmp_path}") == ("file", str(tmp_path), "")
    for bad in ("s3:///path", "gs://bucket", "ftp://host/x"):
        with pytest.raises(ArtifactsUrlError):
            parse_artifacts_url(bad)
    with pytest.raises(s3_blobs.BlobStoreUnavailable, match="no-such-bucket"):  # fails at start, not mid-upload
        make_server(artifacts_url="s3://no-such-bucket")


def test_a_bucket_that_stops_answering_gets_a_clear_error_not_a_crash(tmp_path, monkeypatch, make_server):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        srv = make_server(artifacts_url=f"s3://{endpoint.bucket}")
        data = b"weights" * 1000
        sha = hashlib.sha256(data).hexdigest()
        assert put(srv, sha, 0, data, last=True)[0] == 200
    # The S3 server is gone: downloads and uploads are refused with the reason, the server stays up.
    status, body, _ = get(srv, sha)
    assert status == 503 and "artifact store is unavailable" in json.loads(body)["error"]
    status, answer = put(srv, hashlib.sha256(b"new").hexdigest(), 0, b"new", last=True)
    assert status == 507 and "could not store" in answer["error"]
    assert srv.get_json("/api/v1/envs") is not None
