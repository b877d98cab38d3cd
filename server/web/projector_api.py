"""Projector API: projections (PCA, t-SNE, UMAP), nearest neighbours and metadata of a projector pane."""

from __future__ import annotations

import math

import numpy as np
from flask import Blueprint, Response, request

from .. import projection
from ..commands.envelope import EventError, check_name
from ..store import PaneRecord
from .common import ApiError, json_response, services

bp = Blueprint("projector_api", __name__, url_prefix="/api/v1")

METHODS = ("pca", "tsne", "umap")
MAX_WAIT = 20.0  # seconds a request may hold for its projection before it answers 202 (poll again)


def _pane(env: str, win: str) -> PaneRecord:
    try:
        env, win = check_name(env, "env"), check_name(win, "win")
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    pane = services().store.get_pane(env, win)
    if pane is None:
        raise ApiError(404, f"pane {win!r} not found in env {env!r}")
    if pane.kind != "projector" or not (pane.content or {}).get("matrix"):
        raise ApiError(400, f"pane {win!r} is a {pane.kind} pane, not projector")
    return pane


def _matrix(pane: PaneRecord) -> np.ndarray:
    c = pane.content
    store = services().store

    def load() -> bytes | None:
        found = store.get_blob(c["matrix"])
        return found[1] if found else None

    try:
        return projection.matrix(c["matrix"], int(c["n"]), int(c["d"]), load)
    except projection.ProjectionError as exc:
        raise ApiError(500, str(exc)) from None


def _number(key: str, default: float, low: float, high: float, integer: bool = False) -> float:
    raw = request.args.get(key)
    if raw in (None, ""):
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ApiError(400, f"{key} must be {'an integer' if integer else 'a number'}") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise ApiError(400, f"{key} must be between {low:g} and {high:g}")
    return value


def _components(dims: int, available: int) -> list[int]:
    raw = request.args.get("components")
    if raw in (None, ""):
        picked = list(range(dims))
    else:
        try:
            picked = [int(v) for v in raw.split(",")]
        except ValueError:
            raise ApiError(400, "components must be comma-separated component indices, e.g. 0,1,2") from None
    if len(picked) != dims:
        raise ApiError(400, f"components must name {dims} components for dims={dims}")
    if any(not 0 <= v < available for v in picked):
        raise ApiError(400, f"components must be in 0..{available - 1}")
    return picked


def _job(key: tuple, compute, wait: float, progressive: bool = False) -> dict | None:
    try:
        return projection.cached_or_run(key, compute, wait, progressive)
    except projection.ProjectionError as exc:
        raise ApiError(400, str(exc)) from None
    except projection.MissingDependency as exc:
        raise ApiError(501, str(exc)) from None
    except projection.Busy as exc:
        raise ApiError(503, str(exc)) from None


@bp.get("/envs/<path:env>/panes/<path:win>/projection")
def get_projection(env: str, win: str) -> Response:
    """?method=pca|tsne|umap&dims=2|3&wait=seconds; pca: components=0,1,2&sphereize=0|1; tsne: perplexity,
    iterations; umap: neighbors, min_dist, epochs. 202 {"status": "computing"} until the result is ready."""
    pane = _pane(env, win)
    method = request.args.get("method", "pca")
    if method not in METHODS:
        raise ApiError(400, f"method must be one of {', '.join(METHODS)}")
    dims = int(_number("dims", 2, 2, 3, integer=True))
    wait = _number("wait", 2.0, 0.0, MAX_WAIT)
    c = pane.content
    n, sha = int(c["n"]), c["matrix"]
    x = _matrix(pane)
    used = min(n, projection.budget(method))
    extra: dict = {}
    if method == "pca":
        sphere = request.args.get("sphereize", "0") in ("1", "true")
        picked = _components(dims, min(projection.PCA_COMPONENTS, n, int(c["d"])))
        key: tuple = (sha, "pca", sphere)
        result = _job(key, lambda: projection.pca(x, sphere), wait)
        if result is not None:
            extra = {"components": picked, "variance": result["variance"], "fit_points": result["fit_points"],
                     "approximate": result["approximate"], "sphereize": sphere}
    elif method == "tsne":
        perplexity = _number("perplexity", projection.default_perplexity(used), 1, 100)
        iterations = int(_number("iterations", 500, 50, 5000, integer=True))
        key = (sha, "tsne", dims, perplexity, iterations)
        result = _job(key, lambda report: projection.tsne(x, dims, perplexity, iterations, report), wait,
                      progressive=True)
        extra = {"perplexity": perplexity, "iterations": iterations}
    else:
        neighbors = int(_number("neighbors", 15, 2, 200, integer=True))
        min_dist = _number("min_dist", 0.1, 0.0, 1.0)
        epochs = int(_number("epochs", 200, 50, 1000, integer=True))
        key = (sha, "umap", dims, neighbors, min_dist, epochs)
        result = _job(key, lambda: projection.umap(x, dims, neighbors, min_dist, epochs), wait)
        extra = {"neighbors": neighbors, "min_dist": min_dist, "epochs": epochs}
    head = {"method": method, "dims": dims, "n": n, "used": used, "sampled": used < n}
    if result is None:
        part = projection.partial(key)
        if part is not None:  # a t-SNE's embedding so far: the browser draws it while it forms
            head = {**head, **extra, "iteration": part["iteration"], "of": part["of"], "indices": part["indices"],
                    "coords": [np.ascontiguousarray(part["coords"][:, j]) for j in range(dims)]}
        resp = json_response({**head, "status": "computing"}, 202)
        resp.headers["Retry-After"] = "1"
        return resp
    coords = result["coords"]
    columns = extra["components"] if method == "pca" else list(range(dims))
    return json_response({**head, **extra, "status": "done", "indices": result["indices"],
                          "coords": [np.ascontiguousarray(coords[:, j]) for j in columns]})


@bp.get("/envs/<path:env>/panes/<path:win>/neighbors")
def get_neighbors(env: str, win: str) -> Response:
    """?i=<point>&k=10&metric=cosine|euclidean: the k nearest points in the original D-dimensional space."""
    pane = _pane(env, win)
    if request.args.get("i") in (None, ""):
        raise ApiError(400, "i (the point index) is required")
    i = int(_number("i", 0, 0, int(pane.content["n"]) - 1, integer=True))
    k = int(_number("k", 10, 1, projection.MAX_NEIGHBORS, integer=True))
    metric = request.args.get("metric", "cosine")
    try:
        idx, dist = projection.neighbors(_matrix(pane), i, k, metric)
    except projection.ProjectionError as exc:
        raise ApiError(400, str(exc)) from None
    return json_response({"i": i, "k": k, "metric": metric,
                          "neighbors": [{"i": int(j), "distance": float(d)} for j, d in zip(idx, dist, strict=True)]})


@bp.get("/envs/<path:env>/panes/<path:win>/metadata")
def get_metadata(env: str, win: str) -> Response:
    """{"header": [column names], "rows": [[str, ...] per point]}: the stored JSON blob, served as is."""
    pane = _pane(env, win)
    sha = pane.content.get("metadata")
    found = services().store.get_blob(sha) if sha else None
    if found is None:
        raise ApiError(404, f"pane {pane.win!r} has no metadata")
    return Response(found[1], mimetype="application/json")
