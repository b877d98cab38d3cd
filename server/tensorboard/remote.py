"""`dash-server import LOGDIR --server URL`: the TensorBoard importer's writer and stored counts, over HTTP.

The importer numbers each event file's items by byte offset (every event of a batch carries the batch's end
offset), so the server's exactly-once skip by sequence number resumes an interrupted import where it stopped,
as it does for a local import; only the transport differs.
"""

from __future__ import annotations

from typing import Any

from ..commands.jobs import Job, JobResult
from ..peers.remote import HttpTarget
from ..peers.target import PeerImportError


class RemoteStore:
    """What the importer asks its store: how far each event file is stored (the file's client's last seq)."""

    def __init__(self, target: HttpTarget) -> None:
        self.target = target

    def client_last_seq(self, client_id: str) -> int:
        return self.target.stored(client_id)


class RemoteWriter:
    """The importer's writer: each job's raw events go to the server as one frame, sent before submit returns."""

    def __init__(self, target: HttpTarget) -> None:
        self.target = target

    def submit(self, job: Job) -> None:
        raws: list[dict[str, Any]] = getattr(job, "raws", [])
        result = JobResult()
        if raws and job.client_id is not None and job.ack_seq is not None:
            try:
                result.errors = [{"error": p} for p in self.target.write_events(job.client_id, job.ack_seq, raws)]
            except PeerImportError as exc:
                result.failed = str(exc)
        # A batch of headers only stores nothing and is read again next time (it decodes to nothing again).
        if job.done is not None:
            job.done(result)
