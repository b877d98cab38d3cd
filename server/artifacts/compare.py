"""Two versions of an artifact side by side: which files were added, removed or changed, and which metadata keys."""

from __future__ import annotations

from typing import Any

from ..store.artifact_records import ArtifactRecord

_ORDER = {"changed": 0, "added": 1, "removed": 2, "same": 3}


def _status(a: Any, b: Any, missing: object) -> str:
    if a is missing:
        return "added"
    if b is missing:
        return "removed"
    return "same" if a == b else "changed"


def compare(a: ArtifactRecord, b: ArtifactRecord) -> dict[str, Any]:
    """{"a", "b" (the versions without their file lists), "files": [{"path", "status", "a", "b"}],
    "metadata": [{"key", "status", "a", "b"}], "counts": {status: n}}; a side a file or key is absent from is
    null. Files compare by content hash, so a file renamed shows as one removed and one added. Changed first,
    then added, removed and the same ones; by path within each."""
    missing = object()
    old = {f["path"]: f for f in a.files}
    new = {f["path"]: f for f in b.files}
    files = []
    for path in old.keys() | new.keys():
        fa, fb = old.get(path), new.get(path)
        side = lambda f: None if f is None else {"sha256": f["sha256"], "size": f["size"]}  # noqa: E731
        status = "added" if fa is None else "removed" if fb is None else \
            "same" if side(fa) == side(fb) else "changed"
        files.append({"path": path, "status": status, "a": side(fa), "b": side(fb)})
    files.sort(key=lambda f: (_ORDER[f["status"]], f["path"]))
    metadata = []
    for key in a.metadata.keys() | b.metadata.keys():
        va, vb = a.metadata.get(key, missing), b.metadata.get(key, missing)
        metadata.append({"key": key, "status": _status(va, vb, missing),
                         "a": None if va is missing else va, "b": None if vb is missing else vb})
    metadata.sort(key=lambda m: (_ORDER[m["status"]], m["key"]))
    counts = {s: sum(f["status"] == s for f in files) for s in _ORDER}

    def brief(v: ArtifactRecord) -> dict[str, Any]:
        return {k: val for k, val in v.to_json().items() if k != "files"} | {"file_count": len(v.files)}

    return {"a": brief(a), "b": brief(b), "files": files, "metadata": metadata, "counts": counts}
