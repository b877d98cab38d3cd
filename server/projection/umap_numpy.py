"""UMAP (McInnes, Healy & Melville 2018) in numpy/scipy for a few thousand points: no numba/llvmlite to install."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import curve_fit

NEGATIVE_RATE = 5      # umap-learn's negative_sample_rate
MAX_STEP = 4.0         # umap-learn clips every gradient component to ±4


def fit_ab(min_dist: float, spread: float = 1.0) -> tuple[float, float]:
    """The a, b of the low-dimensional similarity 1 / (1 + a·d^2b) that best fits min_dist (umap-learn's find_ab_params)."""
    x = np.linspace(0, spread * 3, 300)
    y = np.where(x < min_dist, 1.0, np.exp(-(x - min_dist) / spread))
    (a, b), _ = curve_fit(lambda d, a, b: 1.0 / (1.0 + a * d ** (2 * b)), x, y, p0=(1.0, 1.0), maxfev=10_000)
    return float(a), float(b)


def knn(x: np.ndarray, k: int, block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours (self excluded), nearest first: (indices n×k, euclidean distances n×k)."""
    n = len(x)
    sq = (x * x).sum(axis=1)
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    for s in range(0, n, block):
        e = min(n, s + block)
        d2 = np.maximum(sq[s:e, None] + sq[None, :] - 2.0 * (x[s:e] @ x.T), 0.0)
        d2[np.arange(e - s), np.arange(s, e)] = np.inf
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.argsort(pd, axis=1)
        idx[s:e] = np.take_along_axis(part, order, axis=1)
        dist[s:e] = np.sqrt(np.take_along_axis(pd, order, axis=1))
    return idx, dist


def smooth_knn(dist: np.ndarray, n_neighbors: int, iterations: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Per point rho (distance to the nearest neighbour) and sigma with sum_j exp(-(d_j - rho)/sigma) = log2(k)."""
    target = np.log2(n_neighbors)
    rho = dist[:, 0]
    excess = np.maximum(dist - rho[:, None], 0.0)
    lo = np.zeros(len(dist))
    hi = np.full(len(dist), np.inf)
    mid = np.ones(len(dist))
    for _ in range(iterations):  # bisection for every point at once
        psum = np.exp(-excess / mid[:, None]).sum(axis=1)
        big = psum > target
        hi = np.where(big, mid, hi)
        lo = np.where(big, lo, mid)
        mid = np.where(np.isinf(hi), mid * 2, (lo + hi) / 2)
    # umap-learn's floor: sigma at least 1e-3 of the mean neighbour distance (flat neighbourhoods)
    return rho, np.maximum(mid, 1e-3 * max(float(dist.mean()), 1e-12))


def fuzzy_graph(x: np.ndarray, n_neighbors: int) -> sparse.coo_matrix:
    """The symmetric fuzzy simplicial set: w_ij = exp(-(d_ij - rho_i)/sigma_i), fuzzy union of both directions."""
    n = len(x)
    idx, dist = knn(x, n_neighbors - 1)  # umap-learn's n_neighbors counts the point itself
    rho, sigma = smooth_knn(dist, n_neighbors)
    w = np.exp(-np.maximum(dist - rho[:, None], 0.0) / sigma[:, None])
    p = sparse.csr_matrix((w.ravel(), (np.repeat(np.arange(n), idx.shape[1]), idx.ravel())), shape=(n, n))
    pt = p.transpose().tocsr()
    return (p + pt - p.multiply(pt)).tocoo()


def initial(x: np.ndarray, dims: int, rng: np.random.Generator) -> np.ndarray:
    """PCA start scaled to ±10 plus a little noise (umap-learn's init="pca"); deterministic, no eigensolver to fail."""
    c = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    y = c @ vt[:dims].T
    if y.shape[1] < dims:
        y = np.hstack([y, np.zeros((len(y), dims - y.shape[1]))])
    scale = np.abs(y).max()
    y = y * (10.0 / scale) if scale > 0 else y
    return y + rng.normal(scale=1e-4, size=y.shape)


def embed(x: np.ndarray, dims: int, n_neighbors: int = 15, min_dist: float = 0.1, n_epochs: int = 200,
          seed: int = 0) -> np.ndarray:
    """Low-dimensional coordinates (n × dims) of the rows of x."""
    rng = np.random.default_rng(seed)
    n = len(x)
    n_neighbors = max(2, min(n_neighbors, n - 1))
    graph = fuzzy_graph(np.asarray(x, dtype=np.float64), n_neighbors)
    keep = graph.data >= graph.data.max() / n_epochs  # edges too weak to be sampled once (umap-learn drops them)
    head, tail, w = graph.row[keep], graph.col[keep], graph.data[keep]
    every = w.max() / w                   # epochs between two samples of an edge
    due = every.copy()
    a, b = fit_ab(min_dist)
    y = initial(np.asarray(x, dtype=np.float64), dims, rng)
    for epoch in range(n_epochs):
        alpha = 1.0 - epoch / n_epochs
        fire = due <= epoch + 1
        h, t = head[fire], tail[fire]
        due[fire] += every[fire]
        step = np.zeros_like(y)
        # attraction along sampled edges (both ends move, as umap-learn's move_other)
        diff = y[h] - y[t]
        d2 = (diff * diff).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            coeff = np.where(d2 > 0, -2 * a * b * d2 ** (b - 1) / (a * d2 ** b + 1), 0.0)
        g = np.clip(coeff[:, None] * diff, -MAX_STEP, MAX_STEP)
        # repulsion from random points (negative sampling)
        nh = np.repeat(h, NEGATIVE_RATE)
        nt = rng.integers(0, n, size=len(nh))
        ndiff = y[nh] - y[nt]
        nd2 = (ndiff * ndiff).sum(axis=1)
        ncoeff = np.where(nh != nt, 2 * b / ((0.001 + nd2) * (a * nd2 ** b + 1)), 0.0)
        ng = np.clip(ncoeff[:, None] * ndiff, -MAX_STEP, MAX_STEP)
        for c in range(dims):
            step[:, c] += np.bincount(h, g[:, c], minlength=n) - np.bincount(t, g[:, c], minlength=n)
            step[:, c] += np.bincount(nh, ng[:, c], minlength=n)
        # umap-learn applies the updates one edge at a time; applied together they add up, so the per-point move
        # is clipped like one update (keeps early epochs from flinging points with many edges away)
        y += alpha * np.clip(step, -MAX_STEP, MAX_STEP)
    return y
