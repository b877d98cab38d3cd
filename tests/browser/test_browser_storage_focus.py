"""Pages in a browser that refuses storage still draw their panes (Chromium with sessionStorage/localStorage
throwing on access), and keyboard focus on the env list survives a run streaming into it."""

from __future__ import annotations

import pytest

from helpers.browser import TIMEOUT_MS, XY, Tab, env_url, flushed

# What a framed cross-site page or strict privacy settings do: the getter itself throws a SecurityError.
REFUSE_STORAGE = """
for (const name of ["sessionStorage", "localStorage"]) {
  Object.defineProperty(window, name, { configurable: true, get() {
    throw new DOMException("The document is sandboxed and lacks the 'allow-same-origin' flag.", "SecurityError");
  } });
}
"""


@pytest.fixture
def refusing_tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.add_init_script(REFUSE_STORAGE)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    t = Tab(page)
    page.on("pageerror", lambda e: t.errors.append(f"pageerror: {e}"))
    try:
        yield t
    finally:
        context.close()


@pytest.mark.parametrize("path", ["env", "embed"])
def test_env_and_embed_pages_draw_panes_when_storage_is_refused(server, sdk, refusing_tab, path):
    c = sdk("nostore")
    c.line(Y=[1, 3, 2], X=[0, 1, 2], win="loss")
    c.text("hello", win="note")
    flushed(c)
    tab = refusing_tab
    url = env_url(server, "nostore") if path == "env" else f"{server.url}/embed/nostore"
    tab.open(url)
    assert tab.js("() => { try { window.sessionStorage; return 'allowed'; } catch (e) { return e.name; } }") \
        == "SecurityError"
    tab.wait(f"() => {{ const d = {XY.format(win='loss')}; return !!d && !!d.data && d.data[0].x.length === 3; }}")
    tab.wait("() => (document.querySelector('[data-win=\"note\"] .text-pane') || {}).textContent === 'hello'")
    assert tab.errors == []
    # The theme button still works: the pick lasts for this page without storage.
    if path == "env":
        before = tab.js("() => document.documentElement.dataset.theme || ''")
        tab.page.click(".theme-toggle")
        tab.wait("(b) => (document.documentElement.dataset.theme || '') !== b", before)
        assert tab.errors == []


def test_focus_on_the_env_list_stays_while_a_run_streams(server, sdk, tab):
    c = sdk("focus_a")
    c.line(Y=[1], X=[0], win="loss")
    other = sdk("focus_b")
    other.line(Y=[1], X=[0], win="loss")
    flushed(c)
    flushed(other)
    tab.open(server.url + "/envs")
    tab.wait("() => document.querySelectorAll('tr[data-env]').length === 2")
    tab.page.click("th.col-updated")  # newest first: streaming moves the rows around too
    # The keyboard puts focus on focus_a's checkbox, then on its link; the node is remembered to tell it from a copy.
    tab.page.focus('tr[data-env="focus_a"] input.pick')
    tab.page.keyboard.press("Tab")
    focused = "() => { const a = document.activeElement; return a && a.tagName === 'A' && a.textContent; }"
    assert tab.js(focused) == "focus_a"
    tab.js("() => { window.focusedBefore = document.activeElement; }")
    for step in range(1, 40):  # both envs stream: their rows' points, times (and the sort) change live
        c.line(Y=[step], X=[step], win="loss", update="append")
        other.line(Y=[step], X=[step], win="loss", update="append")
    flushed(c)
    flushed(other)
    tab.wait("() => document.querySelector('tr[data-env=\"focus_a\"] .col-points').textContent === '40'")
    tab.wait("() => document.querySelector('tr[data-env=\"focus_b\"] .col-points').textContent === '40'")
    assert tab.js("() => document.activeElement === window.focusedBefore")
    assert tab.js(focused) == "focus_a"
    tab.page.keyboard.press("Tab")  # and the keyboard goes on from there: the next control of the same row
    assert tab.js("() => document.activeElement.closest('tr').dataset.env") == "focus_a"
    assert tab.errors == []
