"""Red-team areas of issue 40's third pass, data side: a sparse archive member, blobs and artifact files read by
a share token by their sha256, alert rules to a share token, Range on artifact downloads, control characters in
artifact paths, artifact versions for share viewers (run by bench/redteam.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from redteam_common import ADMIN, Srv, check  # noqa: E402

SPARSE_REAL = 600 << 20


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


def _sparse_member(name: str, realsize: int, data: bytes) -> bytes:
    """A GNU sparse member: `data` stored, after a hole, in a file whose realsize field says `realsize`."""
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108], h[108:116], h[116:124] = _octal(0o644, 8), _octal(0, 8), _octal(0, 8)
    h[124:136], h[136:148], h[156:157], h[257:265] = _octal(len(data), 12), _octal(0, 12), b"S", b"ustar  \0"
    h[386:398], h[398:410], h[483:495] = _octal(realsize - len(data), 12), _octal(len(data), 12), _octal(realsize, 12)
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h) + data + bytes(-len(data) % 512)


def _plain(name: str, data: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info.tobuf(format=tarfile.GNU_FORMAT) + data + bytes(-len(data) % 512)


def _sparse_archive(env: str) -> tuple[bytes, str]:
    """A complete env archive (one env, one artifact version) whose one file is a 5 KB sparse member of 600 MB,
    hashed as what it expands to so that nothing but the limits can refuse it; (archive, the file's sha256)."""
    tail = b"sparse".ljust(512, b"!")
    digest, zeros, left = hashlib.sha256(), bytes(1 << 20), SPARSE_REAL - len(tail)
    while left:
        digest.update(zeros[:min(left, len(zeros))])
        left -= min(left, len(zeros))
    digest.update(tail)
    sha = digest.hexdigest()
    version = {"name": "sparse", "version": 1, "uid": "sparse-uid-0001", "type": "model", "step": None, "env": env,
               "files": [{"path": "w.bin", "sha256": sha, "size": SPARSE_REAL}], "metadata": {}, "aliases": [],
               "used_by": []}
    body = b"".join([
        _plain("envs/0000/env.json", json.dumps({"name": env, "meta": {}}).encode()),
        _plain("envs/0000/panes.jsonl", b""),
        _sparse_member(f"artifact-blobs/{sha}", SPARSE_REAL, tail),
        _plain("artifacts.jsonl", json.dumps(version).encode() + b"\n"),
        _plain("manifest.json", json.dumps({"format": "paneboard-envs", "version": 1, "blobs": [], "artifacts": 1,
                                            "envs": [{"name": env, "dir": "envs/0000"}]}).encode()),
    ])
    return body + bytes(1024), sha


def _folder_bytes(root: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def sparse_archive(srv: Srv, artifacts: Path) -> None:
    """Issue 40 item 2: a 5 KB archive whose artifact file is a GNU sparse member of 600 MB."""
    body, _sha = _sparse_archive("rt-sparse")
    before = _folder_bytes(artifacts)
    status, _, answer = srv.call("POST", "/api/v1/archive", raw=body, ctype="application/x-tar")
    written = _folder_bytes(artifacts) - before
    check("archives", f"a {len(body) // 1024} KB sparse member claiming 600 MB writes < 1 MB", lambda: (
        status // 100 == 4 and written < 1 << 20, f"HTTP {status}, {written / 1e6:.1f} MB written"
        + (f": {answer.get('error', '')[:80]}" if isinstance(answer, dict) else "")))


def _log(srv: Srv, env: str, root: Path, artifacts: list[str]) -> str:
    """An image pane and artifacts in `env` through the SDK; the image's blob sha256."""
    import paneboard

    c = paneboard.Client(port=int(srv.url.rsplit(":", 1)[1]), env=env, token=ADMIN, spool_dir=False)
    c.image(np.random.default_rng(len(env)).random((3, 8, 8)), win="img")
    for name in artifacts:
        (root / f"{name}.bin").write_bytes(f"{name} of {env} ".encode() * 4000)
        c.log_artifact(root / f"{name}.bin", name=name).wait(30)
    c.flush(30)
    c.close_connection(5)
    panes = srv.call("GET", f"/api/v1/envs/{env}/panes")[2]
    found = re.search(r"\b[0-9a-f]{64}\b", json.dumps(panes))
    return found.group(0) if found else "0" * 64


def share_reads(srv: Srv) -> None:
    """Issue 40 items 3, 7, 14, 15, 16: what a share token reads by sha256, rules, ranges, artifact paths."""
    root = Path(tempfile.mkdtemp(prefix="pb-redteam-data-"))
    secret_image = _log(srv, "rt-secret", root, ["rt-private"])
    _log(srv, "rt-pub", root, ["rt-model", "rt-model"])
    file_sha = {name: srv.call("GET", f"/api/v1/artifacts/{name}/versions")[2]["versions"][0]["files"][0]["sha256"]
                for name in ("rt-private", "rt-model")}
    share = srv.call("POST", "/api/v1/tokens", {"envs": ["rt-pub"]})[2]["token"]
    for what, path in (("image", f"/api/v1/blobs/{secret_image}"),
                       ("artifact file", f"/api/v1/artifact-blobs/{file_sha['rt-private']}")):
        check("share-data", f"a share token cannot read another env's {what} by sha256", lambda p=path: (
            (s := srv.call("GET", p, token=share)[0]) == 404, f"HTTP {s}"))
    check("share-data", "the upload probe refuses a share token", lambda: (
        (s := srv.call("GET", f"/api/v1/artifact-blobs/{file_sha['rt-private']}/upload", token=share)[0]) == 403,
        f"HTTP {s}"))
    srv.call("POST", "/api/v1/alert-rules", {"query": "loss.last > 5", "name": "rt"})
    check("share-data", "alert rules refuse a share token", lambda: (
        (s := srv.call("GET", "/api/v1/alert-rules", token=share)[0]) == 403, f"HTTP {s}"))
    check("share-data", "a share viewer lists its env's artifact versions", lambda: (
        (r := srv.call("GET", "/api/v1/artifacts/rt-model/versions", token=share))[0] == 200
        and len(r[2]["versions"]) == 2, f"HTTP {r[0]}"))
    status, headers, body = srv.call("GET", f"/api/v1/artifact-blobs/{file_sha['rt-model']}",
                                     headers={"Range": "bytes=10-19"})
    check("downloads", "Range gets 206 with the asked bytes", lambda: (
        status == 206 and headers.get("Content-Range", "").startswith("bytes 10-19/") and len(body) == 10,
        f"HTTP {status}, {len(body)} bytes, Content-Range {headers.get('Content-Range')}"))
    event = {"op": "artifact", "env": "rt-pub", "name": "rt-nul", "uid": "rt-nul-uid-1", "type": "model",
             "files": [{"path": "a\x00\x1b]52;c;eA==\x07", "sha256": file_sha["rt-model"], "size": 1}]}
    answer = srv.call("POST", "/api/v1/events", {"events": [event]})[2]
    check("downloads", "control characters in an artifact path are refused", lambda: (
        isinstance(answer, dict) and answer.get("ok") is False
        and srv.call("GET", "/api/v1/artifacts/rt-nul/versions")[2]["versions"] == [], str(answer)[:100]))
