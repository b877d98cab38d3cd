"""Hand freed heap memory back to the OS between bursts of ingest (glibc only; a no-op elsewhere)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time
from collections.abc import Callable

TRIM_EVERY = 0.25  # seconds between trims at most: one costs about 1 ms after a burst of 100 MB, µs when clean
# Bytes of input since the last trim that make one worth it: a trim walks the heap even when there is little to
# give back, which a trickle of small frames would otherwise pay several times a second.
TRIM_AFTER_BYTES = 1 << 20


@functools.cache
def _libc_trim() -> Callable[[int], int] | None:
    try:
        # glibc's soname first: find_library runs `ldconfig -p` in a subprocess, a fork of the whole server.
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"))
        except (OSError, TypeError):  # musl, macOS, Windows: nothing to do
            return None
    return getattr(libc, "malloc_trim", None)


class Trimmer:
    """Big ingest batches (decoded JSON, numpy arrays of 100k points) leave freed pages in glibc's heap that it
    keeps for reuse; an idle server should not hold on to them. maybe_trim() is cheap to call often."""

    def __init__(self) -> None:
        self._trim = _libc_trim()
        self._last = 0.0
        self._dirty = False
        self._bytes = 0

    def note_work(self, nbytes: int) -> None:
        self._bytes += nbytes
        if self._bytes >= TRIM_AFTER_BYTES:
            self._dirty = True

    def due_in(self) -> float | None:
        """Seconds until an idle caller should call maybe_trim() (None: nothing to give back)."""
        if self._trim is None or not self._dirty:
            return None
        return max(0.0, TRIM_EVERY - (time.monotonic() - self._last))

    def maybe_trim(self) -> None:
        now = time.monotonic()
        if self._trim is not None and self._dirty and now - self._last >= TRIM_EVERY:
            self._trim(0)
            self._last, self._dirty, self._bytes = now, False, 0
