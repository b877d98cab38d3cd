"""Browser tests: the paneboard UI in real headless Chromium (Playwright driving Debian's /usr/bin/chromium)
against a real dash-server, fed by the real SDK."""

from __future__ import annotations

import time

import numpy as np

from helpers.browser import READY, XY, Tab, env_url, flushed, http

SPY = """() => {
  const P = window.Plotly, calls = window.__calls = {newPlot: 0, react: 0, extendTraces: 0, redraw: 0, update: 0};
  for (const k of Object.keys(calls)) {
    const orig = P[k];
    P[k] = function (...args) { calls[k] += 1; return orig.apply(this, args); };
  }
}"""


# ---------------------------------------------------------------------------------------------- env list


def test_env_list_live(server, sdk, tab):
    a = sdk("alpha")
    a.line(Y=[1, 2, 3, 4], X=[0, 1, 2, 3], win="loss")
    a.text("hello", win="note")
    flushed(a)

    tab.open(server.url + "/envs")
    row = tab.page.locator('tr[data-env="alpha"]')
    assert row.locator("a").inner_text() == "alpha"
    assert row.locator("a").get_attribute("href") == "/env/alpha"
    assert row.locator(".col-panes").inner_text() == "2"
    assert row.locator(".col-points").inner_text() == "4"
    assert "ago" in row.locator(".col-updated").inner_text() or row.locator(".col-updated").inner_text() == "just now"
    tab.js("() => { window.__marker = 'same page'; }")

    # A second env, with a name that would be markup if it were inserted as HTML, appears live.
    evil = 'beta <img src=x onerror="window.__xss=1">'
    b = sdk(evil)
    b.line(Y=[5, 6], win="w")
    flushed(b)
    tab.wait("name => [...document.querySelectorAll('tr[data-env] a')].some(a => a.textContent === name)", evil)
    assert tab.js("() => document.querySelectorAll('tbody img').length") == 0
    assert tab.js("() => window.__xss") is None

    # Points appended to alpha update its row; a deleted env vanishes.
    a.line(Y=[9, 9], X=[4, 5], win="loss", update="append")
    flushed(a)
    tab.wait("() => document.querySelector('tr[data-env=\"alpha\"] .col-points').textContent === '6'")
    http(server, "DELETE", "/api/v1/envs/alpha")
    tab.wait("() => !document.querySelector('tr[data-env=\"alpha\"]')")
    assert tab.js("() => window.__marker") == "same page"
    assert tab.errors == []


# ---------------------------------------------------------------------------------------------- env page, xy


def test_line_pane_extends_live_through_extend_traces(server, sdk, tab):
    c = sdk("run")
    c.line(Y=np.linspace(1, 0, 20), X=np.arange(20), win="loss", opts={"title": "training loss", "xlabel": "step"})
    flushed(c)

    tab.open(env_url(server, "run"))
    assert tab.page.locator(".env-name").inner_text() == "run"
    card = tab.page.locator('[data-win="loss"]')
    assert card.get_attribute("data-kind") == "line"
    assert card.locator(".card-title").inner_text() == "training loss"
    assert tab.points("loss") == 20
    assert card.get_attribute("data-points") == "20"
    tab.js(SPY)
    tab.js("() => { window.__marker = 'same page'; }")

    for i in range(10):  # ten separate appends, one point each
        c.line(Y=[float(i)], X=[20 + i], win="loss", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='loss')}.data[0].x.length >= 30")
    time.sleep(0.3)  # let any straggling (wrong) re-render show up before counting
    assert tab.points("loss") == 30
    assert tab.js(f"() => Array.from({XY.format(win='loss')}.data[0].x).slice(20)") == list(range(20, 30))
    calls = tab.js("() => window.__calls")
    assert calls["newPlot"] == 0 and calls["react"] == 0, calls
    assert 1 <= calls["extendTraces"] <= 10, calls
    assert tab.js("() => window.__marker") == "same page"
    assert card.get_attribute("data-points") == "30"
    assert tab.errors == []


def test_pane_created_after_load_appears_live_and_close_removes_it(server, sdk, tab):
    c = sdk("later")
    c.text("first", win="t")
    flushed(c)
    tab.open(env_url(server, "later"))
    assert tab.js("() => document.querySelectorAll('[data-win]').length") == 1

    c.line(Y=[[1, 2], [3, 4], [5, 6]], X=[0, 1, 2], win="acc", opts={"legend": ["train", "val"]})
    c.scatter(X=[[0, 0], [1, 1], [2, 0.5]], win="pts")
    flushed(c)
    tab.wait(f"() => {{ const d = {XY.format(win='acc')}; return d && d.data && d.data.length === 2; }}")
    assert tab.points("acc", 0) == 3 and tab.points("acc", 1) == 3
    tab.wait(f"() => {{ const d = {XY.format(win='pts')}; return d && d.data && d.data[0].x.length === 3; }}")
    assert tab.page.locator('[data-win="pts"]').get_attribute("data-kind") == "scatter"

    # A new named trace arrives as an append of an unknown trace: the pane is refetched with it.
    c.line(Y=[7, 8], X=[3, 4], win="acc", name="test", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='acc')}.data.length === 3")

    c.close(win="acc")
    flushed(c)
    tab.wait("() => !document.querySelector('[data-win=\"acc\"]')")
    assert tab.js("() => document.querySelectorAll('[data-win]').length") == 2
    assert tab.errors == []


def test_browser_points_stay_bounded(server, sdk, tab):
    """Past ~4x the point budget the pane is refetched downsampled instead of growing without end."""
    c = sdk("big")
    c.line(Y=np.sin(np.arange(10_000) / 100), X=np.arange(10_000), win="wave")
    flushed(c)
    tab.open(env_url(server, "big"))
    first = tab.points("wave")
    assert 0 < first <= 2_100  # the server's min/max buckets, about `points` per trace
    tab.js(SPY)
    c.line(Y=np.cos(np.arange(7_000) / 100), X=np.arange(10_000, 17_000), win="wave", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='wave')}.data[0].x.length <= 2100 && window.__calls.react >= 1")
    assert tab.js("() => window.__calls.extendTraces") == 1  # applied live first, then bounded by a refetch
    xs = tab.js(f"() => Array.from({XY.format(win='wave')}.data[0].x)")
    assert xs[-1] == 16_999 and xs == sorted(xs)
    assert tab.page.locator('[data-win="wave"] .card-info').inner_text().startswith("17,000 pts")
    assert tab.errors == []


def test_env_deleted_notice_and_recreate(server, sdk, tab):
    c = sdk("doomed")
    c.line(Y=[1, 2, 3], win="loss")
    flushed(c)
    tab.open(env_url(server, "doomed"))
    assert tab.page.locator("#notice").is_hidden()
    c.delete_env("doomed")
    flushed(c)
    tab.page.locator("#notice").wait_for(state="visible")
    assert "deleted" in tab.page.locator("#notice").inner_text()
    c.text("back again", win="t")  # the script goes on: the env comes back and the page follows it
    flushed(c)
    tab.page.locator('[data-win="t"]').wait_for()
    tab.page.locator("#notice").wait_for(state="hidden")
    tab.wait("() => !document.querySelector('[data-win=\"loss\"]')")
    assert tab.errors == []


def test_unknown_pane_kind_gets_a_card_not_a_crash(server, sdk, tab):
    c = sdk("kinds")
    c.line(Y=[1, 2], win="ok")
    flushed(c)

    h1 = {"env": "kinds", "win": "h1", "kind": "histogram3d", "title": "", "opts": {}, "version": 1, "created": 0,
          "updated": 0}

    def inject(route):  # the env's pane list (summaries), then the pane's own read
        res = route.fetch()
        route.fulfill(response=res, json={**res.json(), "panes": [h1, *res.json()["panes"]]})

    tab.page.route("**/api/v1/envs/kinds", inject)
    tab.page.route("**/api/v1/envs/kinds/panes/h1?*", lambda route: route.fulfill(json={**h1, "data": {}}))
    tab.open(env_url(server, "kinds"))
    card = tab.page.locator('[data-win="h1"]')
    assert card.get_attribute("data-kind") == "histogram3d"
    assert 'unsupported pane kind "histogram3d"' in card.inner_text()
    assert tab.points("ok") == 2
    assert tab.errors == []


def test_odd_env_name_round_trips(server, sdk, tab):
    name = "team/exp #1? <b>x</b> & 100%"
    c = sdk(name)
    c.line(Y=[3, 2, 1], win="loss/val")
    flushed(c)
    tab.open(server.url + "/envs")
    tab.page.get_by_role("link", name=name, exact=True).click()
    tab.page.wait_for_url("**/env/**")
    tab.wait(READY)
    assert tab.page.locator(".env-name").inner_text() == name
    assert tab.js("() => document.title").startswith(name)
    assert tab.points("loss/val") == 3
    c.line(Y=[0], X=[3], win="loss/val", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='loss/val')}.data[0].x.length === 4")
    assert tab.errors == []


# ---------------------------------------------------------------------------------------------- text, image

XSS = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
       '<svg onload="window.__xss=3"><circle r="4"/></svg><a href="javascript:window.__xss=4" id="jslink">link</a>'
       '<iframe src="javascript:parent.__xss=5"></iframe><b>bold text</b>')


def test_text_pane_executes_nothing(server, sdk, tab):
    c = sdk("xss")
    c.text(XSS, win="note")
    flushed(c)
    tab.open(env_url(server, "xss"))
    assert "script-src 'self'" in tab.response.headers.get("content-security-policy", "")  # the page runs under CSP
    body = tab.page.locator('[data-win="note"] .card-body')
    bold = body.locator("b")
    assert bold.inner_text() == "bold text"
    assert int(bold.evaluate("el => getComputedStyle(el).fontWeight")) >= 600

    # The same payload arriving live (a pane created after load) is just as inert.
    c.text(XSS, win="note2")
    flushed(c)
    tab.page.locator('[data-win="note2"] b').wait_for()
    link = tab.page.locator('[data-win="note"] a')
    if link.count():
        link.first.click()
    time.sleep(0.5)
    assert tab.js("() => window.__xss") is None
    for win in ("note", "note2"):
        card = tab.page.locator(f'[data-win="{win}"]')
        assert card.locator("script, iframe, [onerror], [onload]").count() == 0
        hrefs = card.locator("a").evaluate_all("els => els.map(a => a.getAttribute('href') || '')")
        assert not any(h.strip().lower().startswith("javascript:") for h in hrefs), hrefs


def test_image_pane_loads(server, sdk, tab):
    c = sdk("pics")
    img = np.zeros((48, 64, 3), dtype=np.uint8)
    img[:, :32, 0] = 255
    img[24:, :, 2] = 200
    c.image(img.transpose(2, 0, 1), win="img", opts={"caption": "red & blue <i>caption</i>"})
    flushed(c)
    tab.open(env_url(server, "pics"))
    el = tab.page.locator('[data-win="img"] img')
    el.wait_for()
    tab.wait("() => { const i = document.querySelector('[data-win=\"img\"] img'); return i.complete && i.naturalWidth > 0; }")
    assert el.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [64, 48]
    assert tab.page.locator('[data-win="img"] figcaption').inner_text() == "red & blue <i>caption</i>"
    assert el.get_attribute("src").startswith("/api/v1/blobs/")
    assert tab.errors == []


# ---------------------------------------------------------------------------------------------- robustness


def test_no_console_errors_on_either_page(server, sdk, tab):
    c = sdk("clean")
    c.line(Y=[1, None, 3, 4], X=[0, 1, 2, 3], win="gaps", opts={"ytype": "log", "ylabel": "loss"})
    c.scatter(X=np.random.default_rng(0).random((50, 2)), win="cloud")
    c.text("<h3>notes</h3><p>plain <code>text</code></p>", win="notes")
    c.image(np.full((3, 16, 16), 128, dtype=np.uint8), win="gray")
    flushed(c)

    tab.open(server.url + "/envs")
    tab.page.locator('tr[data-env="clean"] a').click()
    tab.page.wait_for_url("**/env/clean")
    tab.wait(READY)
    assert tab.page.locator("[data-win]").count() == 4
    assert tab.js(f"() => {XY.format(win='gaps')}.data[0].y[1]") is None  # NaN/None stays a gap
    c.line(Y=[5], X=[4], win="gaps", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='gaps')}.data[0].x.length === 5")
    tab.page.locator(".back").click()
    tab.page.wait_for_url(server.url + "/")
    tab.wait("() => document.body.dataset.ready === '1'")
    assert tab.errors == []


def test_reconnect_refetches(server_process, tab):
    server = server_process  # stopped and restarted under the open page
    c = server.client("rc")
    c.line(Y=list(range(10)), win="loss")
    flushed(c)
    tab.open(env_url(server, "rc"))
    tab.js("() => { window.__marker = 1; }")
    c.close_connection()
    server.stop()
    tab.wait("() => document.body.dataset.live !== '1'")
    assert tab.page.locator("#live").get_attribute("data-state") in ("closed", "connecting")
    server.start()
    # Written right after the restart, most likely before the page reconnects: only the refetch brings it.
    http(server, "POST", "/api/v1/events", {"events": [
        {"op": "update", "env": "rc", "win": "loss", "kind": "line", "mode": "append",
         "traces": [{"x": [10, 11, 12], "y": [1, 1, 1]}]}]})
    tab.wait("() => document.body.dataset.live === '1'")
    tab.wait(f"() => {XY.format(win='loss')}.data[0].x.length === 13")
    assert tab.js("() => window.__marker") == 1


def test_base_url(tmp_path, browser, server_types):
    """Behind --base-url /pb every URL the page uses (static, API, websocket, links) carries the prefix."""
    import paneboard

    class Prefixed(server_types.InProcessServer):
        @property
        def url(self) -> str:
            return f"http://127.0.0.1:{self.port}/pb"

    srv = Prefixed(db=tmp_path / "pb.db", options={"base_url": "/pb"}).start()
    context = browser.new_context()
    try:
        c = paneboard.Client(server="http://127.0.0.1", port=srv.port, base_url="/pb", env="prefixed")
        c.line(Y=[1, 2, 3], win="loss")
        flushed(c)
        page = context.new_page()
        t = Tab(page)
        page.on("console", lambda m: t.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: t.errors.append(str(e)))
        t.open(srv.url + "/envs")
        assert page.locator('tr[data-env="prefixed"] a').get_attribute("href") == "/pb/env/prefixed"
        page.locator('tr[data-env="prefixed"] a').click()
        page.wait_for_url("**/pb/env/prefixed")
        t.wait(READY)
        assert t.points("loss") == 3
        c.line(Y=[4], X=[3], win="loss", update="append")
        flushed(c)
        t.wait(f"() => {XY.format(win='loss')}.data[0].x.length === 4")
        c.close_connection()
        assert t.errors == []
    finally:
        context.close()
        srv.stop()
