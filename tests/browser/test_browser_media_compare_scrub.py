"""Compare's image scrub reads ahead in the scrub's direction (Chromium, real server, real SDK): a few steps of a drag
towards older steps have already asked for positions 40 and more ahead, so a steady scrub never waits on a read; and
every frame shown is whole (each cell's picture loaded when the section says ready)."""

from __future__ import annotations

import urllib.parse

import numpy as np

from helpers.browser import flushed
from helpers.waiting import wait_for

RUNS = ("scrub/a", "scrub/b")
STEPS = 100
READY = "(step) => { const s = document.querySelector('.compare-images'); return s && s.dataset.ready === '1' " \
        "&& s.dataset.step === String(step) && [...s.querySelectorAll('.compare-image-cell img')]" \
        ".every((i) => i.complete && i.naturalWidth > 0); }"


def test_a_scrub_reads_far_ahead_in_its_direction(server, sdk, open_tab) -> None:
    for k, env in enumerate(RUNS):
        c = sdk(env)
        for s in range(STEPS):
            c.image(np.full((8, 8, 3), (40 * k + s) % 250, np.uint8), win="frames", step=s)
        flushed(c)
    tab = open_tab(server.url + "/compare?envs=" + urllib.parse.quote(",".join(RUNS)))
    asked: list[float] = []

    def note(req) -> None:
        q = urllib.parse.parse_qs(urllib.parse.urlparse(req.url).query)
        if "/api/v1/compare/images" in req.url and "step" in q:
            asked.append(float(q["step"][0]))

    tab.page.on("request", note)
    tab.wait(READY, STEPS - 1)
    for step in range(STEPS - 2, STEPS - 6, -1):  # four positions towards older steps, each shown whole
        tab.js("(i) => { const s = document.querySelector('.images-step'); s.value = String(i);"
               " s.dispatchEvent(new Event('input')); }", step)
        tab.wait(READY, step)
    # Reads reach at least 40 positions past the slider in the scrub's direction, not just the next read's width.
    assert wait_for(lambda: asked and min(asked) <= STEPS - 6 - 40, timeout=20), asked
    assert not tab.errors, tab.errors
