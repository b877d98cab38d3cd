"""`dash-server artifacts gc` while server A of two (one PostgreSQL database, one bucket on moto's S3 server) is in
the middle of an upload: only the grace rule protects it across processes (A's own register of the uploads it is
writing is not seen elsewhere), so the parts in the bucket stay, A completes the upload, and B serves the blob."""

from __future__ import annotations

import hashlib
import http.client
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from helpers.s3 import apply_env, moto_s3
from helpers.waiting import wait_for
from paneboard.server.cli.main import main


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


@pytest.fixture
def two_servers(postgres: Any, s3: Any, server_types: Any):
    url = postgres.new_database()
    made = [server_types.InProcessServer(db=url, options={"artifacts_url": f"s3://{s3.bucket}/shared"}).start()
            for _ in range(2)]
    yield url, made
    for srv in reversed(made):
        srv.stop()


def parts_stored(s3: Any, key: str) -> int:
    client = s3.client()
    uploads = client.list_multipart_uploads(Bucket=s3.bucket).get("Uploads", [])
    return sum(len(client.list_parts(Bucket=s3.bucket, Key=u["Key"], UploadId=u["UploadId"]).get("Parts", []))
               for u in uploads if u["Key"] == key)


def test_gc_elsewhere_keeps_an_upload_server_a_is_writing(s3, two_servers, capsys):
    db_url, (a, b) = two_servers
    data = bytes(range(251)) * 120_000  # 30 MB: parts, then the rest after the cleanup ran
    sha = hashlib.sha256(data).hexdigest()
    key = f"shared/objects/{sha}"
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=60)
    conn.putrequest("PUT", f"/api/v1/artifact-blobs/{sha}/upload?offset=0&last=1")
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders()
    conn.send(data[:20_000_000])
    assert wait_for(lambda: parts_stored(s3, key) >= 2, timeout=30)

    assert main(["artifacts", "gc", "--grace-hours", "1", "--db", db_url,
                 "--artifacts-url", f"s3://{s3.bucket}/shared"]) == 0
    assert "removed 0 unused blob(s) (0.0 MB) and 0 abandoned upload(s)" in capsys.readouterr().out
    assert s3.multipart_uploads() == [key]

    conn.send(data[20_000_000:])
    answer = conn.getresponse()
    assert (answer.status, json.loads(answer.read())) == (200, {"stored": True, "offset": None})
    conn.close()
    assert s3.keys("shared/") == [key] and s3.multipart_uploads() == []
    with urllib.request.urlopen(f"{b.url}/api/v1/artifact-blobs/{sha}") as r:
        assert r.read() == data
