"""Artifacts in env archives: the versions the envs logged or used, with their files' bytes, out and back in.

An archive holds `artifacts.jsonl` (one version a line: name, uid, type, step, the run that logged it, files,
metadata, aliases, and which of the archive's envs used it) and `artifact-blobs/<sha256>` (each file's bytes once).
On import the bytes are streamed into this server's blob store as they are read, hash-checked like an upload,
and the versions are added, in their order, by the import of the archive's last env (so every env they name
exists by then). Versions keep their uid: importing an archive twice adds nothing; new ones are numbered after
this server's own.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable
from typing import IO, Any

from .. import jsonio
from ..artifacts.blobs import BlobError, BlobStore
from ..artifacts.ops import MAX_ALIASES, MAX_METADATA_BYTES, check_files
from ..commands.envelope import EventError, check_name
from ..store import Store
from ..store.artifact_records import ArtifactRecord
from .archive_data import ArtifactImport, EnvData
from .archive_limits import ArchiveLimitError, ArchiveLimits, is_plain

MEMBER = "artifacts.jsonl"
BLOB_DIR = "artifact-blobs"
COPY_BLOCK = 1 << 20
_UID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_TYPE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _bad(message: str) -> EventError:
    return EventError(f"not a paneboard env archive: {message}")


# ------------------------------------------------------------------------------------------------ export

def export(store: Store, blobs: BlobStore | None, names: list[str], tar: tarfile.TarFile,
           add: Callable[[tarfile.TarFile, str, bytes], None],
           add_file: Callable[[tarfile.TarFile, str, IO[bytes]], None]) -> tuple[int, list[str]]:
    """Write the versions the envs `names` logged or used, and their bytes; (versions, blob shas written)."""
    found: dict[str, ArtifactRecord] = {}
    for name in names:
        for rec in store.list_artifacts(env=name) + store.list_artifacts(used_by=name):
            found[rec.uid] = rec
    if not found:
        return 0, []
    exported = set(names)
    versions = sorted(found.values(), key=lambda r: (r.name, r.version))
    lines = [jsonio.dumps({"name": r.name, "version": r.version, "uid": r.uid, "type": r.type, "step": r.step,
                           "env": r.env, "created": r.created, "files": list(r.files), "metadata": r.metadata,
                           "aliases": [a for a in r.aliases if a != "latest"],
                           "used_by": [e for e in r.used_by if e in exported]}) for r in versions]
    shas = list(dict.fromkeys(f["sha256"] for r in versions for f in r.files))
    written = []
    for sha in shas:
        if blobs is None or not blobs.has(sha):
            continue  # bytes this server lost: the import finds them stored already, or refuses the version
        with blobs.open(sha) as f:
            add_file(tar, f"{BLOB_DIR}/{sha}", f)
        written.append(sha)
    add(tar, MEMBER, b"\n".join(lines) + b"\n")
    return len(lines), written


# ------------------------------------------------------------------------------------------------ import

def _version(raw: Any, where: str) -> ArtifactImport:
    if not isinstance(raw, dict):
        raise _bad(f"{where} must be an object")
    uid, kind, step, metadata = raw.get("uid"), raw.get("type"), raw.get("step"), raw.get("metadata") or {}
    producer, aliases, used_by = raw.get("env"), raw.get("aliases") or [], raw.get("used_by") or []
    if not isinstance(uid, str) or not _UID.match(uid) or not isinstance(kind, str) or not _TYPE.match(kind):
        raise _bad(f"{where}: needs a uid and a type")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or step != step):
        raise _bad(f"{where}: step must be a number or null")
    if not isinstance(metadata, dict) or len(jsonio.dumps(metadata)) > MAX_METADATA_BYTES:
        raise _bad(f"{where}: metadata must be an object of at most {MAX_METADATA_BYTES} bytes")
    if not isinstance(aliases, list) or len(aliases) > MAX_ALIASES or not all(
            isinstance(a, str) and a and a != "latest" and not (a[:1] == "v" and a[1:].isdigit()) for a in aliases):
        raise _bad(f"{where}: aliases must be at most {MAX_ALIASES} names, none 'latest' or 'vN'")
    if not isinstance(used_by, list):
        raise _bad(f"{where}: used_by must be a list of env names")
    try:
        return ArtifactImport(name=check_name(raw.get("name"), "name"), uid=uid, type=kind, files=check_files(raw.get("files")),
                              metadata=metadata, step=None if step is None else float(step),
                              producer=None if producer is None else check_name(producer, "env"),
                              aliases=[check_name(a, "alias") for a in aliases],
                              used_by=[check_name(e, "env") for e in used_by])
    except EventError as exc:
        raise _bad(f"{where}: {exc}") from None


def _store_blob(tar: tarfile.TarFile, sha: str, blobs: BlobStore, max_bytes: int) -> None:
    """Stream `artifact-blobs/<sha>` into the blob store (checked against its name, as an upload is), never
    more than `max_bytes`: a plain member's size is its header's, which the import's limits checked."""
    if blobs.has(sha):
        blobs.touch(sha)
        return
    try:
        info = tar.getmember(f"{BLOB_DIR}/{sha}")
    except KeyError:
        raise _bad(f"{BLOB_DIR}/{sha} is missing") from None
    f = tar.extractfile(info) if is_plain(info) else None
    if f is None:
        raise _bad(f"{BLOB_DIR}/{sha} is not a plain file")
    if info.size > max_bytes:
        raise ArchiveLimitError(f"{BLOB_DIR}/{sha} holds {info.size:,} bytes, over the per-member limit of "
                                f"{max_bytes:,} bytes")
    try:
        partial = blobs.partial_size(sha)
        upload = blobs.open_upload(sha, partial)
        try:
            f.seek(partial)
            left = info.size - partial
            while left > 0 and (block := f.read(min(COPY_BLOCK, left))):
                upload.write(block)
                left -= len(block)
        finally:
            upload.close()
        blobs.finish(sha)
    except BlobError as exc:
        raise _bad(f"{BLOB_DIR}/{sha}: {exc}") from None


def read(tar: tarfile.TarFile, manifest: dict, envs: list[EnvData], blobs: BlobStore | None,
         member: Callable[[tarfile.TarFile, str], bytes], max_member_bytes: int = ArchiveLimits().member_bytes) -> None:
    """Check the archive's versions, store their bytes, and hand the versions to the last env to import.
    Nothing to do without `artifacts.jsonl` (an older archive) or without a blob store here (versions skipped)."""
    if manifest.get("artifacts") is None or blobs is None:
        return
    exported = {e.name for e in envs}
    raw_lines = member(tar, MEMBER).splitlines()
    versions = [_version(jsonio.loads(line), f"{MEMBER} line {i + 1}")
                for i, line in enumerate(raw_lines) if line.strip()]
    for v in versions:
        if v.producer not in exported and not exported.intersection(v.used_by):
            raise _bad(f"{MEMBER}: {v.name} ({v.uid}) belongs to none of the archive's envs")
        v.used_by = [e for e in v.used_by if e in exported]
    for sha in dict.fromkeys(f["sha256"] for v in versions for f in v.files):  # every version checked first
        _store_blob(tar, sha, blobs, max_member_bytes)
    envs[-1].artifacts.extend(versions)
