"""Two dash-servers on one PostgreSQL database and one bucket (moto's S3 server on loopback): each serves what the
other stored, and `dash-server artifacts gc` keeps the grace rule across them (a blob one server found stored,
for a client about to name it, survives a cleanup run anywhere)."""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import paneboard
from helpers.s3 import apply_env, moto_s3
from helpers.waiting import wait_for
from paneboard.server.artifacts.cleanup import collect
from paneboard.server.artifacts.s3_blobs import S3BlobStore
from paneboard.server.cli.main import main
from paneboard.server.store import open_store


@pytest.fixture
def s3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with moto_s3(tmp_path) as endpoint:
        apply_env(endpoint, monkeypatch)
        yield endpoint


@pytest.fixture
def two_servers(postgres: Any, s3: Any, server_types: Any):
    url = postgres.new_database()
    made = []
    for _ in range(2):
        srv = server_types.InProcessServer(db=url, options={"artifacts_url": f"s3://{s3.bucket}/shared"})
        made.append(srv.start())
    yield url, made
    for srv in reversed(made):
        srv.stop()


def get(server: Any, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"{server.url}{path}") as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_gc_with_two_servers_keeps_the_grace_rule(s3, two_servers, tmp_path, capsys):
    db_url, (a, b) = two_servers
    files = {"kept": bytes(range(256)) * 70_000, "control": b"never asked for again" * 1000,
             "dropped": b"an old checkpoint" * 1000}
    c = paneboard.Client(port=a.port, env="train", spool_dir=False)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert c.log_artifact(tmp_path / name, name=name).wait(60) == f"{name}:v1"
    c.close_connection(5)
    # What A stored, B serves (one database, one bucket).
    user = paneboard.Client(port=b.port, env="eval", spool_dir=False)
    assert Path(user.use_artifact("kept:v1", root=tmp_path / "cache")).read_bytes() == files["kept"]
    user.close_connection(5)
    assert main(["artifacts", "delete", "control:v1", "dropped:v1", "--db", db_url]) == 0
    sha = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    store = S3BlobStore(s3.bucket, "shared")
    written = mtime(store, sha["dropped"])

    def asked_on_b() -> float:
        """A client asks B whether the dropped file is stored (it is about to name it again): B touches it."""
        assert upload_state(b, sha["dropped"]) == {"stored": True, "offset": None}
        return mtime(store, sha["dropped"]) > written and mtime(store, sha["dropped"])

    touched = wait_for(asked_on_b, timeout=10)  # the bucket's clock counts in seconds: until it ticks once
    assert touched > written
    # A cleanup run from the CLI sees the bucket and the database: all of it is recent.
    assert main(["artifacts", "gc", "--grace-hours", "1", "--db", db_url,
                 "--artifacts-url", f"s3://{s3.bucket}/shared"]) == 0
    assert "removed 0 unused blob(s)" in capsys.readouterr().out
    # A cleanup whose grace ends between the write and B's touch: the touched blob stays, the other goes.
    grace = 3600.0
    with closing(open_store(db_url)) as pg:
        report = collect(pg, store, grace_s=grace, now=(written + touched) / 2 + grace)
        assert (report.blobs, report.recent, report.referenced) == (1, 1, 1)
        assert collect(pg, store, grace_s=grace, now=touched + grace + 1).blobs == 1  # later, it goes too
    for srv in (a, b):
        for name in ("control", "dropped"):
            assert get(srv, f"/api/v1/artifact-blobs/{sha[name]}")[0] == 404
        assert get(srv, f"/api/v1/artifact-blobs/{sha['kept']}") == (200, files["kept"])
    assert s3.keys("shared/") == [f"shared/objects/{sha['kept']}"]


def mtime(store: S3BlobStore, sha: str) -> float:
    return next(blob.mtime for blob in store.stored() if blob.sha == sha)


def upload_state(server: Any, sha: str) -> dict:
    with urllib.request.urlopen(f"{server.url}/api/v1/artifact-blobs/{sha}/upload") as r:
        return json.loads(r.read())


def test_gc_drops_abandoned_uploads_but_not_one_in_progress(s3, two_servers):
    db_url, _ = two_servers
    store = S3BlobStore(s3.bucket, "shared")
    data = bytes(range(7)) * 3_000_000  # 21 MB: parts and a tail
    sha = hashlib.sha256(data).hexdigest()
    assert store.append(sha, 0, data[:20_000_000]) == 20_000_000
    with closing(open_store(db_url)) as pg:
        assert collect(pg, store, grace_s=3600).uploads == 0  # written just now: kept
        partial = [u for u in store.uploads() if u.sha == sha]
        assert [(u.size, u.mtime > time.time() - 600) for u in partial] == [(20_000_000, True)]
        upload = store.open_upload(sha, 20_000_000)  # a request is writing: even an old upload stays
        try:
            assert collect(pg, store, grace_s=0, now=time.time() + 7200).uploads == 0
        finally:
            upload.close()
        assert collect(pg, store, grace_s=3600, now=time.time() + 7200).uploads == 1
    assert s3.keys("shared/") == [] and s3.multipart_uploads() == []
