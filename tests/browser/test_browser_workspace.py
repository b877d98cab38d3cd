"""Browser workspace in headless Chromium against a real server and SDK: env search, fork, delete, compare, layout,
downloads, zoom detail and the app under --base-url."""

from __future__ import annotations

import csv
import io
import urllib.request

import numpy as np

from helpers.browser import XY, Tab, env_url, flushed, http


def plot(win: str) -> str:
    return XY.format(win=win)


def export_csv(server, env: str, win: str) -> list[list[str]]:
    text = server.get_text(f"/api/v1/envs/{urllib.request.quote(env, safe='')}/panes/{win}/export?format=csv")
    return list(csv.reader(io.StringIO(text)))[1:]


def test_env_search_tree_and_delete_with_confirmation(server, sdk, tab):
    for name in ("mnist_lr1", "mnist_lr2", "cifar_a", "solo"):
        c = sdk(name)
        c.line(Y=[1, 2], win="loss")
        flushed(c)
    tab.open(server.url + "/envs")
    rows = "() => [...document.querySelectorAll('tbody tr[data-env]')].map(r => r.dataset.env)"
    assert sorted(tab.js(rows)) == ["cifar_a", "mnist_lr1", "mnist_lr2", "solo"]
    # Envs sharing the prefix before the first "_" are grouped under one collapsible row.
    assert tab.js("() => [...document.querySelectorAll('tr.group-row')].map(r => r.dataset.group)") == ["mnist"]
    tab.page.locator("tr.group-row").click()
    tab.wait("() => !document.querySelector('tr[data-env=\"mnist_lr1\"]')")
    tab.page.locator("tr.group-row").click()
    tab.page.fill("input.filter", "LR2")
    tab.wait("() => [...document.querySelectorAll('tbody tr[data-env]')].map(r => r.dataset.env).join() === 'mnist_lr2'")
    tab.page.fill("input.filter", "")

    # Delete asks first: dismissing keeps the env, accepting deletes it.
    tab.page.once("dialog", lambda d: d.dismiss())
    tab.page.locator('tr[data-env="solo"] .act-delete').click(force=True)
    assert server.get_json("/api/v1/envs?q=solo")["envs"] != []
    tab.page.once("dialog", lambda d: d.accept())
    tab.page.locator('tr[data-env="solo"] .act-delete').click(force=True)
    tab.wait("() => !document.querySelector('tr[data-env=\"solo\"]')")
    assert server.get_json("/api/v1/envs?q=solo")["envs"] == []
    assert tab.errors == []


def test_fork_from_the_browser_has_the_data_and_diverges(server, sdk, tab):
    c = sdk("base")
    c.line(Y=np.arange(5000.0), X=np.arange(5000), win="loss", opts={"title": "loss"})
    flushed(c)
    tab.open(server.url + "/envs")
    tab.page.once("dialog", lambda d: d.accept("base_copy"))
    tab.page.locator('tr[data-env="base"] .act-fork').click(force=True)
    tab.wait("() => !!document.querySelector('tr[data-env=\"base_copy\"]')")
    assert "fork of base" in tab.page.locator('tr[data-env="base_copy"]').inner_text()
    assert tab.page.locator('tr[data-env="base_copy"] .col-points').inner_text() == "5,000"

    c.line(Y=[-1.0, -2.0], X=[5000, 5001], win="loss", update="append")  # the original goes on
    flushed(c)
    assert len(export_csv(server, "base", "loss")) == 5002
    forked = export_csv(server, "base_copy", "loss")
    assert len(forked) == 5000 and forked[-1][1:3] == ["4999.0", "4999.0"]

    tab.open(env_url(server, "base_copy"))
    assert tab.points("loss") > 0
    assert tab.errors == []


def test_compare_overlays_two_envs_and_stays_live(server, sdk, tab):
    a, b = sdk("run_a"), sdk("run_b")
    a.line(Y=[1.0, 0.5], X=[0, 1], win="loss", opts={"title": "loss"})
    b.line(Y=[2.0, 1.0, 0.2], X=[0, 1, 2], win="loss", opts={"title": "loss"})  # Compare keys by (win, title)
    http(server, "PUT", "/api/v1/envs/run_a/meta", {"config": {"lr": 0.1, "bs": 32}})
    flushed(a)
    flushed(b)
    http(server, "PUT", "/api/v1/envs/run_b/meta", {"config": {"lr": 0.01, "bs": 32}})
    tab.open(server.url + "/envs")
    tab.page.locator('tr[data-env="run_a"] input.pick').check()
    tab.page.locator('tr[data-env="run_b"] input.pick').check()
    tab.page.locator(".compare-btn").click()
    tab.page.wait_for_url("**/compare?envs=run_a,run_b")
    card = '[data-title="loss"] .js-plotly-plot'
    tab.wait(f"() => {{ const d = document.querySelector('{card}'); return d && d.data && d.data.length === 2; }}")
    assert tab.js(f"() => document.querySelector('{card}').data.map(t => [t.name, t.y.length])") == [
        ["run_a", 2], ["run_b", 3]]
    assert tab.js("() => [...document.querySelectorAll('.legend-env')].map(e => e.dataset.env)") == ["run_a", "run_b"]
    assert tab.js("() => [...document.querySelectorAll('.config-diff tr.differs')].map(r => r.dataset.key)") == ["lr"]

    b.line(Y=[0.1, 0.05], X=[3, 4], win="loss", update="append")
    flushed(b)
    tab.wait(f"() => document.querySelector('{card}').data[1].y.length === 5")
    assert tab.errors == []


def _layout(t: Tab, win: str) -> str:
    return t.js("w => document.querySelector(`[data-win=\"${w}\"]`).dataset.layout", win)


def test_drag_and_resize_persist_across_reload_and_a_second_context(server, sdk, tab, browser):
    c = sdk("lay")
    for w in ("a", "b", "c"):
        c.line(Y=[1, 2, 3], win=w, opts={"title": w})
    flushed(c)
    tab.open(env_url(server, "lay"))
    page = tab.page
    box = page.locator('[data-win="a"]').bounding_box()
    grid = page.locator("#grid").bounding_box()
    # Drag pane a by its title bar to the right half, then make it wider and taller by the corner handle.
    bar = page.locator('[data-win="a"] .card-bar').bounding_box()
    page.mouse.move(bar["x"] + 30, bar["y"] + 10)
    page.mouse.down()
    page.mouse.move(bar["x"] + 30 + grid["width"] / 2, bar["y"] + 10 + 200, steps=8)
    page.mouse.up()
    tab.wait("() => document.querySelector('[data-win=\"a\"]').dataset.layout !== ''")
    x, y, w, h = map(int, _layout(tab, "a").split(","))
    assert x == 6 and w == 6 and y >= 3
    handle = page.locator('[data-win="a"] .resize-handle').bounding_box()
    page.mouse.move(handle["x"] + 5, handle["y"] + 5)
    page.mouse.down()
    page.mouse.move(handle["x"] + 5, handle["y"] + 5 + 160, steps=6)
    page.mouse.up()
    tab.wait("h => Number(document.querySelector('[data-win=\"a\"]').dataset.layout.split(',')[3]) > h", h)
    expected = _layout(tab, "a")
    # Stored on the server (after commit) ...
    def server_layout() -> str:
        pane = server.get_json("/api/v1/envs/lay/panes/a?points=10")
        return ",".join(str(pane["layout"][k]) for k in "xywh") if pane["layout"] else ""
    tab.wait("() => !document.querySelector('.card.resizing')")
    for _ in range(50):
        if server_layout() == expected:
            break
        page.wait_for_timeout(100)
    assert server_layout() == expected
    assert page.locator('[data-win="a"]').bounding_box()["height"] > box["height"]

    # ... so a reload and a second browser context show the same layout, and a move shows up live in the other.
    tab.open(env_url(server, "lay"))
    assert _layout(tab, "a") == expected
    other = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        t2 = Tab(other.new_page()).open(env_url(server, "lay"))
        assert _layout(t2, "a") == expected
        http(server, "PUT", "/api/v1/envs/lay/panes/b/layout", {"x": 0, "y": 30, "w": 12, "h": 5})
        t2.wait("() => document.querySelector('[data-win=\"b\"]').dataset.layout === '0,30,12,5'")
        tab.wait("() => document.querySelector('[data-win=\"b\"]').dataset.layout === '0,30,12,5'")
    finally:
        other.close()
    assert tab.errors == []


def test_csv_download_contains_every_point(server, sdk, tab):
    n = 30_000  # far above the display budget: the download is the export, not the plot
    c = sdk("dl")
    c.line(Y=np.sin(np.arange(n) / 100.0), X=np.arange(n), win="big", opts={"title": "big"})
    flushed(c)
    tab.open(env_url(server, "dl"))
    assert tab.points("big") < n
    tab.page.locator('[data-win="big"] .pane-menu-btn').click()
    with tab.page.expect_download() as dl:
        tab.page.locator('[data-win="big"] .m-csv').click()
    rows = list(csv.reader(io.StringIO(open(dl.value.path()).read())))
    assert rows[0] == ["trace", "x", "y", "wall"]
    assert len(rows) - 1 == n
    assert [float(r[1]) for r in rows[1:]] == list(map(float, range(n)))
    tab.page.locator('[data-win="big"] .pane-menu-btn').click()
    with tab.page.expect_download() as png:
        tab.page.locator('[data-win="big"] .m-png').click()
    assert png.value.suggested_filename.endswith(".png")
    assert tab.errors == []


def test_zoom_requeries_the_range_at_full_budget(server, sdk, tab):
    n = 200_000
    x = np.arange(n, dtype=float)
    y = np.sin(x / 50.0)
    y[123_456] = 3.0  # a spike: kept by the overview's min/max buckets, but its neighbourhood is not
    c = sdk("zoom")
    c.line(Y=y, X=x, win="z", opts={"title": "z"})
    flushed(c)
    tab.open(env_url(server, "zoom"))
    in_range = "([a, b]) => { const d = " + plot("z") + "; return d.data[0].x.filter(v => v >= a && v <= b).length; }"
    overview = tab.js(in_range, [123_000, 124_000])
    assert overview < 100  # about 2000 points for 200k: ~10 in this range
    tab.js("() => Plotly.relayout(" + plot("z") + ", {'xaxis.range': [123000, 124000]})")
    tab.wait("() => " + plot("z") + ".dataset.zoom === '123000,124000'")
    detail = tab.js(in_range, [123_000, 124_000])
    assert detail == 1001  # every stored point of the range: real detail, not the overview
    assert 3.0 in tab.js("() => Array.from(" + plot("z") + ".data[0].y)")
    # Autoscale restores the overview.
    tab.js("() => Plotly.relayout(" + plot("z") + ", {'xaxis.autorange': true})")
    tab.wait("() => !" + plot("z") + ".dataset.zoom")
    tab.wait(f"([a, b, m]) => {{ const d = {plot('z')}; return d.data[0].x.filter(v => v >= a && v <= b).length < m; }}",
             [123_000, 124_000, 100])
    assert tab.errors == []


def test_workspace_under_base_url(tmp_path, browser, server_types):
    import paneboard

    class Prefixed(server_types.InProcessServer):
        @property
        def url(self) -> str:
            return f"http://127.0.0.1:{self.port}/pb"

    srv = Prefixed(db=tmp_path / "pb.db", options={"base_url": "/pb"}).start()
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        c = paneboard.Client(server="http://127.0.0.1", port=srv.port, base_url="/pb", env="p_one")
        c.line(Y=[1, 2, 3], win="loss", opts={"title": "loss"})
        flushed(c)
        t = Tab(context.new_page())
        t.page.on("pageerror", lambda e: t.errors.append(str(e)))
        t.open(srv.url + "/envs")
        t.page.once("dialog", lambda d: d.accept("p_two"))
        t.page.locator('tr[data-env="p_one"] .act-fork').click(force=True)
        t.wait("() => !!document.querySelector('tr[data-env=\"p_two\"]')")
        t.page.locator('tr[data-env="p_one"] input.pick').check()
        t.page.locator('tr[data-env="p_two"] input.pick').check()
        t.page.locator(".compare-btn").click()
        t.page.wait_for_url("**/pb/compare?envs=p_one,p_two")
        t.wait("() => { const d = document.querySelector('[data-title=\"loss\"] .js-plotly-plot');"
               " return d && d.data && d.data.length === 2; }")
        t.open(srv.url + "/env/p_two")
        t.page.locator('[data-win="loss"] .pane-menu-btn').click()
        assert t.page.locator('[data-win="loss"] .m-csv').get_attribute("href").startswith("/pb/api/v1/")
        http(srv, "PUT", "/api/v1/envs/p_two/panes/loss/layout", {"x": 3, "y": 0, "w": 4, "h": 6})
        t.wait("() => document.querySelector('[data-win=\"loss\"]').dataset.layout === '3,0,4,6'")
        c.close_connection()
        assert t.errors == []
    finally:
        context.close()
        srv.stop()


def test_a_step_indexed_pane_switches_its_x_axis_to_epochs_and_back(server, sdk, tab):
    # What the Lightning logger and the HF callback store: the metric by step, and an `epoch` pane step -> epoch.
    c = sdk("epochs")
    steps = list(range(16))
    c.line(X=steps, Y=[1.0 / (s + 1) for s in steps], win="train_loss", opts={"title": "train_loss"})
    c.line(X=steps, Y=[float(s // 8) for s in steps], win="epoch", opts={"title": "epoch"})
    flushed(c)
    tab.open(env_url(server, "epochs"))
    tab.wait(f"() => !!{XY.format(win='train_loss')}")
    xs = f"() => Array.from({XY.format(win='train_loss')}.data[0].x)"
    assert tab.js(xs) == steps
    tab.page.locator('[data-win="train_loss"] .pane-menu-btn').click()
    tab.page.locator('[data-win="train_loss"] .m-epoch').click()
    tab.wait(f"() => {XY.format(win='train_loss')}.layout.xaxis.title.text === 'epoch'")
    # Epoch 0 starts at step 0 and epoch 1 at step 8: step 4 is half-way through epoch 0.
    assert tab.js(xs) == [s / 8 for s in steps]
    c.line(X=[16], Y=[0.05], win="train_loss", update="append")  # live points follow the mapped axis
    flushed(c)
    tab.wait(f"() => {XY.format(win='train_loss')}.data[0].x.length === 17")
    assert tab.js(xs)[-1] == 2  # past the last epoch's start: at the pace of the epoch before
    tab.page.locator('[data-win="train_loss"] .pane-menu-btn').click()
    assert tab.page.locator('[data-win="train_loss"] .m-epoch').inner_text() == "x axis: step"
    tab.page.locator('[data-win="train_loss"] .m-epoch').click()
    tab.wait(f"() => {XY.format(win='train_loss')}.data[0].x[16] === 16")
    tab.page.locator('[data-win="epoch"] .pane-menu-btn').click()
    assert tab.page.locator('[data-win="epoch"] .m-epoch').count() == 0  # the epoch pane itself has no switch
    assert tab.errors == []
