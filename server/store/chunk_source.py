"""One read's decoded chunks of one trace: full chunks through the store's ChunkCache, the others fetched per read."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Connection

from . import codec
from .chunk_cache import ChunkCache, DecodedChunk, Fingerprint, candidates, decoded, fingerprint_of
from .chunks import CHUNK_POINTS
from .dialect import IN_LIST_MAX
from .downsample import ChunkMeta, Loader
from .models import chunk_t

FingerprintOf = Callable[[int], "Fingerprint | None"]  # chunk seq -> its summary columns; None: not a full chunk


def table_fingerprints(table: np.ndarray, seqs: np.ndarray) -> FingerprintOf:
    """Fingerprints from a summary table (digests.FIELDS columns; row i is chunk seqs[i], seqs ascending)."""

    def of(seq: int) -> Fingerprint | None:
        row = seq if seq < len(seqs) and seqs[seq] == seq else int(np.searchsorted(seqs, seq))  # digests: seq = row
        if row >= len(seqs) or seqs[row] != seq or table[row, 0] != CHUNK_POINTS:
            return None
        return fingerprint_of(table[row])

    return of


def meta_fingerprints(metas: Sequence[ChunkMeta]) -> FingerprintOf:
    """Fingerprints from chunk metas (built on first use: most reads of few points never ask)."""
    by_seq: dict[int, ChunkMeta] = {}

    def of(seq: int) -> Fingerprint | None:
        if not by_seq:
            by_seq.update((m.seq, m) for m in metas)
        m = by_seq.get(seq)
        if m is None or m.n != CHUNK_POINTS:
            return None
        return fingerprint_of([m.n, m.x0, m.x1, m.ymin, m.ymax, m.x_ymin, m.x_ymax])

    return of


class ChunkSource:
    """Loads (whole chunks), prefetches (one query for many) and bucket candidates (block-reduced) of one trace.

    `local` holds this read's decoded chunks that the cache does not keep (partial tail rows, or any chunk when
    the caller pre-filled it).
    """

    def __init__(self, conn: Connection, trace_id: int, cache: ChunkCache, fingerprint: FingerprintOf,
                 local: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self.conn = conn
        self.trace_id = trace_id
        self.cache = cache
        self.fingerprint = fingerprint
        self.local = {} if local is None else local
        self._full: dict[int, DecodedChunk | None] = {}  # seq -> cached chunk, as looked up once by this read

    def _cached(self, seq: int) -> DecodedChunk | None:
        if seq not in self._full:
            self._look_up([seq])
        return self._full[seq]

    def _look_up(self, seqs: Sequence[int]) -> None:
        """Which of these chunks the cache holds, in one visit to it (a 1M-point read asks for ~500)."""
        fingerprints: dict[int, Fingerprint] = {}
        for seq in seqs:
            if seq not in self._full:
                fp = self.fingerprint(seq)
                if fp is None:
                    self._full[seq] = None
                else:
                    fingerprints[seq] = fp
        if fingerprints:
            self._full.update(self.cache.get_many(self.trace_id, fingerprints))

    def _keep(self, seq: int, x: np.ndarray, y: np.ndarray) -> None:
        self.local[seq] = (x, y)
        fp = self.fingerprint(seq)
        if fp is not None and len(x) == CHUNK_POINTS:
            chunk = decoded(fp, x, y)
            self._full[seq] = chunk
            self.cache.put(self.trace_id, seq, chunk)

    def load(self, seq: int) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's decoded (x, y)."""
        if seq in self.local:
            return self.local[seq]
        chunk = self._cached(seq)
        if chunk is not None:
            return chunk.x, chunk.y
        c = chunk_t.c
        r = self.conn.execute(select(c.xs, c.ys).where(c.trace_id == self.trace_id, c.seq == seq)).one()
        self._keep(seq, codec.decode(r.xs), codec.decode(r.ys))
        return self.local[seq]

    def prefetch(self, seqs: Sequence[int]) -> None:
        """One query for all the chunks a read needs that are neither cached nor already read (not one per chunk)."""
        self._look_up(seqs)
        wanted = {s for s in seqs if s not in self.local and self._full[s] is None}
        if not wanted:
            return
        c = chunk_t.c
        lo, hi = min(wanted), max(wanted)
        q = select(c.seq, c.xs, c.ys).where(c.trace_id == self.trace_id)
        if hi - lo + 1 <= 2 * len(wanted):  # dense: a primary-key range scan, at most 2x the rows needed
            queries = [q.where(c.seq >= lo, c.seq <= hi)]
        else:  # sparse (a zoom that summarizes most chunks): batches under SQLite's bound-parameter limit
            ordered = sorted(wanted)
            queries = [q.where(c.seq.in_(ordered[i:i + IN_LIST_MAX]))
                       for i in range(0, len(ordered), IN_LIST_MAX)]
        for query in queries:
            for r in self.conn.execute(query):
                if r.seq in wanted:
                    self._keep(r.seq, codec.decode(r.xs), codec.decode(r.ys))

    def prefetch_metas(self, metas: Sequence[ChunkMeta]) -> None:
        self.prefetch([m.seq for m in metas])

    def candidates(self, lo: float, hi: float, width: float, nb: int) -> Loader:
        """Per chunk seq, the points that can be picked in this bucket grid: a full chunk's block-reduced ones,
        any other chunk's every point."""

        full = [(seq, chunk) for seq, chunk in self._full.items() if chunk is not None]  # the prefetched ones
        reduced = dict(zip([s for s, _ in full], candidates([c for _, c in full], lo, hi, width, nb), strict=True))

        def of(seq: int) -> tuple[np.ndarray, np.ndarray]:
            if seq in reduced:
                return reduced[seq]
            chunk = self._cached(seq)
            if chunk is None:
                return self.load(seq)
            return candidates([chunk], lo, hi, width, nb)[0]

        return of
