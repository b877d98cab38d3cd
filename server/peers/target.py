"""Where an import lands: the Target contract, and the local one (this process's writer and store)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any, Protocol

from ..artifacts.blobs import BlobError
from ..commands.envelope import EventError
from ..commands.jobs import Job, JobResult, Submit
from ..dispatch.parse import parse_event

HASH_BLOCK = 1 << 20


class PeerImportError(RuntimeError):
    """The source cannot be imported (the message says why); also a missing optional extra."""


class Target(Protocol):
    """A store an importer writes to, each importing client's items numbered 1..n (its sequence numbers)."""

    def stored(self, cid: str) -> int:
        """How many items of client `cid` are stored (its last sequence number)."""
        ...

    def env_state(self, env: str) -> tuple[bool, str | None]:
        """(whether the env exists, which peer run its run record was imported from, if any)."""
        ...

    def write(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> list[str]:
        """Store the events as items up to `seq` of `cid` (those stored already are skipped); returns the
        problems (events refused for good). Raises PeerImportError when the store failed."""
        ...

    def put_blob(self, path: Path) -> tuple[str, int]:
        """Keep the file's bytes in the artifact store: (sha256, size). PeerImportError without a store."""
        ...


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


class LocalTarget:
    """Jobs handed to this process's writer, one at a time, each waited for."""

    def __init__(self, writer: Submit, store: Any, blobs: Any = None) -> None:
        self.writer, self.store, self.blobs = writer, store, blobs

    def stored(self, cid: str) -> int:
        return int(self.store.client_last_seq(cid))

    def env_state(self, env: str) -> tuple[bool, str | None]:
        run = self.store.get_run(env)
        held = (run.provenance or {}).get("import") if run is not None else None
        return run is not None or self.store.get_env(env) is not None, held

    def write(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> list[str]:
        problems, commands = [], []
        for raw in raws:
            try:
                cmd = parse_event(raw)
            except EventError as exc:
                problems.append(f"{raw.get('env')}: {raw.get('op')} {raw.get('win') or ''}: {exc}")
                continue
            cmd.seq = seq
            commands.append(cmd)
        box: list[JobResult] = []
        ready = threading.Event()

        def done(result: JobResult) -> None:
            box.append(result)
            ready.set()

        self.writer.submit(Job(commands, client_id=cid, ack_seq=seq, done=done))
        ready.wait()
        result = box[0]
        if result.failed:
            raise PeerImportError(f"the store failed: {result.failed}")
        return problems + [f"not stored: {e['error']}" for e in result.errors]

    def put_blob(self, path: Path) -> tuple[str, int]:
        if self.blobs is None:
            raise PeerImportError("this database keeps no artifacts (no blob folder: give --artifacts-dir)")
        sha, size = file_sha256(path), path.stat().st_size
        if self.blobs.has(sha):
            return sha, size
        try:
            # An upload left unfinished (by a killed import or SDK) goes on: finish() checks the whole hash.
            offset = self.blobs.partial_size(sha)
            with open(path, "rb") as f:
                f.seek(offset)
                while block := f.read(HASH_BLOCK * 8):
                    offset = self.blobs.append(sha, offset, block)
            if offset == 0:
                self.blobs.append(sha, 0, b"")  # an empty file is a blob too
            self.blobs.finish(sha)
        except BlobError as exc:
            raise PeerImportError(f"{path}: not stored as an artifact blob: {exc}") from None
        return sha, size
