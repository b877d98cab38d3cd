"""Artifacts as W&B users log them: aliases=["latest"] is taken, a refused version raises from ref.wait() with
the server's reason and makes flush() False, and flush() / close_connection() wait for the uploads before them."""

from __future__ import annotations

import urllib.error

import pytest

import paneboard
from paneboard.artifacts import ArtifactError


def client(server, env, **kw):
    return paneboard.Client(port=server.port, env=env, **kw)


def test_latest_in_aliases_is_taken_and_still_moves(server, tmp_path):
    c = client(server, "wandb_idiom")
    first, second = tmp_path / "a.pt", tmp_path / "b.pt"
    first.write_bytes(b"epoch 1" * 1000)
    second.write_bytes(b"epoch 2" * 1000)
    assert c.log_artifact(first, name="ckpt", aliases=["latest", "best"]).wait(30) == "ckpt:v1"
    assert server.get_json("/api/v1/artifact?ref=ckpt:latest")["version"] == 1
    assert c.log_artifact(second, name="ckpt", aliases=["latest"]).wait(30) == "ckpt:v2"
    assert server.get_json("/api/v1/artifact?ref=ckpt:latest")["version"] == 2  # it moves on
    assert server.get_json("/api/v1/artifact?ref=ckpt:best")["version"] == 1
    assert c.flush(30)
    c.close_connection(10)


@pytest.mark.parametrize("spool", [True, False], ids=["spool", "no_spool"])
def test_a_refused_version_raises_with_the_reason_and_flush_says_false(server, tmp_path, spool):
    c = client(server, "refused", **({} if spool else {"spool_dir": False}))
    f = tmp_path / "m.pt"
    f.write_bytes(b"weights" * 1000)
    ref = c.log_artifact(f, name="model", aliases=["v7"])  # an alias that reads as a version: refused
    assert not c.flush(30)
    with pytest.raises(ArtifactError, match="like a version"):
        ref.wait(30)
    assert c.flush(30)  # reported once; later events are fine
    with pytest.raises(urllib.error.HTTPError):
        server.get_json("/api/v1/artifact?ref=model:latest")
    good = c.log_artifact(f, name="model")
    assert c.flush(30) and good.wait(30) == "model:v1"
    c.close_connection(10)


def test_a_failed_upload_makes_flush_false(server, tmp_path):
    c = client(server, "gone")
    ref = c.log_artifact(tmp_path / "never_written.pt", name="model")
    assert not c.flush(30)
    with pytest.raises(ArtifactError, match="is gone"):
        ref.wait(30)
    c.close_connection(10)


@pytest.mark.parametrize("end", ["flush", "close_connection"])
def test_flush_and_close_wait_for_the_artifacts_logged_before_them(server, tmp_path, end):
    c = client(server, f"waits_{end}")
    f = tmp_path / "big.pt"
    f.write_bytes(bytes(range(256)) * (64 << 12))  # 64 MiB: hashing and uploading it take a while
    c.log_artifact(f, name="checkpoint", aliases=["latest"])
    assert getattr(c, end)(120)
    # Nothing waited for it but the call itself: the version is there as soon as it returns.
    found = server.get_json("/api/v1/artifact?ref=checkpoint:latest")
    assert found["version"] == 1 and found["size"] == f.stat().st_size
    if end == "flush":
        c.close_connection(10)
