"""Env archives: a tar of JSON (env meta, panes, step records, console lines) plus raw float64 points and blobs,
to move runs between servers. Export reads through the store; import parses and checks everything before anything
is written."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import tempfile
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from .. import jsonio
from ..artifacts.blobs import BlobStore
from ..commands.envelope import EventError, check_name
from ..commands.envops import check_layout
from ..panes import kind_module, overlays
from ..store import PaneRecord, Store
from . import artifact_archive
from .archive_console import export_console, read_console
from .archive_data import EnvData, PaneData, TraceData
from .archive_limits import ArchiveLimits, check_members, is_plain, spool_checked
from .archive_run import export_run, read_run
from .import_checks import check_meta, check_pane
from .sniff import ATTACHMENT, sniff

FORMAT = "paneboard-envs"
VERSION = 1
_SHA = re.compile(rb'"([0-9a-f]{64})"')  # a blob reference inside pane content (as the blob sweep finds them)
_SHA_NAME = re.compile(r"^[0-9a-f]{64}$")
MAX_MEMBER_BYTES = ArchiveLimits().member_bytes  # spool_checked refuses bigger ones before this reads
MAX_STEP_BATCH = 500  # step records read per store call on export


# ------------------------------------------------------------------------------------------------ export


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _add_file(tar: tarfile.TarFile, name: str, f: IO[bytes]) -> None:
    size = f.seek(0, io.SEEK_END)
    f.seek(0)
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    tar.addfile(info, f)


def _blob_refs(pane: PaneRecord) -> set[str]:
    return {m.decode() for m in _SHA.findall(jsonio.dumps(pane.content))} if pane.content else set()


def export_envs(store: Store, names: list[str], out: IO[bytes], artifact_blobs: BlobStore | None = None
                ) -> dict[str, int]:
    """Write the archive of these envs (they must exist) to `out`, with the artifact versions they logged or used
    and those versions' bytes from `artifact_blobs`; counts of envs, panes, points, steps, blobs, console lines
    and artifacts."""
    counts = {"envs": 0, "panes": 0, "points": 0, "steps": 0, "blobs": 0, "console lines": 0, "artifacts": 0,
              "artifact_blobs": 0}
    blobs: dict[str, None] = {}
    with tarfile.open(fileobj=out, mode="w") as tar:
        entries = []
        for e, name in enumerate(names):
            summary = store.get_env(name)
            if summary is None:
                raise EventError(f"env {name!r} not found")
            folder = f"envs/{e:04d}"
            entries.append({"name": name, "dir": folder})
            console, printed = export_console(store, name, tar, folder, _add)
            counts["console lines"] += printed
            _add(tar, f"{folder}/env.json", jsonio.dumps({"name": name, "meta": store.get_env_meta(name) or {},
                                                          "forked_from": summary.forked_from, "console": console,
                                                          "run": export_run(store, name)}))
            lines = []
            for p, pane in enumerate(store.list_panes(name)):
                traces = []
                for t, trace in enumerate(store.list_traces(pane)):
                    # x, y, wall of each point as three little-endian float64: exact, NaN and Inf included.
                    with tempfile.TemporaryFile() as f:
                        n = 0
                        for x, y, w in store.export_series(trace):
                            f.write(np.column_stack([x, y, w]).astype("<f8").tobytes())
                            n += len(x)
                        _add_file(tar, f"{folder}/points/{p}.{t}.f64", f)
                    traces.append({"name": trace.name, "style": trace.style, "n": n})
                    counts["points"] += n
                steps, _walls = store.step_index(pane)
                if len(steps):
                    rows = []
                    for i in range(0, len(steps), MAX_STEP_BATCH):
                        for r in store.read_steps(pane, list(range(i, min(i + MAX_STEP_BATCH, len(steps))))):
                            rows.append(jsonio.dumps({"step": r.step, "wall": r.wall, "data": r.data, "blob": r.blob}))
                            if r.blob:
                                blobs[r.blob] = None
                            blobs.update(dict.fromkeys(overlays.blob_refs(r.data)))  # masks over a picture
                    _add(tar, f"{folder}/steps/{p}.jsonl", b"\n".join(rows) + b"\n")
                    counts["steps"] += len(rows)
                blobs.update(dict.fromkeys(_blob_refs(pane)))
                lines.append(jsonio.dumps({"win": pane.win, "kind": pane.kind, "title": pane.title, "opts": pane.opts,
                                           "content": pane.content, "layout": pane.layout, "traces": traces,
                                           "steps": int(len(steps))}))
                counts["panes"] += 1
            _add(tar, f"{folder}/panes.jsonl", b"\n".join(lines) + (b"\n" if lines else b""))
            counts["envs"] += 1
        kept = []
        for sha in blobs:
            found = store.get_blob(sha)
            if found is None:
                continue  # a 64-hex string in content that names no blob
            _add(tar, f"blobs/{sha}", found[1])
            kept.append({"sha256": sha, "mime": found[0]})
        counts["blobs"] = len(kept)
        versions, written = artifact_archive.export(store, artifact_blobs, names, tar, _add, _add_file)
        counts["artifacts"], counts["artifact_blobs"] = versions, len(written)
        _add(tar, "manifest.json", jsonio.dumps({"format": FORMAT, "version": VERSION, "envs": entries,
                                                 "blobs": kept, "artifacts": versions or None, "counts": counts}))
    return counts


# ------------------------------------------------------------------------------------------------ import


def _bad(message: str) -> EventError:
    return EventError(f"not a paneboard env archive: {message}")


def _member(tar: tarfile.TarFile, name: str) -> bytes:
    try:
        info = tar.getmember(name)
    except KeyError:
        raise _bad(f"{name} is missing") from None
    if not is_plain(info) or info.size > MAX_MEMBER_BYTES:
        raise _bad(f"{name} is not a plain file of at most {MAX_MEMBER_BYTES} bytes")
    f = tar.extractfile(info)
    assert f is not None  # a regular file
    return f.read(info.size)


def _json(data: bytes, what: str) -> Any:
    try:
        return jsonio.loads(data)
    except (ValueError, RecursionError):
        raise _bad(f"{what} is not JSON") from None


def _obj(value: Any, what: str, optional: bool = False) -> dict | None:
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise _bad(f"{what} must be an object")
    return value


def _lines(data: bytes, what: str) -> list[dict]:
    out = []
    for i, line in enumerate(data.splitlines()):
        if line.strip():
            obj = _json(line, f"{what} line {i + 1}")
            out.append(_obj(obj, f"{what} line {i + 1}") or {})
    return out


def _pane(tar: tarfile.TarFile, folder: str, p: int, raw: dict) -> PaneData:
    where = f"{folder}/panes.jsonl pane {p + 1}"
    win = check_name(raw.get("win"), "win")
    kind = raw.get("kind")
    if kind_module(kind) is None:
        raise _bad(f"{where}: unknown pane kind {kind!r}")
    raw_title = raw.get("title")
    title = raw_title if isinstance(raw_title, str) else ""
    pane = PaneData(win=win, kind=str(kind), title=title, opts=_obj(raw.get("opts", {}), f"{where} opts") or {},
                    content=_obj(raw.get("content"), f"{where} content", optional=True),
                    layout=check_layout(raw.get("layout")))
    traces = raw.get("traces", [])
    if not isinstance(traces, list):
        raise _bad(f"{where}: traces must be a list")
    for t, tr in enumerate(traces):
        tr = _obj(tr, f"{where} trace {t}") or {}
        n = tr.get("n")
        if not isinstance(tr.get("name"), str) or not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise _bad(f"{where} trace {t}: needs a name and a point count n")
        data = _member(tar, f"{folder}/points/{p}.{t}.f64")
        if len(data) != n * 24:
            raise _bad(f"{folder}/points/{p}.{t}.f64 holds {len(data)} bytes, not {n} points of 24")
        pts = np.frombuffer(data, dtype="<f8").reshape(-1, 3).astype(np.float64)
        pane.traces.append(TraceData(tr["name"], _obj(tr.get("style", {}), f"{where} trace style") or {}, pts))
    nsteps = raw.get("steps", 0)
    if not isinstance(nsteps, int) or isinstance(nsteps, bool) or nsteps < 0:
        raise _bad(f"{where}: steps must be a count")
    if nsteps:
        rows = _lines(_member(tar, f"{folder}/steps/{p}.jsonl"), f"{folder}/steps/{p}.jsonl")
        if len(rows) != nsteps:
            raise _bad(f"{folder}/steps/{p}.jsonl holds {len(rows)} records, not {nsteps}")
        for r in rows:
            step, wall, blob = r.get("step"), r.get("wall"), r.get("blob")
            if not isinstance(step, (int, float)) or not isinstance(wall, (int, float)) \
                    or isinstance(step, bool) or isinstance(wall, bool) \
                    or not (blob is None or (isinstance(blob, str) and _SHA_NAME.match(blob))):
                raise _bad(f"{folder}/steps/{p}.jsonl: a record needs numbers step and wall, and blob null or a sha256")
            pane.steps.append((float(step), float(wall), _obj(r.get("data"), "step data", optional=True), blob))
    return pane


def read_archive(source: IO[bytes], limits: ArchiveLimits | None = None,
                 artifact_blobs: BlobStore | None = None) -> list[EnvData]:
    """Parse and check a whole archive (tar, tar.gz, .bz2, .xz); EventError for anything malformed,
    ArchiveLimitError for one over `limits`. Writes nothing to the database; artifact files go to
    `artifact_blobs` as they are read (unreferenced until the import is applied: a cleanup removes them if it
    never is), and without a blob store the archive's artifact versions are left out."""
    plain = spool_checked(source, limits or ArchiveLimits())  # headers checked first: no member is read before they all pass
    try:
        tar = tarfile.open(fileobj=plain, mode="r:")
    except (tarfile.TarError, EOFError, OSError) as exc:
        plain.close()
        raise _bad(f"not a tar file ({exc})") from None
    with plain, tar:
        try:
            check_members(tar, limits or ArchiveLimits())
            manifest = _obj(_json(_member(tar, "manifest.json"), "manifest.json"), "manifest.json") or {}
            if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
                raise _bad(f"manifest.json must say format {FORMAT!r}, version {VERSION}")
            blobs: dict[str, tuple[str, bytes]] = {}
            listed = manifest.get("blobs") or []
            if not isinstance(listed, list):
                raise _bad("manifest blobs must be a list")
            for b in listed:
                b = _obj(b, "a manifest blob") or {}
                sha, mime = b.get("sha256"), b.get("mime")
                if not isinstance(sha, str) or not _SHA_NAME.match(sha) or not isinstance(mime, str) or len(mime) > 64:
                    raise _bad("manifest blobs need a sha256 and a mime type")
                data = _member(tar, f"blobs/{sha}")
                if hashlib.sha256(data).hexdigest() != sha:
                    raise _bad(f"blobs/{sha} does not match its sha256")
                # The archive's claimed type is ignored: a blob labelled text/html must never be served as such.
                blobs[sha] = (sniff(data) or ATTACHMENT, data)
            blob_bytes = {sha: data for sha, (_mime, data) in blobs.items()}
            envs = []
            entries = manifest.get("envs")
            if not isinstance(entries, list) or not entries:
                raise _bad("manifest.json lists no envs")
            for entry in entries:
                entry = _obj(entry, "a manifest env") or {}
                folder = entry.get("dir")
                if not isinstance(folder, str) or not re.fullmatch(r"envs/\d{4,}", folder):
                    raise _bad("a manifest env needs its dir envs/NNNN")
                head = _obj(_json(_member(tar, f"{folder}/env.json"), f"{folder}/env.json"), "env.json") or {}
                name = check_name(head.get("name"), "env")
                # Contents are checked as the live ops check theirs: a bad value must never reach the store.
                env = EnvData(name, check_meta(name, _obj(head.get("meta", {}), "env meta") or {}))
                env.console = read_console(head.get("console"), folder, lambda m: _member(tar, m), _bad)
                env.run = read_run(head.get("run"), name, _bad)
                for p, raw in enumerate(_lines(_member(tar, f"{folder}/panes.jsonl"), f"{folder}/panes.jsonl")):
                    pane = _pane(tar, folder, p, raw)
                    pane.content = check_pane(name, pane.win, pane.kind, pane.content, len(pane.traces), pane.steps,
                                              blob_bytes)
                    env.panes.append(pane)
                env.blobs = {sha: blobs[sha] for sha in _env_blob_refs(env) if sha in blobs}
                envs.append(env)
            if len({e.name for e in envs}) == len(envs):
                artifact_archive.read(tar, manifest, envs, artifact_blobs, _member,
                                      (limits or ArchiveLimits()).member_bytes)
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            if isinstance(exc, EventError):
                raise
            raise _bad(f"unreadable ({type(exc).__name__}: {exc})") from None
    names = [e.name for e in envs]
    if len(set(names)) != len(names):
        raise _bad("an env appears twice")
    return envs


def _env_blob_refs(env: EnvData) -> set[str]:
    refs: set[str] = set()
    for p in env.panes:
        if p.content:
            refs.update(m.decode() for m in _SHA.findall(jsonio.dumps(p.content)))
        refs.update(blob for _s, _w, _d, blob in p.steps if blob)
        refs.update(sha for _s, _w, data, _b in p.steps for sha in overlays.blob_refs(data))
    return refs


def env_names(envs: Iterable[EnvData]) -> list[str]:
    return [e.name for e in envs]
