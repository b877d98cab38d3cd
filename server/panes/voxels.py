"""Thinning a point cloud by voxel grid: one point per occupied voxel, so sparse regions keep their points."""

from __future__ import annotations

import numpy as np

BITS = 10  # grid cells per axis at the finest level: 1024, a cloud's extent in a thousandth
INDEX_BITS = 21  # a point's index rides in the low bits of its sort key (clouds hold at most 1M points)
_MASKS = (0x030000FF, 0x0300F00F, 0x030C30C3, 0x09249249)


def _spread(v: np.ndarray) -> np.ndarray:
    """10-bit integers with two zero bits between their bits: one axis of a Morton code."""
    v = v.astype(np.uint64) & np.uint64(0x3FF)
    for shift, mask in zip((16, 8, 4, 2), _MASKS, strict=True):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def voxel_pick(xyz: np.ndarray, budget: int) -> np.ndarray:
    """Indices (ascending: a lidar sweep keeps its order) of at most `budget` points of the N×3 `xyz`.

    The points are sorted once by Morton code on a 1024³ grid over their bounding box; a coarser grid is then a shift
    of that code, so finding the finest grid with at most `budget` occupied voxels costs one pass per level, not a
    sort. The first point of each of its voxels is kept and the rest of the budget taken evenly from the others: dense
    regions lose points, sparse ones (a far car in a lidar sweep) keep theirs, unlike an even stride over all.
    """
    n = len(xyz)
    if n <= budget:
        return np.arange(n)
    lo = xyz.min(axis=0)
    span = xyz.max(axis=0) - lo
    scale = np.divide(2**BITS - 1, span, out=np.zeros_like(span), where=span > 0)
    q = ((xyz - lo) * scale).astype(np.uint32)
    code = (_spread(q[:, 0]) << np.uint64(2)) | (_spread(q[:, 1]) << np.uint64(1)) | _spread(q[:, 2])
    keyed = np.sort((code << np.uint64(INDEX_BITS)) | np.arange(n, dtype=np.uint64))
    codes = keyed >> np.uint64(INDEX_BITS)
    # Two neighbours in code order share a voxel at every level above their highest differing bit's: one pass
    # counts the occupied voxels of every level at once.
    apart = codes[1:] ^ codes[:-1]
    bit_length = np.frexp(apart.astype(np.float64))[1]  # exact: the codes hold 30 bits
    # Pairs by how many levels, from the finest, tell them apart; occupied[L + 1]: voxels at level L (1 + pairs apart).
    pairs = np.bincount((bit_length + 2) // 3, minlength=BITS + 2)
    occupied = 1 + np.cumsum(pairs[::-1])[::-1]
    level = int(np.argmax(occupied[1:BITS + 2] <= budget))
    firsts = np.flatnonzero(np.r_[True, apart >> np.uint64(3 * level) != 0])
    idx = (keyed[firsts] & np.uint64((1 << INDEX_BITS) - 1)).astype(np.int64)
    if len(idx) < budget:
        # The budget's rest evenly from the points not kept: mostly the dense regions, where most points are.
        rest = np.ones(n, dtype=bool)
        rest[idx] = False
        others = np.flatnonzero(rest)
        idx = np.concatenate([idx, others[np.linspace(0, len(others) - 1, budget - len(idx)).astype(np.int64)]])
    return np.sort(idx)
