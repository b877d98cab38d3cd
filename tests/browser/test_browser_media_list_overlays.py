"""A step's list of pictures with boxes (W&B's detection example: wandb.log({"predictions": [Image(img, boxes=...), ...]}))
draws every cell's boxes, one legend for the grid hides a class in every cell, and the step slider moves the grid with
its overlays (Chromium, real server, real SDK); screenshots light, dark and at 390 px wide."""

from __future__ import annotations

import os

import numpy as np
import pytest

import paneboard
from helpers.browser import env_url

SHOTS = os.environ.get("PANEBOARD_SHOTS")
LABELS = {1: "cat", 2: "dog"}
GRID = "([step, n]) => { const g = document.querySelector('.media-list');" \
       " return g && g.dataset.step === String(step) && Number(g.dataset.count) === n" \
       " && [...g.querySelectorAll('.overlay-canvas')].every((c) => c.dataset.ready === '1'); }"
CELL_BOXES = "() => [...document.querySelectorAll('.media-list .overlay-canvas')].map((c) => c.dataset.boxes)"
# Box k of a cell is class 1 + k % 2; its left edge at x = 4 + 20k is painted in that class's colour or not at all.
EDGE_ALPHA = "(k) => [...document.querySelectorAll('.media-list .overlay-canvas')].map((c) =>" \
             " c.getContext('2d').getImageData(4 + 20 * k, 30, 1, 1).data[3])"


def _boxes(step: int, cell: int) -> dict:
    # Step 0 has two boxes per cell, step 1 three: the grid's boxes tell which step is on screen.
    data = [{"position": {"minX": 4 + 20 * j, "maxX": 18 + 20 * j, "minY": 8, "maxY": 56}, "domain": "pixel",
             "class_id": 1 + j % 2, "scores": {"conf": 0.3 + 0.3 * j}, "box_caption": f"c{cell}b{j}"}
            for j in range(2 + step)]
    return {"predictions": {"box_data": data, "class_labels": LABELS}}


def _shot(tab, tmp_path, name: str) -> None:
    tab.page.locator(".media-pane:has(.media-list)").screenshot(path=os.path.join(SHOTS or str(tmp_path), name))


def test_a_lists_boxes_draw_in_every_cell_under_one_legend(server, tab, tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        monkeypatch.delenv(var, raising=False)
    run = paneboard.init(project="lists", name="boxes", dir=tmp_path)
    for step in range(2):
        paneboard.log({"predictions": [
            paneboard.Image(np.full((64, 64, 3), 50 + 40 * k, np.uint8), caption=f"s{step}k{k}",
                            boxes=_boxes(step, k)) for k in range(3)]})
    paneboard.finish()
    assert run.rejected == 0

    tab.open(env_url(server, "lists/boxes"))
    tab.wait(GRID, [1, 3])  # the newest step: three cells of three boxes each
    assert tab.js(CELL_BOXES) == ["3", "3", "3"]
    assert all(a > 0 for a in tab.js(EDGE_ALPHA, 1))  # box 1 (a dog) is painted in every cell
    # One legend for the grid: the cells' own legends are not on the page.
    assert tab.js("() => document.querySelectorAll('.media-pane .overlay-legend:not([hidden])').length") == 1
    _shot(tab, tmp_path, "media_list_overlays_light.png")

    # A class toggle of the grid's legend hides that class in every cell: its boxes and their pixels go.
    tab.page.locator('.media-list-legend input[data-layer="predictions"][data-class-id="2"]').uncheck()
    assert tab.js(CELL_BOXES) == ["2", "2", "2"]
    assert tab.js(EDGE_ALPHA, 1) == [0, 0, 0]
    assert all(a > 0 for a in tab.js(EDGE_ALPHA, 0))  # the cats stay
    # The score threshold applies to every cell too: conf 0.3 (box 0) goes, box 2 (0.9, a cat) is left.
    tab.js("() => { const s = document.querySelector('.media-list-legend input[data-score=\"conf\"]');"
           " s.value = '0.5'; s.dispatchEvent(new Event('input', { bubbles: true })); }")
    assert tab.js(CELL_BOXES) == ["1", "1", "1"]

    # The step slider moves the grid: step 0's pictures and boxes (two per cell, the dog still hidden, conf ≥ 0.5: none
    # of box 0) in every cell.
    tab.js("() => { const s = document.querySelector('.step-slider'); s.value = '0'; s.dispatchEvent(new Event('input')); }")
    tab.wait(GRID, [0, 3])
    assert tab.js("() => [...document.querySelectorAll('.media-list figcaption')].map((c) => c.textContent)") \
        == ["s0k0", "s0k1", "s0k2"]
    assert tab.js(CELL_BOXES) == ["0", "0", "0"]
    tab.js("() => { const s = document.querySelector('.media-list-legend input[data-score=\"conf\"]');"
           " s.value = s.min; s.dispatchEvent(new Event('input', { bubbles: true })); }")
    assert tab.js(CELL_BOXES) == ["1", "1", "1"]  # box 0, the cat

    tab.page.locator('.media-list-legend input[data-layer="predictions"][data-class-id="2"]').check()
    assert tab.js(CELL_BOXES) == ["2", "2", "2"]
    tab.page.emulate_media(color_scheme="dark")
    _shot(tab, tmp_path, "media_list_overlays_dark.png")
    tab.page.emulate_media(color_scheme="light")
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.wait(GRID, [0, 3])
    _shot(tab, tmp_path, "media_list_overlays_390.png")
    assert not tab.errors, tab.errors
