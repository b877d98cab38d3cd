"""Talking to an S3-compatible store: the client (standard AWS configuration), its errors, and a stored object
read as a seekable file (each read a streamed Range GET)."""

from __future__ import annotations

import io
from typing import Any


class BlobStoreUnavailable(OSError):
    """The bucket did not answer as expected: callers treat it like a failing disk (the request is refused,
    the upload resumes later)."""


def client_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


def http_status(exc: BaseException) -> int:
    return int(getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


class S3Reader(io.RawIOBase):
    """A stored blob read as a seekable file: each read streams from the position with a Range GET."""

    def __init__(self, store: Any, key: str, size: int) -> None:
        self.store, self.key, self.length = store, key, size
        self.pos = 0
        self.body: Any = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.length}[whence]
        if base + offset != self.pos:
            self._drop_body()
            self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        if self.pos >= self.length or len(buffer) == 0:
            return 0
        if self.body is None:
            self.body = self.store._call("get_object", Key=self.key, Range=f"bytes={self.pos}-")["Body"]
        data = self.body.read(len(buffer))
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)

    def _drop_body(self) -> None:
        if self.body is not None:
            self.body.close()
            self.body = None

    def close(self) -> None:
        self._drop_body()
        super().close()


def make_client() -> Any:
    """An S3 client configured the standard AWS way: AWS_ENDPOINT_URL (MinIO, R2 ...), region, keys, profiles."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise SystemExit("an s3:// artifacts URL needs boto3: pip install 'paneboard[s3]'") from None
    # Checksums only where S3 requires them: the blob's sha256 is checked anyway, and several S3-compatible
    # stores refuse the CRC headers botocore adds by default since 1.36.
    config = Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 5, "mode": "standard"},
                    max_pool_connections=32, request_checksum_calculation="when_required",
                    response_checksum_validation="when_required")
    return boto3.session.Session().client("s3", config=config)
