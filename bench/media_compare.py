"""Compare's Images section (Playwright + Chromium): 16 runs x 100 steps of one image tag, the page ready and a scrub.

Fills a temp database through the store (each run: one 128x128 PNG per step, boxes as overlays on every picture),
starts dash-server on it and prints, as the median of --repeat page loads:
  - the time from navigation until every run's cell shows its picture (the issue's goal: <= 2 s),
  - a scrub of the step slider over all its positions (the union of the runs' steps), each waited for until every
    cell shows its step: frames per second, first pass (every step read from the server) and second pass (read once,
    pictures cached), and where a frame's time goes (awaiting its answer, decoding pictures, drawing the cells).
  - 3D point clouds: thinning 1M points by voxel grid (numpy, goal <= 100 ms), a 200k-point cloud's read of its
    thinned points (the browser's budget) from the server, its first draw in Chromium from navigation (10k points),
    the full 50k drawn after it, and where each draw's time goes in the page (read, Plotly load, traces, WebGL).
    python bench/media_compare.py             # 16 runs x 100 steps
    python bench/media_compare.py --runs 4 --steps 20
    python bench/media_compare.py --clouds-only
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image

from paneboard.server.store import SqlStore
from paneboard.server.store.schema import ensure_schema

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port  # noqa: E402

CHROMIUM = os.environ.get("PANEBOARD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TAG = "samples"
READY = """([n, step]) => { const s = document.querySelector('.compare-images');
  const cells = [...document.querySelectorAll('.compare-image-cell img')];
  return s && s.dataset.ready === '1' && (step === null || s.dataset.step === String(step)) && cells.length === n
    && cells.every((i) => i.complete && i.naturalWidth > 0); }"""
# The whole scrub runs in the page: one input per position, the next once every cell shows the step.
SCRUB = """async (n) => {
  const s = document.querySelector('.images-step'), sec = document.querySelector('.compare-images');
  const before = { ...sec.timings };
  const t0 = performance.now();
  for (let i = 0; i <= Number(s.max); i++) {
    s.value = String(i);
    s.dispatchEvent(new Event('input', { bubbles: true }));
    const want = document.querySelector('.images-head .step-label').textContent.replace('step ', '');
    while (!(sec.dataset.ready === '1' && sec.dataset.step === want)) await new Promise(requestAnimationFrame);
  }
  const ms = performance.now() - t0;
  const phases = Object.fromEntries(Object.entries(sec.timings).map(([k, v]) => [k, v - before[k]]));
  return { ms, frames: Number(s.max) + 1, phases };
}"""
PHASES = ("read", "decode", "draw")  # compare_images.js's timings: awaiting the answer, decoding pictures, drawing cells


def _png(rng: np.random.Generator, k: int, step: int) -> bytes:
    img = np.zeros((128, 128, 3), np.uint8)
    img[:, :, k % 3] = 40 + (step * 2) % 200
    img[rng.integers(0, 128, 200), rng.integers(0, 128, 200)] = 255
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def fill(db: Path, runs: int, steps: int) -> list[str]:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    rng = np.random.default_rng(0)
    envs = [f"vision/run{k:02d}" for k in range(runs)]
    boxes = {"pred": {"boxes": [{"xyxy": [8 + 12 * j, 8, 18 + 12 * j, 40], "class_id": j % 3,
                                 "scores": {"conf": j / 8}} for j in range(8)],
                      "class_labels": {"0": "cat", "1": "dog", "2": "car"}}}
    t0 = time.perf_counter()
    for k, env in enumerate(envs):
        with store.transaction() as tx:
            pane = tx.put_pane(env, TAG, "media", TAG, {"title": TAG}, {"count": 0, "type": "image"})
            rows = []
            for s in range(steps):
                sha = tx.put_blob(_png(rng, k, s), "image/png")
                rows.append((float(s * 10 + k % 3), time.time(), {"type": "image", "mime": "image/png", "width": 128,
                             "height": 128, "caption": f"{env} {s}", "overlays": {"boxes": boxes}}, sha))
            tx.append_steps(pane, 0, rows)
            tx.update_pane(pane, content={"count": steps, "type": "image"})
    store.close()
    print(f"filled: {runs} runs x {steps} steps of 128x128 PNGs with 8 boxes each in {time.perf_counter() - t0:.1f} s")
    return envs


CLOUD_ENV, CLOUD_WIN = "vision/lidar", "sweep"
CLOUD_DRAWN = f"""() => {{ const p = document.querySelector('[data-win="{CLOUD_WIN}"] .object3d-pane');
  return p && Number(p.dataset.points) > 0 && p.querySelector('canvas') !== null; }}"""


CLOUD_FULL = f"""() => {{ const p = document.querySelector('[data-win="{CLOUD_WIN}"] .object3d-pane');
  return p && p.dataset.full === '1'; }}"""


def _lidar(rng: np.random.Generator, n: int) -> np.ndarray:
    """A lidar-like sweep: most returns on the ground near the sensor, a few on far objects."""
    near = rng.normal(0, [8, 8, 0.3], (n - n // 100, 3))
    far = rng.uniform([-60, -60, 0], [60, 60, 3], (n // 100, 3))
    return np.vstack([near, far]).astype(np.float32)


def cloud_figures(page, base: str, port: int, repeat: int) -> dict[str, float]:
    """Median ms of: voxel thinning of 1M points, the server's read of a 200k cloud's points at the browser's
    budget, and the cloud pane's first draw from navigation (the page, the read and Plotly's scatter3d)."""
    import paneboard
    from paneboard.server.panes.voxels import voxel_pick

    rng = np.random.default_rng(0)
    million = _lidar(rng, 1_000_000)
    thin = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        voxel_pick(million, 50_000)
        thin.append((time.perf_counter() - t0) * 1000)
    c = paneboard.Client(server="http://127.0.0.1", port=port, env=CLOUD_ENV)
    c.point_cloud(_lidar(rng, 200_000), win=CLOUD_WIN, step=0)
    assert c.flush(timeout=60), "the cloud was not acknowledged"
    c.close_connection(timeout=5)
    path = f"{base}/api/v1/envs/{urllib.parse.quote(CLOUD_ENV, safe='')}/panes/{CLOUD_WIN}/points?budget=50000"
    reads, draws, fulls, firsts, lasts = [], [], [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        urllib.request.urlopen(path, timeout=60).read()
        reads.append((time.perf_counter() - t0) * 1000)
    page.goto(f"{base}/env/{CLOUD_ENV}")  # a first visit: Plotly and the modules over the wire
    page.wait_for_function(CLOUD_FULL, timeout=120_000, polling=10)
    for _ in range(repeat):
        t0 = time.perf_counter()
        page.goto(f"{base}/env/{CLOUD_ENV}")
        page.wait_for_function(CLOUD_DRAWN, timeout=120_000, polling=10)
        draws.append((time.perf_counter() - t0) * 1000)
        page.wait_for_function(CLOUD_FULL, timeout=120_000, polling=10)
        fulls.append((time.perf_counter() - t0) * 1000)
        # The page's own record of each draw (object3d.js): ms since navigation, and where the time went.
        timings = page.evaluate(f"() => document.querySelector('[data-win=\"{CLOUD_WIN}\"] .object3d-pane').timings")
        firsts.append(timings[0])
        lasts.append(timings[-1])
    med = statistics.median
    return {"thin": med(thin), "read": med(reads), "draw": med(draws), "full": med(fulls),
            **{f"first_{k}": med(p[k] for p in firsts) for k in firsts[0]},
            **{f"last_{k}": med(p[k] for p in lasts) for k in lasts[0]}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clouds-only", action="store_true", help="only the 3D point cloud figures")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "media.db"
        envs = fill(db, 0 if args.clouds_only else args.runs, args.steps)
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db", str(db),
                                 "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        page_url = f"{base}/compare?envs={urllib.parse.quote(','.join(envs))}"
        ready, cold, warm = [], [], []
        cold_ms: dict[str, list[float]] = {k: [] for k in PHASES}
        warm_ms: dict[str, list[float]] = {k: [] for k in PHASES}
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(base + "/api/v1/envs", timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
                clouds = cloud_figures(page, base, port, args.repeat)
                if not args.clouds_only:
                    page.goto(page_url)  # a first visit: the modules over the wire
                    page.wait_for_function(READY, arg=[args.runs, None], timeout=120_000, polling=10)
                for _ in range(0 if args.clouds_only else args.repeat):
                    t0 = time.perf_counter()
                    page.goto(page_url)
                    page.wait_for_function(READY, arg=[args.runs, None], timeout=120_000, polling=10)
                    ready.append(time.perf_counter() - t0)
                    first = page.evaluate(SCRUB, args.runs)
                    again = page.evaluate(SCRUB, args.runs)
                    cold.append(first["frames"] / first["ms"] * 1000)
                    warm.append(again["frames"] / again["ms"] * 1000)
                    for into, got in ((cold_ms, first), (warm_ms, again)):
                        shown = max(got["phases"]["frames"], 1)
                        for k in PHASES:
                            into[k].append(got["phases"][k] / shown)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)
    print(f"3D point clouds, median of {args.repeat}:")
    print(f"  voxel-grid thinning of 1M points to 50k: {clouds['thin']:.0f} ms  (goal <= 100 ms)")
    print(f"  a 200k-point cloud: read of its 50k thinned points {clouds['read']:.0f} ms, "
          f"first draw seen from navigation {clouds['draw']:.0f} ms, the full 50k {clouds['full']:.0f} ms")
    for name, prefix in (("first draw", "first_"), ("full draw", "last_")):
        print(f"  {name} in the page ({clouds[prefix + 'points']:.0f} points, on screen at {clouds[prefix + 'at']:.0f} ms "
              "from navigation): " + ", ".join(f"{k[len(prefix):]} {v:.0f} ms" for k, v in clouds.items()
                                               if k.startswith(prefix) and k[len(prefix):] not in ("points", "at")))
    if args.clouds_only:
        return
    med = statistics.median
    print(f"Compare Images, {args.runs} runs x {args.steps} steps, Chromium 1600x1000, median of {args.repeat}:")
    print(f"  ready (every cell's picture drawn): {med(ready):.2f} s from navigation  (goal <= 2 s)")
    print(f"  scrub over every slider position (the runs' steps' union): {med(cold):.1f} fps first pass (read), "
          f"{med(warm):.1f} fps again (cached)  (goal >= 30 fps)")
    for name, got in (("first pass", cold_ms), ("again", warm_ms)):
        print(f"  per frame, {name}: " + ", ".join(f"{k} {med(v):.1f} ms" for k, v in got.items()))


if __name__ == "__main__":
    main()
