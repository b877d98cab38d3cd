"""use_artifact against a hostile server on loopback: whatever names its answer holds, no file is made outside the
version's folder and every refusal is an ArtifactError (never ValueError)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import paneboard
from helpers.hostile_http import HostileServer
from paneboard.artifacts import ArtifactError

BYTES = b"owned\n"
SHA = hashlib.sha256(BYTES).hexdigest()


def answer(name: Any = "m", version: Any = 1, files: Any = None) -> dict[str, Any]:
    return {"name": name, "version": version, "files": files}


def use(tmp_path: Path, manifest: dict[str, Any], blob: bytes = BYTES) -> str:
    evil = HostileServer({"/api/v1/artifact": (200, json.dumps(manifest).encode(), "application/json"),
                          f"/api/v1/artifact-blobs/{SHA}": (200, blob, "application/octet-stream")})
    c = paneboard.Client(server="http://127.0.0.1", port=evil.port, env="victim", spool_dir=False)
    try:
        return c.use_artifact("m:v1", root=tmp_path / "deep" / "cache")
    finally:
        c.close_connection(0)  # nothing of it is meant to arrive: the server is not ours
        evil.close()


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("manifest", [
    answer(files=[{"path": "../../x", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "ok/../../../../x", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "/abs/x", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "a\x00b", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "a\nb\x1b]0;t\x07", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "..\\..\\x", "sha256": SHA, "size": len(BYTES)}]),
    answer(name="..", files=[{"path": "x", "sha256": SHA, "size": len(BYTES)}]),
    answer(version="../../x", files=[{"path": "x", "sha256": SHA, "size": len(BYTES)}]),
    answer(files=[{"path": "x", "sha256": "../../../../x", "size": len(BYTES)}]),
    answer(files=[{"path": "x", "sha256": SHA, "size": len(BYTES)}, {"path": "x/y", "sha256": SHA, "size": 6}]),
    answer(files=[7]),
    answer(files=[]),
    ["not", "an", "object"],
], ids=["dotdot", "dotdot-inside", "absolute", "nul", "control", "backslash", "name-dotdot", "version-path",
        "sha-path", "file-then-folder", "not-a-dict", "no-files", "not-an-object"])
def test_a_hostile_answer_is_an_artifact_error_and_writes_nothing_outside(tmp_path: Path, manifest: Any):
    with pytest.raises(ArtifactError):
        use(tmp_path, manifest)
    outside = files_under(tmp_path) - {f for f in files_under(tmp_path) if f.startswith("deep/cache/")}
    assert outside == set()
    assert not any("x" == Path(f).name for f in files_under(tmp_path / "deep" / "cache" / "blobs"))


def test_a_blob_longer_than_listed_is_refused_without_storing_it(tmp_path: Path):
    with pytest.raises(ArtifactError, match="corrupt"):
        use(tmp_path, answer(files=[{"path": "x", "sha256": SHA, "size": len(BYTES)}]), blob=BYTES + bytes(10 << 20))
    assert files_under(tmp_path) == set()


def test_a_sound_answer_still_downloads_into_its_version_folder(tmp_path: Path):
    got = use(tmp_path, answer(files=[{"path": "sub/model.pt", "sha256": SHA, "size": len(BYTES)}]))
    assert Path(got) == tmp_path / "deep" / "cache" / "versions" / "m" / "v1" / "sub" / "model.pt"
    assert Path(got).read_bytes() == BYTES
