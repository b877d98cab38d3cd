"""Every event not yet acknowledged, in seq order: spooled on disk, in flight, queued in memory.

Order matters: the server skips any seq at or below the highest it committed for a client, so events must reach
it in seq order. The invariant kept here: every spooled event that is not yet sent is older than every event
in memory, and every in-flight event is older than both. Hence the sender sends the spool first, then the
queue; memory overflow moves the oldest queued events to the end of the spool; a lost connection saves its
in-flight events to the spool when the spool holds anything (or puts them back in front of the queue).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque

from .points import Data, size
from .spool import Spool

MAX_REASONS = 256  # rejection reasons kept: a waiter asks within moments of the ack, rejections are rare
log = logging.getLogger("paneboard")

Item = tuple[int, Data]  # (seq, encoded event or a single point: see points.py)


class Batch:
    """Events taken for one frame, kept until acked; `spooled` ones are still in the spool file."""

    __slots__ = ("items", "last_s", "spooled")

    def __init__(self, items: list[Item], spooled: bool = False) -> None:
        self.items = items
        self.last_s = items[-1][0]
        self.spooled = spooled


class Outbox:
    """The pending events and their state transitions; callers, the sender and the ack reader share it."""

    def __init__(self, max_queue: int, spool: Spool | None, *, batch_events: int, batch_bytes: int,
                 window: int) -> None:
        self.max_queue = max_queue
        # Overflow waiting for the sender's next disk write; beyond it the caller outruns the disk and drops.
        self.max_to_spill = max(4 * max_queue, 1 << 16)
        self.spool = spool
        self.batch_events = batch_events
        self.batch_bytes = batch_bytes
        self.window = window  # unacked batches allowed in flight (pipelining bound)
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)  # flush() waits on it; acks/drops notify it
        self.spool_lock = threading.Lock()  # the file: appends, reads, deletion
        self.queue: deque[Item] = deque()  # enqueued, not yet taken into a batch
        self.inflight: deque[Batch] = deque()  # sent (or being sent), not yet acked
        self.to_spill: deque[Item] = deque()  # memory overflow handed to the sender for the spool
        self.spilling_first: int | None = None  # oldest seq being written to the spool right now
        self.spool_sent = 0  # highest spooled seq sent on this connection
        self.seq = 0
        self.acked = 0  # every seq at or below it is stored (or rejected) by the server
        self.dropped = 0  # drops since the last report
        self.dropped_total = 0
        self.dropped_reported = 0  # dropped_total as of the last flush(), which reports drops once
        self.rejected_total = 0
        self.rejected_unreported: deque[int] = deque()  # rejected seqs no flush() has reported yet
        self.reject_reasons: OrderedDict[int, str] = OrderedDict()  # the server's reasons, recent ones only

    # ------------------------------------------------------------------------------------ callers

    def put_locked(self, data: Data, seqs: int = 1) -> tuple[int, bool]:
        """Assign the next `seqs` seqs (a log() row takes one per pane) and enqueue under the last; returns
        (seq, whether the sender must spill)."""
        s = self.seq + seqs
        self.seq = s
        q = self.queue
        q.append((s, data))
        spill = False
        if len(q) > self.max_queue:
            if self.spool is not None and len(self.to_spill) < self.max_to_spill:
                spill = not self.to_spill
                self.to_spill.append(q.popleft())  # the sender writes it to disk within ~50 ms
            else:
                q.popleft()
                self.dropped += 1
                self.dropped_total += 1
                self.cond.notify_all()
        return s, spill

    def pending_locked(self) -> int:
        spooled = 0
        if self.spool is not None and len(self.spool):
            with self.spool_lock:
                spooled = self.spool.count_after(self.acked)
            spooled -= sum(len(b.items) for b in self.inflight if b.spooled)
        return spooled + len(self.to_spill) + len(self.queue) + sum(len(b.items) for b in self.inflight)

    def items_locked(self) -> list[Item]:
        """Copies of every unacknowledged event, oldest first (diagnostics and tests)."""
        items: list[Item] = []
        if self.spool is not None and len(self.spool):
            with self.spool_lock:
                items = [it for it in self.spool.read() if it[0] > self.acked]
        items += [it for b in self.inflight if not b.spooled for it in b.items]
        return sorted(items + list(self.to_spill) + list(self.queue))

    def done_locked(self, target: int) -> bool:
        """Everything with s <= target has been acked (or dropped)."""
        if target <= self.acked:
            return True
        for first in (self.spilling_first, self.to_spill[0][0] if self.to_spill else None):
            if first is not None and first <= target:
                return False
        if self.spool is not None and len(self.spool):
            with self.spool_lock:
                first = self.spool.first_after(self.acked)
            if first is not None and first <= target:
                return False
        if self.inflight and self.inflight[0].items[0][0] <= target:
            return False
        return not (self.queue and self.queue[0][0] <= target)

    def take_rejected_locked(self, target: int) -> int:
        """How many events up to `target` were rejected since the last call (each is reported once)."""
        n = 0
        while self.rejected_unreported and self.rejected_unreported[0] <= target:
            self.rejected_unreported.popleft()
            n += 1
        return n

    # ------------------------------------------------------------------------------------ sender thread

    def take_batch(self) -> Batch | None:
        """The next frame's events: unsent spooled ones first (older), else queued ones; None if none or full."""
        with self.lock:
            if len(self.inflight) >= self.window or self.to_spill:
                return None  # a spill pending means older events are not yet readable: write them first
            after = self.spool_sent
        sp = self.spool
        if sp is not None:
            with self.spool_lock:
                items = sp.read_after(after, self.batch_events, self.batch_bytes) if len(sp) else []
            if items:
                with self.lock:
                    batch = Batch(items, spooled=True)
                    self.inflight.append(batch)
                    self.spool_sent = batch.last_s
                return batch
        with self.lock:
            return self._take_queued_locked()

    def _take_queued_locked(self) -> Batch | None:
        q = self.queue
        # Calls may have moved the queue's oldest events to to_spill since take_batch looked: they must reach the
        # spool, and go out, before the rest of the queue does.
        if not q or len(self.inflight) >= self.window or self.to_spill:
            return None
        items: list[Item] = []
        total = 0
        while q and len(items) < self.batch_events:
            total += size(q[0][1]) + 16
            if items and total > self.batch_bytes:
                break
            items.append(q.popleft())
        batch = Batch(items)
        self.inflight.append(batch)
        return batch

    def spill(self, keep: int | None = None) -> None:
        """Write the overflow (and, with `keep`, queued events beyond `keep`) to the spool, oldest first."""
        sp = self.spool
        if sp is None:
            return
        with self.lock:
            items = list(self.to_spill)
            self.to_spill.clear()
            if keep is not None:
                items += [self.queue.popleft() for _ in range(max(0, len(self.queue) - keep))]
            if not items:
                return
            self.spilling_first = items[0][0]
        self._write_spool(items)

    def _write_spool(self, items: list[Item]) -> None:
        """Append to the spool; what does not fit (cap reached, disk full) is dropped and counted."""
        sp = self.spool
        assert sp is not None
        try:
            with self.spool_lock:
                written = sp.append(items)
        except OSError as e:
            written = 0
            log.warning("paneboard: cannot write the spool %s (%s)", sp.path, e)
        lost = len(items) - written
        with self.cond:
            self.spilling_first = None
            if lost:
                self.dropped += lost
                self.dropped_total += lost
            self.cond.notify_all()
        if lost:
            log.warning("paneboard: spool %s is full (%d MB) or unwritable: %d event(s) dropped", sp.path,
                        sp.max_bytes >> 20, lost)

    def welcome(self, last_seq: int) -> None:
        """A new connection: the server has everything up to last_seq; send the rest from there."""
        with self.cond:
            self.acked = max(self.acked, last_seq)
            self.spool_sent = self.acked
            q = self.queue
            while q and q[0][0] <= last_seq:
                q.popleft()
            self.cond.notify_all()
        self._maybe_clear_spool()

    def lost_connection(self) -> None:
        """Unacked events go back, in order: to the spool when it holds anything, else in front of the queue."""
        with self.cond:
            unsent = [it for b in self.inflight if not b.spooled for it in b.items]
            self.inflight.clear()
            self.spool_sent = self.acked
            to_disk = self.spool is not None and (len(self.spool) > 0 or self.to_spill)
            if not to_disk:
                self.queue.extendleft(reversed(unsent))
                unsent = []
            else:
                unsent += list(self.to_spill)
                self.to_spill.clear()
                if unsent:
                    self.spilling_first = unsent[0][0]
            if self.spool is None:
                while len(self.queue) > self.max_queue:  # no spool: memory stays bounded
                    self.queue.popleft()
                    self.dropped += 1
                    self.dropped_total += 1
            self.cond.notify_all()
        if unsent:
            self._write_spool(unsent)
        self.spill(keep=self.max_queue)

    def ack(self, s: int, rejected: list[int], reasons: dict[int, str] | None = None) -> bool:
        """The server stored everything up to s (but `rejected`, with `reasons`); returns whether queued events
        wait."""
        with self.cond:
            infl = self.inflight
            while infl and infl[0].last_s <= s:
                infl.popleft()
            self.acked = max(self.acked, s)
            if rejected:
                self.rejected_total += len(rejected)
                self.rejected_unreported.extend(sorted(rejected))
            for seq, why in (reasons or {}).items():  # for whoever waits on one event (an artifact's)
                self.reject_reasons[seq] = why
                if len(self.reject_reasons) > MAX_REASONS:
                    self.reject_reasons.popitem(last=False)
            self.cond.notify_all()
            waiting = bool(self.queue)
            if not waiting and self.spool is not None and len(self.spool):
                with self.spool_lock:  # indexes are sorted (replaced) only under this lock
                    waiting = self.spool_sent < self.spool.last_s
        self._maybe_clear_spool()
        return waiting

    def _maybe_clear_spool(self) -> None:
        sp = self.spool
        if sp is None:
            return
        with self.spool_lock:
            if not len(sp) or sp.last_s > self.acked:
                return
            sp.clear()
        with self.cond:
            self.cond.notify_all()

    def save_all(self) -> tuple[int, int]:
        """At exit while the server is away: every unacknowledged event to the spool; (written, total)."""
        sp = self.spool
        with self.cond:
            items = list(self.to_spill) + [it for b in self.inflight if not b.spooled for it in b.items] \
                + list(self.queue)
            if sp is None or not items:
                return 0, len(items)
            self.to_spill.clear()
            self.inflight.clear()
            self.queue.clear()
            self.spilling_first = items[0][0]
        before = self.dropped_total
        self._write_spool(items)
        lost = self.dropped_total - before
        return len(items) - lost, len(items)
