"""When the writer gives deleted rows' disk space back: bounded steps between batches, at most a tenth of its time."""

from __future__ import annotations

import logging
import time

from ..commands.envelope import Command
from ..store import Store
from .blob_sweep import DELETING_OPS

log = logging.getLogger("paneboard.writer")

# Pages per step: 2 MiB at SQLite's 4 KiB pages, ~35 ms of the writer's time. Bigger steps cost more than in
# proportion (2,048 pages took 260 ms, and 48 MB came back in 1.6 s rather than 0.8 s): the WAL grows with them.
STEP_PAGES = 512
MAX_SHARE = 0.1     # while jobs wait, steps take at most this share of the writer's time (ingest keeps >= 90%)


class SpaceReclaimer:
    """Notes deletions; then, between the writer's transactions, cuts freed pages off the database a step at a time.

    While the writer is busy a step is due only once the previous one's cost has been repaid ninefold in ingest
    time; when it is idle, steps run back to back until nothing is left to give back.
    """

    def __init__(self, store: Store, step_pages: int = STEP_PAGES, max_share: float = MAX_SHARE) -> None:
        self.store = store
        self.step_pages = step_pages
        self.max_share = max_share
        self.pending = False
        self.next_due = 0.0  # monotonic time before which a busy writer takes no step
        self.retry_at = 0.0  # after a failed step: monotonic time before which no step is tried
        self.pages_given_back = 0  # diagnostics: pages cut off the file since start

    def note(self, commands: list[Command]) -> None:
        if not self.pending and any(cmd.op in DELETING_OPS for cmd in commands):
            self.pending = True

    def due_in(self) -> float | None:
        """For the writer's wait: 0 while pages are left to give back (an idle writer steps at once), else None."""
        return max(0.0, self.retry_at - time.monotonic()) if self.pending else None

    def maybe_step(self, idle: bool = False) -> None:
        now = time.monotonic()
        if not self.pending or now < self.retry_at or (not idle and now < self.next_due):
            return
        try:
            before = self.store.space_state().free_pages
            left = self.store.reclaim_space(self.step_pages)
        except Exception:  # nothing is lost: the pages stay free (and reusable) until a later step
            log.exception("could not give free database pages back")
            self.retry_at = time.monotonic() + 5.0
            return
        cost = time.monotonic() - now
        self.pages_given_back += max(0, before - left)
        self.pending = left > 0
        self.next_due = time.monotonic() + cost * (1 - self.max_share) / self.max_share
