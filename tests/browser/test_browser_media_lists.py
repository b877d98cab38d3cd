"""A list of pictures logged at one step (paneboard.log({"examples": [Image, ...]}), W&B's habit) shows as a grid with
a caption under each, and the pane's step slider moves the whole grid (Chromium, real server, real SDK)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import paneboard
from helpers.browser import env_url

GRID = "([step, n]) => { const g = document.querySelector('.media-list');" \
       " return g && g.dataset.step === String(step) && Number(g.dataset.count) === n" \
       " && [...g.querySelectorAll('img')].every((i) => i.complete && i.naturalWidth > 0); }"
CAPTIONS = "() => [...document.querySelectorAll('.media-list figcaption')].map((c) => c.textContent)"


def test_a_steps_list_of_images_is_a_grid_the_slider_moves(server, tab, tmp_path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        monkeypatch.delenv(var, raising=False)
    run = paneboard.init(project="lists", name="grid", dir=tmp_path)
    for i in range(2):
        paneboard.log({"examples": [paneboard.Image(np.full((16, 24, 3), 60 * i + 40 * k, np.uint8),
                                                    caption=f"s{i}k{k}") for k in range(3)]})
    paneboard.finish()
    assert run.rejected == 0

    tab.open(env_url(server, "lists/grid"))
    tab.wait(GRID, [1, 3])  # the newest step's three pictures
    assert tab.js(CAPTIONS) == ["s1k0", "s1k1", "s1k2"]
    tab.js("() => { const s = document.querySelector('.media-pane + .step-bar .step-slider, .step-slider');"
           " s.value = '0'; s.dispatchEvent(new Event('input')); }")
    tab.wait(GRID, [0, 3])
    assert tab.js(CAPTIONS) == ["s0k0", "s0k1", "s0k2"]
    tab.page.locator(".media-pane:has(.media-list)").screenshot(
        path=os.path.join(os.environ.get("PANEBOARD_SHOTS") or str(tmp_path), "media_list.png"))
    assert not tab.errors, tab.errors
