"""Artifact ops: a new version of an artifact (its files already stored as blobs) and a run's use of one."""

from __future__ import annotations

import re
from typing import Any

from .. import jsonio
from ..commands.envelope import EnvCommand, EventError, check_name, refusing_store_errors
from ..live.deltas import Deltas
from ..runs.ops import check_tags
from ..store import StoreTx

MAX_FILES = 10_000
MAX_METADATA_BYTES = 64 * 1024
MAX_ALIASES = 32
_UID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_TYPE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: never in a file path we keep


def _only(raw: dict, op: str, allowed: set[str]) -> None:
    unknown = set(raw) - allowed - {"op", "env", "win", "s", "t"}
    if unknown:
        raise EventError(f"{op}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")


def check_files(value: Any) -> list[dict]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_FILES:
        raise EventError(f"artifact: files must be a list of 1..{MAX_FILES} entries")
    out, seen = [], set()
    for f in value:
        path, sha, size = (f.get("path"), f.get("sha256"), f.get("size")) if isinstance(f, dict) else (None,) * 3
        if not isinstance(path, str) or not path or len(path) > 1024 or path.startswith("/") or \
                ".." in path.split("/") or "\\" in path or path in seen:
            raise EventError("artifact: each file needs a distinct relative path without '..' (/ separated)")
        if _CONTROL.search(path):
            # A NUL cannot name a file, and the others would reach terminals and headers with the path.
            raise EventError(f"artifact: file path {path!r} holds a control character (U+0000..U+001F, U+007F..U+009F)")
        if not isinstance(sha, str) or not _SHA.match(sha):
            raise EventError("artifact: each file needs its sha256 (64 lowercase hex digits)")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise EventError("artifact: each file needs its size in bytes")
        seen.add(path)
        out.append({"path": path, "sha256": sha, "size": size})
    return out


def parse_artifact(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _only(raw, op, {"name", "uid", "type", "files", "metadata", "step", "aliases"})
    uid, kind, step = raw.get("uid"), raw.get("type") or "model", raw.get("step")
    if not isinstance(uid, str) or not _UID.match(uid):
        raise EventError("artifact: uid must be 8..64 of [A-Za-z0-9_-]")
    if not isinstance(kind, str) or not _TYPE.match(kind):
        raise EventError("artifact: type must be 1..64 of [A-Za-z0-9_.-]")
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, float)) or step != step):
        raise EventError("artifact: step must be a number or null")
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict) or len(jsonio.dumps(metadata)) > MAX_METADATA_BYTES:
        raise EventError(f"artifact: metadata must be an object of at most {MAX_METADATA_BYTES} bytes of JSON")
    # "latest" always moves to the newest version; W&B's idiom names it anyway (aliases=["latest"]): taken as said.
    aliases = [a for a in check_tags(raw.get("aliases") or [], "aliases") if a != "latest"]
    if len(aliases) > MAX_ALIASES or any(a[:1] == "v" and a[1:].isdigit() for a in aliases):
        raise EventError(f"artifact: at most {MAX_ALIASES} aliases, none like a version 'vN'")
    payload = {"name": check_name(raw.get("name"), "name"), "uid": uid, "type": kind, "files": check_files(raw.get("files")),
               "metadata": metadata, "step": None if step is None else float(step), "aliases": aliases}
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=payload)


def parse_use(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    _only(raw, op, {"name", "version"})
    version = raw.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise EventError("artifact_use: version must be a positive integer")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall,
                      payload={"name": check_name(raw.get("name"), "name"), "version": version})


@refusing_store_errors
def apply_artifact(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    p = cmd.payload
    tx.ensure_env(cmd.env)
    rec = tx.add_artifact(p["name"], p["uid"], p["type"], p["files"], p["metadata"], p["step"], cmd.env,
                          p["aliases"])
    deltas.messages.append({"type": "artifact", "env": cmd.env, "artifact": rec.to_json()})


@refusing_store_errors
def apply_use(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.ensure_env(cmd.env)
    if not tx.use_artifact(cmd.payload["name"], cmd.payload["version"], cmd.env):
        raise EventError(f"artifact_use: no artifact {cmd.payload['name']}:v{cmd.payload['version']}")
