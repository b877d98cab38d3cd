"""Cleanup of artifact bytes: stored blobs no artifact version names, and uploads abandoned long ago.

Safe beside a running server and its uploads, by time rather than by locks (a cleanup may run in another
process): only what nobody wrote or touched for `grace_s` goes. A blob being uploaded lives in uploads/ and is
written to as it arrives; a blob just stored is new; and a blob an upload found already stored (a client about
to name it in a new version) was touched by that answer (BlobStore.touch). The blobs are listed before the
versions are read, so one stored and named in between is not even looked at.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..store import Store
from .blobs import BlobStore

DEFAULT_GRACE_S = 24 * 3600.0  # longer than a client waits between "already stored" and naming the blob


@dataclass
class CleanupReport:
    blobs: int = 0            # unreferenced blobs removed (or, on a dry run, that would be)
    blob_bytes: int = 0
    uploads: int = 0          # abandoned partial uploads removed
    upload_bytes: int = 0
    recent: int = 0           # unreferenced but within the grace period: kept this time
    referenced: int = 0

    def summary(self, dry_run: bool = False) -> str:
        verb = "would remove" if dry_run else "removed"
        return (f"{verb} {self.blobs} unused blob(s) ({self.blob_bytes / 1e6:.1f} MB) and {self.uploads} abandoned "
                f"upload(s) ({self.upload_bytes / 1e6:.1f} MB); kept {self.referenced} in use and {self.recent} "
                f"unused but recent")


def collect(store: Store, blobs: BlobStore, grace_s: float = DEFAULT_GRACE_S, dry_run: bool = False,
            now: float | None = None) -> CleanupReport:
    """Remove (unless `dry_run`) what no version names and nobody wrote or touched for `grace_s` seconds."""
    if grace_s < 0:
        raise ValueError("grace_s must be >= 0")
    cutoff = (time.time() if now is None else now) - grace_s
    report = CleanupReport()
    candidates = list(blobs.stored())  # before the references: see the module's docstring
    referenced = store.artifact_blob_refs()
    for blob in candidates:
        if blob.sha in referenced:
            report.referenced += 1
        elif blob.mtime > cutoff:
            report.recent += 1
        elif dry_run or blobs.remove(blob.sha, cutoff):
            report.blobs += 1
            report.blob_bytes += blob.size
    for part in list(blobs.uploads()):
        if part.mtime <= cutoff and (dry_run or blobs.drop_upload(part.sha, cutoff)):
            report.uploads += 1
            report.upload_bytes += part.size
    return report
