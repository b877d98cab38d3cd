"""What producers hand the writer: a Job of commands, its JobResult, the Stream it came on, and Submit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .envelope import Command


@dataclass
class JobResult:
    errors: list[dict] = field(default_factory=list)  # rejected for good: {"s", "error"}; never stored
    failed: str | None = None  # a storage failure that may pass: the job is not (wholly) stored, retry it


@dataclass
class Stream:
    """One producer connection. After a storage failure none of its later jobs may be stored: they would
    move the client's last_seq past the failed event, which its resend would then skip as a duplicate."""

    broken: str | None = None


@dataclass
class Job:
    commands: list[Command]
    client_id: str | None = None
    ack_seq: int | None = None  # highest producer seq this job covers (incl. rejected events)
    done: Callable[[JobResult], None] | None = None
    stream: Stream | None = None
    size: int = 1 << 20  # bytes it arrived as (a socket frame); unknown: counted as big (see Trimmer)


class Submit(Protocol):
    """Where producers (sockets, HTTP, importers, the run watches) send commands: the writer implements it."""

    def submit(self, job: Job) -> None:
        """Queue a job; its `done` is called once it is committed (or failed)."""

    def submit_wait(self, commands: list[Command], timeout: float = 60.0) -> JobResult:
        """Queue the commands as one job and return once they are committed."""

    @property
    def backlog(self) -> int:
        """Jobs queued and not yet applied."""
