"""kill -9 of dash-server (--artifacts-url s3://..., moto's S3 server on loopback) in the middle of an upload: after
a restart the job's upload completes from the parts already in the bucket, and nothing is stored twice."""

from __future__ import annotations

import hashlib
import http.client
import signal
from pathlib import Path

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from helpers.waiting import wait_for


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


def parts_in_bucket(s3, key: str) -> int:
    client = s3.client()
    uploads = client.list_multipart_uploads(Bucket=s3.bucket).get("Uploads", [])
    return sum(len(client.list_parts(Bucket=s3.bucket, Key=u["Key"], UploadId=u["UploadId"]).get("Parts", []))
               for u in uploads if u["Key"] == key)


def test_an_upload_cut_by_kill_9_completes_after_the_restart(s3, make_server_process, tmp_path):
    data = bytes(range(253)) * 160_000  # 40 MB
    sha = hashlib.sha256(data).hexdigest()
    args = ["--artifacts-url", f"s3://{s3.bucket}/team"]
    first = make_server_process("first", extra_args=args).start()
    conn = http.client.HTTPConnection("127.0.0.1", first.port, timeout=30)
    conn.putrequest("PUT", f"/api/v1/artifact-blobs/{sha}/upload?offset=0&last=1")
    conn.putheader("Content-Length", str(len(data)))
    conn.endheaders()
    conn.send(data[:30_000_000])  # the job is mid-request when the server dies
    assert wait_for(lambda: parts_in_bucket(s3, f"team/objects/{sha}") >= 2, timeout=30)
    first.stop(sig=signal.SIGKILL)
    conn.close()

    second = make_server_process("second", db=first.db, extra_args=args).start()
    f = tmp_path / "ckpt.pt"
    f.write_bytes(data)
    c = paneboard.Client(port=second.port, env="resumed", spool_dir=False)
    assert c.log_artifact(f, name="ckpt").wait(60) == "ckpt:v1"
    c.close_connection(5)
    assert s3.keys("team/") == [f"team/objects/{sha}"] and s3.multipart_uploads() == []
    got = s3.client().get_object(Bucket=s3.bucket, Key=f"team/objects/{sha}")["Body"].read()
    assert got == data
