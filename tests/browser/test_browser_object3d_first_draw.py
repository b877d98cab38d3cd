"""A big point cloud's first draw (panes/object3d.js) in Chromium against a real server and SDK: a first, smaller draw
of 10k points on screen quickly, the full budget drawn after it; a refinement never lands on a step the slider left;
Plotly's bundle is fetched once."""

from __future__ import annotations

import numpy as np

from helpers.browser import env_url, flushed

WIN = "lidar"
PLOT = f'[data-win="{WIN}"] .object3d-pane'
# Every value data-points takes on the cloud's plot, in order, recorded from before the page's first script runs.
RECORD = """() => { window.__cloudPoints = [];
  new MutationObserver((ms) => { for (const m of ms) if (m.target.classList.contains('object3d-pane'))
    window.__cloudPoints.push([m.target.dataset.step, m.target.dataset.points]); })
  .observe(document, { subtree: true, attributes: true, attributeFilter: ['data-points'] }); }"""
FULL = "([sel, step]) => { const d = document.querySelector(sel); return !!d && d.dataset.full === '1'" \
       " && d.dataset.step === String(step); }"


def test_a_big_cloud_draws_10k_points_first_then_all(server, sdk, tab) -> None:
    rng = np.random.default_rng(2)
    c = sdk("bigcloud")
    c.point_cloud(rng.normal(size=(30_000, 3)), win=WIN, step=0)
    c.point_cloud(rng.normal(size=(20_000, 3)), win=WIN, step=1)
    flushed(c)
    plotly = []
    tab.page.on("request", lambda r: plotly.append(r.url) if r.url.endswith("/plotly.min.js") else None)
    tab.page.add_init_script(script=f"({RECORD})()")
    tab.open(env_url(server, "bigcloud"))
    tab.wait(FULL, [PLOT, 1])
    assert tab.js("() => window.__cloudPoints") == [["1", "10000"], ["1", "20000"]]
    assert tab.js(f"() => document.querySelector('{PLOT}').data[0].x.length") == 20_000
    # Another step: again a small draw first, then the whole (30k points, under the 50k budget).
    tab.js("() => { window.__cloudPoints.length = 0; const s = document.querySelector('[data-win=\"lidar\"] .step-slider');"
           " s.value = '0'; s.dispatchEvent(new Event('input')); }")
    tab.wait(FULL, [PLOT, 0])
    assert tab.js("() => window.__cloudPoints") == [["0", "10000"], ["0", "30000"]]
    assert "30,000 points" in tab.js(f"() => document.querySelector('{PLOT}').parentElement.textContent")
    assert len(plotly) == 1, plotly  # the bundle once, whatever draws with it
    assert not tab.errors, tab.errors


def test_a_refinement_never_lands_on_a_step_the_slider_left(server, sdk, tab) -> None:
    rng = np.random.default_rng(3)
    c = sdk("scrubcloud")
    for step in range(3):
        c.point_cloud(rng.normal(size=(15_000 + 1000 * step, 3)), win=WIN, step=step)
    flushed(c)
    tab.page.add_init_script(script=f"({RECORD})()")
    tab.open(env_url(server, "scrubcloud"))
    tab.wait(FULL, [PLOT, 2])
    # Two moves in one task: step 1's draws are superseded by step 0's before either reads its points.
    tab.js("() => { window.__cloudPoints.length = 0; const s = document.querySelector('[data-win=\"lidar\"] .step-slider');"
           " s.value = '1'; s.dispatchEvent(new Event('input')); s.value = '0'; s.dispatchEvent(new Event('input')); }")
    tab.wait(FULL, [PLOT, 0])
    drawn = tab.js("() => window.__cloudPoints")
    assert drawn[-2:] == [["0", "10000"], ["0", "15000"]]
    assert ["1", "16000"] not in drawn  # no full draw of the step left behind
    assert tab.js(f"() => document.querySelector('{PLOT}').data[0].x.length") == 15_000
    assert not tab.errors, tab.errors
