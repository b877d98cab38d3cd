"""Pane fixes (Chromium, one real server for the module): OFFSET histograms label only real steps, image grids fill
their card with nearest-neighbour scaling, a t-SNE projection is drawn while it forms, and the model graph fits with
legible labels (also fullscreen), shows a clicked op's details and finds nodes."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import numpy as np
import pytest

from helpers.browser import http

T0 = 1_750_000_000.0
PROJ = "projector/emb/00000"


def hist_record(step: int, values: np.ndarray) -> dict:
    counts, edges = np.histogram(values, bins=30)
    return {"step": step, "wall": T0 + step, "min": float(values.min()), "max": float(values.max()),
            "num": int(values.size), "sum": float(values.sum()), "sum_squares": float((values**2).sum()),
            "limits": edges[1:].tolist(), "counts": counts.astype(float).tolist()}


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    import paneboard

    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("panefix") / "paneboard.db").start()
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(c * 4, 1, (100, 32)) for c in range(5)]).astype("<f4")
    events = [
        {"op": "update", "mode": "append", "env": "fix", "win": "w", "kind": "histogram", "opts": {"title": "weights"},
         "records": [hist_record(s, rng.normal(0, 1, 500)) for s in (0, 100)]},
        {"op": "set", "kind": "projector", "env": "proj", "win": PROJ, "opts": {"title": "emb"},
         "projector": {"step": 0, "matrix": {"shape": [500, 32], "dtype": "float32",
                                             "data": base64.b64encode(x.tobytes()).decode()}}},
    ]
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    c = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="fix")
    grid = np.zeros((1, 68, 272))
    grid[0, ::4, ::4] = 1.0  # a 272 x 68 kernel grid, as the model hook logs it
    c.image(grid, win="kernels", opts={"title": "kernels: 0"})
    assert c.flush(timeout=10)
    c.close_connection(timeout=5)
    import torch

    from helpers.model_graph import Net

    w = paneboard.SummaryWriter("graph", server="http://127.0.0.1", port=srv.port)
    w.add_graph(Net(), torch.randn(2, 3, 32, 32))
    assert w.flush(timeout=10)
    w.close()
    try:
        yield srv
    finally:
        srv.stop()


def test_offset_histogram_labels_only_real_steps(server, tab):
    tab.open(server.env_url("fix"))
    plot = "document.querySelector('[data-win=\"w\"] .js-plotly-plot')"
    tab.wait(f"() => {{ const d = {plot}; return !!(d && d.data && d.data.length === 2); }}")
    ticks = tab.js(f"() => [...{plot}.querySelectorAll('.ytick text')].map(t => t.textContent)")
    assert ticks == ["0", "100"], ticks
    assert tab.errors == []


def test_image_grid_fills_its_card_pixelated(server, tab):
    tab.open(server.env_url("fix"))
    img = tab.page.locator('[data-win="kernels"] img')
    tab.wait("() => { const i = document.querySelector('[data-win=\"kernels\"] img'); return i && i.complete && i.naturalWidth === 272; }")
    box = img.bounding_box()
    body = tab.page.locator('[data-win="kernels"] .card-body').bounding_box()
    assert box["width"] > body["width"] - 20  # the element spans the card (not 272 px at native size)
    drawn = tab.js("""() => { const i = document.querySelector('[data-win="kernels"] img');
      const s = Math.min(i.clientWidth / i.naturalWidth, i.clientHeight / i.naturalHeight);
      return [i.naturalWidth * s, i.naturalHeight * s, getComputedStyle(i).imageRendering, getComputedStyle(i).objectFit]; }""")
    assert drawn[0] > 1.8 * 272 and abs(drawn[0] / drawn[1] - 4) < 0.01  # scaled up, aspect kept
    assert drawn[2] == "pixelated" and drawn[3] == "contain"
    assert tab.errors == []


def test_tsne_is_drawn_while_it_forms(server, tab):
    tab.open(server.env_url("proj"))
    pane = f'[data-win="{PROJ}"] .projector-pane'
    tab.wait(f"() => document.querySelector('{pane}').dataset.state === 'ready'")
    # Record every iteration the pane drew before the final result.
    tab.js(f"""() => {{ window.__iters = []; const p = document.querySelector('{pane}');
      new MutationObserver(() => {{ if (p.dataset.iteration) window.__iters.push(Number(p.dataset.iteration)); }})
        .observe(p, {{ attributes: true, attributeFilter: ['data-iteration'] }}); }}""")
    tab.page.select_option(f"{pane} .pj-method", "tsne")
    tab.wait(f"() => {{ const p = document.querySelector('{pane}'); return p.dataset.state === 'ready' && p.dataset.method === 'tsne'; }}")
    iters = tab.js("() => window.__iters")
    assert iters and iters == sorted(iters) and iters[0] < 750, iters
    assert tab.js(f"() => document.querySelector('{pane}').dataset.iteration") == ""
    assert tab.js(f"() => document.querySelector('{pane} .js-plotly-plot').data[0].x.length") == 500
    assert tab.errors == []


GRAPH = '[data-win="graph"]'
# Every node box inside the graph's view (across only: "x"), and the smallest label's rendered height in px.
INSIDE = f"""(across) => {{ const v = document.querySelector('{GRAPH} .mg-view').getBoundingClientRect();
  const boxes = [...document.querySelectorAll('{GRAPH} .mg-node rect')].map((r) => r.getBoundingClientRect());
  return boxes.length > 0 && boxes[0].top >= v.top && boxes.every((b) => b.left >= v.left - 1 && b.right <= v.right + 1
    && (across === 'x' || (b.top >= v.top - 1 && b.bottom <= v.bottom + 1))); }}"""
LABEL_PX = f"""() => Math.min(...[...document.querySelectorAll('{GRAPH} .mg-node text:first-of-type')].map(
  (t) => t.getBoundingClientRect().height))"""


def test_model_graph_fits_readably_shows_details_and_finds_nodes(server, tab):
    tab.open(server.env_url("graph"))
    tab.wait(f"() => document.querySelectorAll('{GRAPH} .mg-group').length === 3")
    # On open the graph fits across the pane from its input down, with labels of a readable size (they were ~6 px);
    # this 6-layer graph is taller than the pane at that size (pan for the rest; fullscreen below fits it whole).
    tab.wait(INSIDE, "x")
    assert tab.js(LABEL_PX) >= 9

    # Search opens the module around a match, marks it and says how many.
    tab.page.locator(f"{GRAPH} .mg-search").fill("conv")
    tab.page.locator(f"{GRAPH} .mg-search").press("Enter")
    marked = tab.js(f"() => [...document.querySelectorAll('{GRAPH} .mg-match')].map((n) => n.dataset.op)")
    assert marked and all(op == "aten::_convolution" for op in marked), marked
    assert tab.js(f"() => document.querySelector('{GRAPH} .mg-count').textContent") == f"{len(marked)} found"
    assert tab.js(LABEL_PX) >= 9

    # A click on an op shows what it is; Escape closes the panel.
    tab.page.locator(f"{GRAPH} .mg-match").first.click()
    details = tab.page.locator(f"{GRAPH} .mg-details")
    assert details.is_visible()
    text = details.text_content()
    assert "aten::_convolution" in text and "shape" in text and "[2, 8, " in text and "module" in text
    tab.page.keyboard.press("Escape")
    assert not details.is_visible()

    # Fullscreen: the view grows and the graph is fitted to it again.
    tab.page.locator(f"{GRAPH} .mg-search").fill("")
    tab.page.locator(f"{GRAPH} .mg-search").press("Enter")
    small = tab.page.locator(f"{GRAPH} .mg-view").bounding_box()
    tab.page.locator(f"{GRAPH} .pane-menu-btn").click()
    tab.page.locator(".menu-list .m-full").click()
    tab.wait("() => !!document.fullscreenElement")
    tab.wait(f"() => document.querySelector('{GRAPH} .mg-view').getBoundingClientRect().height > {small['height'] + 100}")
    tab.wait(INSIDE, "xy")
    assert tab.js(LABEL_PX) >= 9
    assert tab.errors == []
