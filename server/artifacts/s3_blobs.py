"""Artifact bytes in an S3-compatible bucket (AWS S3, MinIO, R2, Ceph RGW): the BlobStore every server reaches.

Keys under the configured prefix: `objects/<sha>` the stored blobs, and the multipart uploads that become them;
`touched/<sha>` an empty marker whose time is when an upload last found the blob already stored (S3 cannot
change an object's time in place); `uploads/<sha>.tail` the bytes after the last part (S3 parts are >= 5 MB,
requests may end anywhere); `uploads/<sha>.verifying` while a completed upload whose hash this server did not
follow (another server or a restart took part of it) is read back and checked: until it is gone the object does
not count as stored. Nothing is kept on the server's disk, and any server on the bucket can take the next request
of an upload.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from .blobs import _HASHING, BlobError, BlobInfo, UploadRegister
from .s3_client import BlobStoreUnavailable, S3Reader, client_errors, http_status, make_client

PART = 8 << 20  # bytes of each multipart part (S3's minimum is 5 MB; 10,000 parts = 80 GB)
# Parts sent at once while the request's next bytes arrive: one connection's round trips overlap the others',
# and RSS stays near (IN_FLIGHT + 2) parts (bench/artifacts.py --s3 measures both).
IN_FLIGHT = 4
# Parts go out on these threads, so that receiving a request and sending its parts on overlap.
_SENDING = ThreadPoolExecutor(max_workers=8, thread_name_prefix="paneboard-s3-part")
READ_BLOCK = 8 << 20  # a hash check's read-back block


@dataclass
class UploadState:
    """Where an unfinished upload stands in the bucket."""

    upload_id: str | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)  # {"PartNumber", "ETag", "Size"} in order
    tail: int | None = None      # bytes in the tail object (None: no tail object counts)
    staged: int | None = None    # size of the completed upload awaiting its hash check
    mtime: float = 0.0           # newest write (part, tail or completion)
    # A tail object with no upload it counts for: a crash between completing an upload and deleting its tail
    # left it (its bytes are in the stored object). Only a cleanup deletes it, as for abandoned uploads.
    leftover: int | None = None

    @property
    def size(self) -> int:
        if self.staged is not None:
            return self.staged
        return sum(p["Size"] for p in self.parts) + (self.tail or 0)

    @property
    def exists(self) -> bool:
        return self.upload_id is not None or self.tail is not None or self.staged is not None


class S3Upload:
    """One request's bytes into an upload: cut into parts of PART bytes sent in the background, the rest kept as
    the tail object."""

    def __init__(self, store: S3BlobStore, sha: str, state: UploadState, digest: Any, tail: bytes) -> None:
        self.store, self.sha, self.state, self.digest = store, sha, state, digest
        # Received bytes not yet in a part, as they came (the tail object's first: they follow the last part).
        # A part is joined from them once: each byte is copied one time on its way to the bucket.
        self.pieces: list[bytes | memoryview] = [tail] if tail else []
        self.buffered = len(tail)
        self.size = state.size
        self.sending: list[tuple[int, int, Future]] = []  # (part number, size, its upload) oldest first
        self.failed: BaseException | None = None
        self.broken = False

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self.state.staged is not None:
            raise BlobError(409, f"upload of {self.sha[:12]} is complete: only its last request is left")
        hashed = _HASHING.submit(self.digest.update, data) if self.digest is not None else None
        try:
            self.pieces.append(data)
            self.buffered += len(data)
            self.size += len(data)
            while self.buffered >= PART:
                self._send(self._take(PART))
        except BaseException:
            self.digest = None  # what reached the bucket is unsure: finish() reads it back to hash it
            self.broken = True  # a part's bytes may be lost: the tail would not follow the parts
            raise
        finally:
            if hashed is not None:
                hashed.result()

    def _take(self, n: int) -> bytes:
        """The first `n` buffered bytes as one object (the last piece taken may be split, not copied twice)."""
        taken: list[bytes | memoryview] = []
        need = n
        while need:
            piece = self.pieces.pop(0)
            if len(piece) > need:
                view = memoryview(piece)
                taken.append(view[:need])
                self.pieces.insert(0, view[need:])
                need = 0
            else:
                taken.append(piece)
                need -= len(piece)
        self.buffered -= n
        return taken[0] if len(taken) == 1 and isinstance(taken[0], bytes) else b"".join(taken)

    def _send(self, data: bytes) -> None:
        if self.state.upload_id is None:
            self.state.upload_id = self.store._call("create_multipart_upload", Key=self.store._object(self.sha))["UploadId"]
        number = len(self.state.parts) + len(self.sending) + 1
        self.sending.append((number, len(data), _SENDING.submit(self.store._send_part, self.sha, self.state.upload_id,
                                                                number, data)))
        while len(self.sending) > IN_FLIGHT:
            self._settle_oldest()

    def _settle_oldest(self) -> None:
        number, size, future = self.sending.pop(0)
        try:
            etag = future.result()
        except BaseException as exc:
            self.failed = self.failed or exc
            return
        if self.failed is None:  # parts count only while they follow each other from the first
            self.state.parts.append({"PartNumber": number, "ETag": etag, "Size": size})
            self.state.tail = None  # its bytes led these parts (the tail object is now stale: see _state)

    def close(self) -> int:
        try:
            while self.sending:
                self._settle_oldest()
            if self.failed is not None:  # the bytes after the parts that arrived are lost: resent from there
                self.digest = None
                raise BlobStoreUnavailable(f"a part of {self.sha[:12]} could not be stored: {self.failed}")
            if not self.broken:  # else the client resends from the parts (and the tail) already stored
                self.store._put_tail(self.sha, self.state, self._take(self.buffered))
        finally:
            self.size = self.state.size
            self.store._release(self.sha, self.size, self.digest)
        return self.size


class S3BlobStore(UploadRegister):
    """Blobs as objects in `bucket` under `prefix`; see the module's docstring for the keys."""

    def __init__(self, bucket: str, prefix: str = "", client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.client = client if client is not None else make_client()
        super().__init__()  # this server's requests' uploads (see docs: one writer)

    # -- keys and calls -----------------------------------------------------------------------------------

    def _object(self, sha: str) -> str:
        return f"{self.prefix}objects/{sha}"

    def _marker(self, sha: str) -> str:
        return f"{self.prefix}touched/{sha}"

    def _verifying(self, sha: str) -> str:
        return f"{self.prefix}uploads/{sha}.verifying"

    def _tail_key(self, sha: str) -> str:
        return f"{self.prefix}uploads/{sha}.tail"

    def _call(self, op: str, **kw: Any) -> Any:
        try:
            return getattr(self.client, op)(Bucket=self.bucket, **kw)
        except client_errors() as exc:
            raise BlobStoreUnavailable(f"s3://{self.bucket}: {op} failed: {exc}") from exc

    def _head(self, key: str) -> dict[str, Any] | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=key)
        except client_errors() as exc:
            if http_status(exc) == 404:
                return None
            raise BlobStoreUnavailable(f"s3://{self.bucket}: head of {key} failed: {exc}") from exc

    def _delete(self, key: str) -> None:
        self._call("delete_object", Key=key)

    def check(self) -> None:
        """Raise BlobStoreUnavailable unless the bucket answers (at server start: fail early, not mid-upload)."""
        self._call("list_objects_v2", Prefix=self.prefix, MaxKeys=1)

    # -- stored blobs -------------------------------------------------------------------------------------

    def has(self, sha: str) -> bool:
        return self.size(sha) is not None

    def size(self, sha: str) -> int | None:
        head = self._head(self._object(sha))
        if head is None or self._head(self._verifying(sha)) is not None:
            return None
        return int(head["ContentLength"])

    def open(self, sha: str) -> BinaryIO:
        size = self.size(sha)
        if size is None:
            raise FileNotFoundError(f"no blob {sha}")
        return io.BufferedReader(S3Reader(self, self._object(sha), size), 1 << 20)  # type: ignore[return-value]

    def touch(self, sha: str) -> None:
        with self._lock:  # not between this server's cleanup's look at the time and its delete
            self._call("put_object", Key=self._marker(sha), Body=b"")

    def stored(self) -> Iterator[BlobInfo]:
        touched = {sha: t for sha, _, t in self._list("touched/")}
        verifying = {name.removesuffix(".verifying") for name, _, _ in self._list("uploads/")}
        for sha, size, mtime in self._list("objects/"):
            if len(sha) == 64 and sha not in verifying:
                yield BlobInfo(sha, size, max(mtime, touched.get(sha, 0.0)))

    def remove(self, sha: str, unused_since: float) -> bool:
        with self._lock:
            heads = [self._head(self._object(sha)), self._head(self._marker(sha))]
            if heads[0] is None or any(h is not None and h["LastModified"].timestamp() > unused_since for h in heads):
                return False
            self._delete(self._object(sha))
            self._delete(self._marker(sha))
            return True

    def _list(self, under: str) -> Iterator[tuple[str, int, float]]:
        """(name after `under`, size, time) of each object under the prefix's `under` folder."""
        start = self.prefix + under
        for obj in self._pages("list_objects_v2", "Contents", Prefix=start):
            yield obj["Key"][len(start):], int(obj["Size"]), obj["LastModified"].timestamp()

    def _pages(self, op: str, items: str, **kw: Any) -> list[dict[str, Any]]:
        """Every item of a listing that S3 answers in pages (1,000 keys or parts a page)."""
        try:
            pages = self.client.get_paginator(op).paginate(Bucket=self.bucket, **kw)
            return [item for page in pages for item in page.get(items, [])]
        except client_errors() as exc:
            raise BlobStoreUnavailable(f"s3://{self.bucket}: {op} failed: {exc}") from exc

    # -- uploads ------------------------------------------------------------------------------------------

    def _state(self, sha: str) -> UploadState:
        state = UploadState()
        marker = self._head(self._verifying(sha))
        staged = self._head(self._object(sha)) if marker is not None else None
        if marker is not None and staged is not None:
            state.staged, state.mtime = int(staged["ContentLength"]), marker["LastModified"].timestamp()
            return state
        found = self._call("list_multipart_uploads", Prefix=self._object(sha))
        ids = [u["UploadId"] for u in found.get("Uploads", []) if u["Key"] == self._object(sha)]
        if ids:
            state.upload_id = ids[0]
            for p in sorted(self._pages("list_parts", "Parts", Key=self._object(sha), UploadId=ids[0]),
                            key=lambda p: p["PartNumber"]):
                if p["PartNumber"] != len(state.parts) + 1:  # after a gap (a part lost in a crash): resent
                    break
                state.parts.append({"PartNumber": p["PartNumber"], "ETag": p["ETag"], "Size": int(p["Size"])})
                state.mtime = max(state.mtime, p["LastModified"].timestamp())
        tail = self._head(self._tail_key(sha))
        # A tail written before the latest part went out was taken into that part: it no longer counts.
        if tail is not None and int(tail["Metadata"].get("after-part", "-1")) == len(state.parts):
            state.tail = int(tail["ContentLength"])
            state.mtime = max(state.mtime, tail["LastModified"].timestamp())
        elif tail is not None and state.upload_id is None:
            state.leftover = int(tail["ContentLength"])
            state.mtime = tail["LastModified"].timestamp()
        return state

    def partial_size(self, sha: str) -> int:
        return self._state(sha).size

    def open_upload(self, sha: str, offset: int) -> S3Upload:
        with self._lock:
            if sha in self._writing:
                raise BlobError(409, f"another request is uploading {sha[:12]}")
            self._writing.add(sha)
        try:
            state = self._state(sha)
            if offset != state.size:
                raise BlobError(409, f"upload of {sha[:12]} is at byte {state.size}, not {offset}")
            tail = self._call("get_object", Key=self._tail_key(sha))["Body"].read() if state.tail else b""
            with self._lock:
                running = self._hashing.pop(sha, None)
            digest = running[1] if running is not None and running[0] == state.size else None
            if not state.exists:
                digest = hashlib.sha256()
            return S3Upload(self, sha, state, digest, tail)
        except BaseException:
            with self._lock:
                self._writing.discard(sha)
            raise

    def _send_part(self, sha: str, upload_id: str, number: int, data: bytes) -> str:
        return self._call("upload_part", Key=self._object(sha), UploadId=upload_id, PartNumber=number,
                          Body=data)["ETag"]

    def _put_tail(self, sha: str, state: UploadState, data: bytes) -> None:
        if state.staged is not None:
            return
        if data or state.upload_id is None:  # an upload of no bytes yet still exists (an empty file is a blob)
            self._call("put_object", Key=self._tail_key(sha), Body=data,
                       Metadata={"after-part": str(len(state.parts))})
            state.tail = len(data)
        elif state.tail is None:
            self._delete(self._tail_key(sha))

    def finish(self, sha: str) -> None:
        with self._lock:
            if sha in self._writing:
                raise BlobError(409, f"another request is uploading {sha[:12]}")
            self._writing.add(sha)
            running = self._hashing.pop(sha, None)
        try:
            state = self._state(sha)
            if not state.exists:
                raise BlobError(409, f"no upload of {sha[:12]} to finish")
            digest = running[1] if running is not None and running[0] == state.size else None
            if state.staged is None and state.upload_id is None:  # small: the tail is the whole blob
                data = self._call("get_object", Key=self._tail_key(sha))["Body"].read()
                self._check(sha, digest or hashlib.sha256(data), self._tail_key(sha))
                self._call("put_object", Key=self._object(sha), Body=data)
                self._delete(self._tail_key(sha))
                return
            if digest is not None and digest.hexdigest() != sha:  # nothing reaches objects/
                self.drop_upload(sha, float("inf"), claimed=True)
                raise BlobError(422, f"upload of {sha[:12]} hashes to {digest.hexdigest()[:12]}: dropped")
            if digest is None:  # another server or a restart took part of it: checked once it is whole
                self._call("put_object", Key=self._verifying(sha), Body=b"")
            if state.staged is None:
                self._complete(sha, state)
            if digest is None:
                digest = self._hash_object(self._object(sha))
                self._check(sha, digest, self._object(sha))
                self._delete(self._verifying(sha))
        finally:
            with self._lock:
                self._writing.discard(sha)

    def _complete(self, sha: str, state: UploadState) -> None:
        """The parts and the tail become the object objects/<sha>."""
        assert state.upload_id is not None
        if state.tail:
            tail = self._call("get_object", Key=self._tail_key(sha))["Body"].read()
            number = len(state.parts) + 1
            state.parts.append({"PartNumber": number, "ETag": self._send_part(sha, state.upload_id, number, tail),
                                "Size": len(tail)})
        parts = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in state.parts]
        self._call("complete_multipart_upload", Key=self._object(sha), UploadId=state.upload_id,
                   MultipartUpload={"Parts": parts})
        self._delete(self._tail_key(sha))

    def _hash_object(self, key: str) -> Any:
        digest = hashlib.sha256()
        body = self._call("get_object", Key=key)["Body"]
        while block := body.read(READ_BLOCK):
            digest.update(block)
        return digest

    def _check(self, sha: str, digest: Any, key: str) -> None:
        if digest.hexdigest() != sha:
            self._delete(key)
            self._delete(self._verifying(sha))
            raise BlobError(422, f"upload of {sha[:12]} hashes to {digest.hexdigest()[:12]}: dropped")

    def uploads(self) -> Iterator[BlobInfo]:
        shas = {name.rsplit(".", 1)[0] for name, _, _ in self._list("uploads/")}
        found = self._call("list_multipart_uploads", Prefix=self.prefix + "objects/")
        shas |= {u["Key"].rsplit("/", 1)[1] for u in found.get("Uploads", [])}
        for sha in sorted(shas):
            if len(sha) == 64:
                state = self._state(sha)
                if state.exists or state.leftover is not None:
                    yield BlobInfo(sha, state.size if state.exists else state.leftover or 0, state.mtime)

    def drop_upload(self, sha: str, unused_since: float, claimed: bool = False) -> bool:
        """(`claimed`: by finish(), which holds the upload itself.)"""
        with self._lock:
            if sha in self._writing and not claimed:
                return False
            state = self._state(sha)
            if not (state.exists or state.leftover is not None) or state.mtime > unused_since:
                return False
            self._hashing.pop(sha, None)
            if state.upload_id is not None:
                self._call("abort_multipart_upload", Key=self._object(sha), UploadId=state.upload_id)
            if state.staged is not None:  # completed, never checked: not a blob
                self._delete(self._object(sha))
                self._delete(self._verifying(sha))
            self._delete(self._tail_key(sha))
            return True
