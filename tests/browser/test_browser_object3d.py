"""A 3D point cloud pane (Chromium, real server, real SDK): Plotly's scatter3d draws the cloud (its WebGL canvas is not
blank), boxes as line traces, and the step slider moves to another cloud; screenshots light, dark and at 390 px."""

from __future__ import annotations

import io
import os

import numpy as np
from PIL import Image

from helpers.browser import env_url, flushed

SHOTS = os.environ.get("PANEBOARD_SHOTS")
WIN = "lidar"
PLOT = f'[data-win="{WIN}"] .object3d-pane'
DRAWN = "([sel, step]) => { const d = document.querySelector(sel); return d && d.dataset.step === String(step)" \
        " && d.querySelector('canvas') && d.data && d.data.length > 0; }"
BOX = {"corners": [[-1, -1, 0], [-1, 1, 0], [1, -1, 0], [1, 1, 0], [-1, -1, 1], [-1, 1, 1], [1, -1, 1], [1, 1, 1]],
       "label": "car", "color": [255, 60, 0]}


def _shot(tab, tmp_path, name: str) -> np.ndarray:
    png = tab.page.locator(PLOT).screenshot(path=os.path.join(SHOTS or str(tmp_path), name))
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_point_cloud_pane_draws_points_and_boxes(server, sdk, tab, tmp_path) -> None:
    rng = np.random.default_rng(1)
    c = sdk("cloud")
    pts = np.hstack([rng.normal(size=(4000, 3)), rng.integers(0, 256, (4000, 3))])
    c.point_cloud(pts, win=WIN, step=0)
    c.point_cloud(pts[:2000], win=WIN, step=1, boxes=[BOX])
    flushed(c)
    tab.open(env_url(server, "cloud"))
    tab.wait(DRAWN, [PLOT, 1])
    traces = tab.js(f"() => document.querySelector('{PLOT}').data.map((t) => [t.type, t.mode, t.x.length])")
    assert traces == [["scatter3d", "markers", 2000], ["scatter3d", "lines", 36]]  # 12 edges: 2 ends and a gap each
    shot = _shot(tab, tmp_path, "object3d_light.png")
    assert (shot.max(axis=2) - shot.min(axis=2) > 60).sum() > 200, "no coloured points drawn"  # not a blank canvas
    tab.js("() => { const s = document.querySelector('[data-win=\"lidar\"] .step-slider'); s.value = '0';"
           " s.dispatchEvent(new Event('input')); }")
    tab.wait(DRAWN, [PLOT, 0])
    assert tab.js(f"() => document.querySelector('{PLOT}').data.map((t) => t.x.length)") == [4000]
    tab.page.emulate_media(color_scheme="dark")
    _shot(tab, tmp_path, "object3d_dark.png")
    tab.page.emulate_media(color_scheme="light")
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.wait("(sel) => { const d = document.querySelector(sel), c = d && d.querySelector('canvas');"
             " return c && d.clientWidth < 390 && Math.abs(c.getBoundingClientRect().width - d.clientWidth) < 2; }", PLOT)
    _shot(tab, tmp_path, "object3d_390.png")
    assert not tab.errors, tab.errors
