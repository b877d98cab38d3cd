"""Several metrics on one Scalars chart (Chromium, real server): the user overlays train/loss and val/loss, saves the
view, and a reload (?view=) or the views picker brings the overlaid chart back; bad views get a 400 naming why."""

from __future__ import annotations

import json
import os
import urllib.error
from collections.abc import Iterator

import pytest

from helpers.browser import Tab, http
from helpers.sweep import log_sweep

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
RUNS = ["ov_a", "ov_b"]
CARD = "custom: overlays/losses"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("views") / "paneboard.db").start()
    log_sweep(srv, RUNS, 50)
    try:
        yield srv
    finally:
        srv.stop()


def overlay_lines(t: Tab) -> list[str]:
    return t.js(f"""() => {{ const d = document.querySelector('[data-tag="{CARD}"] .js-plotly-plot');
        return d && d.data ? d.data.filter(s => s.meta.role === 'smoothed').map(s => s.name) : []; }}""")


def test_overlaid_tags_are_saved_in_a_view_and_come_back(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1400, "height": 900})
    t.open(f"{server.url}/scalars")
    t.wait("() => document.querySelectorAll('.overlay-tags option').length === 3")
    t.page.locator(".overlay-panel summary").click()
    t.page.select_option(".overlay-tags", ["train/loss", "val/loss"])
    t.page.fill(".overlay-title", "losses")
    t.page.locator(".overlay-add").click()
    t.wait(f"() => !!document.querySelector('[data-tag=\"{CARD}\"]') && "
           f"Number(document.querySelector('[data-tag=\"{CARD}\"]').dataset.series) === 4")
    assert sorted(overlay_lines(t)) == sorted(f"{r} · {tag}" for r in RUNS for tag in ("train/loss", "val/loss"))
    t.page.once("dialog", lambda d: d.accept("two losses"))
    t.page.locator(".scalars-save-view").click()
    t.wait("() => new URL(location.href).searchParams.get('view') === 'two losses'")
    meta = http(server, "GET", "/api/v1/envs/ov_a/meta")["meta"]
    assert meta["views"]["two losses"]["scalars"]["overlays"] == [{"title": "losses", "tags": ["train/loss", "val/loss"]}]
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "overlay_view.png"))
    # A reload of the view's URL draws the overlaid chart again.
    t.page.reload()
    t.wait(f"() => !!document.querySelector('[data-tag=\"{CARD}\"]') && "
           f"Number(document.querySelector('[data-tag=\"{CARD}\"]').dataset.series) === 4")
    # A fresh page lists the view; picking it brings the chart.
    t.open(f"{server.url}/scalars")
    t.wait("() => [...document.querySelectorAll('.scalars-views option')].some(o => o.value === 'two losses')")
    assert not t.js(f"() => !!document.querySelector('[data-tag=\"{CARD}\"]')")
    t.page.select_option(".scalars-views", "two losses")
    t.wait(f"() => !!document.querySelector('[data-tag=\"{CARD}\"]') && "
           f"Number(document.querySelector('[data-tag=\"{CARD}\"]').dataset.series) === 4")
    assert not t.errors, t.errors


@pytest.mark.parametrize("scalars", [{"overlays": [{"title": "x", "tags": []}]}, {"overlays": "no"},
                                     {"overlays": [{"title": "", "tags": ["a"]}]},
                                     {"overlays": [], "smoothing": 2}, {"overlays": [], "pinned": "ov_a"},
                                     {"overlays": [], "pinned": [""]}, {"overlays": [], "baseline": 3}])
def test_a_bad_scalars_view_is_refused(server, scalars):
    with pytest.raises(urllib.error.HTTPError) as err:
        http(server, "POST", "/api/v1/envs/ov_a/views", {"name": "bad", "scalars": scalars})
    assert err.value.code == 400
    assert "save_view" in json.loads(err.value.read())["error"]
