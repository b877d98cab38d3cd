"""Habits a TensorBoard or Visdom user brings (Chromium, real server): dark mode that follows the system and a toggle
(Plotly figures too), no sideways scrolling at 390 px, Escape closing menus, env-list actions by keyboard, HTML 404."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from helpers.browser import XY

BG = "() => getComputedStyle(document.documentElement).backgroundColor"
PAPER = f"() => {XY.format(win='loss')}._fullLayout.paper_bgcolor"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    import paneboard

    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("habits") / "paneboard.db").start()
    c = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="proj_run1")
    c.line(Y=[1.0, 0.5, 0.25], X=[0, 1, 2], win="loss", opts={"title": "train/loss"})
    c.line(Y=[0.9], X=[0], win="acc", opts={"title": "val/accuracy"})
    assert c.flush(timeout=10)
    c.close_connection(timeout=5)
    try:
        yield srv
    finally:
        srv.stop()


def test_dark_mode_follows_the_system_and_the_toggle_with_plotly(server, open_tab):
    t = open_tab(server.env_url("proj_run1"), scheme="dark")
    t.wait(f"() => !!({XY.format(win='loss')} || {{}})._fullLayout")
    assert t.js(BG) == "rgb(13, 17, 23)"
    assert t.js(PAPER) == "#161b22"
    t.page.locator(".theme-toggle").click()
    assert t.js("() => document.documentElement.dataset.theme") == "light"
    assert t.js(BG) == "rgb(243, 244, 246)"
    t.wait(f"() => {PAPER[6:]} === '#fff'")
    assert t.js(f"() => {XY.format(win='loss')}._fullLayout.font.color") == "#24292f"  # xy.js's own, restored
    t.open(server.env_url("proj_run1"))  # the pick is remembered
    t.wait(f"() => !!({XY.format(win='loss')} || {{}})._fullLayout")
    assert t.js(PAPER) == "#fff" and t.js(BG) == "rgb(243, 244, 246)"
    t.page.locator(".theme-toggle").click()  # back to what the system shows: follow the system again
    assert t.js("() => document.documentElement.dataset.theme") is None
    assert t.js("() => localStorage.getItem('paneboard.theme')") is None
    t.wait(f"() => {PAPER[6:]} === '#161b22'")
    assert t.errors == []


@pytest.mark.parametrize("path", ["/", "/env/proj_run1", "/scalars"])
def test_no_sideways_scrolling_at_390_px(server, open_tab, path):
    t = open_tab(server.url + path, width=390)
    t.page.wait_for_timeout(300)  # charts lay out
    assert t.js("() => document.documentElement.scrollWidth") <= 390
    tools = t.page.locator("#tools")
    assert not tools.is_visible()
    t.page.locator(".tools-toggle").click()
    assert tools.is_visible()
    box = tools.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    t.page.keyboard.press("Escape")
    assert not tools.is_visible()
    if path == "/scalars":
        side = t.page.locator(".sc-side")
        assert not side.is_visible()
        t.page.locator(".sc-side-toggle").click()
        assert side.is_visible()
        assert t.js("() => document.documentElement.scrollWidth") <= 390
    assert t.errors == []


def test_env_header_folds_its_buttons_rather_than_squeeze_the_env_name(server, open_tab):
    name_fits = """() => { const n = document.querySelector('.crumb-current');
        return n.scrollWidth <= n.clientWidth
            && n.getBoundingClientRect().right <= n.closest('.crumbs').getBoundingClientRect().right + 1; }"""
    repack = "#tools button:text-is('tidy layout')"
    wide = open_tab(server.env_url("proj_run1"), width=1900)
    wide.wait("() => document.querySelector('.crumb-current')?.textContent === 'proj_run1'")
    assert wide.page.locator(repack).is_visible() and wide.js(name_fits)
    # An env page's dozen actions do not fit beside its name at 820 px: the buttons fold into the menu, the pane
    # filter stays in the header.
    t = open_tab(server.env_url("proj_run1"), width=820)
    t.wait("() => document.querySelector('.topbar').dataset.crowded === '1'")
    assert t.js(name_fits) and not t.page.locator(repack).is_visible()
    assert t.page.locator("input.filter").is_visible()
    t.page.locator(".tools-toggle").click()
    assert t.page.locator(repack).is_visible()
    t.page.keyboard.press("Escape")
    # Wide again: the buttons come back into the header.
    t.page.set_viewport_size({"width": 1900, "height": 800})
    t.wait("() => document.querySelector('.topbar').dataset.crowded === ''")
    assert t.js(name_fits) and t.page.locator(repack).is_visible() and t.errors == []


def test_escape_closes_the_pane_menu(server, open_tab):
    t = open_tab(server.env_url("proj_run1"))
    t.page.locator('[data-win="loss"] .pane-menu-btn').click()
    assert t.page.locator(".menu-list").is_visible()
    t.page.keyboard.press("Escape")
    assert t.page.locator(".menu-list").count() == 0
    assert t.errors == []


def test_env_list_actions_are_reachable_by_keyboard(server, open_tab):
    t = open_tab(server.url + "/envs")
    fork = t.page.locator('tr[data-env="proj_run1"] .act-fork')
    assert fork.evaluate("b => getComputedStyle(b).opacity") == "0"  # shown on hover or focus only
    t.page.locator('tr[data-env="proj_run1"] .col-name a').focus()
    t.page.keyboard.press("Tab")
    assert t.js("() => document.activeElement.classList.contains('act-fork')")
    assert fork.evaluate("b => getComputedStyle(b).opacity") == "1"
    t.page.keyboard.press("Tab")
    assert t.js("() => document.activeElement.classList.contains('act-rename')")
    assert t.errors == []


def test_unknown_page_is_an_html_404_and_api_paths_keep_json(server, open_tab, browser):
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        resp = page.goto(server.url + "/no/such/page")
        assert resp.status == 404 and resp.headers["content-type"].startswith("text/html")
        assert page.locator("h1").text_content() == "Page not found"
        assert page.locator("main a").get_attribute("href") == "/"
    finally:
        ctx.close()
    for path, accept in [("/api/v1/nope", "text/html,*/*;q=0.8"), ("/no/such/page", "*/*")]:
        req = urllib.request.Request(server.url + path, headers={"Accept": accept})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 404
        assert "error" in json.loads(err.value.read())
