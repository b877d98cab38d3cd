"""Boxes and masks drawn over a media image from their data (Chromium, real server, real SDK): a class toggle and
the score threshold change the picture, hover names the box; draw time of 200 boxes + 3 masks of 512×512 measured;
screenshots light, dark and at 390 px wide."""

from __future__ import annotations

import io
import os

import numpy as np
from PIL import Image

from helpers.browser import env_url, flushed

SHOTS = os.environ.get("PANEBOARD_SHOTS")
WIN = "detections"
READY = "(win) => { const c = document.querySelector(`[data-win=\"${win}\"] .overlay-canvas`); " \
        "return c && c.dataset.ready === '1' && c.closest('.media-pane').querySelector('img').complete; }"
# Where image pixel (x, y) is on the page: the canvas is drawn with object-fit: contain, as the picture is.
PAGE_XY = """([win, x, y]) => {
  const c = document.querySelector(`[data-win="${win}"] .overlay-canvas`), r = c.getBoundingClientRect();
  const s = Math.min(r.width / c.width, r.height / c.height);
  return [r.left + (r.width - c.width * s) / 2 + x * s, r.top + (r.height - c.height * s) / 2 + y * s];
}"""


def _log(sdk) -> None:
    yy, xx = np.mgrid[:512, :512]
    truth = np.zeros((512, 512), np.uint8)
    truth[(yy - 400) ** 2 + (xx - 120) ** 2 < 60 ** 2] = 1
    pred = np.zeros((512, 512), np.uint8)
    pred[(yy - 400) ** 2 + (xx - 380) ** 2 < 60 ** 2] = 2
    aux = np.zeros((512, 512), np.uint8)
    aux[300:330, :] = 3
    labels = {0: "background", 1: "person", 2: "car", 3: "road", 4: "sign"}
    boxes = [{"position": {"minX": (i % 20) * 25 + 2, "maxX": (i % 20) * 25 + 22, "minY": (i // 20) * 25 + 2,
                           "maxY": (i // 20) * 25 + 22}, "domain": "pixel", "class_id": i % 5,
              "scores": {"conf": round(i / 199, 4)}, "box_caption": f"b{i}"} for i in range(200)]
    c = sdk("ov")
    c.image(np.full((512, 512, 3), 128, np.uint8), win=WIN, step=0,
            boxes={"pred": {"box_data": boxes, "class_labels": labels}},
            masks={"truth": {"mask_data": truth, "class_labels": labels},
                   "pred_mask": {"mask_data": pred, "class_labels": labels},
                   "aux": {"mask_data": aux, "class_labels": labels}})
    flushed(c)


def _pixel(tab, x: float, y: float) -> np.ndarray:
    """The colour on screen at image pixel (x, y), from a screenshot of the page."""
    px, py = tab.js(PAGE_XY, [WIN, x, y])
    shot = np.asarray(Image.open(io.BytesIO(tab.page.screenshot())).convert("RGB"))
    return shot[int(py), int(px)].astype(int)


def _shot(tab, tmp_path, name: str) -> None:
    tab.page.locator(f'[data-win="{WIN}"]').screenshot(path=os.path.join(SHOTS or str(tmp_path), name))


def test_overlays_draw_toggle_threshold_and_hover(server, sdk, tab, tmp_path) -> None:
    _log(sdk)
    tab.open(env_url(server, "ov"))
    tab.wait(READY, WIN)
    draw_ms = float(tab.js("(w) => document.querySelector(`[data-win=\"${w}\"] .overlay-canvas`).dataset.drawMs", WIN))
    print(f"\ndraw 200 boxes + 3 masks 512x512: {draw_ms:.1f} ms")
    _shot(tab, tmp_path, "overlays_light.png")

    # A class toggle changes the picture where that class is, and only there.
    inside, outside = _pixel(tab, 120, 400), _pixel(tab, 250, 450)
    assert np.abs(inside - outside).sum() > 30, (inside, outside)  # the person mask tints its circle
    tab.page.locator(f'[data-win="{WIN}"] input[data-layer="truth"][data-class-id="1"]').uncheck()
    toggle_ms = float(tab.js("(w) => document.querySelector(`[data-win=\"${w}\"] .overlay-canvas`).dataset.drawMs", WIN))
    print(f"toggle a class: {toggle_ms:.1f} ms")
    assert np.abs(_pixel(tab, 120, 400) - outside).sum() <= 6
    assert np.abs(_pixel(tab, 380, 400) - outside).sum() > 30  # the other layer's car stays

    # The score threshold hides boxes below it: box 10 (conf 0.05) goes, box 190 (conf 0.95) stays.
    low, high = _pixel(tab, 10 * 25 + 2, 2 + 10), _pixel(tab, 10 * 25 + 2, 9 * 25 + 12)
    assert np.abs(low - outside).sum() > 30 and np.abs(high - outside).sum() > 30
    tab.js("""(w) => { const s = document.querySelector(`[data-win="${w}"] input[data-score="conf"]`);
                       s.value = '0.5'; s.dispatchEvent(new Event('input')); }""", WIN)
    n = int(tab.js("(w) => document.querySelector(`[data-win=\"${w}\"] .overlay-canvas`).dataset.boxes", WIN))
    assert n == sum(1 for i in range(200) if round(i / 199, 4) >= 0.5)
    assert np.abs(_pixel(tab, 10 * 25 + 2, 2 + 10) - outside).sum() <= 6
    assert np.abs(_pixel(tab, 10 * 25 + 2, 9 * 25 + 12) - outside).sum() > 30

    # Hover names the box under the pointer: its layer, class, score and caption.
    tab.page.mouse.move(*tab.js(PAGE_XY, [WIN, 19 * 25 + 12, 9 * 25 + 12]))
    tip = tab.page.locator(f'[data-win="{WIN}"] .overlay-tip')
    tip.wait_for(state="visible")
    assert tip.inner_text() == "pred: sign · conf 1.00 · b199"

    tab.page.emulate_media(color_scheme="dark")
    _shot(tab, tmp_path, "overlays_dark.png")
    tab.page.emulate_media(color_scheme="light")
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.wait(READY, WIN)
    _shot(tab, tmp_path, "overlays_390.png")
    assert not tab.errors, tab.errors
