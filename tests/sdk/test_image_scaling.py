"""Images drawn as users expect: floats in [0, 1] ×255, other float ranges min–max per image with the original range
kept (pane metadata, shown on hover), and `client.image(..., step=)` / `paneboard.Image` kept per step with a slider."""

from __future__ import annotations

import base64
import io
import json
import os
import urllib.error
import urllib.request

import numpy as np
import pytest
import torch
from PIL import Image

import paneboard
from helpers.browser import env_url

SHOTS = os.environ.get("PANEBOARD_SHOTS")
MEAN, STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def imagenet_normalised(seed: int = 0) -> tuple[torch.Tensor, np.ndarray]:
    """A C×H×W picture in [0, 1] (a gradient with some noise) and its ImageNet normalisation (negatives, > 1)."""
    rng = np.random.default_rng(seed)
    h, w = 24, 32
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([xx / (w - 1), yy / (h - 1), (xx + yy) / (w + h - 2)]) * 0.8 + rng.uniform(0, 0.2, (3, h, w))
    normed = (rgb - MEAN[:, None, None]) / STD[:, None, None]
    return torch.tensor(normed, dtype=torch.float32), rgb


def blob_pixels(server, src: str) -> np.ndarray:
    """The stored picture's RGB pixels, read back through the blob URL the pane gives."""
    with urllib.request.urlopen(f"{server.url}/{src}", timeout=30) as r, Image.open(io.BytesIO(r.read())) as im:
        return np.asarray(im.convert("RGB")).astype(np.float64)


def test_an_imagenet_normalised_tensor_is_not_stored_nearly_black(server) -> None:
    client = server.client("img")
    tensor, _ = imagenet_normalised()
    client.image(tensor, win="normed")
    client.image(torch.full((3, 4, 4), 0.5), win="unit")  # floats in [0, 1]: ×255
    assert client.flush(timeout=30)
    pane = server.get_json("/api/v1/envs/img/panes/normed")
    px = blob_pixels(server, pane["data"]["src"])
    # Clipping to 0..255 gave mean ~1, std ~0.6 (nearly black); min–max normalised it spans the whole range.
    assert px.min() == 0 and px.max() == 255 and px.mean() > 60 and px.std() > 30
    lo, hi = pane["opts"]["value_range"]
    assert lo == pytest.approx(float(tensor.min()), abs=1e-6) and hi == pytest.approx(float(tensor.max()), abs=1e-6)
    expected = (tensor.numpy().transpose(1, 2, 0) - lo) * 255 / (hi - lo)
    assert np.abs(px - expected).max() <= 1  # the same picture, every pixel
    unit = server.get_json("/api/v1/envs/img/panes/unit")
    assert blob_pixels(server, unit["data"]["src"]).mean() == pytest.approx(128, abs=0.5)  # rint(0.5 * 255)
    assert "value_range" not in unit["opts"]


def _steps(server, env: str, win: str) -> list[dict]:
    return server.get_json(f"/api/v1/envs/{env}/panes/{win}/steps?i0=0")["records"]


def test_client_image_with_step_keeps_one_image_per_step(server) -> None:
    client = server.client("imgsteps")
    for step in (0, 10, 20):
        tensor, _ = imagenet_normalised(step)
        client.image(tensor, win="sample", opts={"caption": f"step {step}"}, step=step)
    assert client.flush(timeout=30)
    recs = _steps(server, "imgsteps", "sample")
    assert [r["step"] for r in recs] == [0, 10, 20] and [r["caption"] for r in recs] == ["step 0", "step 10", "step 20"]
    assert len({r["src"] for r in recs}) == 3 and all(len(r["value_range"]) == 2 for r in recs)
    assert blob_pixels(server, recs[1]["src"]).mean() > 60


def test_log_image_keeps_its_value_range_per_step(server, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    monkeypatch.delenv("PANEBOARD_MODE", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run = paneboard.init(project="imgs", name="log", dir=tmp_path)
    tensor, _ = imagenet_normalised()
    paneboard.log({"x": paneboard.Image(tensor, caption="normed")}, step=3)
    paneboard.log({"x": paneboard.Image(np.full((4, 4, 3), 0.25))}, step=4)
    assert run.client.flush(timeout=30)
    paneboard.finish()
    recs = _steps(server, "imgs%2Flog", "x")
    assert [r["step"] for r in recs] == [3, 4]
    assert recs[0]["value_range"] == pytest.approx([float(tensor.min()), float(tensor.max())], abs=1e-6)
    assert "value_range" not in recs[1]  # [0, 1] floats are ×255, not normalised


def test_a_bad_value_range_is_rejected(server) -> None:
    png = io.BytesIO()
    Image.new("RGB", (2, 2)).save(png, "PNG")
    rec = {"step": 0, "type": "image", "mime": "image/png", "data": base64.b64encode(png.getvalue()).decode(),
           "value_range": [3, "x"]}
    try:
        reply = server.http("POST", "/api/v1/events", {"events": [
            {"op": "update", "env": "badrange", "win": "w", "kind": "media", "mode": "append", "records": [rec]}]})
    except urllib.error.HTTPError as exc:
        assert exc.code == 400
        reply = json.loads(exc.read())
    assert "value_range must be [min, max]" in json.dumps(reply)


def test_image_step_slider_and_range_on_hover_in_chromium(server, tab, tmp_path) -> None:
    client = server.client("imgui")
    for step in (0, 5, 10):
        tensor, _ = imagenet_normalised(step)
        client.image(tensor, win="sample", opts={"caption": f"sample at {step}"}, step=step)
    assert client.flush(timeout=30)
    tab.open(env_url(server, "imgui"))
    bar = '[data-win="sample"] .step-bar'
    tab.page.locator('[data-win="sample"]').scroll_into_view_if_needed()
    tab.wait("(b) => document.querySelector(b)?.dataset.step === '10'", bar)
    img = tab.page.locator('[data-win="sample"] .media-pane img')
    tab.wait("() => document.querySelector('[data-win=\"sample\"] .media-pane img')?.naturalWidth === 32")
    assert img.get_attribute("title").startswith("values -")  # the original range, on hover
    assert "min–max normalised" in img.get_attribute("title")
    tab.page.locator(f"{bar} input.step-slider").fill("0")
    tab.wait("(b) => document.querySelector(b)?.dataset.step === '0'", bar)
    assert tab.page.locator('[data-win="sample"] figcaption').inner_text() == "sample at 0"
    # What a person would see: a coloured gradient (not a black square) and the slider under it.
    tab.wait("() => document.querySelector('[data-win=\"sample\"] .media-pane img')?.complete")
    tab.page.locator('[data-win="sample"]').screenshot(path=os.path.join(SHOTS or str(tmp_path), "image_slider.png"))
    drawn = tab.js("""() => { const img = document.querySelector('[data-win="sample"] .media-pane img');
      const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
      const g = c.getContext('2d'); g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data; let s = 0;
      for (let i = 0; i < d.length; i += 4) s += d[i] + d[i + 1] + d[i + 2];
      return s / (d.length / 4 * 3); }""")
    assert drawn > 60, drawn  # the picture the browser draws is not nearly black
    assert tab.errors == []
