"""Scalars view fixes (Chromium, one real server for the module): the TensorBoard-style tooltip listing every run at
the hovered step, markers on single-point series (here and on env pages), per-chart download and expand, and the
"invalid regex" message."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.browser import XY, Tab, http

T0 = 1_750_000_000.0
CARD = "document.querySelector('[data-tag=\"{tag}\"] .js-plotly-plot')"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("sctools") / "paneboard.db").start()

    def line(env, win, title, xs, ys, t):
        # style mode "lines": what a Visdom-style line() call stores, and what a lone point must override
        return {"op": "set", "env": env, "win": win, "kind": "line", "t": t, "opts": {"title": title},
                "traces": [{"name": None, "x": [float(x) for x in xs], "y": [float(y) for y in ys],
                            "style": {"mode": "lines"}}]}

    events = [line("run_a", "loss", "train/loss", range(10), [1 / (i + 1) for i in range(10)], T0),
              line("run_b", "loss", "train/loss", range(10), [2 / (i + 1) for i in range(10)], T0 + 5),
              line("run_a", "hp", "hparams/accuracy", [0], [0.93], T0)]
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def scalars(server, tab) -> Tab:
    tab.page.goto(server.url + "/scalars")
    tab.wait(f"() => {{ const d = {CARD.format(tag='train/loss')}; return !!(d && d._fullLayout); }}")
    return tab


def test_tooltip_lists_every_run_at_the_hovered_step(scalars):
    t = scalars
    # Real mouse over step 5 of the chart: the plot area's pixel for x = 5.
    x, y = t.js(f"""() => {{ const d = {CARD.format(tag='train/loss')}; const xa = d._fullLayout.xaxis;
      const r = d.querySelector('.nsewdrag').getBoundingClientRect();
      return [r.left + xa.l2p(5), r.top + r.height / 2]; }}""")
    t.page.mouse.move(x, y)
    t.wait("() => !!document.querySelector('.run-tip:not([hidden])') && "
           "document.querySelector('.run-tip').textContent.includes('run_b')")
    text = t.js("() => document.querySelector('.run-tip').textContent")
    assert "run_a" in text and "run_b" in text
    assert "value" in text and "step 5" in text
    assert "(raw)" not in text
    assert t.errors == []


def test_single_point_series_get_markers(scalars, server):
    t = scalars
    tag = CARD.format(tag="hparams/accuracy")
    t.wait(f"() => !!{tag}")
    assert "markers" in t.js(f"() => {tag}.data.find(d => d.meta.role === 'smoothed').mode")
    assert t.js(f"() => {tag}.querySelectorAll('.scatterlayer .point').length") >= 1
    # The env page's line panes too.
    t.open(server.env_url("run_a"))
    t.wait(f"() => !!({XY.format(win='hp')} || {{}}).data")
    assert t.js(f"() => {XY.format(win='hp')}.data[0].mode") == "lines+markers"
    assert t.js(f"() => {XY.format(win='loss')}.data[0].mode") == "lines"
    assert t.js(f"() => {XY.format(win='hp')}.querySelectorAll('.scatterlayer .point').length") == 1
    assert t.errors == []


def test_download_and_expand_one_chart(scalars):
    t = scalars
    card = t.page.locator('[data-tag="train/loss"]')
    with t.page.expect_download() as dl:
        card.locator(".sc-download").click()
    assert dl.value.suggested_filename == "train_loss.png"
    width = card.bounding_box()["width"]
    height = t.js(f"() => {CARD.format(tag='train/loss')}.getBoundingClientRect().height")
    card.locator(".sc-expand").click()
    assert card.locator(".sc-expand").get_attribute("aria-pressed") == "true"
    full = t.js("() => document.querySelector('.sc-content').getBoundingClientRect().width")
    # train/loss is its section's only chart, so it already filled the row (ui-polish); expanded, it still does.
    assert width >= full - 2 and card.bounding_box()["width"] >= full - 2
    t.wait(f"() => {CARD.format(tag='train/loss')}._fullLayout.height > {height + 50}")
    card.locator(".sc-expand").click()
    assert abs(card.bounding_box()["width"] - width) < 2
    assert t.errors == []


def test_invalid_regex_says_so(scalars):
    t = scalars
    t.page.locator("input.tag-filter").fill("train/(")
    t.wait("() => !document.querySelector('#main .empty').hidden")
    msg = t.js("() => document.querySelector('#main .empty').textContent")
    assert msg.startswith("Invalid regex:"), msg
    assert t.page.locator("input.tag-filter").get_attribute("aria-invalid") is not None
    t.page.locator("input.tag-filter").fill("train/")
    t.wait("() => document.querySelector('#main .empty').hidden")
    assert t.page.locator("input.tag-filter").get_attribute("aria-invalid") is None
    assert t.errors == []
