"""An image pane's overlays over steps and under pan/zoom (Chromium, real server, real SDK): a class toggle reuses the
mask's painted classes, a scrub shows every step with its own overlay and decodes an unchanged mask once, and the
overlay stays on its picture while zoomed and panned; a double-click resets; on a phone the class list folds."""

from __future__ import annotations

import io
import os

import numpy as np
from PIL import Image

from helpers.browser import env_url, flushed

SHOTS = os.environ.get("PANEBOARD_SHOTS")
WIN = "seg"
PANE = f'[data-win="{WIN}"]'
CANVAS = f"document.querySelector('{PANE} .overlay-canvas')"
READY = f"() => {{ const c = {CANVAS}; return !!c && c.dataset.ready === '1'; }}"
SHOWN = f"(step) => document.querySelector('{PANE} .media-pane').dataset.frame === String(step)"
# One box of class 0 around a white square of the picture (160..180); its 1-px edges lie on whole pixels (a line
# on a pixel boundary would be half-covered on either side).
BOX = [150.5, 150.5, 190.5, 190.5]
# Where picture pixel (x, y) is on the page, from the <img>'s own box (object-fit: contain, as the canvas): checking
# the overlay's colour there tells whether the overlay moved with the picture.
IMG_XY = f"""([x, y]) => {{
  const img = document.querySelector('{PANE} img'), r = img.getBoundingClientRect();
  const s = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
  return [r.left + (r.width - img.naturalWidth * s) / 2 + x * s, r.top + (r.height - img.naturalHeight * s) / 2 + y * s];
}}"""


def _mask(step: int) -> np.ndarray:
    """A 40×30 patch of class 2 that moves 16 px right per step, above the box."""
    m = np.zeros((256, 256), np.uint8)
    m[60:90, 16 * step:16 * step + 40] = 2
    return m


def _log(sdk, steps: int) -> None:
    still = np.zeros((256, 256), np.uint8)
    still[0:40, 0:256] = 1
    c = sdk("ovs")
    for step in range(steps):
        picture = np.full((256, 256, 3), 40 + 8 * step, np.uint8)
        picture[160:180, 160:180] = 255
        c.image(picture, win=WIN, step=step,
                boxes={"pred": {"box_data": [{"position": dict(zip(("minX", "minY", "maxX", "maxY"), BOX, strict=True)),
                                              "domain": "pixel", "class_id": 0}]}},
                masks={"still": {"mask_data": still}, "moving": {"mask_data": _mask(step)}})
    flushed(c)


def _colour(tab, x: float, y: float) -> np.ndarray:
    px, py = tab.js(IMG_XY, [x, y])
    shot = np.asarray(Image.open(io.BytesIO(tab.page.screenshot())).convert("RGB"))
    return shot[int(py), int(px)].astype(int)


def _grey(step: int) -> np.ndarray:
    return np.full(3, 40 + 8 * step)


def _stat(tab, name: str) -> int:
    return int(tab.js(f"() => {CANVAS}.dataset.{name}"))


def test_a_toggle_recomposites_without_repainting_and_a_scrub_reuses_unchanged_masks(server, sdk, tab) -> None:
    steps = 10
    _log(sdk, steps)
    tab.open(env_url(server, "ovs"))
    tab.wait(READY)
    tab.wait(SHOWN, steps - 1)
    assert _stat(tab, "maskDecodes") == 2  # the newest step: its two masks

    # Off and on again: the picture changes and comes back, from the class canvases painted once.
    last = steps - 1
    painted = _stat(tab, "maskPaints")
    moving = _colour(tab, 16 * last + 20, 75)
    toggle = tab.page.locator(f'{PANE} input[data-layer="moving"][data-class-id="2"]')
    toggle.uncheck()
    assert np.abs(_colour(tab, 16 * last + 20, 75) - _grey(last)).sum() <= 6  # the bare picture
    toggle.check()
    assert np.abs(_colour(tab, 16 * last + 20, 75) - moving).sum() <= 6
    assert _stat(tab, "maskPaints") == painted

    # Scrub from the first step to the last, one at a time: every step is shown with its own mask.
    reads_before = tab.js("() => performance.getEntriesByType('resource').filter(e => e.name.includes('/steps?')).length")
    for i in range(steps):
        tab.js(f"""(i) => {{ const s = document.querySelector('{PANE} .step-slider');
                   s.value = String(i); s.dispatchEvent(new Event('input')); }}""", i)
        tab.wait(SHOWN, i)
        if i in (0, 4):  # this step's mask where it is at this step, the bare picture where it is later
            assert np.abs(_colour(tab, 16 * i + 20, 75) - _grey(i)).sum() > 30
            assert np.abs(_colour(tab, 16 * i + 68, 75) - _grey(i)).sum() <= 6
    reads = tab.js("() => performance.getEntriesByType('resource').filter(e => e.name.includes('/steps?')).length")
    assert reads - reads_before <= 3, reads - reads_before  # read in windows, not one request per step
    # The unchanged mask was decoded once for all steps; each step's moving mask once.
    assert _stat(tab, "maskDecodes") == 1 + steps
    assert not tab.errors, tab.errors


def test_the_overlay_stays_on_its_picture_while_zoomed_and_panned(server, sdk, tab) -> None:
    _log(sdk, 1)
    tab.open(env_url(server, "ovs"))
    tab.wait(READY)
    stage = tab.page.locator(f"{PANE} .media-stage")
    box_colour = np.array([0xe6, 0x19, 0x4b])  # class 0's colour
    # Zoom about the picture's white square: each wheel notch scales about the pointer.
    tab.page.mouse.move(*tab.js(IMG_XY, [170, 170]))
    before = tab.js(IMG_XY, [BOX[0], 170])
    for _ in range(2):
        tab.page.mouse.wheel(0, -150)
    tab.wait(f"() => Number(document.querySelector('{PANE} .media-stage').dataset.zoom) > 2.5")
    after = tab.js(IMG_XY, [BOX[0], 170])
    assert abs(after[0] - before[0]) > 20  # the box's left edge moved on screen: zoomed
    # Under the box's edge, as the picture places it, is the box's colour; inside it the picture's own white.
    assert np.abs(_colour(tab, BOX[0], 170) - box_colour).sum() <= 60, _colour(tab, BOX[0], 170)
    assert (_colour(tab, 170, 170) >= 245).all()
    assert (_colour(tab, BOX[0] + 5, 170) < 200).all()  # between edge and square: the dark picture, no overlay

    # A drag pans picture and overlay together.
    x, y = tab.js(IMG_XY, [170, 170])
    tab.page.mouse.move(x, y)
    tab.page.mouse.down()
    tab.page.mouse.move(x + 40, y + 25, steps=4)
    tab.page.mouse.up()
    moved = tab.js(IMG_XY, [170, 170])
    assert abs(moved[0] - x - 40) < 2 and abs(moved[1] - y - 25) < 2, (moved, x, y)
    assert np.abs(_colour(tab, BOX[0], 170) - box_colour).sum() <= 60
    assert np.abs(_colour(tab, 170, BOX[3]) - box_colour).sum() <= 60

    # A double-click resets: back where it was, unzoomed.
    tab.page.mouse.dblclick(*moved)
    assert stage.get_attribute("data-zoom") == "1.000"
    assert tab.js(f"() => document.querySelector('{PANE} .media-stage').style.transform") == ""
    reset = tab.js(IMG_XY, [BOX[0], 170])
    assert abs(reset[0] - before[0]) < 1 and abs(reset[1] - before[1]) < 1
    assert not tab.errors, tab.errors


def test_on_a_phone_the_class_list_folds_and_opens_as_a_sheet(server, sdk, tab, tmp_path) -> None:
    _log(sdk, 1)
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.open(env_url(server, "ovs"))
    tab.wait(READY)
    legend = tab.page.locator(f"{PANE} .overlay-legend")
    tab.wait(f"() => document.querySelector('{PANE} .overlay-legend').classList.contains('narrow')")
    toggle = tab.page.locator(f'{PANE} input[data-layer="pred"][data-class-id="0"]')
    assert not toggle.is_visible()  # folded: the picture keeps its room
    assert tab.page.locator(f"{PANE} input[data-opacity]").is_visible()  # the sliders stay in view
    shots = SHOTS or str(tmp_path)
    tab.page.locator(PANE).screenshot(path=f"{shots}/overlays_390_folded.png")
    legend.locator("summary").click()
    toggle.wait_for(state="visible")
    box = toggle.bounding_box()
    assert box and 0 <= box["x"] and box["x"] + box["width"] <= 390  # reachable on the screen
    tab.page.locator(PANE).screenshot(path=f"{shots}/overlays_390_open.png")
    assert tab.js(f"() => {CANVAS}.dataset.boxes") == "1"
    toggle.click()
    assert tab.js(f"() => {CANVAS}.dataset.boxes") == "0"
    assert "1 hidden" in legend.locator("summary").inner_text()
    legend.locator("summary").click()
    toggle.wait_for(state="hidden")
    assert not tab.errors, tab.errors
