"""Artifacts in env archives: the versions the envs logged or used travel with their bytes, keep their lineage
among the archive's envs, are numbered after the target's own versions, and a second import adds nothing."""

from __future__ import annotations

import io
import json
import tarfile
import urllib.error
import urllib.request

import pytest

import paneboard
from helpers.archives import make_tar
from helpers.http import request_raw
from paneboard.server.cli.main import main as dash_server
from paneboard.server.store import open_store


def request(srv, method, path, data=None, ctype="application/x-tar"):
    return request_raw(srv.url + path, method, data, {"Content-Type": ctype})


def blob(srv, sha):
    with urllib.request.urlopen(f"{srv.url}/api/v1/artifact-blobs/{sha}") as r:
        return r.read()


@pytest.fixture
def source(make_server, tmp_path):
    srv = make_server("source")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "model.pt").write_bytes(b"weights-1" * 5000)
    (tmp_path / "ckpt" / "opt.pt").write_bytes(b"optimizer")
    (tmp_path / "data.csv").write_bytes(b"x,y\n1,2\n")
    clients = {e: paneboard.Client(port=srv.port, env=e, spool_dir=False) for e in ("prep", "train", "eval", "eval2")}
    assert clients["prep"].log_artifact(tmp_path / "data.csv", name="data", type="dataset").wait(30) == "data:v1"
    clients["train"].use_artifact("data:v1", root=tmp_path / "cache")
    clients["train"].line(X=[0, 1], Y=[1.0, 0.5], win="loss")
    assert clients["train"].log_artifact(tmp_path / "ckpt", name="model", step=1, metadata={"acc": 0.5}).wait(30) \
        == "model:v1"
    (tmp_path / "ckpt" / "model.pt").write_bytes(b"weights-2" * 5000)
    assert clients["train"].log_artifact(tmp_path / "ckpt", name="model", step=2, aliases=["best"]).wait(30) \
        == "model:v2"
    clients["eval"].use_artifact("model:v2", root=tmp_path / "cache")
    clients["eval2"].use_artifact("model:v1", root=tmp_path / "cache")
    for c in clients.values():
        assert c.flush(30)
        c.close_connection(5)
    return srv


def test_artifacts_travel_with_their_envs(source, make_server, tmp_path):
    status, tar = request(source, "GET", "/api/v1/archive?envs=train,eval2")
    assert status == 200
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        assert json.loads(t.extractfile("manifest.json").read())["counts"]["artifacts"] == 3
        assert len([n for n in t.getnames() if n.startswith("artifact-blobs/")]) == 4  # data, opt, 2 x model
    target = make_server("target", artifacts_dir=str(tmp_path / "target-artifacts"))  # not the source's folder
    mine = tmp_path / "mine.pt"
    mine.write_bytes(b"the target's own")
    own = paneboard.Client(port=target.port, env="mine", spool_dir=False)
    assert own.log_artifact(mine, name="model").wait(30) == "model:v1"

    status, body = request(target, "POST", "/api/v1/archive", tar)
    assert status == 200, body
    assert json.loads(body)["artifacts"] == 3
    versions = target.get_json("/api/v1/artifacts/model/versions")["versions"]
    assert [(v["ref"], v["env"], v["step"], v["aliases"], v["used_by"]) for v in versions] == [
        ("model:v1", "mine", None, [], []),
        ("model:v2", "train", 1.0, [], ["eval2"]),  # "eval" was not exported: its use stays behind
        ("model:v3", "train", 2.0, ["best", "latest"], [])]
    assert versions[1]["metadata"] == {"acc": 0.5}
    (data,) = target.get_json("/api/v1/artifacts/data/versions")["versions"]
    assert (data["env"], data["used_by"]) == ("prep", ["train"])  # the producer's name, though not imported
    originals = {v["uid"]: v for v in source.get_json("/api/v1/artifacts/model/versions")["versions"]}
    for v in versions[1:]:
        assert v["files"] == originals[v["uid"]]["files"]
        for f in v["files"]:
            assert blob(target, f["sha256"]) == blob(source, f["sha256"])
    path = own.use_artifact("model:best", root=tmp_path / "target-cache")
    assert open(path + "/model.pt", "rb").read() == b"weights-2" * 5000

    assert request(target, "POST", "/api/v1/archive?replace=1", tar)[0] == 200  # the same uids: nothing new
    assert len(target.get_json("/api/v1/artifacts/model/versions")["versions"]) == 3
    own.close_connection(5)


def test_an_archive_whose_artifact_bytes_do_not_match_is_refused(source, make_server, tmp_path):
    _, tar = request(source, "GET", "/api/v1/archive?envs=train")
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        members = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    name = next(n for n in members if n.startswith("artifact-blobs/"))
    target = make_server("target", artifacts_dir=str(tmp_path / "target-artifacts"))
    for change in ({name: members[name] + b"x"}, {name: None}):
        edited = {k: v for k, v in {**members, **change}.items() if v is not None}
        status, body = request(target, "POST", "/api/v1/archive", make_tar(edited))
        assert status == 400 and "artifact-blobs/" in json.loads(body)["error"]
    assert target.get_json("/api/v1/envs")["envs"] == []
    assert target.get_json("/api/v1/artifacts/model/versions")["versions"] == []
    assert not list((tmp_path / "target-artifacts" / "uploads").iterdir())  # the bad bytes were dropped


def test_cli_archives_carry_artifacts(source, tmp_path, capsys):
    out = tmp_path / "train.tar"
    assert dash_server(["export-envs", "train", "-o", str(out), "--db", str(source.db)]) == 0
    assert "3 artifacts" in capsys.readouterr().out
    target_db = tmp_path / "elsewhere" / "target.db"
    target_db.parent.mkdir()
    assert dash_server(["import-envs", str(out), "--db", str(target_db)]) == 0
    store = open_store(f"sqlite:///{target_db}")
    try:
        refs = [v.ref for v in store.list_artifacts(env="train")]
        files = [f for v in store.list_artifacts(env="train") for f in v.files]
    finally:
        store.close()
    assert refs == ["model:v1", "model:v2"]
    for f in files:
        sha = f["sha256"]
        assert (target_db.parent / "artifacts" / "objects" / sha[:2] / sha[2:]).stat().st_size == f["size"]
