"""`dash-server artifacts migrate`: copy every stored blob of one BlobStore into another (a folder into a bucket).

Resumable by construction: a blob the target has is skipped, and one it holds part of goes on from the bytes it
has (the upload protocol's offsets). The target checks each blob's sha256 before keeping it, as for any upload.
The source is left as it was: switch the servers to the new URL, then remove the old folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .blobs import BlobError, BlobStore

BLOCK = 8 << 20  # bytes read from the source per write


@dataclass
class MigrateReport:
    copied: int = 0        # blobs uploaded (wholly or the rest of a partial upload)
    copied_bytes: int = 0
    present: int = 0       # already in the target
    failed: int = 0        # refused by the target (their hash did not match their name: a damaged source file)

    def summary(self) -> str:
        return (f"copied {self.copied} blob(s) ({self.copied_bytes / 1e6:.1f} MB), {self.present} already there"
                + (f", {self.failed} FAILED their sha256 check (left out)" if self.failed else ""))


def migrate(source: BlobStore, target: BlobStore, say: Callable[[str], None] = lambda _: None) -> MigrateReport:
    report = MigrateReport()
    for blob in source.stored():
        if target.has(blob.sha):
            report.present += 1
            continue
        offset = target.partial_size(blob.sha)
        with source.open(blob.sha) as f:
            f.seek(offset)
            upload = target.open_upload(blob.sha, offset)
            try:
                while block := f.read(BLOCK):
                    upload.write(block)
            finally:
                upload.close()
        try:
            target.finish(blob.sha)
        except BlobError as exc:
            report.failed += 1
            say(f"{blob.sha}: {exc}")
            continue
        report.copied += 1
        report.copied_bytes += blob.size - offset
        say(f"{blob.sha[:12]} {blob.size / 1e6:.1f} MB")
    return report
