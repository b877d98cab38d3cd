"""Which BlobStore an artifacts URL names: `file://PATH` (a folder, the default beside a SQLite database) or
`s3://BUCKET[/PREFIX]` (any S3-compatible store, configured the standard AWS way)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from .blobs import BlobStore, LocalBlobStore, blob_root


class ArtifactsUrlError(ValueError):
    """An artifacts URL that names no store this server can use."""


def parse_artifacts_url(url: str) -> tuple[str, str, str]:
    """("file", folder, "") or ("s3", bucket, prefix); ArtifactsUrlError for anything else."""
    if "://" not in url:  # a bare folder, as --artifacts-dir takes
        return "file", str(Path(url).expanduser()), ""
    parts = urlsplit(url)
    if parts.scheme == "file":
        return "file", str(Path(parts.netloc + parts.path).expanduser()), ""
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ArtifactsUrlError(f"{url!r} names no bucket: s3://BUCKET[/PREFIX]")
        return "s3", parts.netloc, parts.path.strip("/")
    raise ArtifactsUrlError(f"{url!r}: the artifacts URL is file://PATH or s3://BUCKET[/PREFIX]")


def open_blob_store(db_url: str, artifacts_url: str | None = None, artifacts_dir: str | None = None,
                    create: bool = True) -> BlobStore | None:
    """The store `artifacts_url` names, else the folder (configured or beside a SQLite database); None when there
    is none (another database, nothing configured; or, without `create`, no folder there yet)."""
    if artifacts_url:
        kind, where, prefix = parse_artifacts_url(artifacts_url)
        if kind == "s3":
            from .s3_blobs import S3BlobStore

            return S3BlobStore(where, prefix)
        artifacts_dir = where
    root = blob_root(db_url, artifacts_dir)
    if root is None or not (create or root.is_dir()):
        return None
    return LocalBlobStore(root)
