"""Embedding projections of an N×D matrix: PCA, t-SNE, UMAP (umap-learn when installed) and nearest neighbours."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

# Point budgets (TensorBoard's are 50k/200 dims for PCA, 10k for t-SNE, 5k for UMAP, all in the browser). Ours run
# on the server: PCA fits on at most budget("pca_fit") rows (exactly, or by a randomized SVD when big: no dims are
# dropped) and projects at most budget("pca") rows; a 5,000-point t-SNE takes 6-25 s in 2-D, 30-130 s in 3-D on one
# busy core here (background job, the browser polls), UMAP about 5 s. The environment may tune each.
BUDGETS = {"pca_fit": ("PANEBOARD_PCA_FIT_POINTS", 50_000), "pca": ("PANEBOARD_PCA_POINTS", 100_000),
           "tsne": ("PANEBOARD_TSNE_POINTS", 5_000), "umap": ("PANEBOARD_UMAP_POINTS", 5_000)}


def budget(kind: str) -> int:
    """The point budget of a projection kind (pca_fit, pca, tsne, umap): its variable in the environment when
    the projection is asked for (not when this module was imported), else the default."""
    env, default = BUDGETS[kind]
    return int(os.environ.get(env, default))


PCA_COMPONENTS = 10
PRE_PCA_DIMS = 50       # t-SNE and UMAP run on the top 50 principal components (the usual speed-up; keeps structure)
MIN_POINTS = 5          # fewer points than this have no neighbourhood to embed
MAX_NEIGHBORS = 1000
SEED = 0                # every sample and every random start is seeded: the same request gives the same picture
EARLY_ITERATIONS = 250  # openTSNE's early-exaggeration phase, run before the requested iterations
PROGRESS_EVERY = 25     # t-SNE iterations between the partial embeddings a browser sees
# FFT interpolation costs ~8 s of fixed overhead on one core here whatever n, Barnes-Hut grows with n log n: BH for
# 500 x 32 points takes ~1 s instead of ~9 s (bench figures in the closing note of issue 21).
BH_POINTS = int(os.environ.get("PANEBOARD_TSNE_BH_POINTS", 2_000))


class ProjectionError(ValueError):
    """A request that cannot be computed (too few points, bad parameter): a 400 for the API."""


class MissingDependency(RuntimeError):
    """The optional packages of a method are not installed: a 501 for the API, with the install line."""


def sample_indices(n: int, budget: int) -> np.ndarray:
    """Every index when n fits the budget, else a seeded uniform sample (sorted): the same for every request."""
    if n <= budget:
        return np.arange(n)
    return np.sort(np.random.default_rng(SEED).choice(n, size=budget, replace=False))


def sphereize(x: np.ndarray, centroid: np.ndarray) -> np.ndarray:
    """TensorBoard's "Sphereize data": shift by the centroid, scale every point to unit norm."""
    y = x.astype(np.float64) - centroid
    norms = np.linalg.norm(y, axis=1, keepdims=True)
    return y / np.where(norms > 0, norms, 1.0)


def _flip_signs(vt: np.ndarray) -> np.ndarray:
    """Make each component's largest loading positive, so exact and randomized fits agree on orientation."""
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
    return vt * np.where(signs == 0, 1.0, signs)[:, None]


def fit_pca(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(mean, components k×D, variance ratio per component, approximate?) of the rows of x."""
    xs = x.astype(np.float64)
    mean = xs.mean(axis=0)
    c = xs - mean
    total = float((c * c).sum()) / max(len(c) - 1, 1)
    k = max(1, min(k, *c.shape))
    approximate = c.size > 2_000_000 and min(c.shape) > 64
    if not approximate:
        _, s, vt = np.linalg.svd(c, full_matrices=False)
        s, vt = s[:k], vt[:k]
    else:
        # Randomized range finder (Halko et al.) with power iterations: exact to float precision for the top
        # components of real embeddings, at O(N·D·k) instead of a full SVD.
        rng = np.random.default_rng(SEED)
        q = np.linalg.qr(c @ rng.standard_normal((c.shape[1], k + 10)))[0]
        for _ in range(4):
            q = np.linalg.qr(c @ (c.T @ q))[0]
        _, s, vt = np.linalg.svd(q.T @ c, full_matrices=False)
        s, vt = s[:k], vt[:k]
    ratio = (s * s) / max(len(c) - 1, 1) / total if total > 0 else np.zeros(len(s))
    return mean, _flip_signs(vt), ratio, approximate


def pca(x: np.ndarray, use_sphereize: bool) -> dict:
    """Top components fitted on a sample, every budgeted point projected on all of them."""
    n = len(x)
    centroid = x.mean(axis=0, dtype=np.float64)
    fit_idx = sample_indices(n, budget("pca_fit"))
    fit_rows = sphereize(x[fit_idx], centroid) if use_sphereize else x[fit_idx]
    mean, vt, ratio, approximate = fit_pca(fit_rows, PCA_COMPONENTS)
    idx = sample_indices(n, budget("pca"))
    rows = sphereize(x[idx], centroid) if use_sphereize else x[idx].astype(np.float64)
    coords = ((rows - mean) @ vt.T).astype(np.float32)
    return {"coords": coords, "indices": idx, "variance": ratio.tolist(), "fit_points": len(fit_idx),
            "approximate": approximate}


def reduce_dims(x: np.ndarray, dims: int = PRE_PCA_DIMS) -> np.ndarray:
    if x.shape[1] <= dims:
        return x.astype(np.float64)
    mean, vt, _, _ = fit_pca(x, dims)
    return (x.astype(np.float64) - mean) @ vt.T


def default_perplexity(n: int) -> float:
    """30 (the usual default; TensorBoard's sqrt(n)/4 gives 5 for a few hundred points, which shatters clusters
    into clumps), kept below what n points can support."""
    return float(min(30, max(1, (n - 1) // 3)))


def tsne(x: np.ndarray, dims: int, perplexity: float, iterations: int,
         progress: Callable[[dict], None] | None = None) -> dict:
    """openTSNE with a Cauchy kernel: Barnes-Hut up to BH_POINTS points (and in 3-D), FFT interpolation above.
    Measured against scikit-learn's TSNE on 200 points: 0.5 s instead of 8-38 s, and its 3-D (which uses a t kernel
    with 2 degrees of freedom) mixed two well-separated clusters where openTSNE's did not. progress(partial) gets
    the embedding every PROGRESS_EVERY iterations, so the browser can watch it form."""
    try:  # imported here: the server starts (and the SDK installs) without it
        from openTSNE import TSNE
    except ImportError as exc:
        raise MissingDependency(f"t-SNE needs openTSNE: pip install 'paneboard[projector]' ({exc})") from None
    idx = sample_indices(len(x), budget("tsne"))
    if len(idx) < MIN_POINTS:
        raise ProjectionError(f"t-SNE needs at least {MIN_POINTS} points")
    if not 0 < perplexity < len(idx) / 3:
        raise ProjectionError(f"perplexity must be below a third of the number of points ({len(idx)})")
    rows = reduce_dims(x[idx])
    total = EARLY_ITERATIONS + iterations
    done = [0]

    def report(iteration: int, error: float, embedding: np.ndarray) -> bool:
        done[0] += PROGRESS_EVERY  # openTSNE counts each phase (exaggerated, then normal) from 0
        if progress is not None:
            progress({"coords": np.array(embedding, dtype=np.float32), "indices": idx, "iteration": done[0],
                      "of": total})
        return False

    method = "fft" if dims == 2 and len(idx) > BH_POINTS else "bh"
    coords = TSNE(n_components=dims, perplexity=perplexity, n_iter=iterations, early_exaggeration_iter=EARLY_ITERATIONS,
                  initialization="pca", negative_gradient_method=method, n_jobs=1, random_state=SEED,
                  callbacks=report if progress is not None else None, callbacks_every_iters=PROGRESS_EVERY).fit(rows)
    return {"coords": np.asarray(coords, dtype=np.float32), "indices": idx}


def umap(x: np.ndarray, dims: int, n_neighbors: int, min_dist: float, epochs: int) -> dict:
    """umap-learn when installed (the reference implementation), else our numpy/scipy version of it."""
    idx = sample_indices(len(x), budget("umap"))
    if len(idx) < MIN_POINTS:
        raise ProjectionError(f"UMAP needs at least {MIN_POINTS} points")
    rows = reduce_dims(x[idx])
    k = min(n_neighbors, len(idx) - 1)
    try:
        import umap as umap_learn
    except ImportError:
        umap_learn = None
    if umap_learn is not None:
        model = umap_learn.UMAP(n_components=dims, n_neighbors=k, min_dist=min_dist, n_epochs=epochs,
                                random_state=SEED)
        coords = np.asarray(model.fit_transform(rows))
    else:
        try:
            from . import umap_numpy  # needs scipy, which the projector extra brings with scikit-learn
        except ImportError as exc:
            raise MissingDependency(f"UMAP needs scipy: pip install 'paneboard[projector]' ({exc})") from None
        coords = umap_numpy.embed(rows, dims, n_neighbors=k, min_dist=min_dist, n_epochs=epochs, seed=SEED)
    return {"coords": coords.astype(np.float32), "indices": idx}


def neighbors(x: np.ndarray, i: int, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest points to point i in the original space (itself excluded): (indices, distances), nearest first."""
    n = len(x)
    if not 0 <= i < n:
        raise ProjectionError(f"i must be a point index in 0..{n - 1}")
    k = min(k, n - 1)
    q = x[i].astype(np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1).astype(np.float64)
        qn = np.linalg.norm(q)
        dots = (x @ x[i]).astype(np.float64)
        dist = 1.0 - dots / np.where(norms * qn > 0, norms * qn, np.inf)
    elif metric == "euclidean":
        dist = np.sqrt(((x.astype(np.float64) - q) ** 2).sum(axis=1)) if x.size <= 4_000_000 \
            else np.sqrt(np.maximum((x * x).sum(axis=1, dtype=np.float64) - 2 * (x @ x[i]) + q @ q, 0))
    else:
        raise ProjectionError("metric must be cosine or euclidean")
    dist[i] = np.inf
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    part = np.argpartition(dist, k - 1)[:k] if k < n else np.arange(n)
    order = part[np.lexsort((part, dist[part]))]  # nearest first; ties by index, so answers are reproducible
    return order, dist[order]
