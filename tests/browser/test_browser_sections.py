"""Env page sections (Chromium, real server and SDK): groups by title prefix and by the hooks' pane ids, user panes
first, collapsing (remembered per env, collapsed panes catch up when opened), pins, one-line notes, the filter."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from helpers.browser import XY, flushed

SECTIONS = "() => [...document.querySelectorAll('.pane-section')].map(s => [s.dataset.section, s.querySelector('.section-count').textContent, !s.querySelector('.section-head').hidden])"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("sections") / "paneboard.db").start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def env(server) -> str:
    import paneboard

    c = paneboard.Client(server="http://127.0.0.1", port=server.port, env="sec")
    c.line(Y=[1.0, 2.0], X=[0, 1], win="sys_cpu", opts={"title": "CPU %"})  # created first, shown last
    c.text("no GPU panes: nvidia-ml-py is not installed (pip install nvidia-ml-py)", win="sys_note",
           opts={"title": "system monitor"})
    c.line(Y=[1.0, 2.0], X=[0, 1], win="model_lr", opts={"title": "learning rate"})
    c.text("<b>loss spike</b> at step 3", win="alerts", opts={"title": "alerts"})
    c.line(Y=[1.0, 2.0], X=[0, 1], win="acc", opts={"title": "train/accuracy"})
    c.line(Y=[3.0, 2.0], X=[0, 1], win="vloss", opts={"title": "val/loss"})
    c.line(Y=[3.0, 1.0], X=[0, 1], win="tloss", opts={"title": "train/loss"})
    c.line(Y=[5.0, 4.0], X=[0, 1], win="loss", opts={"title": "loss"})
    flushed(c)
    c.close_connection(timeout=5)
    return "sec"


def test_sections_group_order_and_note(server, env, tab):
    tab.open(server.env_url(env))
    assert tab.js(SECTIONS) == [["metrics", "1", True], ["train", "2", True], ["val", "1", True],
                                ["alerts", "1", True], ["model", "1", True], ["system", "2", True]]
    # Inside a section the server's (creation) order holds.
    assert tab.js("() => [...document.querySelectorAll('[data-section=\"train\"] .card')].map(c => c.dataset.win)") \
        == ["acc", "tloss"]
    # The system monitor's note is one line under the section head, not a card in the grid.
    note = tab.page.locator('[data-win="sys_note"]')
    note.scroll_into_view_if_needed()
    tab.wait("() => document.querySelector('[data-win=\"sys_note\"]').textContent.includes('no GPU panes')")
    assert tab.js("() => !!document.querySelector('.pane-section[data-section=\"system\"] .section-notes [data-win=\"sys_note\"]')")
    assert note.bounding_box()["height"] < 40
    assert tab.errors == []


def test_collapsed_section_is_remembered_and_catches_up_when_opened(server, env, tab):
    import paneboard

    tab.open(server.env_url(env))
    tab.wait(f"() => {XY.format(win='tloss')} && {XY.format(win='tloss')}.data[0].x.length === 2")
    tab.page.locator('[data-section="train"] .section-toggle').click()
    assert tab.js("() => document.querySelector('[data-section=\"train\"] .section-toggle').getAttribute('aria-expanded')") == "false"
    assert not tab.page.locator('[data-win="tloss"]').is_visible()
    tab.wait("() => !document.querySelector('[data-win=\"tloss\"]').dataset.inview")

    # Live points while collapsed are not drawn; a pane in view shows the socket delivered past them.
    c = paneboard.Client(server="http://127.0.0.1", port=server.port, env=env)
    c.line(Y=[0.5, 0.25], X=[2, 3], win="tloss", update="append")
    c.line(Y=[6.0], X=[2], win="loss", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='loss')}.data[0].x.length === 3")
    time.sleep(0.2)
    assert tab.points("tloss") == 2

    # Remembered for this env across a reload; open again: the pane catches up.
    tab.open(server.env_url(env))
    assert tab.js("() => document.querySelector('[data-section=\"train\"]').dataset.collapsed") == "1"
    assert not tab.page.locator('[data-win="acc"]').is_visible()
    tab.page.locator('[data-section="train"] .section-toggle').click()
    tab.wait(f"() => {{ const d = {XY.format(win='tloss')}; return !!(d && d.data && d.data[0].x.length === 4); }}")
    assert tab.js("() => JSON.parse(localStorage.getItem('paneboard.sections.sec'))") == {}
    c.line(Y=[0.1], X=[4], win="tloss", update="append")  # open again: it follows live appends
    flushed(c)
    tab.wait(f"() => {XY.format(win='tloss')}.data[0].x.length === 5")
    c.close_connection(timeout=5)
    assert tab.errors == []


def test_pin_moves_a_pane_to_the_top_and_stays_pinned(server, env, tab):
    tab.open(server.env_url(env))
    tab.page.locator('[data-win="model_lr"] .pin-btn').click()
    assert tab.js(SECTIONS)[0] == ["pinned", "1", True]
    assert tab.js("() => document.querySelector('.pane-section').querySelector('.card').dataset.win") == "model_lr"
    assert tab.js("() => !!document.querySelector('[data-section=\"model\"]')") is False  # emptied: gone
    tab.open(server.env_url(env))
    assert tab.js("() => document.querySelector('[data-win=\"model_lr\"]').closest('.pane-section').dataset.section") == "pinned"
    assert tab.js("() => document.querySelector('[data-win=\"model_lr\"] .pin-btn').getAttribute('aria-pressed')") == "true"
    tab.page.locator('[data-win="model_lr"] .pin-btn').click()
    assert [s[0] for s in tab.js(SECTIONS)] == ["metrics", "train", "val", "alerts", "model", "system"]
    # The filter hides sections left without a match.
    tab.page.locator("input.filter").fill("loss")
    tab.wait("() => document.querySelector('[data-section=\"model\"]').hidden")
    visible = tab.js("() => [...document.querySelectorAll('.pane-section:not([hidden])')].map(s => s.dataset.section)")
    assert visible == ["metrics", "train", "val"]
    assert tab.errors == []


def test_one_section_shows_no_headers(server, sdk, tab):
    c = sdk("plain")
    c.line(Y=[1.0, 2.0], X=[0, 1], win="a")
    c.line(Y=[1.0, 2.0], X=[0, 1], win="b")
    flushed(c)
    tab.open(server.env_url("plain"))
    assert tab.js(SECTIONS) == [["metrics", "2", False]]
    assert tab.errors == []


def test_repack_forgets_stored_layouts_from_the_browser(server, env, tab):
    for win in ("acc", "tloss"):
        server.http("PUT", f"/api/v1/envs/{env}/panes/{win}/layout", {"x": 6, "y": 0, "w": 6, "h": 6})
    tab.open(server.env_url(env))
    tab.wait("() => document.querySelector('[data-win=\"tloss\"]').dataset.layout === '6,0,6,6'")
    tab.page.locator(".act-repack").click()  # PUTs a null layout for every placed pane
    tab.wait("() => ['acc', 'tloss'].every((w) => document.querySelector(`[data-win=\"${w}\"]`).dataset.layout === '')")
    assert tab.js("() => document.getElementById('notice').hidden")  # no error reported
    assert server.get_json(f"/api/v1/envs/{env}/panes/tloss")["layout"] is None
    assert tab.errors == []
