"""Snapshot HTML files: an env and a compare view as one self-contained file, opened from disk in Chromium with
every network request aborted (lines, scatter, figure, text and image panes must still draw)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from helpers.browser import POLL_MS, Tab, flushed


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("snap") / "paneboard.db").start()
    client = srv.client("snap")
    try:
        client.line(X=list(range(50)), Y=[1.0 / (i + 1) for i in range(50)], win="loss", opts={"title": "loss"})
        client.scatter(X=np.random.default_rng(1).normal(size=(30, 2)), win="emb", opts={"title": "embedding"})
        client.text("<b>epoch 3</b> done<script>alert(1)</script>", win="log")
        img = np.zeros((3, 16, 24))
        img[0] = 1.0  # red
        client.image(img, win="sample")
        client.bar(X=[3, 1, 2], win="bars", opts={"title": "bars"})  # a Plotly figure pane
        client.histogram(X=np.arange(20.0), win="hist")  # whole-figure too (Visdom's histogram)
        flushed(client)
        other = srv.client("snap_b")
        other.line(X=list(range(50)), Y=[2.0 / (i + 1) for i in range(50)], win="loss", opts={"title": "loss"})
        flushed(other)
        other.close_connection(timeout=5)
        client.close_connection(timeout=5)
        yield srv
    finally:
        srv.stop()


def fetch(srv, path: str) -> tuple[int, Any, bytes]:
    try:
        with urllib.request.urlopen(srv.url + path, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def open_offline(tab: Tab, path) -> list[str]:
    """Open a file from disk with every request aborted; the requests the page tried to make."""
    tried: list[str] = []
    tab.page.on("request", lambda r: tried.append(r.url))
    tab.page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    tab.page.goto(path.as_uri())
    tab.page.wait_for_function("() => document.body.dataset.drawn !== undefined", timeout=30_000, polling=POLL_MS)
    return [u for u in tried if not u.startswith(("file:", "data:"))]


def test_env_snapshot_opens_offline_and_draws_every_pane(server, tab: Tab, tmp_path) -> None:
    status, headers, body = fetch(server, "/api/v1/envs/snap/snapshot.html")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert 'attachment; filename="snap.html"' in headers["Content-Disposition"]
    assert b"<script>alert(1)</script>" not in body  # text is sanitized, as on the page
    # Only its own two scripts may run (by hash), and nothing may load from anywhere.
    policy = headers["Content-Security-Policy"]
    assert policy.startswith("default-src 'none'; script-src 'sha256-")
    assert "script-src 'unsafe-inline'" not in policy and policy.count("'sha256-") == 2
    assert f'content="{policy}"'.encode() in body
    path = tmp_path / "snap.html"
    path.write_bytes(body)
    assert open_offline(tab, path) == []
    kinds = tab.js("() => [...document.querySelectorAll('section')].map((s) => [s.dataset.win, s.dataset.kind])")
    assert sorted(kinds) == sorted([["loss", "line"], ["emb", "scatter"], ["log", "text"], ["sample", "image"],
                                    ["bars", "figure"], ["hist", "figure"]])
    assert tab.js("() => document.body.dataset.drawn") == "6"
    assert tab.js("() => document.querySelector('[data-win=\"loss\"] .js-plotly-plot').data[0].y.length") == 50
    assert tab.js("() => document.querySelector('[data-win=\"emb\"] .js-plotly-plot').data.length") >= 1
    assert tab.js("() => document.querySelectorAll('[data-win=\"bars\"] .js-plotly-plot .bars path').length") >= 3
    size = tab.js("() => { const i = document.querySelector('[data-win=\"sample\"] img');"
                  " return i.complete ? [i.naturalWidth, i.naturalHeight] : null; }")
    assert size == [24, 16]
    assert "epoch 3" in tab.js("() => document.querySelector('[data-win=\"log\"]').textContent")
    tab.page.screenshot(path=str(tmp_path / "snapshot.png"))
    assert not tab.errors, tab.errors


def test_compare_snapshot_overlays_envs_offline(server, tab: Tab, tmp_path) -> None:
    status, headers, body = fetch(server, "/api/v1/compare/snapshot.html?envs=snap,snap_b&points=100")
    assert status == 200
    path = tmp_path / "compare.html"
    path.write_bytes(body)
    assert open_offline(tab, path) == []
    names = tab.js("() => document.querySelector('[data-win=\"loss\"] .js-plotly-plot').data.map((t) => t.name)")
    assert names == ["snap", "snap_b"]
    assert not tab.errors, tab.errors


@pytest.mark.parametrize(("path", "status"), [
    ("/api/v1/envs/nope/snapshot.html", 404), ("/api/v1/envs/snap/snapshot.html?points=0", 400),
    ("/api/v1/compare/snapshot.html", 400), ("/api/v1/compare/snapshot.html?envs=snap,nope", 404),
])
def test_snapshot_bad_input(server, path, status) -> None:
    got, headers, body = fetch(server, path)
    assert got == status and b'"error"' in body
