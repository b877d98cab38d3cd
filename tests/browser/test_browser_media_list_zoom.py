"""Pan and zoom per cell of a step's list of pictures (panes/media_list.js with panes/panzoom.js) in Chromium against a
real server and SDK: the wheel zooms the cell under the pointer only, its boxes stay on its picture while zoomed and
panned, a double-click resets it; screenshots light, dark and at 390 px wide."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from PIL import Image

import paneboard
from helpers.browser import env_url

SHOTS = os.environ.get("PANEBOARD_SHOTS")
CELLS = 3
GRID = "(n) => { const g = document.querySelector('.media-list'); return g && Number(g.dataset.count) === n" \
       " && [...g.querySelectorAll('.overlay-canvas')].every((c) => c.dataset.ready === '1'); }"
# One box of class 0 around each picture's white square (160..180); its 1-px edges on whole pixels.
BOX = [150.5, 150.5, 190.5, 190.5]
BOX_COLOUR = np.array([0xe6, 0x19, 0x4b])  # class 0's colour
# Where picture pixel (x, y) of cell k is on the page, from its <img>'s box.
IMG_XY = """([k, x, y]) => {
  const img = document.querySelectorAll('.media-list img')[k], r = img.getBoundingClientRect();
  const s = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
  return [r.left + (r.width - img.naturalWidth * s) / 2 + x * s, r.top + (r.height - img.naturalHeight * s) / 2 + y * s];
}"""
ZOOMS = "() => [...document.querySelectorAll('.media-list .media-stage')].map((s) => s.dataset.zoom || '1.000')"


@pytest.fixture
def grid_env(server, tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        monkeypatch.delenv(var, raising=False)
    run = paneboard.init(project="lists", name="zoom", dir=tmp_path)
    pictures = []
    for k in range(CELLS):
        picture = np.full((256, 256, 3), 40 + 20 * k, np.uint8)
        picture[160:180, 160:180] = 255
        boxes = {"pred": {"box_data": [{"position": dict(zip(("minX", "minY", "maxX", "maxY"), BOX, strict=True)),
                                        "domain": "pixel", "class_id": 0}]}}
        pictures.append(paneboard.Image(picture, caption=f"cell {k}", boxes=boxes))
    paneboard.log({"samples": pictures})
    paneboard.finish()
    assert run.rejected == 0
    return "lists/zoom"


def _colour(tab, k: int, x: float, y: float) -> np.ndarray:
    px, py = tab.js(IMG_XY, [k, x, y])
    shot = np.asarray(Image.open(io.BytesIO(tab.page.screenshot())).convert("RGB"))
    return shot[int(py), int(px)].astype(int)


def _edge_distance(tab, k: int, x: float, y: float) -> int:
    """How far from the box's colour the screen is at picture pixel (x, y) of cell k, the closest of the screen
    pixels within 3 px (the overlay strokes a 1-px edge that lands within a pixel or two of the ideal line once
    scaled; a picture and overlay out of register would be off by the zoom's tens of pixels)."""
    px, py = tab.js(IMG_XY, [k, x, y])
    shot = np.asarray(Image.open(io.BytesIO(tab.page.screenshot())).convert("RGB")).astype(int)
    near = shot[round(py) - 3:round(py) + 4, round(px) - 3:round(px) + 4].reshape(-1, 3)
    return int(np.abs(near - BOX_COLOUR).sum(axis=1).min())


def _zoom_cell(tab, k: int) -> None:
    tab.page.locator(".media-list figure").nth(k).scroll_into_view_if_needed()
    tab.page.mouse.move(*tab.js(IMG_XY, [k, 170, 170]))
    for _ in range(2):
        tab.page.mouse.wheel(0, -150)
    tab.wait("(k) => Number(document.querySelectorAll('.media-list .media-stage')[k].dataset.zoom) > 2.5", k)


def test_a_cell_zooms_and_pans_alone_with_its_boxes_and_a_double_click_resets(grid_env, server, tab) -> None:
    tab.page.set_viewport_size({"width": 1280, "height": 900})
    tab.open(env_url(server, grid_env))
    tab.wait(GRID, CELLS)
    before = tab.js(IMG_XY, [1, BOX[0], 170])
    width = tab.js(IMG_XY, [1, BOX[2], 170])[0] - before[0]
    other = tab.js(IMG_XY, [0, BOX[0], 170])
    _zoom_cell(tab, 1)
    assert tab.js(ZOOMS)[0] == "1.000" and tab.js(ZOOMS)[2] == "1.000"  # the other cells stay as they were
    zoomed = tab.js(IMG_XY, [1, BOX[2], 170])[0] - tab.js(IMG_XY, [1, BOX[0], 170])[0]
    assert zoomed / width > 2.5  # the box is wider on screen: zoomed
    assert tab.js(IMG_XY, [0, BOX[0], 170]) == other
    # Under the box's edge, as the zoomed picture places it, is the box's colour; inside it the picture's white.
    assert _edge_distance(tab, 1, BOX[0], 170) <= 60
    assert _edge_distance(tab, 1, BOX[0] + 8, 170) > 150  # beside the edge: the picture, no overlay
    assert (_colour(tab, 1, 170, 170) >= 245).all()
    # The zoomed picture stays inside its cell: the cell's frame clips it, the neighbour is untouched.
    frame = tab.js("() => { const r = document.querySelectorAll('.media-list .media-cell-frame')[1]"
                   ".getBoundingClientRect(); return [r.left, r.right]; }")
    assert tab.js("() => getComputedStyle(document.querySelectorAll('.media-list .media-cell-frame')[1]).overflow") \
        == "hidden"
    assert frame[1] <= tab.js(IMG_XY, [2, 0, 0])[0]

    # A drag pans the cell's picture and its boxes together.
    x, y = tab.js(IMG_XY, [1, 170, 170])
    tab.page.mouse.move(x, y)
    tab.page.mouse.down()
    tab.page.mouse.move(x + 15, y + 10, steps=4)
    tab.page.mouse.up()
    moved = tab.js(IMG_XY, [1, 170, 170])
    assert abs(moved[0] - x - 15) < 2 and abs(moved[1] - y - 10) < 2, (moved, x, y)
    assert _edge_distance(tab, 1, BOX[0], 170) <= 60
    assert _edge_distance(tab, 1, 170, BOX[3]) <= 60

    # A double-click resets that cell: back where it was, unzoomed.
    tab.page.mouse.dblclick(*moved)
    assert tab.js(ZOOMS) == ["1.000"] * CELLS
    assert tab.js("() => document.querySelectorAll('.media-list .media-stage')[1].style.transform") == ""
    reset = tab.js(IMG_XY, [1, BOX[0], 170])
    assert abs(reset[0] - before[0]) < 1 and abs(reset[1] - before[1]) < 1
    assert not tab.errors, tab.errors


@pytest.mark.skipif(not SHOTS, reason="set PANEBOARD_SHOTS to a folder to save screenshots")
def test_screenshots(grid_env, server, tab) -> None:
    for name, width, scheme in (("light", 1280, "light"), ("dark", 1280, "dark"), ("390", 390, "light")):
        tab.page.emulate_media(color_scheme=scheme)
        tab.page.set_viewport_size({"width": width, "height": 860})
        tab.open(env_url(server, grid_env))
        tab.wait(GRID, CELLS)
        _zoom_cell(tab, 1)
        tab.page.locator(".media-pane:has(.media-list)").screenshot(path=os.path.join(SHOTS, f"media_list_zoom_{name}.png"))
