"""Min/max downsampling: the sorted-x fast path and the general path equal a brute-force reference exactly."""

from __future__ import annotations

import numpy as np
import pytest

from paneboard.server.store import SqlStore
from paneboard.server.store.downsample import bucket_extremes, bucket_extremes_sorted
from paneboard.server.store.schema import ensure_schema


def reference_extremes(b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per bucket, the first index holding its minimum and the last index holding its maximum (a plain loop)."""
    picked: set[int] = set()
    for bucket in np.unique(b):
        idx = [i for i in range(len(b)) if b[i] == bucket]
        lo = min(y[i] for i in idx)
        hi = max(y[i] for i in idx)
        picked.add(next(i for i in idx if y[i] == lo))
        picked.add(next(i for i in reversed(idx) if y[i] == hi))
    return np.array(sorted(picked), dtype=np.int64)


def reference_read(x: np.ndarray, y: np.ndarray, budget: int) -> tuple[list[float], list[float]]:
    """The read contract on raw points: per-bucket extremes in x order, plus the first and last stored point."""
    lo, hi = np.nanmin(x), np.nanmax(x)
    nb = max(1, (budget - 2) // 2)
    width = (hi - lo) / nb
    ok = np.isfinite(x) & np.isfinite(y)
    X, Y = x[ok], y[ok]
    b = np.clip(((X - lo) / width).astype(np.int64), 0, nb - 1)
    picked = reference_extremes(b, Y)
    picked = picked[np.argsort(X[picked], kind="stable")]
    xs, ys = X[picked].tolist(), Y[picked].tolist()
    inside = np.flatnonzero(np.isfinite(x))
    first = (float(x[inside[0]]), float(y[inside[0]]))
    last = (float(x[inside[-1]]), float(y[inside[-1]]))
    if not xs or (xs[0], ys[0]) != first:
        xs.insert(0, first[0])
        ys.insert(0, first[1])
    if (xs[-1], ys[-1]) != last:
        xs.append(last[0])
        ys.append(last[1])
    return xs, ys


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)


@pytest.mark.parametrize("seed", range(20))
def test_both_bucket_paths_equal_the_reference_on_sorted_buckets_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    b = np.sort(rng.integers(0, int(rng.integers(1, 40)), n))
    y = rng.integers(-3, 4, n).astype(float)  # few distinct values: many ties for min and max
    want = reference_extremes(b, y)
    assert np.array_equal(bucket_extremes_sorted(b, y), want)
    assert np.array_equal(bucket_extremes(b, y), want)
    shuffled = rng.permutation(n)  # the general path on unsorted buckets
    assert np.array_equal(bucket_extremes(b[shuffled], y[shuffled]), reference_extremes(b[shuffled], y[shuffled]))


@pytest.fixture
def store(tmp_path):
    url = f"sqlite:///{tmp_path / 'ds.db'}"
    ensure_schema(url, url)
    s = SqlStore(url)
    yield s
    s.close()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ordered", [True, False])
def test_store_read_equals_the_reference_on_random_data_with_nan_and_duplicate_x(store, seed, ordered):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5_000, 20_000))
    x = np.sort(rng.integers(0, n // 3, n)).astype(float)  # about three points per x: duplicate x everywhere
    if not ordered:
        x = rng.permutation(x)
    y = np.round(rng.normal(size=n), 1)  # rounded: ties inside buckets
    y[rng.random(n) < 0.02] = np.nan
    y[rng.integers(0, n)] = 1e6  # a spike
    if ordered:
        x[rng.integers(1, n - 1)] = np.nan  # a NaN x inside the series (not at an end: those stay first/last)
    with store.transaction() as tx:
        pane = tx.put_pane("e", f"w{seed}", "line", "", {}, None)
        trace = tx.add_trace(pane, "t", {})
        for i in range(0, n, 3_000):  # several appends: several chunks and rows
            tx.append_points(trace, x[i:i + 3_000], y[i:i + 3_000], np.zeros(len(x[i:i + 3_000])))
    trace = store.list_traces(store.get_pane("e", f"w{seed}"))[0]
    budget = 500  # buckets narrower than a 2,048-point chunk: every chunk is decoded, none summarized
    got = store.read_series(trace, budget)
    want_x, want_y = reference_read(x, y, budget)
    assert got.downsampled and len(got.x) <= budget + 2
    assert same(got.x, want_x) and same(got.y, want_y)
    assert 1e6 in got.y
