"""Artifacts from the SDK: log_artifact hands a file or folder to a background uploader; use_artifact downloads.

log_artifact returns at once: hashing, uploading (chunked, resumable at the byte the server has) and the
`artifact` event all happen on the uploader thread. The event goes only once every blob is stored, so a version
the server lists is complete. A job written to a pending-jobs folder beside the spool survives a kill: the next
Client of the same env picks it up (the server knows a replayed uid, and keeps a partial upload's bytes).
"""

from __future__ import annotations

import atexit
import hashlib
import http.client
import json
import logging
import os
import queue
import shutil
import threading
import time
import urllib.error
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .artifact_http import Connection, Slice, get_json, request
from .artifact_paths import ArtifactError, version_files
from .transport import Transport
from .transport.spool import default_dir as default_spool_dir

log = logging.getLogger("paneboard")
CHUNK = 256 << 20     # bytes per upload request: the server streams it to disk, so only a retry's unit
OLD_SERVER_CHUNK = 8 << 20  # a server that buffers each request (413 for a CHUNK) gets these
HASH_BLOCK = 1 << 20
RETRY_MAX_S = 5.0


class ArtifactRef:
    """What log_artifact returns: `str(ref)` is "name:vN" once the server numbered it, "name:@<uid>" before
    (both are references use_artifact accepts). wait() blocks until the version is stored."""

    def __init__(self, name: str, uid: str, client: Any) -> None:
        self.name, self.uid = name, uid
        self.version: int | None = None
        self.error: str | None = None
        self.seq = 0                    # the artifact event's number in the transport, once enqueued
        self.reported = False           # a failure a Client.flush() has reported already
        self._sent = threading.Event()  # every blob stored and the artifact event enqueued (or given up)
        self._client = client

    def done(self) -> bool:
        return self._sent.is_set()

    def wait(self, timeout: float | None = None) -> str | None:
        """"name:vN" once stored; None on timeout; ArtifactError with the reason if it never will be (the upload
        failed, or the server refused the version)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        left = lambda: None if deadline is None else max(0.0, deadline - time.monotonic())  # noqa: E731
        if not self._sent.wait(left()):
            return None
        if self.error is None and self.version is None:
            done, why = self._client.transport.outcome(self.seq, left())
            if not done:
                return None
            if why is not None:
                self.error = f"refused by the server: {why}"
        if self.error is not None:
            raise ArtifactError(f"artifact {self.name} not stored: {self.error}")
        if self.version is None:
            found = get_json(self._client, "/api/v1/artifact?ref=" + urllib.parse.quote(f"{self.name}:@{self.uid}"))
            self.version = int(found["version"])
        return f"{self.name}:v{self.version}"

    def __str__(self) -> str:
        return f"{self.name}:v{self.version}" if self.version is not None else f"{self.name}:@{self.uid}"

    __repr__ = __str__


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _walk(root: Path) -> list[tuple[str, Path]]:
    """(relative path with / separators, file) of a file, or of every file under a folder, sorted."""
    if root.is_file():
        return [(root.name, root)]
    return sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())


class Uploader:
    """One client's upload thread; jobs are journaled (when spooling is on) until their event is delivered."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.transport: Transport = client.transport
        folder = self.transport.spool_folder
        self.journal = folder / "artifacts-pending" if folder is not None else None
        self.jobs: queue.Queue[tuple[dict, ArtifactRef] | None] = queue.Queue()
        self.idle = threading.Event()  # set while no job is queued or running
        self.idle.set()
        self._pending = 0
        self.refs: list[ArtifactRef] = []  # logged, not yet settled for Client.flush()
        self._lock = threading.Lock()
        self.closed = False
        self.thread = threading.Thread(target=self._loop, name="paneboard-artifacts", daemon=True)
        self.thread.start()
        atexit.register(self.close)

    def submit(self, job: dict, ref: ArtifactRef) -> None:
        with self._lock:
            self._pending += 1
            self.idle.clear()
            self.refs.append(ref)
        self.jobs.put((job, ref))

    def settle(self, timeout: float | None) -> bool:
        """For Client.flush(): wait until every artifact logged so far has its event enqueued (or failed);
        False on timeout or if one failed since the last call (each failure is reported once)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            refs = list(self.refs)
        ok = True
        for ref in refs:
            if not ref._sent.wait(None if deadline is None else max(0.0, deadline - time.monotonic())):
                return False
            if ref.error is not None and not ref.reported:
                ref.reported, ok = True, False
        with self._lock:
            self.refs = [r for r in self.refs if r not in refs]
        return ok

    def resume_pending(self) -> list[ArtifactRef]:
        """Re-queue the journaled jobs of this env (a job killed before its artifacts were stored)."""
        refs: list[ArtifactRef] = []
        if self.journal is None or not self.journal.is_dir():
            return refs
        for path in sorted(self.journal.glob("*.json")):
            try:
                job = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if job.get("env") == self.client.env:
                ref = ArtifactRef(job["name"], job["uid"], self.client)
                self.submit(job, ref)
                refs.append(ref)
        return refs

    def close(self, timeout: float | None = None) -> bool:
        """Wait (up to `timeout`, default the client's exit_timeout) for the queued uploads; what is left stays
        journaled for the next Client of the env."""
        done = self.idle.wait(self.transport.exit_timeout if timeout is None else timeout)
        self.closed = True
        self.jobs.put(None)
        try:
            atexit.unregister(self.close)
        except Exception:  # interpreter shutdown
            pass
        return done

    def _loop(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                return
            job, ref = item
            try:
                self._run(job, ref)
            except Exception as exc:  # never let one artifact end the thread (or the job)
                ref.error = f"{type(exc).__name__}: {exc}"
                log.warning("paneboard: artifact %s not stored: %s", ref.name, ref.error)
            finally:
                ref._sent.set()
                with self._lock:  # counted, not jobs.empty(): a submit between the two must keep it busy
                    if ref.error is None and ref in self.refs:  # settled: only a failure waits for flush()
                        self.refs.remove(ref)
                    self._pending -= 1
                    if not self._pending:
                        self.idle.set()

    def _journal(self, job: dict) -> Path | None:
        if self.journal is None:
            return None
        self.journal.mkdir(parents=True, exist_ok=True)
        path = self.journal / f"{job['uid']}.json"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(job))
            os.replace(tmp, path)
        return path

    def _run(self, job: dict, ref: ArtifactRef) -> None:
        journal = self._journal(job)
        root = Path(job["path"])
        if not root.exists():
            if journal is not None:
                journal.unlink(missing_ok=True)
            raise FileNotFoundError(f"{root} is gone")
        files = []
        for rel, path in _walk(root):
            sha = self._store(path)
            files.append({"path": rel, "sha256": sha, "size": path.stat().st_size})
        ref.seq = self.transport.put({
            "t": time.time(), "op": "artifact", "env": job["env"], "win": None, "name": job["name"], "uid": job["uid"],
            "type": job["type"], "files": files, "metadata": job["metadata"], "step": job["step"],
            "aliases": job["aliases"]})
        if not ref.seq:
            raise RuntimeError("its event could not be sent (the log says why)")
        ref._sent.set()
        if journal is not None:  # forgotten once the event is delivered or refused (a kill before that replays it)
            # outcome(), not flush(): a flush here would take the refusal that the caller's flush() must report.
            done = False
            while not done and not self.closed:
                done, _ = self.transport.outcome(ref.seq, 30)
            if done:
                journal.unlink(missing_ok=True)
        if job.get("snapshot"):  # our own hard link (log_artifact(snapshot=True)): done with it
            shutil.rmtree(root.parent, ignore_errors=True)

    def _store(self, path: Path) -> str:
        """Hash the file and upload what the server lacks of it; returns its sha256."""
        for _ in range(3):  # a file rewritten while it uploads hashes differently: hash it again
            sha = _hash(path)
            if self._upload(path, sha):
                return sha
        raise RuntimeError(f"{path} kept changing while it uploaded")

    def _upload(self, path: Path, sha: str) -> bool:
        delay = 0.2
        size = path.stat().st_size
        chunk = CHUNK
        conn = Connection(self.client)
        try:
            while True:
                try:
                    state = get_json(self.client, f"/api/v1/artifact-blobs/{sha}/upload")
                    offset = state["offset"]
                    with open(path, "rb") as f:
                        while not state["stored"]:
                            f.seek(offset)
                            n = max(0, min(chunk, size - offset))
                            last = "&last=1" if offset + n >= size else ""
                            state = conn.put(f"/api/v1/artifact-blobs/{sha}/upload?offset={offset}{last}", Slice(f, n))
                            offset = state["offset"]
                    return True
                except urllib.error.HTTPError as exc:
                    if exc.code == 422:
                        return False  # the bytes sent do not hash to sha: the file changed
                    if exc.code == 409:  # another upload of the same bytes holds or moved it: ask again soon
                        self._wait(0.05, exc)
                        continue
                    if exc.code == 413 and chunk > OLD_SERVER_CHUNK:
                        chunk = OLD_SERVER_CHUNK  # a server that holds each request whole
                        continue
                    if exc.code in (408, 507) or exc.code >= 500 and exc.code != 503:
                        self._wait(delay, exc)  # slow link, full disk, a restart: later
                        delay = min(RETRY_MAX_S, delay * 2)
                        continue
                    raise RuntimeError(f"upload refused: HTTP {exc.code} {exc.read()[:200]!r}") from None
                except (OSError, ValueError, http.client.HTTPException) as exc:  # the server is away
                    self._wait(delay, exc)
                    delay = min(RETRY_MAX_S, delay * 2)
        finally:
            conn.close()

    def _wait(self, delay: float, why: Exception) -> None:
        """Sleep before trying the upload again; raises `why` once the client is closing."""
        if self.closed:
            raise why
        log.debug("paneboard: artifact upload waits for the server: %r", why)
        time.sleep(delay)


def _snapshot(path: str, uid: str) -> str:
    """Hard links to the file, or to every file of the folder, under the cache (the bytes stay if the original
    is deleted); the original path if that cannot be done (another file system)."""
    folder = cache_root() / "snapshots" / uid
    target = folder / os.path.basename(path)
    try:
        if os.path.isdir(path):
            for rel, file in _walk(Path(path)):
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(file, target / rel)
        else:
            folder.mkdir(parents=True)
            os.link(path, target)
        return str(target)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return path


def cache_root() -> Path:
    return Path(os.environ.get("PANEBOARD_ARTIFACT_DIR") or default_spool_dir().parent / "artifacts")


class ArtifactMethods:
    """Mixed into Client: log_artifact (non-blocking) and use_artifact (downloads)."""

    env: str
    url: str
    transport: Transport
    _uploader: Uploader | None = None

    def _start_artifacts(self) -> None:
        """Resume the uploads a killed job of this env left journaled (no thread unless there are any)."""
        folder = self.transport.spool_folder
        if folder is not None and any((folder / "artifacts-pending").glob("*.json")):
            self._artifact_uploader().resume_pending()

    def _artifact_uploader(self) -> Uploader:
        if self._uploader is None:
            self._uploader = Uploader(self)
        return self._uploader

    def _close_artifacts(self, timeout: float | None) -> bool:
        return self._uploader.close(timeout) if self._uploader is not None else True

    def _settle_artifacts(self, timeout: float | None) -> bool:
        return self._uploader.settle(timeout) if self._uploader is not None else True

    def log_artifact(self, path: str | os.PathLike, name: str | None = None, type: str = "model",
                     aliases: Iterable[str] = (), step: float | None = None,
                     metadata: Mapping[str, Any] | None = None, snapshot: bool = False) -> ArtifactRef:
        """Log a file or folder as the next version of artifact `name` (default "<env>-<type>"); returns at once
        (hashing and the chunked upload run in the background; identical files are stored once). The file must
        stay in place until the upload is done (ref.wait() says when), unless `snapshot`: its files are
        hard-linked first (microseconds each), so that the caller may delete them at once (checkpoint rotation)."""
        name = f"{self.env}-{type}" if name is None else name
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty string")
        aliases = [aliases] if isinstance(aliases, str) else list(aliases)
        uid = uuid.uuid4().hex
        source = os.path.abspath(path)
        if snapshot:
            source = _snapshot(source, uid)
        job: dict[str, Any] = {"uid": uid, "env": self.env, "name": name, "type": type, "path": source, "aliases": aliases,
               "step": None if step is None else float(step), "metadata": dict(metadata or {}),
               "snapshot": source != os.path.abspath(path)}
        ref = ArtifactRef(name, job["uid"], self)
        self._artifact_uploader().submit(job, ref)
        return ref

    def use_artifact(self, ref: str | ArtifactRef, root: str | os.PathLike | None = None) -> str:
        """Download "name:vN", "name:<alias>" (or a log_artifact reference) to the local cache and record that
        this run used it; returns the path: the file of a one-file artifact, else its folder. Blocks while it
        downloads; ArtifactError if the version is unknown or the server unreachable."""
        text = ref.wait() or str(ref) if isinstance(ref, ArtifactRef) else ref
        try:
            found = get_json(self, "/api/v1/artifact?ref=" + urllib.parse.quote(text))
        except urllib.error.HTTPError as exc:
            raise ArtifactError(f"no artifact {text!r}: HTTP {exc.code}") from None
        except (OSError, ValueError) as exc:  # the server is away: a job cannot start from what it cannot read
            raise ArtifactError(f"cannot reach the server for {text!r}: {exc}") from exc
        base = Path(os.path.abspath(root if root is not None else cache_root()))
        target, files = version_files(found, base)  # every name checked before any file is made
        try:
            for dest, sha, size in files:
                blob = base / "blobs" / sha[:2] / sha
                if not blob.is_file():
                    self._download(sha, size, blob)
                if not dest.is_file():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(blob, dest)  # the cache holds each blob once
                    except OSError:
                        shutil.copyfile(blob, dest)
        except (OSError, http.client.HTTPException) as exc:  # a full disk, a file where a folder goes, a cut link
            raise ArtifactError(f"cannot download {text!r}: {exc}") from exc
        self.transport.put({"t": time.time(), "op": "artifact_use", "env": self.env, "win": None,
                            "name": found["name"], "version": found["version"]})
        return str(files[0][0]) if len(files) == 1 else str(target)

    def _download(self, sha: str, size: int, blob: Path) -> None:
        blob.parent.mkdir(parents=True, exist_ok=True)
        tmp = blob.with_name(f"{sha}.{uuid.uuid4().hex}.part")
        digest = hashlib.sha256()
        got = 0
        try:
            with request(self, "GET", f"/api/v1/artifact-blobs/{sha}") as r, open(tmp, "wb") as out:
                while got <= size and (block := r.read(HASH_BLOCK)):
                    got += len(block)  # past the listed size it cannot be the blob: stop filling the disk
                    digest.update(block)
                    out.write(block)
            if got != size or digest.hexdigest() != sha:
                raise ArtifactError(f"blob {sha[:12]} downloaded corrupt")
            os.replace(tmp, blob)
        finally:
            tmp.unlink(missing_ok=True)
