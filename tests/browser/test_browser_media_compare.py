"""Compare's Images section (Chromium, real server, real SDK): one step slider moves every run's cell, a class toggle
of the shared legend applies to every cell, zoom is synced; screenshots light, dark and at 390 px wide."""

from __future__ import annotations

import os
import urllib.parse

import numpy as np

from helpers.browser import flushed

SHOTS = os.environ.get("PANEBOARD_SHOTS")
TAG = "samples"
RUNS = ("mc/a", "mc/b", "mc/c")
STEPS = {"mc/a": (0, 10, 20), "mc/b": (5, 15), "mc/c": (10, 30)}
READY = "(step) => { const s = document.querySelector('.compare-images'); return s && s.dataset.ready === '1' " \
        "&& s.dataset.step === String(step); }"
CELL_STEPS = "() => Object.fromEntries([...document.querySelectorAll('.compare-image-cell')]" \
             ".map((c) => [c.dataset.env, c.dataset.step]))"
CELL_BOXES = "() => [...document.querySelectorAll('.compare-image-cell .overlay-canvas')].map((c) => c.dataset.boxes)"


def _log(sdk) -> None:
    labels = {1: "cat", 2: "dog"}
    for k, env in enumerate(RUNS):
        c = sdk(env)
        for s in STEPS[env]:
            boxes = [{"position": {"minX": 4 + 20 * j, "maxX": 18 + 20 * j, "minY": 8, "maxY": 40}, "domain": "pixel",
                      "class_id": 1 + j % 2, "scores": {"conf": 0.3 + 0.3 * j}} for j in range(3)]
            img = np.zeros((64, 64, 3), np.uint8)
            img[:, :, k] = 60 + 6 * s
            c.image(img, win=TAG, step=s, opts={"caption": f"{env} at {s}"},
                    boxes={"pred": {"box_data": boxes, "class_labels": labels}})
        flushed(c)


def _slide(tab, index: int) -> None:
    tab.js("(i) => { const s = document.querySelector('.images-step'); s.value = String(i);"
           " s.dispatchEvent(new Event('input')); }", index)


def _shot(tab, tmp_path, name: str) -> None:
    tab.page.locator(".compare-images").screenshot(path=os.path.join(SHOTS or str(tmp_path), name))


def test_compare_slider_moves_every_cell_and_toggles_apply_to_all(server, sdk, open_tab, tmp_path) -> None:
    _log(sdk)
    tab = open_tab(server.url + "/compare?envs=" + urllib.parse.quote(",".join(RUNS)), width=1280)
    tab.wait(READY, 30)  # the union's newest step: each run shows its own newest
    assert tab.js(CELL_STEPS) == {"mc/a": "20", "mc/b": "15", "mc/c": "30"}
    # Runs of images only: the charts' "no line or scatter panes" message would read as if nothing were there.
    tab.wait("() => document.body.dataset.ready === '1'")
    assert tab.js("() => document.querySelector('main > .empty').hidden") is True
    _shot(tab, tmp_path, "media_compare_light.png")

    # The slider's positions are the union of the runs' steps: 0 5 10 15 20 30. Each move changes every cell.
    _slide(tab, 2)  # step 10
    tab.wait(READY, 10)
    assert tab.js(CELL_STEPS) == {"mc/a": "10", "mc/b": "5", "mc/c": "10"}
    _slide(tab, 0)  # step 0: b and c have nothing that early and show their first
    tab.wait(READY, 0)
    assert tab.js(CELL_STEPS) == {"mc/a": "0", "mc/b": "5", "mc/c": "10"}
    assert tab.js("() => document.querySelector('.compare-image-cell[data-env=\"mc/b\"] .media-caption').textContent") \
        == "mc/b at 5"

    # One class toggle of the shared legend hides that class in every cell; the threshold applies to all too.
    tab.wait("() => [...document.querySelectorAll('.compare-image-cell .overlay-canvas')].every((c) => c.dataset.ready)")
    assert tab.js(CELL_BOXES) == ["3", "3", "3"]
    tab.page.locator('.compare-images > .overlay-legend input[data-layer="pred"][data-class-id="2"]').uncheck()
    assert tab.js(CELL_BOXES) == ["2", "2", "2"]
    tab.js("() => { const s = document.querySelector('.compare-images > .overlay-legend input[data-score=\"conf\"]');"
           " s.value = '0.5'; s.dispatchEvent(new Event('input', { bubbles: true })); }")
    assert tab.js(CELL_BOXES) == ["1", "1", "1"]  # conf 0.3 goes, class 2 stays hidden: box 3 (0.9, cat) is left

    # A wheel over one cell zooms every cell alike.
    frame = tab.page.locator('.compare-image-cell[data-env="mc/a"] .media-content')
    frame.hover()
    tab.page.mouse.wheel(0, -300)
    tab.wait("() => [...document.querySelectorAll('.compare-image-cell .media-stage')].every((s) => "
             "Number(s.dataset.zoom) > 1.5)")
    zooms = tab.js("() => [...document.querySelectorAll('.compare-image-cell .media-stage')].map((s) => s.style.transform)")
    assert len(set(zooms)) == 1 and zooms[0], zooms
    frame.dblclick()

    tab.page.emulate_media(color_scheme="dark")
    _shot(tab, tmp_path, "media_compare_dark.png")
    tab.page.emulate_media(color_scheme="light")
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.wait(READY, 0)
    _shot(tab, tmp_path, "media_compare_390.png")
    assert not tab.errors, tab.errors
