"""Reaching a paged-out pane on a run page of hundreds of panes (pages/env_target.js, sections.js reveal) in real
Chromium against a real server and SDK: the alerts banner's "show", a ?pane= or #<win> link and the filter's Enter
open the pane's collapsed section, list it and page its card in, then scroll to it and mark it."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator

import pytest

import paneboard
from helpers.browser import Tab, flushed, http

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
ENV = "pane_targets"
LAYERS = 200  # 400 layer panes, a section each: past MANY_PANES and past the first page of sections
BIG = 60  # one section of 60 cards: past its first page of 24
STEPS = 10
IN_VIEW = ("win => { const c = document.querySelector(`[data-win=\"${win}\"]`); if (!c || !c.isConnected) return false;"
           " const r = c.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight"
           " && c.dataset.targeted === '1'; }")
DRAWN = ("win => { const d = document.querySelector(`[data-win=\"${win}\"] .js-plotly-plot`);"
         " return !!(d && d.data && d.data.length); }")


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("pane_targets") / "paneboard.db").start()
    x = [float(s) for s in range(STEPS)]

    def line(win: str, title: str, k: float) -> dict:
        return {"op": "set", "env": ENV, "win": win, "kind": "line", "opts": {"title": title},
                "traces": [{"name": None, "x": x, "y": [k + s / 10 for s in range(STEPS)]}]}

    events = [line("loss", "train/loss", 1.0)]
    events += [line(f"big{j}", f"big/metric{j:02d}", j) for j in range(BIG)]
    for i in range(LAYERS):
        events += [line(f"l{i}_{what}", f"layer{i:04d}/{what}", i / LAYERS) for what in ("grad_norm", "weight_norm")]
    for k in range(0, len(events), 1000):
        assert http(srv, "POST", "/api/v1/events", {"events": events[k:k + 1000]})["errors"] == []
    # The SDK's health alert: the "alerts" pane, whose hook section ranks last of all.
    c = paneboard.Client(server="http://127.0.0.1", port=srv.port, env=ENV)
    try:
        paneboard.alerts.check_loss(c, float("nan"), 7)
        flushed(c)
    finally:
        c.close_connection(timeout=5)
    try:
        yield srv
    finally:
        srv.stop()


def open_env(t: Tab, url: str, width: int = 1280) -> None:
    t.page.set_viewport_size({"width": width, "height": 860})
    t.open(url)


def in_dom(t: Tab, win: str) -> bool:
    return t.js("win => !!document.querySelector(`[data-win=\"${win}\"]`)?.isConnected", win)


def test_the_alerts_banner_shows_the_alerts_pane_paged_out(server, tab: Tab):
    t = tab
    open_env(t, server.env_url(ENV))
    t.wait("() => { const b = document.querySelector('.alerts-banner'); return b && !b.hidden; }")
    assert t.js("() => document.getElementById('grid').dataset.many") == "1"
    assert not in_dom(t, "alerts")  # its section is past the first page of sections
    t.page.click(".alerts-show")
    t.wait(IN_VIEW, "alerts")
    assert t.js("() => document.querySelector('.pane-section[data-section=\"alerts\"]').dataset.collapsed") == ""
    t.wait("() => document.querySelector('[data-win=\"alerts\"] .card-body').textContent.includes('loss_nonfinite')")
    assert not t.errors, t.errors


def test_a_pane_link_opens_its_section_and_pages_it_in(server, tab: Tab):
    t = tab
    # ?pane=: the 50th card of a section that shows 24 at first.
    open_env(t, server.env_url(ENV) + "?pane=big49")
    t.wait(IN_VIEW, "big49")
    t.wait(DRAWN, "big49")
    assert t.js("() => document.querySelectorAll('.pane-section[data-section=\"big\"] .card').length") >= 50
    # #<win>: a layer far down whose section is collapsed and not listed yet, reached by a hash change.
    assert not in_dom(t, "l190_weight_norm")
    t.js("() => { location.hash = 'l190_weight_norm'; }")
    t.wait(IN_VIEW, "l190_weight_norm")
    t.wait(DRAWN, "l190_weight_norm")
    assert t.js("() => document.querySelectorAll('.card[data-targeted]').length") == 1  # the mark moved
    assert not t.errors, t.errors


def test_a_panes_menu_links_to_it_and_the_link_reaches_it(server, tab: Tab):
    t = tab
    open_env(t, server.env_url(ENV))
    t.page.locator('[data-win="loss"] .pane-menu-btn').click()
    href = t.page.locator('[data-win="loss"] .m-link').get_attribute("href")
    assert href == "/env/pane_targets?pane=loss"
    # The same link of a pane far down (as the menu builds it) opens the page there.
    open_env(t, server.url + href.replace("pane=loss", "pane=l180_grad_norm"))
    t.wait(IN_VIEW, "l180_grad_norm")
    assert not t.errors, t.errors


def test_enter_in_the_filter_goes_to_each_match_in_turn(server, tab: Tab):
    t = tab
    open_env(t, server.env_url(ENV))
    box = t.page.locator("input.filter")
    box.fill(r"layer019[89]/weight_norm|big5[89]")  # 4 matches: few, every section open
    box.press("Enter")
    t.wait(IN_VIEW, "big58")
    box.press("Enter")
    t.wait(IN_VIEW, "big59")
    # Past MANY_PANES again: Enter goes on from the cards in the page to the first one paged out of it.
    box.fill("^(big|layer)")
    t.wait("() => document.getElementById('grid').dataset.cards === '460'")
    cards = "() => [...document.querySelectorAll('.card[data-win]')].map(c => c.dataset.win)"
    target = "() => document.querySelector('.card[data-targeted]')?.dataset.win"
    for _ in range(40):
        before = set(t.js(cards))
        box.press("Enter")
        if t.js(target) not in before:
            break
    assert t.js(target) not in before
    t.wait(IN_VIEW, t.js(target))
    assert not t.errors, t.errors


@pytest.mark.skipif(not SHOTS, reason="set PANEBOARD_SHOTS to a folder to save screenshots")
def test_screenshots(server, tab: Tab):
    t = tab
    for name, width, scheme in (("light", 1280, "light"), ("dark", 1280, "dark"), ("phone", 390, "light")):
        t.page.emulate_media(color_scheme=scheme)
        t.page.goto("about:blank")  # the same URL again would only be a hash navigation, not a new page
        open_env(t, server.env_url(ENV) + "#" + urllib.parse.quote("l150_grad_norm"), width)
        t.wait(IN_VIEW, "l150_grad_norm")
        t.wait(DRAWN, "l150_grad_norm")
        t.page.screenshot(path=os.path.join(SHOTS, f"pane_target_{name}.png"))
        t.page.click(".alerts-show")
        t.wait(IN_VIEW, "alerts")
        t.page.screenshot(path=os.path.join(SHOTS, f"pane_target_alerts_{name}.png"))
