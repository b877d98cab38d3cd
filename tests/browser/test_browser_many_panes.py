"""A run page of thousands of panes (static/js/sections.js, pages/env_slots.js) in real Chromium against a real
server and SDK: the DOM stays bounded (sections collapsed with counts, cards a page at a time, far views cleared), a
pane far down draws once scrolled to, a live update to an off-screen pane shows once it is, the regex filter finds
any pane at once."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from helpers.browser import XY, Tab, flushed, http

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
ENV = "many_panes"
LAYERS = 1500  # 3,000 panes: layerNNNN/grad_norm and layerNNNN/weight_norm, a section per layer
STEPS = 20
NODES = "() => document.getElementsByTagName('*').length"
LAST = "layer1499"
LAST_WIN = "l1499_grad_norm"
DRAWN = f"n => {{ const d = {XY.format(win=LAST_WIN)}; return !!(d && d.data && d.data[0].x.length === n); }}"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("many_panes") / "paneboard.db").start()
    x = [float(s) for s in range(STEPS)]
    events = [{"op": "set", "env": ENV, "win": "loss", "kind": "line", "opts": {"title": "train/loss"},
               "traces": [{"name": None, "x": x, "y": [1 / (s + 1) for s in range(STEPS)]}]}]
    for i in range(LAYERS):
        for what in ("grad_norm", "weight_norm"):
            events.append({"op": "set", "env": ENV, "win": f"l{i}_{what}", "kind": "line",
                           "opts": {"title": f"layer{i:04d}/{what}"},
                           "traces": [{"name": None, "x": x, "y": [i / LAYERS + s / 100 for s in range(STEPS)]}]})
    for k in range(0, len(events), 1000):
        assert http(srv, "POST", "/api/v1/events", {"events": events[k:k + 1000]})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def open_env(t: Tab, server, width: int = 1280) -> None:
    t.page.set_viewport_size({"width": width, "height": 860})
    t.open(server.env_url(ENV))
    t.wait(f"() => {XY.format(win='loss')}?.data?.length === 1")  # the first pane is drawn


def list_every_section(t: Tab) -> None:
    for _ in range(LAYERS // 150 + 2):
        if not t.js("() => !!document.querySelector('.section-more-sections')?.isConnected"):
            return
        t.page.locator(".section-more-sections").click()


def test_thousands_of_panes_keep_the_dom_bounded(server, tab: Tab):
    t = tab
    open_env(t, server)
    assert t.js("() => document.getElementById('grid').dataset.many") == "1"
    assert t.js(NODES) < 8000
    # Sections come a page at a time, collapsed past the first few, each with its pane count.
    sections = t.js("() => [...document.querySelectorAll('.pane-section')].map(s => [s.dataset.section, "
                    "s.dataset.collapsed, s.querySelector('.section-count').textContent])")
    assert len(sections) <= 150 and sections[0] == ["train", "", "1"]
    assert sections[-1][1] == "1" and sections[-1][2] == "2"
    assert t.js("() => document.querySelectorAll('.card[data-win]').length") <= 30
    assert "not shown" in t.js("() => document.querySelector('.section-more-sections').textContent")
    # Every section listed and the page scrolled to its end: the headers only, no card built for them.
    list_every_section(t)
    assert t.js("() => document.querySelectorAll('.pane-section').length") == LAYERS + 1
    t.js("() => window.scrollTo(0, document.body.scrollHeight)")
    assert t.js(NODES) < 20000
    assert t.js("() => document.querySelectorAll('.card[data-win]').length") <= 30
    assert not t.errors, t.errors


def test_a_pane_far_down_draws_when_scrolled_to_and_is_cleared_when_far(server, tab: Tab):
    t = tab
    open_env(t, server)
    list_every_section(t)
    t.page.locator(f'.pane-section[data-section="{LAST}"] .section-toggle').click()
    # Opened, not yet scrolled to: its card is in the page but not drawn.
    assert t.js(f"() => !!document.querySelector('[data-win=\"{LAST_WIN}\"]')")
    t.page.locator(f'[data-win="{LAST_WIN}"]').scroll_into_view_if_needed()
    t.wait(DRAWN, STEPS)
    # Scrolled back to the top, tens of thousands of pixels away: its view is cleared, the card keeps its place.
    t.js("() => window.scrollTo(0, 0)")
    t.wait(f"() => !document.querySelector('[data-win=\"{LAST_WIN}\"] .js-plotly-plot')")
    assert t.js(f"() => document.querySelector('[data-win=\"{LAST_WIN}\"]').getBoundingClientRect().height") > 100
    t.page.locator(f'[data-win="{LAST_WIN}"]').scroll_into_view_if_needed()
    t.wait(DRAWN, STEPS)  # drawn again from a fresh read
    assert not t.errors, t.errors


def test_a_live_update_to_an_off_screen_pane_shows_once_scrolled_to(server, tab: Tab):
    import paneboard

    t = tab
    open_env(t, server)
    assert t.js(f"() => !document.querySelector('[data-win=\"{LAST_WIN}\"]')?.isConnected")  # not in the page
    c = paneboard.Client(server="http://127.0.0.1", port=server.port, env=ENV)
    try:
        c.line(Y=[9.0], X=[float(STEPS)], win=LAST_WIN, update="append")
        c.line(Y=[0.01], X=[float(STEPS)], win="loss", update="append")
        flushed(c)
        t.wait(f"() => {XY.format(win='loss')}.data[0].x.length === {STEPS + 1}")  # the socket delivered past it
        list_every_section(t)
        t.page.locator(f'.pane-section[data-section="{LAST}"] .section-toggle').click()
        t.page.locator(f'[data-win="{LAST_WIN}"]').scroll_into_view_if_needed()
        t.wait(DRAWN, STEPS + 1)
    finally:
        c.close_connection(timeout=5)
        # Put the pane back as the other tests expect it.
        http(server, "POST", "/api/v1/events", {"events": [{
            "op": "set", "env": ENV, "win": LAST_WIN, "kind": "line", "opts": {"title": f"{LAST}/grad_norm"},
            "traces": [{"name": None, "x": [float(s) for s in range(STEPS)],
                        "y": [1499 / LAYERS + s / 100 for s in range(STEPS)]}]}]})
    assert not t.errors, t.errors


def test_the_regex_filter_finds_any_pane_of_thousands(server, tab: Tab):
    t = tab
    open_env(t, server)
    t.page.locator("input.filter").fill(f"^{LAST}/")
    # Two matches: few enough for every section to open, whole, and its panes to draw.
    t.wait("() => document.getElementById('grid').dataset.many === ''")
    shown = t.js("() => [...document.querySelectorAll('.pane-section:not([hidden]) .card[data-win]:not([hidden])')]"
                 ".map(c => c.dataset.win)")
    assert shown == [LAST_WIN, "l1499_weight_norm"]
    t.wait(DRAWN, STEPS)
    # A broader regex: past the threshold again, paged; an invalid one says why and hides nothing.
    t.page.locator("input.filter").fill("grad_norm$")
    t.wait("() => document.getElementById('grid').dataset.cards === '1500'")
    assert t.js("() => document.getElementById('grid').dataset.many") == "1"
    assert t.js(NODES) < 8000
    t.page.locator("input.filter").fill("layer(")
    t.wait("() => !document.querySelector('.filter-error').hidden")
    assert t.js("() => document.getElementById('grid').dataset.cards") == str(2 * LAYERS + 1)
    assert not t.errors, t.errors


@pytest.mark.skipif(not SHOTS, reason="set PANEBOARD_SHOTS to a folder to save screenshots")
def test_screenshots(server, tab: Tab):
    t = tab
    for name, width, scheme in (("light", 1280, "light"), ("dark", 1280, "dark"), ("phone", 390, "light")):
        t.page.emulate_media(color_scheme=scheme)
        open_env(t, server, width)
        t.page.screenshot(path=os.path.join(SHOTS, f"many_panes_{name}.png"))
        list_every_section(t)
        if t.js(f"() => document.querySelector('.pane-section[data-section=\"{LAST}\"]').dataset.collapsed") == "1":
            t.page.locator(f'.pane-section[data-section="{LAST}"] .section-toggle').click()
        t.page.locator(f'[data-win="{LAST_WIN}"]').scroll_into_view_if_needed()
        t.wait(DRAWN, STEPS)
        t.page.screenshot(path=os.path.join(SHOTS, f"many_panes_{name}_end.png"))
