"""Where artifact bytes live: the BlobStore protocol and its default, a folder beside the database.

Blobs are named by their sha256, so identical files are stored once. An upload comes in chunks at explicit
offsets (a client that lost its connection asks for the offset and goes on from there) and is only kept once
its bytes hash to its name. Another store (S3-compatible, say) is one more class with these methods.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO, Protocol


class BlobError(Exception):
    """An upload that cannot be taken as sent: `status` is the HTTP answer (409: wrong offset, 422: bad hash)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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

    def append(self, sha: str, offset: int, data: bytes) -> int:
        """Add `data` at `offset` of the unfinished upload; returns the bytes now received. BlobError(409) if
        `offset` is not what was received (the client asks partial_size and resends from there)."""
        ...

    def finish(self, sha: str) -> None:
        """Check the upload's sha256 and keep it as the blob (BlobError(422), upload dropped, if it differs)."""
        ...

    def open(self, sha: str) -> BinaryIO:
        """The stored blob for reading (FileNotFoundError if missing)."""
        ...


class LocalBlobStore:
    """Blobs as files `objects/ab/cdef...` under a folder; uploads grow in `uploads/` until checked."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        (self.root / "uploads").mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # appends of one upload from two requests must not interleave
        # sha -> the hash of the bytes received so far: finish() then reads nothing back (lost on a restart:
        # it reads the partial file then).
        self._hashing: dict[str, tuple[int, Any]] = {}

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

    def append(self, sha: str, offset: int, data: bytes) -> int:
        with self._lock:
            have = self.partial_size(sha)
            if offset != have:
                raise BlobError(409, f"upload of {sha[:12]} is at byte {have}, not {offset}")
            with open(self._partial(sha), "ab") as f:
                f.write(data)
            running = self._hashing.pop(sha, None)
            if running is None and have == 0:
                running = (0, hashlib.sha256())
            if running is not None and running[0] == have:
                running[1].update(data)
                self._hashing[sha] = (have + len(data), running[1])
            return have + len(data)

    def finish(self, sha: str) -> None:
        with self._lock:
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
                os.fsync(f.fileno())  # acknowledged only once on disk
            os.replace(part, target)

    def open(self, sha: str) -> BinaryIO:
        return open(self._object(sha), "rb")


def blob_root(db_url: str, configured: str | None) -> Path | None:
    """The artifacts folder: as configured, else beside a SQLite database; None (no artifacts) for another
    database without a configured folder."""
    if configured:
        return Path(configured).expanduser()
    if db_url.startswith("sqlite:///"):
        return Path(db_url[len("sqlite:///"):]).parent / "artifacts"
    return None
