"""Pane fixes (Chromium, one real server for the module): OFFSET histograms label only real steps, image grids fill
their card with nearest-neighbour scaling, and a t-SNE projection is drawn while it forms."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import numpy as np
import pytest

from helpers.browser import http

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

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
