"""Archive members are read only as plain regular files: a hand-made GNU sparse member (5 KB claiming 600 MB), a
PAX size override, links and devices are refused before any byte is stored, whatever the member's name."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile

import pytest

import paneboard
from helpers.http import request_raw

SPARSE_REAL = 600 << 20  # what the sparse member expands to
TAIL = b"the only stored bytes of the sparse member".ljust(512, b"!")


def _octal(value: int, width: int) -> bytes:
    return b"%0*o\0" % (width - 1, value)


def gnu_sparse_member(name: str, realsize: int, data: bytes) -> bytes:
    """A GNU sparse ("S") member written by hand (tarfile cannot write one): its ustar size is len(data), its
    one sparse region puts `data` at the end of a hole, and its realsize field says `realsize`."""
    header = bytearray(512)
    header[0:len(name)] = name.encode()
    header[100:108] = _octal(0o644, 8)
    header[108:116] = _octal(0, 8)
    header[116:124] = _octal(0, 8)
    header[124:136] = _octal(len(data), 12)
    header[136:148] = _octal(0, 12)
    header[156:157] = b"S"
    header[257:265] = b"ustar  \0"  # the GNU magic: tarfile reads the sparse map only with it
    header[386:398] = _octal(realsize - len(data), 12)  # the region's offset
    header[398:410] = _octal(len(data), 12)  # and its length
    header[483:495] = _octal(realsize, 12)
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header) + data + bytes(-len(data) % 512)


def sparse_sha(realsize: int, data: bytes) -> str:
    """The sha256 of what the sparse member expands to (zeros, then `data`), so the archive is self-consistent."""
    h, zeros, left = hashlib.sha256(), bytes(1 << 20), realsize - len(data)
    while left:
        h.update(zeros[:min(left, len(zeros))])
        left -= min(left, len(zeros))
    h.update(data)
    return h.hexdigest()


def plain_member(name: str, data: bytes, **fields) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    fmt = tarfile.PAX_FORMAT if info.pax_headers else tarfile.GNU_FORMAT
    return info.tobuf(format=fmt) + data + bytes(-len(data) % 512)


@pytest.fixture
def exported(make_server, tmp_path):
    """The members of a real archive of env `train`, which logged one artifact file; and that file's sha."""
    src = make_server("source")
    (tmp_path / "model.pt").write_bytes(b"weights" * 100)
    c = paneboard.Client(port=src.port, env="train", spool_dir=False)
    c.line(X=[0, 1], Y=[1.0, 0.5], win="loss")
    assert c.log_artifact(tmp_path / "model.pt", name="model").wait(30) == "model:v1"
    assert c.flush(30)
    c.close_connection(5)
    status, tar = request_raw(src.url + "/api/v1/archive?envs=train")
    assert status == 200
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        members = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    (sha,) = [n.split("/")[1] for n in members if n.startswith("artifact-blobs/")]
    return members, sha


def with_blob(members: dict[str, bytes], old_sha: str, new_sha: str, size: int, raw_member: bytes) -> bytes:
    """The archive with its artifact file replaced by `raw_member` (a hand-made member named for new_sha)."""
    out = b""
    for name, data in members.items():
        if name == f"artifact-blobs/{old_sha}":
            out += raw_member
            continue
        if name == "artifacts.jsonl":
            version = json.loads(data)
            version["files"] = [dict(f, sha256=new_sha, size=size) for f in version["files"]]
            data = json.dumps(version).encode() + b"\n"
        out += plain_member(name, data)
    return out + bytes(1024)


def stored_bytes(root) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def test_a_5kb_sparse_member_claiming_600mb_is_refused_before_anything_is_written(exported, make_server, tmp_path):
    members, old = exported
    sha = sparse_sha(SPARSE_REAL, TAIL)
    body = with_blob(members, old, sha, SPARSE_REAL, gnu_sparse_member(f"artifact-blobs/{sha}", SPARSE_REAL, TAIL))
    assert len(body) < 16 << 10
    with tarfile.open(fileobj=io.BytesIO(body)) as t:  # the member is what tarfile takes for a 600 MB file
        info = t.getmember(f"artifact-blobs/{sha}")
        assert info.isfile() and info.size == SPARSE_REAL
    artifacts = tmp_path / "target-artifacts"
    target = make_server("target", artifacts_dir=str(artifacts))  # the default limits: 512 MB a member
    status, answer = request_raw(target.url + "/api/v1/archive", "POST", body, {"Content-Type": "application/x-tar"})
    assert status == 400, answer
    assert "is not a regular file" in json.loads(answer)["error"]
    assert stored_bytes(artifacts) < 1 << 20  # nothing near the 600 MB it claims
    assert target.get_json("/api/v1/envs")["envs"] == []
    assert target.get_json("/api/v1/artifacts/model/versions")["versions"] == []


@pytest.mark.parametrize("kind", ["pax-size", "pax-sparse", "symlink", "hardlink", "chardev", "fifo", "contiguous",
                                  "dir-with-data"])
def test_members_other_than_plain_files_are_refused(exported, make_server, tmp_path, kind):
    members, sha = exported
    data = members[f"artifact-blobs/{sha}"]
    name = f"artifact-blobs/{sha}"
    raw = {
        "pax-size": lambda: plain_member(name, data, pax_headers={"size": str(600 << 20)}),
        "pax-sparse": lambda: plain_member(name, data, pax_headers={"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                                                                     "GNU.sparse.realsize": str(600 << 20)}),
        "symlink": lambda: plain_member(name, b"", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
        "hardlink": lambda: plain_member(name, b"", type=tarfile.LNKTYPE, linkname="manifest.json"),
        "chardev": lambda: plain_member(name, b"", type=tarfile.CHRTYPE, devmajor=1, devminor=5),
        "fifo": lambda: plain_member(name, b"", type=tarfile.FIFOTYPE),
        "contiguous": lambda: plain_member(name, data, type=tarfile.CONTTYPE),
        # A directory's data is skipped by the spool but parsed as headers by tarfile: it could hide a member.
        "dir-with-data": lambda: plain_member("hidden/", gnu_sparse_member(name, SPARSE_REAL, TAIL),
                                              type=tarfile.DIRTYPE) + plain_member(name, data),
    }[kind]()
    artifacts = tmp_path / "target-artifacts"
    target = make_server("target", artifacts_dir=str(artifacts))
    body = with_blob(members, sha, sha, len(data), raw)
    status, answer = request_raw(target.url + "/api/v1/archive", "POST", body, {"Content-Type": "application/x-tar"})
    assert status == 400, answer
    assert "regular file" in json.loads(answer)["error"], answer
    assert stored_bytes(artifacts) < 1 << 20
    assert target.get_json("/api/v1/envs")["envs"] == []


def test_a_plain_archive_still_imports(exported, make_server, tmp_path):
    members, sha = exported
    target = make_server("target", artifacts_dir=str(tmp_path / "target-artifacts"))
    body = with_blob(members, sha, sha, len(members[f"artifact-blobs/{sha}"]),
                     plain_member(f"artifact-blobs/{sha}", members[f"artifact-blobs/{sha}"]))
    status, answer = request_raw(target.url + "/api/v1/archive", "POST", body, {"Content-Type": "application/x-tar"})
    assert status == 200, answer
    assert [v["ref"] for v in target.get_json("/api/v1/artifacts/model/versions")["versions"]] == ["model:v1"]
