"""The Transport's disk side: spill the overflow while the server is away, save what is left at exit, sync."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .spool import Spool

log = logging.getLogger("paneboard")


class SpoolingMixin:
    """Methods of Transport that move events between its queue and its Spool (state lives on Transport)."""

    _spool: Spool | None
    _lock: threading.Lock
    _cond: threading.Condition
    _wake: threading.Event
    _queue: deque
    _inflight: deque
    _to_spill: deque
    _spilling_first: int | None
    _seq: int
    _dropped: int
    _dropped_total: int
    max_queue: int
    spool_max_bytes: int

    flush: Callable[..., bool]  # Transport's, which waits for the acks

    def drain_spool(self, timeout: float | None = None) -> bool:
        """Upload what this transport's spool holds (`paneboard sync`) and wait for the server's acks."""
        with self._cond:
            if self._spool is not None and self._spool.last_s:
                self._seq = max(self._seq, self._spool.last_s)
        self._wake.set()
        return self.flush(timeout)

    def _write_spool(self, items: list[tuple[int, bytes]]) -> int:
        """Append events (taken off the queue by the caller) to the spool; returns how many were written.

        flush() must not think them delivered while they are in neither the queue nor the file, hence
        _spilling_first for the duration of the write.
        """
        sp = self._spool
        with self._cond:
            self._spilling_first = items[0][0]
        try:
            written = sp.append(items) if sp is not None else 0
        except OSError as e:
            written = 0
            log.warning("paneboard: cannot write the spool %s (%s)", sp.path, e)
        with self._cond:
            self._spilling_first = None
            self._cond.notify_all()
        return written

    def _spill(self) -> None:
        """While the server is away, keep memory bounded: the oldest queued events move to the spool."""
        sp = self._spool
        keep = self.max_queue // 2
        if sp is None or (len(self._queue) <= keep and not self._to_spill):
            return
        with self._lock:
            items = list(self._to_spill)
            self._to_spill.clear()
            items += [self._queue.popleft() for _ in range(max(0, len(self._queue) - keep))]
            if items:
                self._spilling_first = items[0][0]
        if not items:
            return
        lost = len(items) - self._write_spool(items)
        if lost:
            with self._lock:
                self._dropped += lost
                self._dropped_total += lost
            log.warning("paneboard: spool %s is full (%d MB): %d event(s) dropped", sp.path,
                        self.spool_max_bytes >> 20, lost)

    def spool_pending(self) -> bool:
        """Save every unacknowledged event to the spool (at exit while the server is away)."""
        sp = self._spool
        with self._cond:
            items = list(self._to_spill) + [it for b in self._inflight for it in b.items] + list(self._queue)
            if sp is None or not items:
                return False
            self._to_spill.clear()
            self._inflight.clear()
            self._queue.clear()
            self._spilling_first = items[0][0]
        written = self._write_spool(items)
        if written:
            log.warning("paneboard: %d event(s) saved to %s; they are sent when this client reconnects, or run: "
                        "paneboard sync %s", written, sp.path, sp.path)
        return written == len(items)
