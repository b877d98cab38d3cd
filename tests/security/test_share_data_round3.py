"""What a share token reads besides its envs' panes: blobs and artifact files only through an env it may read
(logged, used or shown there), no upload probe, no alert rules; artifact versions and comparisons by name."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import paneboard
from helpers.http import request_raw

ADMIN = "admin-token-for-round3"
SHA = re.compile(r"\b[0-9a-f]{64}\b")


def call(srv, path, token=ADMIN, method="GET", body=None):
    """(status, decoded JSON or raw bytes) of one request with a bearer token."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, raw = request_raw(srv.url + path, method, None if body is None else json.dumps(body).encode(), headers)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


@pytest.fixture
def world(make_server, tmp_path):
    return populate(make_server(token=ADMIN), tmp_path)


def populate(srv, tmp_path):
    """Envs `pub` and `secret`, each with an image and an artifact; `pub` also uses secret's `dataset`; a share
    token for `pub` alone (srv.share) and one for every env (srv.share_all)."""
    files = {}
    for env, names in (("secret", ("dataset", "private")), ("pub", ("model",))):
        c = paneboard.Client(port=srv.port, env=env, token=ADMIN, spool_dir=False)
        c.image(np.random.default_rng(len(env)).random((3, 8, 8)), win="img")
        for name in names:
            path = tmp_path / f"{name}.bin"
            path.write_bytes(f"{name} bytes of {env}".encode() * 50)
            assert c.log_artifact(path, name=name).wait(30) == f"{name}:v1"
        if env == "pub":
            c.use_artifact("dataset:v1", root=tmp_path / "cache")
        assert c.flush(30)
        c.close_connection(5)
    for name in ("dataset", "private", "model"):
        (version,) = call(srv, f"/api/v1/artifacts/{name}/versions")[1]["versions"]
        files[name] = version["files"][0]["sha256"]
    srv.images = {env: SHA.search(json.dumps(call(srv, f"/api/v1/envs/{env}/panes")[1])).group(0)
                  for env in ("pub", "secret")}
    srv.files = files
    for attr, envs in (("share", ["pub"]), ("share_all", None)):
        status, made = call(srv, "/api/v1/tokens", method="POST", body={"envs": envs})
        assert status == 201
        setattr(srv, attr, made["token"])
    return srv


def test_a_share_token_reads_images_only_of_its_envs(world):
    assert call(world, f"/api/v1/blobs/{world.images['pub']}", world.share)[0] == 200
    status, answer = call(world, f"/api/v1/blobs/{world.images['secret']}", world.share)
    assert status == 404 and answer == {"error": "blob not found"}  # as for a blob that does not exist
    assert call(world, f"/api/v1/blobs/{'0' * 64}", world.share) == (404, {"error": "blob not found"})
    assert call(world, f"/api/v1/blobs/{world.images['secret']}")[0] == 200  # the admin reads every one
    assert call(world, f"/api/v1/blobs/{world.images['secret']}", world.share_all)[0] == 200


def test_blob_references_are_found_on_postgresql_too(postgres, server_types, tmp_path):
    srv = server_types.InProcessServer(db=postgres.new_database(),
                                       options={"token": ADMIN, "artifacts_dir": str(tmp_path / "artifacts")})
    try:
        world = populate(srv.start(), tmp_path)
        assert call(world, f"/api/v1/blobs/{world.images['pub']}", world.share)[0] == 200
        assert call(world, f"/api/v1/blobs/{world.images['secret']}", world.share)[0] == 404
        for name, expected in (("model", 200), ("dataset", 200), ("private", 404)):
            assert call(world, f"/api/v1/artifact-blobs/{world.files[name]}", world.share)[0] == expected, name
    finally:
        srv.stop()


def test_a_share_token_reads_artifact_files_logged_or_used_by_its_envs(world):
    for name, expected in (("model", 200), ("dataset", 200), ("private", 404)):  # logged, used, neither
        status, body = call(world, f"/api/v1/artifact-blobs/{world.files[name]}", world.share)
        assert status == expected, (name, body)
        if expected == 200:
            assert body.startswith(name.encode())
    assert call(world, f"/api/v1/artifact-blobs/{world.files['private']}", world.share)[1] == {"error": "no such blob"}
    assert call(world, f"/api/v1/artifact-blobs/{world.files['private']}")[0] == 200
    assert call(world, f"/api/v1/artifact-blobs/{world.files['private']}", world.share_all)[0] == 200


def test_the_upload_probe_needs_write_access(world):
    probe = f"/api/v1/artifact-blobs/{world.files['private']}/upload"
    for share in (world.share, world.share_all):  # it would confirm a file exists and keep it from a cleanup
        status, answer = call(world, probe, share)
        assert status == 403 and "read-only share link" in answer["error"]
    assert call(world, probe) == (200, {"stored": True, "offset": None})


def test_alert_rules_are_for_the_admin_only(world):
    status, _ = call(world, "/api/v1/alert-rules", method="POST", body={"query": "loss.last > 5", "name": "hot"})
    assert status == 201
    for share in (world.share, world.share_all):
        status, answer = call(world, "/api/v1/alert-rules", share)
        assert status == 403 and "admin token" in answer["error"] and "loss" not in json.dumps(answer)
    status, answer = call(world, "/api/v1/alert-rules")
    assert status == 200 and [r["query"] for r in answer["rules"]] == ["loss.last > 5"]


def test_share_viewers_list_and_compare_the_versions_of_their_envs(world, tmp_path):
    c = paneboard.Client(port=world.port, env="pub", token=ADMIN, spool_dir=False)
    (tmp_path / "model.bin").write_bytes(b"second model")
    assert c.log_artifact(tmp_path / "model.bin", name="model").wait(30) == "model:v2"
    c.close_connection(5)
    status, answer = call(world, "/api/v1/artifacts/model/versions", world.share)
    assert status == 200, answer
    assert [v["ref"] for v in answer["versions"]] == ["model:v1", "model:v2"]
    status, answer = call(world, "/api/v1/artifacts/model/compare?a=v1&b=v2", world.share)
    assert status == 200, answer
    assert [f["status"] for f in answer["files"]] == ["changed"]
    # Versions of another env's artifact stay hidden, as before.
    assert call(world, "/api/v1/artifacts/private/versions", world.share) == (200, {"versions": []})
    assert call(world, "/api/v1/artifacts/private/compare?a=v1&b=v1", world.share)[0] == 404
