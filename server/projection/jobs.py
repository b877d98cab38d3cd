"""Projection jobs: decoded matrices and results in size-bounded caches, one background worker thread."""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import numpy as np

from .methods import ProjectionError

MATRIX_CACHE_BYTES = 256 * 1024 * 1024
RESULT_CACHE_BYTES = 128 * 1024 * 1024
MAX_PENDING_JOBS = 8




class Busy(RuntimeError):
    """Too many projections queued: a 503 for the API."""


class LRU:
    """A thread-safe least-recently-used map bounded by the total size (bytes) of its values."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Any, value: Any, size: int) -> None:
        with self._lock:
            if key in self._items:
                self._size -= self._items.pop(key)[1]
            if size > self.max_bytes:
                return  # bigger than the whole cache: computed, served, not kept
            self._items[key] = (value, size)
            self._size += size
            while self._size > self.max_bytes:
                self._size -= self._items.popitem(last=False)[1][1]


_matrices = LRU(MATRIX_CACHE_BYTES)
_results = LRU(RESULT_CACHE_BYTES)
_jobs: dict[tuple, Future] = {}
_jobs_lock = threading.Lock()
# One worker: a t-SNE uses a core for seconds; queued requests wait instead of starving the server's other work.
# A daemon thread (not a ThreadPoolExecutor, whose workers are joined at exit): a stopping server must not wait
# minutes for a t-SNE nobody will read.
_queue: queue.SimpleQueue = queue.SimpleQueue()
_partials: dict[tuple, dict] = {}  # running progressive jobs' latest partial results
_worker: threading.Thread | None = None


def matrix(sha: str, n: int, d: int, load: Callable[[], bytes | None]) -> np.ndarray:
    """The pane's N×D float32 matrix (decoded once per blob, then served from the cache)."""
    m = _matrices.get(sha)
    if m is None:
        data = load()
        if data is None or len(data) != n * d * 4:
            raise ProjectionError("the pane's matrix blob is missing or has the wrong size")
        m = np.frombuffer(data, dtype="<f4").reshape(n, d)
        _matrices.put(sha, m, m.nbytes)
    return m


def result_bytes(result: dict) -> int:
    return int(result["coords"].nbytes + result["indices"].nbytes) + 1024


def cached_or_run(key: tuple, compute: Callable[..., dict], wait: float, progressive: bool = False) -> dict | None:
    """The cached result of `key`, or run compute() on the projection thread and wait up to `wait` seconds for it.

    None means "still computing": the caller answers 202 and the browser asks again (a long t-SNE must not hold
    a request open for tens of seconds). Identical requests share one job. A progressive compute is called as
    compute(report): each report(partial) makes `partial` the one partial(key) answers while the job runs.
    """
    hit = _results.get(key)
    if hit is not None:
        return hit
    with _jobs_lock:
        job = _jobs.get(key)
        hit = _results.get(key) if job is None else None  # a job may have finished since the first look
        if hit is not None:
            return hit
        if job is None:
            if len(_jobs) >= MAX_PENDING_JOBS:
                raise Busy(f"{len(_jobs)} projections are already being computed; try again shortly")
            job = Future()
            _jobs[key] = job
            _start_worker()
            _queue.put((key, compute, job, progressive))
    try:
        return job.result(timeout=wait)
    except FutureTimeout:
        return None


def _start_worker() -> None:
    global _worker
    if _worker is None or not _worker.is_alive():
        _worker = threading.Thread(target=_work, name="projection", daemon=True)
        _worker.start()


def partial(key: tuple) -> dict | None:
    """The latest partial result a progressive job reported (its iterations so far), or None."""
    with _jobs_lock:
        return _partials.get(key)


def _reporter(key: tuple) -> Callable[[dict], None]:
    def report(part: dict) -> None:
        with _jobs_lock:
            if key in _jobs:
                _partials[key] = part
    return report


def _work() -> None:
    while True:
        key, compute, job, progressive = _queue.get()
        try:
            result = compute(_reporter(key)) if progressive else compute()
            _results.put(key, result, result_bytes(result))
            job.set_result(result)
        except BaseException as exc:  # the waiting request reports it; the worker goes on with the next job
            job.set_exception(exc)
        finally:
            with _jobs_lock:
                _jobs.pop(key, None)
                _partials.pop(key, None)
