"""Projector panes through a real dash-server: event validation, PCA/t-SNE/UMAP projections, neighbours, metadata."""

from __future__ import annotations

import base64
import io
import json
import math
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

BUDGET = 200  # the t-SNE/UMAP point budget the test server runs with (5,000 by default: too slow for a test)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, server_types) -> Iterator:
    """One server for the module (each test uses its own env): small budgets so sampling shows with few points."""
    saved = dict(os.environ)
    os.environ.update(PANEBOARD_TSNE_POINTS=str(BUDGET), PANEBOARD_UMAP_POINTS=str(BUDGET),
                      NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    try:
        # A process of its own, with the budgets in its environment.
        proc = server_types.ServerProcess(db=tmp_path_factory.mktemp("projector") / "paneboard.db").start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        yield proc
    finally:
        proc.stop()


def request(srv, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(srv.url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def sprite_png(n: int, w: int, h: int) -> str:
    per_row = math.ceil(math.sqrt(n))
    img = Image.new("RGB", (per_row * w, per_row * h), (0, 0, 0))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def event(x: np.ndarray, env: str, win: str = "projector/emb/00000", metadata: dict | None = None,
          sprite: dict | None = None) -> dict:
    raw = np.ascontiguousarray(x, dtype="<f4").tobytes()
    return {"op": "set", "kind": "projector", "env": env, "win": win, "opts": {"title": "emb:00000"},
            "projector": {"step": 0, "matrix": {"shape": list(x.shape), "dtype": "float32",
                                                "data": base64.b64encode(raw).decode()},
                          "metadata": metadata, "sprite": sprite}}


def post(srv, *events: dict) -> dict:
    status, body = request(srv, "/api/v1/events", {"events": list(events)})
    assert status == 200, body
    return body


def projection(srv, env: str, query: str, win: str = "projector/emb/00000") -> dict:
    """The finished projection (asking again while the server answers 202: a loaded CI box can be slow)."""
    deadline = time.monotonic() + 240
    status, body = 202, {}
    while status == 202 and time.monotonic() < deadline:
        status, body = request(srv, f"/api/v1/envs/{env}/panes/{win}/projection?{query}&wait=20")
    assert status == 200, body
    return body


def two_clusters(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2
    centers = np.stack([np.zeros(d), np.full(d, 8.0)])
    return (centers[labels] + rng.normal(size=(n, d))).astype(np.float32), labels


def separated(coords: np.ndarray, labels: np.ndarray) -> None:
    """Nearly every point's nearest embedded neighbour is in its own cluster (chance: half), and the clusters
    are far apart (t-SNE may leave a straggler or two between them; in 3-D its clusters fill more room)."""
    d = ((coords[:, None] - coords[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    assert (labels[d.argmin(axis=1)] == labels).mean() >= 0.97
    a, b = coords[labels == 0], coords[labels == 1]
    spread = max(np.linalg.norm(a - a.mean(0), axis=1).mean(), np.linalg.norm(b - b.mean(0), axis=1).mean())
    assert np.linalg.norm(a.mean(0) - b.mean(0)) > 1.5 * spread


def test_pca_matches_numpy_svd_up_to_sign(srv) -> None:
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(120, 12)) * np.linspace(5, 0.5, 12)).astype(np.float32)
    assert post(srv, event(x, "pca"))["ok"]
    body = projection(srv, "pca", "method=pca&dims=3&components=0,1,2")
    c = x.astype(np.float64) - x.astype(np.float64).mean(0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    want = c @ vt[:3].T
    got = np.array(body["coords"]).T
    assert got.shape == (120, 3) and body["n"] == body["used"] == 120 and not body["sampled"]
    for j in range(3):
        sign = np.sign(got[:, j] @ want[:, j])
        np.testing.assert_allclose(got[:, j] * sign, want[:, j], rtol=1e-4, atol=1e-4)
    ratio = s**2 / (s**2).sum()
    np.testing.assert_allclose(body["variance"], ratio[:10], rtol=1e-5)
    assert len(body["variance"]) == 10 and sum(body["variance"]) <= 1.0
    assert body["indices"] == list(range(120))
    # another pair of components for X/Y comes from the cached fit
    pair = projection(srv, "pca", "method=pca&dims=2&components=4,1")
    np.testing.assert_allclose(np.abs(pair["coords"][0]), np.abs(c @ vt[4]), rtol=1e-4, atol=1e-4)


def test_pca_sphereize(srv) -> None:
    rng = np.random.default_rng(2)
    x = (rng.normal(size=(80, 6)) * [4, 3, 2, 1, 1, 1] + 10).astype(np.float32)
    post(srv, event(x, "sphere"))
    body = projection(srv, "sphere", "method=pca&dims=2&sphereize=1")
    y = x.astype(np.float64) - x.astype(np.float64).mean(0)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    c = y - y.mean(0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    for j in range(2):
        np.testing.assert_allclose(np.abs(body["coords"][j]), np.abs(c @ vt[j]), rtol=1e-4, atol=1e-4)
    assert body["sphereize"] is True
    np.testing.assert_allclose(body["variance"][:2], (s**2 / (s**2).sum())[:2], rtol=1e-5)


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_nonlinear_methods_sample_the_budget_and_separate_clusters(srv, method: str) -> None:
    x, labels = two_clusters(BUDGET + 100, 20)
    post(srv, event(x, method))
    for dims in (2, 3):
        body = projection(srv, method, f"method={method}&dims={dims}&iterations=300")
        assert (body["n"], body["used"], body["sampled"], body["dims"]) == (BUDGET + 100, BUDGET, True, dims)
        idx = np.array(body["indices"])
        assert len(idx) == BUDGET and len(set(idx.tolist())) == BUDGET and idx.min() >= 0 and idx.max() < BUDGET + 100
        coords = np.array(body["coords"]).T
        assert coords.shape == (BUDGET, dims) and np.isfinite(coords).all()
        separated(coords, labels[idx])
    # the same sample every time: a projection is reproducible and comparable across methods
    assert projection(srv, method, f"method={method}&dims=2&iterations=300")["indices"] == body["indices"]


def test_long_projection_answers_202_then_result_then_cache(srv) -> None:
    x, _ = two_clusters(200, 10, seed=3)
    post(srv, event(x, "poll"))
    path = "/api/v1/envs/poll/panes/projector/emb/00000/projection?method=tsne&dims=2&iterations=300"
    status, body = request(srv, path + "&wait=0")
    assert status == 202 and body["status"] == "computing" and body["used"] == 200
    deadline = time.monotonic() + 60
    while status == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
        status, body = request(srv, path + "&wait=0")
    assert status == 200 and body["status"] == "done" and len(body["coords"][0]) == 200
    status, again = request(srv, path + "&wait=0")  # cached: no wait at all, same numbers
    assert status == 200 and again["coords"] == body["coords"]


def test_neighbors_match_brute_force(srv) -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(150, 9)).astype(np.float32)
    post(srv, event(x, "nn"))
    xd = x.astype(np.float64)
    for metric in ("cosine", "euclidean"):
        for i in (0, 77, 149):
            status, body = request(srv, f"/api/v1/envs/nn/panes/projector/emb/00000/neighbors?i={i}&k=7&metric={metric}")
            assert status == 200, body
            if metric == "cosine":
                dist = 1 - xd @ xd[i] / (np.linalg.norm(xd, axis=1) * np.linalg.norm(xd[i]))
            else:
                dist = np.linalg.norm(xd - xd[i], axis=1)
            dist[i] = np.inf
            want = np.argsort(dist)[:7]
            assert [nb["i"] for nb in body["neighbors"]] == want.tolist()
            np.testing.assert_allclose([nb["distance"] for nb in body["neighbors"]], dist[want], rtol=1e-4, atol=1e-6)


def test_metadata_sprite_and_render(srv) -> None:
    x, labels = two_clusters(10, 4)
    meta = {"header": ["label", "name"], "rows": [[str(v), f"p{i}"] for i, v in enumerate(labels)]}
    post(srv, event(x, "meta", metadata=meta, sprite={"data": sprite_png(10, 8, 6), "single_image_dim": [8, 6]}))
    pane = srv.get_json("/api/v1/envs/meta/panes/projector/emb/00000")
    d = pane["data"]
    assert (pane["kind"], d["n"], d["d"], d["step"], d["columns"]) == ("projector", 10, 4, 0, ["label", "name"])
    assert d["has_sprite"] and d["single_image_dim"] == [8, 6] and d["sprite_size"] == [32, 24]
    assert "matrix" not in json.dumps(pane["opts"]) and "rows" not in d  # the big parts are blobs, not pane JSON
    with urllib.request.urlopen(srv.url + "/" + d["sprite"]) as r:
        assert r.headers["Content-Type"] == "image/png" and Image.open(io.BytesIO(r.read())).size == (32, 24)
    assert srv.get_json("/api/v1/envs/meta/panes/projector/emb/00000/metadata") == meta


def test_bad_requests(srv) -> None:
    x, _ = two_clusters(20, 4)
    post(srv, event(x, "bad"), {"op": "set", "kind": "text", "env": "bad", "win": "t", "content": "hi"})
    base = "/api/v1/envs/bad/panes"
    for path, fragment in [("/projector/emb/00000/projection?method=lda", "method must be one of"),
                           ("/projector/emb/00000/projection?components=0,12", "components must be in 0..3"),
                           ("/projector/emb/00000/projection?dims=4", "dims must be between 2 and 3"),
                           ("/projector/emb/00000/neighbors?k=3", "i (the point index) is required"),
                           ("/projector/emb/00000/neighbors?i=20", "i must be between 0 and 19"),
                           ("/projector/emb/00000/neighbors?i=1&metric=manhattan", "cosine or euclidean"),
                           ("/projector/emb/00000/metadata", "has no metadata"),
                           ("/t/projection", "is a text pane, not projector")]:
        status, body = request(srv, base + path)
        assert 400 <= status < 500 and fragment in body["error"], (path, body)


def _mutate(ev: dict, path: str, value) -> dict:
    ev = json.loads(json.dumps(ev))
    *parents, last = path.split(".")
    node = ev["projector"]
    for key in parents:
        node = node[key]
    node[last] = value
    return ev


JPEG = io.BytesIO()
Image.new("RGB", (16, 16)).save(JPEG, format="JPEG")

INVALID = [
    ("matrix.shape", [3, 5], "has 320 bytes; shape 3×5 of float32 needs 60"),
    ("matrix.shape", [1_000_001, 1], "N (points) must be an integer in 1..1,000,000"),
    ("matrix.shape", [1, 10_001], "D (dimensions) must be an integer in 1..10,000"),
    ("matrix.shape", [20], "matrix.shape must be [N, D]"),
    ("matrix.dtype", "float64", "matrix.dtype must be float32"),
    ("matrix.data", "!" * 427 + "=", "not valid base64"),  # the right length, not base64
    ("matrix.data", base64.b64encode(np.full((20, 4), np.nan, "<f4").tobytes()).decode(), "row 0 has NaN"),
    ("metadata", {"header": ["label"], "rows": [["a"]] * 19}, "one row per point (20); got 19"),
    ("metadata", {"header": ["a", "b"], "rows": [["x", "y"]] * 19 + [["x"]]}, "row 19 must be a list of 2 strings"),
    ("metadata", {"header": "label", "rows": [["a"]] * 20}, "metadata.header must be a list"),
    ("metadata", {"header": ["n"], "rows": [[1]] * 20}, "row 0 must be a list of 1 strings"),
    ("sprite", {"data": base64.b64encode(JPEG.getvalue()).decode(), "single_image_dim": [2, 2]}, "must be a PNG"),
    ("sprite", {"data": base64.b64encode(b"\x89PNG\r\n\x1a\n broken").decode(), "single_image_dim": [2, 2]},
     "not a readable image"),
    ("sprite", {"data": sprite_png(20, 4, 4), "single_image_dim": [8, 8]}, "need at least 40×32"),
    ("sprite", {"data": sprite_png(20, 4, 4), "single_image_dim": [4]}, "single_image_dim must be [w, h]"),
    ("step", "three", "step must be an integer"),
]


@pytest.mark.parametrize(("path", "value", "fragment"), INVALID, ids=[f"{p}:{f[:24]}" for p, _, f in INVALID])
def test_invalid_events_are_refused_with_a_message_and_store_nothing(srv, path: str, value,
                                                                    fragment: str, tmp_path: Path) -> None:
    x, _ = two_clusters(20, 4)
    env = f"invalid-{tmp_path.name}"[:60]
    body = post(srv, _mutate(event(x, env), path, value))
    assert body["ok"] is False and len(body["errors"]) == 1
    assert body["errors"][0]["error"].startswith("projector: ") and fragment in body["errors"][0]["error"], body
    status, _ = request(srv, f"/api/v1/envs/{env}")
    assert status == 404  # nothing stored: not even the env


def test_randomized_pca_of_a_large_sample_matches_the_exact_svd() -> None:
    from paneboard.server.projection import methods as pj

    rng = np.random.default_rng(6)
    # 3,000 × 800 is past the exact-SVD size: a low-rank signal plus noise, like real embeddings
    x = (rng.normal(size=(3000, 12)) * np.geomspace(20, 2, 12)) @ rng.normal(size=(12, 800)) \
        + rng.normal(size=(3000, 800))
    mean, vt, ratio, approximate = pj.fit_pca(x, 10)
    c = x - x.mean(0)
    _, s, want = np.linalg.svd(c, full_matrices=False)
    assert approximate
    np.testing.assert_allclose(ratio, (s**2 / (s**2).sum())[:10], rtol=1e-3)
    np.testing.assert_allclose(np.abs((vt * want[:10]).sum(axis=1)), 1.0, atol=1e-3)  # same axes up to sign
    assert pj.sample_indices(10, 20).tolist() == list(range(10))
    picked = pj.sample_indices(100_000, 500)
    assert len(set(picked.tolist())) == 500 and (np.diff(picked) > 0).all()
    assert (pj.sample_indices(100_000, 500) == picked).all()  # seeded: every request shows the same points


def test_tsne_streams_its_embedding_while_it_forms(srv) -> None:
    x, labels = two_clusters(BUDGET, 32, seed=5)
    post(srv, event(x, "stream"))
    path = "/api/v1/envs/stream/panes/projector/emb/00000/projection?method=tsne&dims=2&iterations=500"
    partials: list[dict] = []
    deadline = time.monotonic() + 120
    status, body = 202, {}
    while status == 202 and time.monotonic() < deadline:
        status, body = request(srv, path + "&wait=0.2")
        if status == 202 and "coords" in body:
            partials.append(body)
    assert status == 200 and body["status"] == "done", body
    assert partials, "no partial embedding was answered while t-SNE ran"
    iterations = [p["iteration"] for p in partials]
    assert iterations == sorted(iterations) and all(0 < i <= p["of"] for i, p in zip(iterations, partials, strict=True))
    assert partials[-1]["of"] == 250 + 500  # early exaggeration, then the requested iterations
    first = partials[0]
    assert first["indices"] == body["indices"] and len(first["coords"]) == 2 and len(first["coords"][0]) == BUDGET
    assert np.isfinite(np.array(first["coords"])).all()
    separated(np.array(body["coords"]).T, labels[np.array(body["indices"])])
