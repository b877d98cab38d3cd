"""`dash-server export-envs` / `import-envs` when the artifact bytes live in a bucket (moto's S3 server on loopback):
the archive carries the bytes read from the bucket, and the import writes them into the store it is given."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from paneboard.server.cli.main import main


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


def test_env_archives_carry_artifact_bytes_from_one_bucket_prefix_to_another(s3, make_server, server_types, tmp_path,
                                                                           capsys):
    src = make_server(artifacts_url=f"s3://{s3.bucket}/src")
    files = {"model.pt": bytes(range(256)) * 50_000, "vocab.txt": b"the words it knows\n"}  # 12.8 MB: parts
    job = paneboard.Client(port=src.port, env="train", spool_dir=False)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert job.log_artifact(tmp_path / name, name=name.split(".")[0]).wait(60) is not None
    job.close_connection(10)
    shas = sorted(hashlib.sha256(data).hexdigest() for data in files.values())

    archive = tmp_path / "train.tar"
    assert main(["export-envs", "train", "-o", str(archive), "--db", str(src.db),
                 "--artifacts-url", f"s3://{s3.bucket}/src"]) == 0
    with tarfile.open(archive) as tar:
        packed = {m.name.split("/")[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
                  for m in tar.getmembers() if m.name.startswith("artifact-blobs/")}
    assert packed == {hashlib.sha256(data).hexdigest(): data for data in files.values()}

    dst_db = tmp_path / "other" / "dst.db"
    dst_db.parent.mkdir()
    assert main(["import-envs", str(archive), "--db", str(dst_db), "--artifacts-url", f"s3://{s3.bucket}/dst"]) == 0
    assert "imported 1 env" in capsys.readouterr().out
    assert s3.keys("dst/") == [f"dst/objects/{sha}" for sha in shas] and s3.multipart_uploads() == []
    assert not (dst_db.parent / "artifacts").exists()  # into the bucket, not beside the database
    dst = server_types.InProcessServer(db=dst_db, options={"artifacts_url": f"s3://{s3.bucket}/dst"}).start()
    try:
        user = paneboard.Client(port=dst.port, env="eval", spool_dir=False)
        assert Path(user.use_artifact("model:v1", root=tmp_path / "cache")).read_bytes() == files["model.pt"]
        user.close_connection(5)
    finally:
        dst.stop()


def test_an_unreachable_bucket_is_a_clear_error(s3, make_server, tmp_path, capsys):
    src = make_server(artifacts_url=f"s3://{s3.bucket}/src")
    out = tmp_path / "x.tar"
    assert main(["export-envs", "train", "-o", str(out), "--db", str(src.db),
                 "--artifacts-url", "s3://no-such-bucket-here/src"]) == 2
    assert "no-such-bucket-here" in capsys.readouterr().err
    assert main(["import-envs", str(out), "--db", str(tmp_path / "n.db"), "--artifacts-url", "ftp://x"]) == 2
    assert "file://PATH or s3://BUCKET" in capsys.readouterr().err
