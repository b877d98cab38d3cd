"""What use_artifact accepts of a server's answer: the checks the server makes at upload, and a cache-bound folder."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

_SHA = re.compile(r"^[0-9a-f]{64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_PATH = 1024


class ArtifactError(RuntimeError):
    """use_artifact could not find or download the version; ArtifactRef.wait(): it was not stored (the reason)."""


def _inside(folder: Path, rel: str) -> Path:
    """folder/rel, refused unless it stays under folder once '..' and absolute parts are resolved."""
    dest = Path(os.path.normpath(folder / rel))
    if dest == folder or folder not in dest.parents:
        raise ArtifactError(f"artifact file path {rel!r} leaves its version folder")
    return dest


def check_path(path: Any) -> str:
    """A file path as the server takes it at upload: relative, / separated, no '..', no control characters."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH or path.startswith("/") or \
            ".." in path.split("/") or "\\" in path or _CONTROL.search(path):
        raise ArtifactError(f"the server named an unsafe artifact file path {path!r}")
    return path


def version_files(found: Any, base: Path) -> tuple[Path, list[tuple[Path, str, int]]]:
    """(the version's folder, [(where each file goes, its sha256, its size)]) of a server's /artifact answer.

    The server (or whoever answers in its name) chooses every name here: each one is checked before any file is
    made, so that no answer can create or overwrite a file outside `base`."""
    try:
        name, version, files = found["name"], found["version"], found["files"]
    except (TypeError, KeyError):
        raise ArtifactError("the server's answer names no artifact version") from None
    if not isinstance(name, str) or not name or _CONTROL.search(name) or name.strip(".") == "" or \
            isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ArtifactError(f"the server named an unsafe artifact {name!r} v{version!r}")
    if not isinstance(files, list) or not files:
        raise ArtifactError(f"the server listed no files for {name}:v{version}")
    versions = base / "versions"
    target = _inside(versions, name.replace("/", "_").replace("\\", "_")) / f"v{version}"
    out, seen = [], set()
    for f in files:
        path, sha, size = (f.get("path"), f.get("sha256"), f.get("size")) if isinstance(f, dict) else (None,) * 3
        dest = _inside(target, check_path(path))
        if not isinstance(sha, str) or not _SHA.match(sha):
            raise ArtifactError(f"the server named a bad sha256 {sha!r} for {path!r}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0 or dest in seen:
            raise ArtifactError(f"the server listed {path!r} twice or without its size")
        seen.add(dest)
        out.append((dest, sha, size))
    return target, out
