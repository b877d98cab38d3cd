"""Artifacts with the real SDK and a real in-process server: versions, dedup, lineage, resumable uploads."""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request

import pytest

import paneboard
import paneboard.artifacts


def client(server, env, **kw):
    return paneboard.Client(port=server.port, env=env, spool_dir=False, **kw)


def objects(server):
    return sorted(p.name for p in (server.db.parent / "artifacts" / "objects").rglob("*") if p.is_file())


def test_identical_files_are_stored_once(server, tmp_path):
    c = client(server, "dedup")
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    a.write_bytes(b"weights" * 100_000)
    b.write_bytes(b"weights" * 100_000)
    folder = tmp_path / "ckpt"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "model.pt").write_bytes(b"weights" * 100_000)
    (folder / "opt.pt").write_bytes(b"optimizer")
    refs = [c.log_artifact(a, name="m"), c.log_artifact(b, name="m", aliases=["best"]),
            c.log_artifact(folder, name="m", step=7)]
    assert [r.wait(30) for r in refs] == ["m:v1", "m:v2", "m:v3"]
    sha = hashlib.sha256(a.read_bytes()).hexdigest()
    assert objects(server) == sorted([sha[2:], hashlib.sha256(b"optimizer").hexdigest()[2:]])  # one copy
    v3 = server.get_json("/api/v1/artifact?ref=m:latest")
    assert v3["version"] == 3 and v3["step"] == 7 and v3["size"] == 700_000 + 9
    assert [f["path"] for f in v3["files"]] == ["opt.pt", "sub/model.pt"]
    assert server.get_json("/api/v1/artifact?ref=m:best")["version"] == 2
    c.close_connection(5)


def test_lineage_and_use_through_the_api(server, tmp_path):
    train = client(server, "train")
    f = tmp_path / "model.bin"
    f.write_bytes(bytes(range(256)) * 4096)
    ref = train.log_artifact(f, name="model", type="model", metadata={"acc": 0.9})
    assert ref.wait(30) == "model:v1" and str(ref) == "model:v1"
    evaluate = client(server, "eval")
    path = evaluate.use_artifact("model:latest", root=tmp_path / "cache")
    assert open(path, "rb").read() == f.read_bytes()
    assert evaluate.flush(30)
    versions = server.get_json("/api/v1/artifacts/model/versions")["versions"]
    assert [(v["ref"], v["env"], v["used_by"], v["metadata"]) for v in versions] == \
        [("model:v1", "train", ["eval"], {"acc": 0.9})]
    assert [a["ref"] for a in server.get_json("/api/v1/envs/eval/artifacts")["used"]] == ["model:v1"]
    assert [a["ref"] for a in server.get_json("/api/v1/envs/train/artifacts")["logged"]] == ["model:v1"]
    train.close_connection(5)
    evaluate.close_connection(5)


def test_an_upload_goes_on_from_the_bytes_the_server_has(server, tmp_path):
    data = bytes(range(256)) * 40_000
    sha = hashlib.sha256(data).hexdigest()
    req = urllib.request.Request(f"{server.url}/api/v1/artifact-blobs/{sha}/upload?offset=0", data=data[:1_000_000],
                                 method="PUT")
    with urllib.request.urlopen(req) as r:  # a first life sent the first megabyte, then died
        assert json.loads(r.read()) == {"stored": False, "offset": 1_000_000}
    f = tmp_path / "big.bin"
    f.write_bytes(data)
    c = client(server, "resumed")
    assert c.log_artifact(f, name="big").wait(30) == "big:v1"
    assert objects(server) == [sha[2:]]
    with urllib.request.urlopen(f"{server.url}/api/v1/artifact-blobs/{sha}") as r:
        assert r.read() == data
    c.close_connection(5)


def test_log_artifact_returns_before_hashing(server, tmp_path):
    f = tmp_path / "big.bin"
    with open(f, "wb") as out:
        out.truncate(64 << 20)  # sparse: quick to make, 64 MB to hash and send
    c = client(server, "fast")
    c.log_artifact(f, name="warm").wait(30)  # the uploader thread is started
    t0 = time.perf_counter()
    ref = c.log_artifact(f, name="big")
    took = time.perf_counter() - t0
    assert not ref.done() and took < 0.01
    assert ref.wait(60) == "big:v1"
    c.close_connection(5)


def test_uploads_carry_the_servers_token(make_server, tmp_path):
    srv = make_server(token="s3cret")
    f = tmp_path / "m.pt"
    f.write_bytes(b"m" * 1000)
    c = paneboard.Client(port=srv.port, env="tok", spool_dir=False, token="s3cret")
    assert c.log_artifact(f, name="m").wait(30) == "m:v1"
    assert open(c.use_artifact("m:v1", root=tmp_path / "cache"), "rb").read() == f.read_bytes()
    req = urllib.request.Request(f"{srv.url}/api/v1/artifact-blobs/{'0' * 64}/upload?offset=0", data=b"x",
                                 method="PUT")
    try:
        urllib.request.urlopen(req)
        raise AssertionError("an upload without the token was taken")
    except urllib.error.HTTPError as exc:
        assert exc.code == 401
    c.close_connection(5)


def test_use_artifact_of_an_unknown_version_raises(server, tmp_path):
    c = client(server, "nothing")
    with pytest.raises(paneboard.artifacts.ArtifactError, match="no artifact"):
        c.use_artifact("missing:v1", root=tmp_path / "cache")
    c.close_connection(5)


def test_an_artifact_logged_while_the_server_is_away_is_stored_when_it_is_back(tmp_path, server_types):
    srv = server_types.InProcessServer(db=tmp_path / "away.db").start()
    port = srv.port
    c = paneboard.Client(port=port, env="away")
    assert c.flush(30)
    srv.stop()
    f = tmp_path / "ckpt.pt"
    f.write_bytes(b"c" * 300_000)
    ref = c.log_artifact(f, name="ckpt", step=5)  # the server is away: queued, retried, never raising here
    assert not ref.done()
    back = server_types.InProcessServer(db=tmp_path / "away.db", port=port).start()
    try:
        assert ref.wait(60) == "ckpt:v1"
        (version,) = back.get_json("/api/v1/artifacts/ckpt/versions")["versions"]
        assert version["env"] == "away" and version["step"] == 5
        assert c.close_connection(10)
    finally:
        back.stop()


def test_two_versions_compare_through_the_api(server, tmp_path):
    c = client(server, "cmp")
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, files in ((a, {"w.pt": b"1" * 10, "same.txt": b"s", "old.txt": b"o"}),
                          (b, {"w.pt": b"2" * 12, "same.txt": b"s", "sub/new.txt": b"n"})):
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
    assert c.log_artifact(a, name="m", metadata={"acc": 0.5, "seed": 1, "gone": True}).wait(30) == "m:v1"
    assert c.log_artifact(b, name="m", aliases=["best"], metadata={"acc": 0.7, "seed": 1, "new": [1]}).wait(30) == "m:v2"
    diff = server.get_json("/api/v1/artifacts/m/compare?a=v1&b=best")
    sha = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    assert (diff["a"]["ref"], diff["b"]["ref"], diff["a"]["file_count"]) == ("m:v1", "m:v2", 3)
    assert diff["files"] == [
        {"path": "w.pt", "status": "changed", "a": {"sha256": sha(b"1" * 10), "size": 10},
         "b": {"sha256": sha(b"2" * 12), "size": 12}},
        {"path": "sub/new.txt", "status": "added", "a": None, "b": {"sha256": sha(b"n"), "size": 1}},
        {"path": "old.txt", "status": "removed", "a": {"sha256": sha(b"o"), "size": 1}, "b": None},
        {"path": "same.txt", "status": "same", "a": {"sha256": sha(b"s"), "size": 1}, "b": {"sha256": sha(b"s"), "size": 1}}]
    assert [(m["key"], m["status"], m["a"], m["b"]) for m in diff["metadata"]] == [
        ("acc", "changed", 0.5, 0.7), ("new", "added", None, [1]), ("gone", "removed", True, None),
        ("seed", "same", 1, 1)]
    assert diff["counts"] == {"changed": 1, "added": 1, "removed": 1, "same": 1}
    for query, code in (("a=v1", 400), ("a=v1&b=v9", 404), ("a=nope&b=v1", 404)):
        with pytest.raises(urllib.error.HTTPError) as err:
            server.get_json(f"/api/v1/artifacts/m/compare?{query}")
        assert err.value.code == code and "error" in json.loads(err.value.read())
    c.close_connection(5)
