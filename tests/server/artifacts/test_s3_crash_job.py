"""kill -9 of dash-server (--artifacts-url s3://..., moto's S3 server on loopback) while a training job's SDK is
uploading a checkpoint through it: the same job's upload completes once the server is back on its port, the bucket
then holds the blob once, and no multipart upload is left behind; what a crash inside finish() leaves, a cleanup
deletes."""

from __future__ import annotations

import hashlib
import signal
import time
from pathlib import Path

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from helpers.waiting import wait_for
from paneboard.server.artifacts.s3_blobs import S3BlobStore

MB = 1 << 20


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


def parts_stored(s3, key: str) -> int:
    client = s3.client()
    uploads = client.list_multipart_uploads(Bucket=s3.bucket).get("Uploads", [])
    return sum(len(client.list_parts(Bucket=s3.bucket, Key=u["Key"], UploadId=u["UploadId"]).get("Parts", []))
               for u in uploads if u["Key"] == key)


def test_the_jobs_own_upload_completes_after_kill_9_and_a_restart(s3, make_server_process, tmp_path):
    block = bytes(range(256)) * 4096  # 1 MB; each MB below differs (its number in front)
    data = b"".join(i.to_bytes(4, "little") + block[4:] for i in range(128))
    sha = hashlib.sha256(data).hexdigest()
    key = f"team/objects/{sha}"
    ckpt = tmp_path / "ckpt.pt"
    ckpt.write_bytes(data)
    srv = make_server_process("crash", extra_args=["--artifacts-url", f"s3://{s3.bucket}/team"]).start()
    job = paneboard.Client(port=srv.port, env="train", spool_dir=tmp_path / "spool")
    ref = job.log_artifact(ckpt, name="ckpt")
    assert wait_for(lambda: parts_stored(s3, key) >= 2, timeout=60)
    srv.stop(sig=signal.SIGKILL)
    # The kill landed mid-upload: parts in the bucket, no object yet.
    assert s3.multipart_uploads() == [key] and key not in s3.keys("team/")

    srv.start()  # the same port and database: the job's uploader finds it again
    assert ref.wait(120) == "ckpt:v1"
    job.close_connection(10)
    assert s3.keys("team/") == [key] and s3.multipart_uploads() == []
    assert hashlib.sha256(s3.client().get_object(Bucket=s3.bucket, Key=key)["Body"].read()).hexdigest() == sha
    user = paneboard.Client(port=srv.port, env="eval", spool_dir=False)
    assert Path(user.use_artifact("ckpt:v1", root=tmp_path / "cache")).read_bytes() == data
    user.close_connection(5)


def test_a_tail_left_by_a_crash_after_completion_goes_in_a_cleanup(s3):
    store = S3BlobStore(s3.bucket, "team")
    data = bytes(range(9)) * 1_000_000  # 9 MB: one part and a tail
    sha = hashlib.sha256(data).hexdigest()
    tail_key = f"team/uploads/{sha}.tail"
    assert store.append(sha, 0, data) == len(data)
    tail = s3.client().head_object(Bucket=s3.bucket, Key=tail_key)
    left = s3.client().get_object(Bucket=s3.bucket, Key=tail_key)["Body"].read()
    store.finish(sha)
    # kill -9 between completing the upload and deleting its tail leaves the tail as it was.
    s3.client().put_object(Bucket=s3.bucket, Key=tail_key, Body=left, Metadata=tail["Metadata"])
    assert store.has(sha) and store.partial_size(sha) == 0  # the blob is stored all the same
    assert [(u.sha, u.size) for u in store.uploads()] == [(sha, len(left))]
    assert not store.drop_upload(sha, time.time() - 3600)  # written within the grace: kept
    assert store.drop_upload(sha, time.time() + 1)
    assert s3.keys("team/") == [f"team/objects/{sha}"] and s3.multipart_uploads() == []
    assert store.open(sha).read() == data
