"""Image overlays benchmark (Playwright + Chromium): boxes and masks drawn over an image pane, and its step slider.

Logs through the SDK, to a dash-server on a temp database, one image pane of --steps steps of a 512×512 picture with
200 boxes and 3 mask layers of 512×512 (two masks unchanged across steps, one moving), then prints, as medians:
  - the first draw of the overlays on a page load (image record to every mask drawn; goal <= 100 ms),
  - a class toggle of a mask layer and of the box layer (goal <= 16 ms), a score-slider move,
  - a scrub of the step slider over every step, each step's picture and overlay on screen before the next
    (goal >= 30 fps), first over steps never read, then again,
  - the bytes stored per mask (PNG; goal <= 20 KB for a typical 512×512) and the growth of the blob store over
    the steps (the unchanged masks stored once).
    python bench/overlays.py
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, stop, wait_up  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
WIN = "detections"
LABELS = {0: "background", 1: "person", 2: "car", 3: "road", 4: "sign"}
CANVAS = f'document.querySelector(\'[data-win="{WIN}"] .overlay-canvas\')'
READY = f"() => {{ const c = {CANVAS}; return c && c.dataset.ready === '1'; }}"
# Playwright must get functions (the page's CSP forbids eval of expression strings). Each returns the JS time of the
# change (handler and redraw, then a one-pixel read back, which makes Chromium rasterise the canvas's deferred drawing
# now rather than at the next paint) and the canvas's own drawMs (the redraw's calls alone).
FLUSH = f"{CANVAS}.getContext('2d').getImageData(0, 0, 1, 1)"
TOGGLE = f"""([layer, id]) => {{ const box = document.querySelector(
  `[data-win="{WIN}"] input[data-layer="${{layer}}"][data-class-id="${{id}}"]`);
  const t0 = performance.now(); box.click(); {FLUSH}; const t = performance.now() - t0;
  return [t, Number({CANVAS}.dataset.drawMs)]; }}"""
SCORE = f"""(v) => {{ const s = document.querySelector('[data-win="{WIN}"] input[data-score="conf"]');
  const t0 = performance.now(); s.value = String(v); s.dispatchEvent(new Event('input')); {FLUSH};
  return [performance.now() - t0, Number({CANVAS}.dataset.drawMs)]; }}"""
# Move the slider one step at a time over every step, waiting (per animation frame) until that step's picture and
# overlay are on screen before the next move, as a scrub that drops no frame; returns frames per second.
SCRUB = f"""async (n) => {{
  const pane = document.querySelector('[data-win="{WIN}"]');
  const slider = pane.querySelector('.step-slider'), fig = pane.querySelector('.media-pane');
  const steps = JSON.parse(slider.dataset.steps || 'null');
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {{
    slider.value = String(i); slider.dispatchEvent(new Event('input'));
    while (fig.dataset.frame !== String(i)) await frame();
  }}
  return n / ((performance.now() - t0) / 1000);
}}"""


def masks_at(step: int) -> dict[str, np.ndarray]:
    """Three 512×512 masks: two fixed (ground truth, a road band), one moving with the step (a prediction)."""
    yy, xx = np.mgrid[:512, :512]
    truth = np.zeros((512, 512), np.uint8)
    truth[(yy - 400) ** 2 + (xx - 120) ** 2 < 60 ** 2] = 1
    truth[(yy - 150) ** 2 + (xx - 300) ** 2 < 90 ** 2] = 2
    aux = np.zeros((512, 512), np.uint8)
    aux[300:330, :] = 3
    pred = np.zeros((512, 512), np.uint8)
    pred[(yy - 400) ** 2 + (xx - 200 - 2 * step) ** 2 < 60 ** 2] = 2
    pred[(yy - 120) ** 2 + (xx - 120) ** 2 < (30 + step // 4) ** 2] = 4
    return {"truth": truth, "aux": aux, "pred_mask": pred}


def log(port: int, steps: int) -> None:
    import paneboard

    c = paneboard.Client(server="http://127.0.0.1", port=port, env="ov")
    for step in range(steps):
        boxes = [{"position": {"minX": (i % 20) * 25 + 2, "maxX": (i % 20) * 25 + 22 + step % 3,
                               "minY": (i // 20) * 25 + 2, "maxY": (i // 20) * 25 + 22}, "domain": "pixel",
                  "class_id": i % 5, "scores": {"conf": round(((i + step) % 200) / 199, 4)}, "box_caption": f"b{i}"}
                 for i in range(200)]
        picture = np.zeros((512, 512, 3), np.uint8)
        picture[..., 0] = np.arange(512)[None, :] // 2
        picture[..., 1] = (np.arange(512)[:, None] + 3 * step) % 256
        picture[..., 2] = 128
        c.image(picture, win=WIN, step=step, boxes={"pred": {"box_data": boxes, "class_labels": LABELS}},
                masks={k: {"mask_data": m, "class_labels": LABELS} for k, m in masks_at(step).items()})
    assert c.flush(timeout=60), "the SDK's events were not acknowledged"
    c.close_connection(30)


def stored_mask_bytes(db: Path) -> tuple[int, int]:
    """(distinct image/png blobs, their total bytes) in the store: pictures and masks alike are PNG blobs."""
    with sqlite3.connect(db) as con:
        n, total = con.execute("select count(*), coalesce(sum(size), 0) from blob").fetchone()
    return int(n), int(total)


def segmentation(cells: int, classes: int = 6) -> np.ndarray:
    """A 512×512 map of `classes` irregular regions, about cells × cells of them across (as the storage test)."""
    from PIL import Image

    field = np.random.default_rng(0).random((cells, cells)).astype(np.float32)
    smooth = np.asarray(Image.fromarray(field).resize((512, 512), Image.BICUBIC))
    return np.digitize(smooth, np.quantile(smooth, np.linspace(0, 1, classes + 1)[1:-1])).astype(np.uint8)


def mask_png_bytes() -> list[tuple[str, int, float]]:
    """(mask, PNG bytes, SDK encode ms) for the bench's masks and segmentations of 8, 16 and 32 regions across."""
    import base64
    import time

    from paneboard import overlays

    mask_png = overlays.mask_png
    mask_png(np.zeros((2, 2), np.uint8))  # PIL's import and set-up are not an encode's
    overlays._ENCODED.clear()  # the SDK keeps the PNGs of masks it logged: time a first encode, not a hit
    named = [*masks_at(0).items(), *((f"segmentation {c}x{c} regions", segmentation(c)) for c in (8, 16, 32))]
    out = []
    for name, m in named:
        t0 = time.perf_counter()
        png = mask_png(m)
        out.append((name, len(base64.b64decode(png)), (time.perf_counter() - t0) * 1000))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    med = statistics.median
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ov.db"
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db", str(db),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_up(proc, base + "/api/v1/envs", "dash-server")
            log(port, args.steps)
            blobs = stored_mask_bytes(db)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                first, toggles, box_toggles, scores = [], [], [], []
                for _ in range(args.repeat):
                    page.goto(f"{base}/env/ov")
                    page.wait_for_function(READY, timeout=60_000, polling=10)
                    first.append(float(page.evaluate(f"() => {CANVAS}.dataset.firstDrawMs")))
                    for _ in range(2):  # off, then back on: each is a toggle
                        toggles.append(page.evaluate(TOGGLE, ["truth", 1]))
                        box_toggles.append(page.evaluate(TOGGLE, ["pred", 2]))
                    for v in (0.25, 0.5, 0.75, 0.1):
                        scores.append(page.evaluate(SCORE, v))
                cold = page.evaluate(SCRUB, args.steps)
                warm = page.evaluate(SCRUB, args.steps)
                browser.close()
        finally:
            stop(proc)
    pngs = mask_png_bytes()
    print(f"image pane, 512x512 picture + 200 boxes + 3 mask layers 512x512, {args.steps} steps, Chromium 1400x1000 "
          f"(--disable-gpu), median of {args.repeat} page loads:")
    print(f"  first draw of the overlays (record to every mask drawn): {med(first):.1f} ms   goal <= 100 ms "
          f"(each: {', '.join(f'{v:.0f}' for v in first)})")
    print(f"  mask class toggle: {med(t for t, _ in toggles):.2f} ms (redraw {med(d for _, d in toggles):.2f} ms)"
          f"   goal <= 16 ms")
    print(f"  box class toggle: {med(t for t, _ in box_toggles):.2f} ms (redraw {med(d for _, d in box_toggles):.2f} "
          f"ms)   goal <= 16 ms")
    print(f"  score-slider move: {med(t for t, _ in scores):.2f} ms (redraw {med(d for _, d in scores):.2f} ms)")
    print(f"  step-slider scrub over {args.steps} steps, every step shown: {cold:.1f} fps steps never read, "
          f"{warm:.1f} fps again   goal >= 30 fps")
    print("  a 512x512 mask as stored (PNG; goal <= 20 KB typical), and the SDK's first encode of it:")
    for name, size, ms in pngs:
        print(f"    {name}: {size / 1024:.1f} KB, {ms:.0f} ms")
    print(f"  blob store after {args.steps} steps: {blobs[0]} blobs, {blobs[1] / 1024:.0f} KB "
          f"({args.steps} pictures + {args.steps} moving masks + 2 unchanged masks stored once = "
          f"{2 * args.steps + 2} expected)")


if __name__ == "__main__":
    main()
