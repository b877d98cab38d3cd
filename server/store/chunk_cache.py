"""Decoded full chunks kept between reads, with per-block extremes, so a chart's reread neither decodes nor scans them.

A 1M-point line read at a 2,000-point budget has buckets (~1,000 steps) narrower than a chunk (2,048 points),
so every chunk is decoded and every point goes through the bucket pass: 40 ms, half of it zlib, the rest numpy
over 1M points. A live chart rereads the same range every second. Full chunks are never rewritten in place
(chunks.py), so their decoded points can be kept; and each block of BLOCK points remembers its x bounds, its
first minimum and its last maximum, so that a block lying inside one bucket gives the bucket pass those two
points instead of BLOCK. That loses nothing: a bucket's first minimum (last maximum) is the first minimum (last
maximum) of the block holding it. Blocks straddling a bucket edge, or with a non-finite x, give all their points.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .chunks import CHUNK_POINTS

BLOCK = 64  # points per block: at 1M points and 2,000 points a read, ~16 blocks a bucket, one straddling it
assert CHUNK_POINTS % BLOCK == 0  # a full chunk is whole blocks
DEFAULT_MAX_BYTES = 128 << 20  # eight 1M-point lines; a 100M-point overview summarizes, needing none of this

Fingerprint = bytes  # a chunk's summary columns (digests.FIELDS) as float64, NaN for NULL: a rewritten chunk differs


@dataclass(frozen=True, slots=True)
class DecodedChunk:
    """One full chunk's points and, per block, its x bounds (NaN where an x is not finite) and extremes' indices
    (-1 where no y is finite)."""

    fingerprint: Fingerprint
    x: np.ndarray
    y: np.ndarray
    block_xmin: np.ndarray
    block_xmax: np.ndarray
    first_min: np.ndarray
    last_max: np.ndarray

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.x, self.y, self.block_xmin, self.block_xmax, self.first_min,
                                      self.last_max)) + 200


def decoded(fingerprint: Fingerprint, x: np.ndarray, y: np.ndarray) -> DecodedChunk:
    """A full chunk's block table, computed once when it is decoded."""
    for a in (x, y):  # shared by every reader from now on: a caller that wrote into them would corrupt the cache
        a.flags.writeable = False
    nblocks = len(x) // BLOCK
    xb, yb = x.reshape(nblocks, BLOCK), y.reshape(nblocks, BLOCK)
    x_ok = np.isfinite(xb).all(axis=1)
    ok = np.isfinite(yb)
    any_ok = ok.any(axis=1)
    offsets = np.arange(nblocks) * BLOCK
    # argmin/argmax return the first of equal values; the last maximum is the first one of the reversed block.
    first_min = np.where(any_ok, offsets + np.argmin(np.where(ok, yb, np.inf), axis=1), -1)
    last_max = np.where(any_ok, offsets + BLOCK - 1 - np.argmax(np.where(ok, yb, -np.inf)[:, ::-1], axis=1), -1)
    with np.errstate(invalid="ignore"):
        xmin = np.where(x_ok, xb.min(axis=1), np.nan)
        xmax = np.where(x_ok, xb.max(axis=1), np.nan)
    return DecodedChunk(fingerprint, x, y, xmin, xmax, first_min, last_max)


def candidates(chunks: list[DecodedChunk], lo: float, hi: float, width: float, nb: int
               ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each chunk's points that can be a bucket's first minimum or last maximum, in storage order, for the bucket
    grid of downsample.select_extremes (bucket of x: min(int((x - lo) / width), nb - 1) for x in [lo, hi]).

    One pass over all the chunks' block tables, then two gathers per chunk: a Python step per block or a mask
    per chunk cost more than the bucket pass they save.
    """
    if not chunks:
        return []
    xmin = np.stack([c.block_xmin for c in chunks])
    xmax = np.stack([c.block_xmax for c in chunks])
    inside = (xmin >= lo) & (xmax <= hi)  # NaN bounds compare False: such blocks give every point
    b0 = np.minimum((np.where(inside, xmin, lo) - lo) / width, np.inf).astype(np.int64)
    b1 = np.minimum((np.where(inside, xmax, lo) - lo) / width, np.inf).astype(np.int64)
    # The bucket index is monotone in x, so a block whose bounds share a bucket lies wholly in it.
    one_bucket = inside & (np.minimum(b0, nb - 1) == np.minimum(b1, nb - 1))
    keep = np.repeat(~one_bucket, BLOCK, axis=1)
    rows, _ = np.nonzero(one_bucket)
    for idx in (np.stack([c.first_min for c in chunks])[one_bucket],
                np.stack([c.last_max for c in chunks])[one_bucket]):
        found = idx >= 0
        keep[rows[found], idx[found]] = True
    k, offsets = np.nonzero(keep)
    cuts = np.searchsorted(k, np.arange(1, len(chunks)))
    return [(c.x[o], c.y[o]) for c, o in zip(chunks, np.split(offsets, cuts), strict=True)]


def fingerprint_of(row: np.ndarray | list | tuple) -> Fingerprint:
    """A summary row (FIELDS values; NaN or None for NULL) as comparable bytes."""
    return np.asarray(row, dtype="<f8").tobytes()


class ChunkCache:
    """An LRU of decoded full chunks keyed by (trace id, seq), bounded in bytes; shared by a store's readers.

    An entry is used only while its fingerprint matches the chunk's summary columns the read has just fetched,
    so a chunk deleted and written again (rewind, clear, another server) is decoded again, not served stale; and the
    store drops a trace's entries when its own writer commits a rewrite, which a fingerprint cannot always tell.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._entries: OrderedDict[tuple[int, int], DecodedChunk] = OrderedDict()
        self._lock = threading.Lock()  # the server reads on many threads

    def get(self, trace_id: int, seq: int, fingerprint: Fingerprint) -> DecodedChunk | None:
        return self.get_many(trace_id, {seq: fingerprint})[seq]

    def get_many(self, trace_id: int, fingerprints: dict[int, Fingerprint]) -> dict[int, DecodedChunk | None]:
        """The cached chunks of these seqs whose fingerprints match (None for the others), under one lock."""
        out: dict[int, DecodedChunk | None] = {}
        with self._lock:
            for seq, fingerprint in fingerprints.items():
                chunk = self._entries.get((trace_id, seq))
                if chunk is not None and chunk.fingerprint == fingerprint:
                    self._entries.move_to_end((trace_id, seq))
                    out[seq] = chunk
                else:
                    out[seq] = None
        return out

    def put(self, trace_id: int, seq: int, chunk: DecodedChunk) -> None:
        if len(chunk.x) != CHUNK_POINTS or chunk.nbytes > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop((trace_id, seq), None)
            if old is not None:
                self.nbytes -= old.nbytes
            self._entries[(trace_id, seq)] = chunk
            self.nbytes += chunk.nbytes
            while self.nbytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.nbytes -= evicted.nbytes

    def forget(self, trace_ids: set[int]) -> None:
        """Drop these traces' chunks (their points were deleted or rewritten), in one pass over the entries."""
        if not trace_ids or not self._entries:
            return
        with self._lock:
            for key in [k for k in self._entries if k[0] in trace_ids]:
                self.nbytes -= self._entries.pop(key).nbytes

    def __len__(self) -> int:
        return len(self._entries)
