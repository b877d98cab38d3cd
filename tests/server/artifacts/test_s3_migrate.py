"""`dash-server artifacts migrate --to s3://...`: a local artifacts folder moved into a bucket (moto's S3 server on
loopback), resumable after a break, each blob's sha256 checked; the servers then serve every version from it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from paneboard.server.artifacts.blobs import LocalBlobStore
from paneboard.server.artifacts.s3_blobs import S3BlobStore
from paneboard.server.cli.main import main


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


def test_a_local_store_moves_into_a_bucket_resuming_a_broken_run(s3, make_server, tmp_path, capsys):
    local = make_server("local")
    c = paneboard.Client(port=local.port, env="train", spool_dir=False)
    files = {"model": bytes(range(256)) * 90_000, "opt": b"optimizer", "notes": b"x" * 3_000_000}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert c.log_artifact(tmp_path / name, name=name).wait(60) == f"{name}:v1"
    c.close_connection(5)
    local.stop()
    shas = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    # A first migrate broke off 17 MB into the model (two parts and a tail in the bucket).
    bucket = S3BlobStore(s3.bucket, "pb")
    assert bucket.append(shas["model"], 0, files["model"][:17_000_000]) == 17_000_000

    assert main(["artifacts", "migrate", "--db", str(local.db), "--to", f"s3://{s3.bucket}/pb"]) == 0
    out = capsys.readouterr().out
    assert "copied 3 blob(s)" in out and "0 already there" in out
    assert s3.keys("pb/") == sorted(f"pb/objects/{sha}" for sha in shas.values())
    assert s3.multipart_uploads() == []
    assert main(["artifacts", "migrate", "--db", str(local.db), "--to", f"s3://{s3.bucket}/pb"]) == 0
    assert "copied 0 blob(s) (0.0 MB), 3 already there" in capsys.readouterr().out

    # A server on the same database, now on the bucket, serves every version.
    moved = make_server("local", artifacts_url=f"s3://{s3.bucket}/pb")
    user = paneboard.Client(port=moved.port, env="eval", spool_dir=False)
    for name, data in files.items():
        assert Path(user.use_artifact(f"{name}:v1", root=tmp_path / "cache")).read_bytes() == data
    user.close_connection(5)


def test_a_damaged_local_blob_is_reported_and_left_out(s3, tmp_path, capsys):
    folder = tmp_path / "artifacts"
    store = LocalBlobStore(folder)
    good, bad = b"good bytes", b"bytes that rot"
    for data in (good, bad):
        sha = hashlib.sha256(data).hexdigest()
        store.append(sha, 0, data)
        store.finish(sha)
    bad_sha = hashlib.sha256(bad).hexdigest()
    (folder / "objects" / bad_sha[:2] / bad_sha[2:]).write_bytes(b"bytes that ROT")  # bit rot on disk
    code = main(["artifacts", "migrate", "--db", str(tmp_path / "pb.db"), "--artifacts-dir", str(folder),
                 "--to", f"s3://{s3.bucket}"])
    out = capsys.readouterr().out
    assert code == 1 and "1 FAILED their sha256 check" in out and bad_sha in out
    assert s3.keys() == [f"objects/{hashlib.sha256(good).hexdigest()}"]


def test_migrate_to_a_bucket_that_does_not_answer_says_so(s3, tmp_path, capsys):
    LocalBlobStore(tmp_path / "artifacts")
    code = main(["artifacts", "migrate", "--db", str(tmp_path / "pb.db"), "--artifacts-dir",
                 str(tmp_path / "artifacts"), "--to", "s3://no-such-bucket"])
    assert code == 2 and "no-such-bucket" in capsys.readouterr().err
