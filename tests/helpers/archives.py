"""Tar archives built in memory for the archive-import tests (hand-made, hostile ones included)."""

from __future__ import annotations

import io
import tarfile


def make_tar(members: dict[str, bytes]) -> bytes:
    """An uncompressed tar holding `members` (name -> bytes) in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()
