"""Calls handed off by the training thread (the hooks' event building and encoding), run on a background thread."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

log = logging.getLogger("paneboard")


class Later:
    """Runs submitted calls in submission order on a daemon thread that looks for work every `tick` seconds.

    The thread is never woken per call: a wake-up costs the submitting thread a futex call and a GIL hand-off,
    the price this exists to avoid. drain() runs whatever is pending at once in the calling thread; the Transport
    calls it before flush(), close() and pending_events(), so handed-off calls are never missing from those.
    """

    def __init__(self, tick: float = 0.2) -> None:
        self.tick = tick
        self._calls: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()  # append/popleft are atomic
        self._lock = threading.RLock()  # one drainer at a time, so calls run in order (re-entrant: a call may flush)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed: set[str] = set()

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run fn(*args) on the background thread within ~`tick` s (or at the next drain)."""
        self._calls.append((fn, args))
        if self._thread is None or self._stop.is_set():  # first use, or use after stop()
            self._start()

    def drain(self) -> None:
        """Run every pending call now, in order (exceptions are logged once per function and swallowed)."""
        with self._lock:
            calls = self._calls
            while calls:
                fn, args = calls.popleft()
                try:
                    fn(*args)
                except Exception as e:  # noqa: BLE001 - a telemetry call must not stop the rest
                    name = getattr(fn, "__qualname__", repr(fn))
                    if name not in self._failed:
                        self._failed.add(name)
                        log.warning("paneboard: %s failed and is skipped: %s: %s", name, type(e).__name__, e)

    def stop(self) -> None:
        """Run what is pending and stop the thread (a later submit starts it again)."""
        self._stop.set()
        self.drain()

    def reinit_after_fork(self) -> None:
        """In a forked child: the parent's thread is gone and its lock may be held; start clean, with nothing."""
        # The parent's pending calls stay referenced, never freed here: their arguments may hold CUDA pinned or
        # device tensors, and a destructor's CUDA call in a forked DataLoader worker aborts it (seen on an H100:
        # "CUDA error: initialization error" from ~TensorImpl). Workers leave through os._exit, unfreed anyway.
        self._inherited = self._calls
        self._calls = deque()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread = None

    def _start(self) -> None:
        self._stop.clear()
        try:
            self._thread = threading.Thread(target=self._run, name="paneboard-later", daemon=True)
            self._thread.start()
        except RuntimeError:  # interpreter shutdown: calls stay pending for the exit flush's drain
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            if self._calls:
                self.drain()
