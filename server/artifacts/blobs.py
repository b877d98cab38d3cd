"""Where artifact bytes live: the BlobStore protocol and its default, a folder beside the database.

Blobs are named by their sha256, so identical files are stored once. An upload comes in requests at explicit
offsets, each streamed in as it arrives (a client that lost its connection asks for the offset and goes on from
there), and is only kept once its bytes hash to its name. Another store (S3-compatible, say) is one more class
with these methods.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, Protocol


class BlobError(Exception):
    """An upload that cannot be taken as sent: `status` is the HTTP answer (409: wrong offset, 422: bad hash)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class BlobInfo(NamedTuple):
    sha: str
    size: int
    mtime: float  # when it was last written or touched (time.time())


class BlobUpload(Protocol):
    """One request's bytes going into an unfinished upload; the upload is claimed until close()."""

    def write(self, data: bytes) -> None:
        ...

    def close(self) -> int:
        """Release the upload; returns the bytes now received (what a client resumes from)."""
        ...


class BlobStore(Protocol):
    def has(self, sha: str) -> bool:
        """True once the blob is stored (its bytes checked against its name)."""
        ...

    def size(self, sha: str) -> int | None:
        """The stored blob's size in bytes, None if it is not stored."""
        ...

    def partial_size(self, sha: str) -> int:
        """Bytes of an unfinished upload of `sha` received so far (0: none)."""
        ...

    def open_upload(self, sha: str, offset: int) -> BlobUpload:
        """Claim the unfinished upload of `sha` to write at `offset`. BlobError(409) if `offset` is not what was
        received (the client asks partial_size and resends from there) or another request is writing to it."""
        ...

    def append(self, sha: str, offset: int, data: bytes) -> int:
        """open_upload, write `data`, close: returns the bytes now received."""
        ...

    def finish(self, sha: str) -> None:
        """Check the upload's sha256 and keep it as the blob (BlobError(422), upload dropped, if it differs)."""
        ...

    def open(self, sha: str) -> BinaryIO:
        """The stored blob for reading (FileNotFoundError if missing)."""
        ...

    def touch(self, sha: str) -> None:
        """Mark a stored blob as just wanted (an upload found it stored): a cleanup leaves it alone for a while."""
        ...

    def stored(self) -> Iterator[BlobInfo]:
        """Every stored blob."""
        ...

    def uploads(self) -> Iterator[BlobInfo]:
        """Every unfinished upload (`sha` is the blob it is to become)."""
        ...

    def remove(self, sha: str, unused_since: float) -> bool:
        """Delete the stored blob if nothing stored or touched it after `unused_since` (a time.time());
        True if it went."""
        ...

    def drop_upload(self, sha: str, unused_since: float) -> bool:
        """Delete an unfinished upload no request is writing and none wrote to after `unused_since`."""
        ...


# sha256 of a block runs here while the writing thread writes it (both release the GIL): a block costs the
# longer of the two, not their sum.
_HASHING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="paneboard-blob-hash")


class LocalUpload:
    """Appends to `uploads/<sha>.part`, hashing as it goes (finish() then reads nothing back)."""

    def __init__(self, store: LocalBlobStore, sha: str, size: int, digest: Any) -> None:
        self.store, self.sha, self.size, self.digest = store, sha, size, digest
        self.file = open(store._partial(sha), "ab")

    def write(self, data: bytes) -> None:
        hashed = _HASHING.submit(self.digest.update, data) if self.digest is not None and data else None
        try:
            self.file.write(data)
        except BaseException:
            self.digest = None  # the file may hold part of the block: finish() hashes the file itself
            raise
        finally:
            if hashed is not None:
                hashed.result()
        self.size += len(data)

    def close(self) -> int:
        try:
            self.file.close()
        finally:
            self.store._release(self.sha, self.size, self.digest)
        return self.size


class UploadRegister:
    """What a store keeps of the uploads its requests are writing, the same for every store: who writes one now
    (a second writer would interleave bytes) and the hash of the bytes received so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writing: set[str] = set()
        # sha -> the hash of the bytes received so far (lost on a restart: finish() hashes what is stored then).
        self._hashing: dict[str, tuple[int, Any]] = {}

    def open_upload(self, sha: str, offset: int) -> BlobUpload:
        raise NotImplementedError

    def _release(self, sha: str, size: int, digest: Any) -> None:
        with self._lock:
            self._writing.discard(sha)
            if digest is not None:
                self._hashing[sha] = (size, digest)

    def append(self, sha: str, offset: int, data: bytes) -> int:
        upload = self.open_upload(sha, offset)
        try:
            upload.write(data)
        finally:
            size = upload.close()
        return size


class LocalBlobStore(UploadRegister):
    """Blobs as files `objects/ab/cdef...` under a folder; uploads grow in `uploads/` until checked."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        (self.root / "uploads").mkdir(parents=True, exist_ok=True)
        super().__init__()

    def _object(self, sha: str) -> Path:
        return self.root / "objects" / sha[:2] / sha[2:]

    def _partial(self, sha: str) -> Path:
        return self.root / "uploads" / f"{sha}.part"

    def has(self, sha: str) -> bool:
        return self._object(sha).is_file()

    def size(self, sha: str) -> int | None:
        try:
            return self._object(sha).stat().st_size
        except FileNotFoundError:
            return None

    def partial_size(self, sha: str) -> int:
        try:
            return self._partial(sha).stat().st_size
        except FileNotFoundError:
            return 0

    def open_upload(self, sha: str, offset: int) -> LocalUpload:
        with self._lock:
            if sha in self._writing:
                raise BlobError(409, f"another request is uploading {sha[:12]}")
            have = self.partial_size(sha)
            if offset != have:
                raise BlobError(409, f"upload of {sha[:12]} is at byte {have}, not {offset}")
            running = self._hashing.pop(sha, None)
            digest = running[1] if running is not None and running[0] == have else None
            if have == 0:
                digest = hashlib.sha256()
            upload = LocalUpload(self, sha, have, digest)
            self._writing.add(sha)
            return upload

    def finish(self, sha: str) -> None:
        with self._lock:
            if sha in self._writing:
                raise BlobError(409, f"another request is uploading {sha[:12]}")
            part = self._partial(sha)
            if not part.is_file():
                raise BlobError(409, f"no upload of {sha[:12]} to finish")
            running = self._hashing.pop(sha, None)
            if running is not None and running[0] == self.partial_size(sha):
                digest = running[1]
            else:
                digest = hashlib.sha256()
                with open(part, "rb") as f:
                    while block := f.read(1 << 20):
                        digest.update(block)
            if digest.hexdigest() != sha:
                part.unlink(missing_ok=True)
                raise BlobError(422, f"upload of {sha[:12]} hashes to {digest.hexdigest()[:12]}: dropped")
            target = self._object(sha)
            target.parent.mkdir(exist_ok=True)
            with open(part, "rb+") as f:
                os.fsync(f.fileno())  # acknowledged only once on disk: one fsync per blob
            os.replace(part, target)
            _fsync_dir(target.parent)  # and the name with it

    def open(self, sha: str) -> BinaryIO:
        return open(self._object(sha), "rb")

    def touch(self, sha: str) -> None:
        with self._lock:  # not between a cleanup's look at the time and its unlink
            try:
                os.utime(self._object(sha))
            except FileNotFoundError:
                pass

    def stored(self) -> Iterator[BlobInfo]:
        for path in (self.root / "objects").glob("??/*"):
            if len(path.name) == 62 and path.is_file():
                yield _info(path.parent.name + path.name, path)

    def uploads(self) -> Iterator[BlobInfo]:
        for path in (self.root / "uploads").glob("*.part"):
            yield _info(path.name[:-5], path)

    def remove(self, sha: str, unused_since: float) -> bool:
        with self._lock:
            return _unlink_if_older(self._object(sha), unused_since)

    def drop_upload(self, sha: str, unused_since: float) -> bool:
        with self._lock:
            if sha in self._writing:
                return False
            self._hashing.pop(sha, None)
            return _unlink_if_older(self._partial(sha), unused_since)


def _info(sha: str, path: Path) -> BlobInfo:
    try:
        st = path.stat()
    except FileNotFoundError:  # removed since it was listed: an old time, so that nothing counts on it
        return BlobInfo(sha, 0, 0.0)
    return BlobInfo(sha, st.st_size, st.st_mtime)


def _unlink_if_older(path: Path, unused_since: float) -> bool:
    try:
        if path.stat().st_mtime > unused_since:
            return False
        path.unlink()
        return True
    except FileNotFoundError:
        return False


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without directory fds: the rename is as durable as it gets there
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def blob_root(db_url: str, configured: str | None) -> Path | None:
    """The artifacts folder: as configured, else beside a SQLite database; None (no artifacts) for another
    database without a configured folder."""
    if configured:
        return Path(configured).expanduser()
    if db_url.startswith("sqlite:///"):
        return Path(db_url[len("sqlite:///"):]).parent / "artifacts"
    return None
