"""The projector pane in real Chromium against a real dash-server: PCA → t-SNE, colour by a column, search, hover
thumbnail cropped from the sprite, click → nearest neighbours."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

from helpers.browser import Tab, env_url, http

N, D, CELL = 150, 16, 8
WIN = "projector/emb/00003"
PANE = f'[data-win="{WIN}"] .projector-pane'
PLOT = f"document.querySelector('{PANE} .js-plotly-plot')"


def cell_rgb(i: int) -> tuple[int, int, int]:
    return (i * 37) % 256, (i * 91) % 256, (40 + i * 53) % 256


def sprite() -> str:
    per_row = math.ceil(math.sqrt(N))
    img = Image.new("RGB", (per_row * CELL, per_row * CELL))
    for i in range(N):
        x, y = (i % per_row) * CELL, (i // per_row) * CELL
        img.paste(cell_rgb(i), (x, y, x + CELL, y + CELL))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("projector") / "paneboard.db").start()
    rng = np.random.default_rng(5)
    labels = np.arange(N) % 2
    x = (labels[:, None] * 6.0 + rng.normal(size=(N, D))).astype("<f4")
    rows = [["ab"[c], f"{v:.3f}", f"p{i}"] for i, (c, v) in enumerate(zip(labels, rng.random(N), strict=True))]
    event = {"op": "set", "kind": "projector", "env": "proj", "win": WIN,
             "opts": {"title": "emb:00003", "width": 900, "height": 640},
             "projector": {"step": 3, "matrix": {"shape": [N, D], "dtype": "float32",
                                                 "data": base64.b64encode(x.tobytes()).decode()},
                           "metadata": {"header": ["label", "score", "name"], "rows": rows},
                           "sprite": {"data": sprite(), "single_image_dim": [CELL, CELL]}}}
    assert http(srv, "POST", "/api/v1/events", {"events": [event]})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def wait_ready(t: Tab, method: str) -> None:
    t.wait(f"() => {{ const p = document.querySelector('{PANE}'); return !!p && p.dataset.state === 'ready' "
           f"&& p.dataset.method === '{method}'; }}")


def status(t: Tab) -> str:
    return t.js(f"() => document.querySelector('{PANE} .pj-status').textContent")


def point_xy(t: Tab, j: int) -> tuple[float, float]:
    """Page pixel of point j of the main trace (2-D)."""
    return tuple(t.js(f"""j => {{ const d = {PLOT}, fl = d._fullLayout, r = d.getBoundingClientRect();
      return [r.left + fl._size.l + fl.xaxis.d2p(d.data[0].x[j]), r.top + fl._size.t + fl.yaxis.d2p(d.data[0].y[j])]; }}""", j))


def isolated_point(t: Tab) -> int:
    """The shown point farthest (in pixels) from every other: hovering it cannot pick a neighbour."""
    xy = np.array([point_xy(t, j) for j in range(N)])
    d = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    return int(d.min(axis=1).argmax())


def test_projector_pca_tsne_colour_search_thumbnail_neighbours(server, tab):
    tab.open(env_url(server, "proj"))
    tab.page.locator(PANE).scroll_into_view_if_needed()
    wait_ready(tab, "pca")
    assert status(tab).startswith(f"PCA on {N} of {N} points · variance X ")
    pca_x = tab.js(f"() => Array.from({PLOT}.data[0].x)")
    assert len(pca_x) == N
    # the component selects show each component's variance explained
    assert "%" in tab.js(f"() => document.querySelector('{PANE} .pj-comp-x option').textContent")

    tab.page.select_option(f"{PANE} .pj-method", "tsne")
    wait_ready(tab, "tsne")
    assert status(tab).startswith(f"t-SNE on {N} of {N} points")
    tsne_x = tab.js(f"() => Array.from({PLOT}.data[0].x)")
    assert len(tsne_x) == N and not np.allclose(tsne_x, pca_x)
    assert tab.js(f"() => {PLOT}.data[0].type") == "scatter"  # SVG for few points: no GPU needed

    # colour by a categorical column: one colour per label, two labels
    tab.page.select_option(f"{PANE} .pj-color", "label")
    tab.wait(f"() => document.querySelector('{PANE}').dataset.colouring === 'category'")
    colours = tab.js(f"() => Array.from({PLOT}.data[0].marker.color)")
    by_label = {"ab"[i % 2]: {c for j, c in enumerate(colours) if j % 2 == i % 2} for i in range(2)}
    assert all(len(v) == 1 for v in by_label.values()) and by_label["a"] != by_label["b"]
    # a column of 150 distinct numbers gets a gradient instead
    tab.page.select_option(f"{PANE} .pj-color", "score")
    tab.wait(f"() => document.querySelector('{PANE}').dataset.colouring === 'numeric'")
    assert tab.js(f"() => {PLOT}.data[0].marker.showscale") is True

    # search: substring over the name column highlights p1, p10..p19, p100..p149
    tab.page.select_option(f"{PANE} .pj-search-col", "name")
    tab.page.fill(f"{PANE} .pj-search", "p1")
    tab.wait(f"() => document.querySelector('{PANE}').dataset.matches === '61'")
    assert tab.js(f"() => {PLOT}.data[1].customdata.length") == 61

    # hover: the thumbnail is that point's cell of the sprite
    j = isolated_point(tab)
    orig = tab.js(f"j => {PLOT}.data[0].customdata[j]", j)
    tab.page.mouse.move(*point_xy(tab, j))
    tab.wait(f"i => document.querySelector('{PANE} .pj-thumb').dataset.index === String(i)", orig)
    pixel = tab.js(f"""() => {{ const c = document.querySelector('{PANE} .pj-thumb');
      return Array.from(c.getContext('2d').getImageData(c.width >> 1, c.height >> 1, 1, 1).data).slice(0, 3); }}""")
    assert tuple(pixel) == cell_rgb(orig)
    assert f"name: p{orig}" in tab.js(f"() => document.querySelector('{PANE} .pj-hover').textContent")

    # click: its 10 nearest neighbours (original space, cosine) listed and drawn
    tab.page.mouse.click(*point_xy(tab, j))
    tab.wait(f"() => document.querySelectorAll('{PANE} .pj-neighbors li').length === 10")
    want = [n["i"] for n in server.get_json(f"/api/v1/envs/proj/panes/{WIN}/neighbors?i={orig}&k=10")["neighbors"]]
    listed = tab.js(f"() => Array.from(document.querySelectorAll('{PANE} .pj-neighbors li')).map(li => Number(li.dataset.i))")
    assert listed == want
    drawn = tab.js(f"() => {PLOT}.data.find(t => t.name === 'neighbours').customdata")
    assert sorted(drawn) == sorted(want)
    assert tab.errors == []


def test_search_rings_are_drawn_visibly(server, tab):
    tab.open(env_url(server, "proj"))
    tab.page.locator(PANE).scroll_into_view_if_needed()
    wait_ready(tab, "pca")
    tab.page.select_option(f"{PANE} .pj-search-col", "name")
    tab.page.fill(f"{PANE} .pj-search", "p1")
    tab.wait(f"() => document.querySelector('{PANE}').dataset.matches === '61'")
    tab.wait(f"() => {PLOT}.querySelectorAll('.scatterlayer .trace')[1]?.querySelectorAll('path.point').length === 61")
    # What Plotly drew for each ring: its stroke's alpha (colour and stroke-opacity), width and opacity.
    rings = tab.js(f"""() => Array.from({PLOT}.querySelectorAll('.scatterlayer .trace')[1].querySelectorAll('path.point'))
      .map((p) => {{ const s = getComputedStyle(p), a = s.stroke.match(/rgba?\\(([^)]*)\\)/);
        const parts = a ? a[1].split(',').map(Number) : [];
        const alpha = parts.length === 4 ? parts[3] : parts.length === 3 ? 1 : 0;  // Plotly moves it to stroke-opacity
        return {{ alpha: alpha * Number(s.strokeOpacity), stroke: s.stroke,
                  width: parseFloat(s.strokeWidth), opacity: Number(s.opacity), fill: s.fill }}; }})""")
    assert len(rings) == 61
    for ring in rings:
        assert ring["alpha"] > 0.5 and ring["width"] >= 1 and ring["opacity"] > 0.5, ring
    assert tab.errors == []
