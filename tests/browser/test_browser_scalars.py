"""Scalars view (static/js/pages/scalars.js, smoothing.js) in real Chromium against one real dash-server for the module:
runs overlaid with one colour each, TensorBoard's smoothing (checked against a Python port of its formula),
tag and run regex filters, STEP/RELATIVE/WALL axes, log y, the outlier-robust y range and live updates."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np
import pytest

from helpers.browser import Tab, http

T0 = 1_750_000_000.0  # wall time of the first points (seconds since the epoch)
CARD = "document.querySelector('[data-tag=\"{tag}\"] .js-plotly-plot')"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    """One server for the module: every test reads the same runs (a test that writes uses its own env)."""
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("scalars") / "paneboard.db").start()
    rng = np.random.default_rng(7)

    def line(env, win, title, x, y, t, update=False):
        ev = {"op": "update" if update else "set", "env": env, "win": win, "kind": "line", "t": t,
              "opts": {"title": title}, "traces": [{"name": None, "x": list(map(float, x)), "y": list(y)}]}
        if update:
            ev["mode"] = "append"
        return ev

    x = np.arange(40)
    loss_a = list(np.exp(-x / 15) + rng.normal(0, 0.05, 40))
    loss_a[7] = float("nan")  # a NaN point: drawn as a gap, not smoothed, does not advance the average
    loss_a[30] = 40.0  # one outlier the robust y range ignores
    events = [
        line("sc_a", "loss", "train/loss", x[:20], loss_a[:20], T0),
        line("sc_a", "loss", "train/loss", x[20:], loss_a[20:], T0 + 180, update=True),  # 3 minutes later
        line("sc_a", "acc", "train/acc", x, list(1 - np.exp(-x / 10)), T0),
        line("sc_b", "l", "train/loss", x, list(np.exp(-x / 10) + rng.normal(0, 0.05, 40)), T0 + 30),
        line("sc_b", "ev", "eval/loss", x[::5], list(np.linspace(1, 0.2, 8)), T0 + 30),
        {"op": "set", "env": "sc_b", "win": "note", "kind": "text", "content": "not a scalar", "opts": {}},
        {"op": "set", "env": "sc_b", "win": "pts", "kind": "scatter", "opts": {"title": "train/points"},
         "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, 2.0]}]},
    ]
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def tb_smooth(ys: list, w: float) -> list:
    """TensorBoard's classicSmoothing (reference §3.1), ported line by line; None stands for a NaN point."""
    w = min(max(w if math.isfinite(w) else 0.0, 0.0), 1.0)
    if ys and all(y == ys[0] for y in ys):
        return list(ys)
    last, n, out = 0.0, 0, []
    for y in ys:
        if y is None or not math.isfinite(y):
            out.append(y)
            continue
        last = last * w + (1 - w) * y
        n += 1
        out.append(last / (1 - w**n) if w != 1 else last)
    return out


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12))
        for x, y in zip(a, b, strict=True))


def traces(t: Tab, tag: str) -> list[dict]:
    """Every Plotly trace of a tag's chart: role (raw/smoothed), env, colour, x, y."""
    return t.js(f"""() => {{ const d = {CARD.format(tag=tag)};
      return d && d.data ? d.data.map(s => ({{role: s.meta.role, env: s.meta.env, color: s.line.color,
        x: Array.from(s.x), y: Array.from(s.y)}})) : null; }}""")


def wait_traces(t: Tab, tag: str, n: int) -> None:
    t.wait(f"() => {{ const d = {CARD.format(tag=tag)}; return !!(d && d.data && d.data.length === {n}); }}")


def open_scalars(t: Tab, server, runs: str = "sc_a,sc_b") -> None:
    t.open(f"{server.url}/scalars?envs={runs}")
    wait_traces(t, "train/loss", 2 * len(runs.split(",")))


SHOWN_TAGS = "() => [...document.querySelectorAll('.sc-card')].filter(c => !c.hidden).map(c => c.dataset.tag).sort()"


def test_smoothing_module_is_tensorboards_formula(server, tab):
    tab.open(server.url + "/scalars?envs=sc_a")
    got = tab.js("async () => (await import('/static/js/smoothing.js')).smooth([1, 0, 0, NaN, 1], 0.6)")
    assert got[:3] == pytest.approx([1.0, 0.375, 0.18367], abs=1e-5) and math.isnan(got[3])
    assert got[4] == pytest.approx(0.55882, abs=1e-5)
    cases = [([1, 0, 0, None, 1], 0.6), ([2, 2, 2], 0.9), ([3, -1, 4, 1e6, 5], 0.99), ([1, 2], 0), ([5, 1, 2], 1)]
    for ys, w in cases:
        js = tab.js("([ys, w]) => import('/static/js/smoothing.js').then(m => m.smooth(ys, w))", [ys, w])
        assert same(js, tb_smooth(ys, w)), (ys, w, js)


def test_env_list_button_opens_two_runs_overlaid_in_sections(server, tab):
    tab.open(server.url + "/envs")
    tab.page.locator('tr[data-env="sc_a"] input.pick').check()
    tab.page.locator('tr[data-env="sc_b"] input.pick').check()
    tab.page.locator(".scalars-btn").click()
    tab.page.wait_for_url("**/scalars?envs=sc_a,sc_b")
    tab.wait("() => document.body.dataset.ready === '1'")
    wait_traces(tab, "train/loss", 4)
    # Only line panes, grouped by title, in sections by the prefix before the first "/", in name order.
    assert tab.js(SHOWN_TAGS) == ["eval/loss", "train/acc", "train/loss"]
    assert tab.js("() => [...document.querySelectorAll('.sc-section')].map(s => s.dataset.section)") == ["eval", "train"]
    tr = traces(tab, "train/loss")
    assert [(s["role"], s["env"]) for s in tr] == [("raw", "sc_a"), ("smoothed", "sc_a"), ("raw", "sc_b"), ("smoothed", "sc_b")]
    # One colour per run: raw and smoothed lines of a run share it, the two runs differ; the run list shows it too.
    assert tr[0]["color"] == tr[1]["color"] != tr[2]["color"] == tr[3]["color"]
    chips = tab.js("() => Object.fromEntries([...document.querySelectorAll('.sc-run')].map(r => "
                   "[r.dataset.run, getComputedStyle(r.querySelector('.chip')).backgroundColor]))")
    assert chips["sc_a"] != chips["sc_b"]
    assert traces(tab, "train/acc")[1]["color"] == tr[1]["color"]  # the same run keeps its colour on every chart
    assert tab.errors == []


def test_smoothing_slider_redraws_with_the_exact_formula(server, tab):
    open_scalars(tab, server)
    tr = traces(tab, "train/loss")
    raw = tr[0]["y"]
    assert len(raw) == 40 and raw[7] is None  # NaN arrives as null: a gap
    assert same(tr[1]["y"], tb_smooth(raw, 0.6))  # default weight 0.6
    assert same(tr[3]["y"], tb_smooth(tr[2]["y"], 0.6))
    for w in (0.95, 0.0, 0.33):
        tab.page.locator("input.smoothing").fill(str(w))
        tab.wait("w => Number(document.querySelector('[data-tag=\"train/loss\"]').dataset.smoothing) === w", w)
        smoothed = traces(tab, "train/loss")[1]["y"]
        assert same(smoothed, tb_smooth(raw, w)), w
        assert tab.page.locator(".smoothing-value").inner_text() == f"{w:.2f}"
    assert same(traces(tab, "train/loss")[1]["y"], raw) is False  # 0.33 really smooths
    assert tab.errors == []


def test_tag_and_run_regex_filters(server, tab):
    open_scalars(tab, server)
    f = tab.page.locator("input.tag-filter")
    for text, shown in [("LOSS", ["eval/loss", "train/loss"]), ("^eval", ["eval/loss"]), ("", ["eval/loss", "train/acc",
                        "train/loss"]), ("acc|^eval/", ["eval/loss", "train/acc"]), ("([", [])]:
        f.fill(text)
        tab.wait("n => [...document.querySelectorAll('.sc-card')].filter(c => !c.hidden).length === n", len(shown))
        assert tab.js(SHOWN_TAGS) == shown, text
    assert tab.page.locator(".empty").is_visible()  # an invalid regex shows nothing and says why
    f.fill("")

    # Run filter: case-insensitive, unanchored; the chart then holds only the matching run; invalid matches no run.
    r = tab.page.locator("input.run-filter")
    r.fill("_B$")
    wait_traces(tab, "train/loss", 2)
    assert {s["env"] for s in traces(tab, "train/loss")} == {"sc_b"}
    assert tab.js("() => [...document.querySelectorAll('.sc-run')].filter(r => !r.hidden).map(r => r.dataset.run)") == ["sc_b"]
    r.fill("[")
    tab.wait("() => document.querySelectorAll('.sc-card').length === 0")
    assert tab.page.locator(".empty").is_visible()
    r.fill("")
    wait_traces(tab, "train/loss", 4)
    # Unticking a run removes its lines.
    tab.page.locator('.sc-run[data-run="sc_a"] input').uncheck()
    wait_traces(tab, "train/loss", 2)
    assert tab.errors == []


def test_axes_log_scale_and_outlier_range(server, tab):
    open_scalars(tab, server, "sc_a")
    plot = CARD.format(tag="train/loss")
    raw = traces(tab, "train/loss")[0]
    assert raw["x"] == list(range(40))  # STEP
    # Ignore outliers (on by default): 5th..95th percentile of the drawn points, widened to the extremes within one
    # such span (the curve's own first steps), plus 5% padding; 40.0 is far off and left out.
    vals = np.array([v for v in raw["y"] if v is not None])
    lo, hi = np.percentile(vals, 5), np.percentile(vals, 95)
    reach = hi - lo
    lo, hi = min(v for v in vals if v >= lo - reach), max(v for v in vals if v <= hi + reach)
    assert hi < 40
    rng = tab.js(f"() => {plot}.layout.yaxis.range")
    assert rng == pytest.approx([lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)], rel=1e-9)
    tab.page.locator("input.ignore-outliers").uncheck()
    tab.wait(f"() => {plot}._fullLayout.yaxis.range[1] > 40")  # autoscaled: the outlier is in view
    tab.page.locator("input.log-y").check()
    tab.wait(f"() => {plot}._fullLayout.yaxis.type === 'log'")

    # RELATIVE: wall time minus the series' first wall; the second batch came 3 minutes later.
    tab.page.locator("select.x-axis").select_option("relative")
    tab.wait(f"() => {plot}.layout.xaxis.title.text === 'relative (min)'")
    x = traces(tab, "train/loss")[0]["x"]
    assert x[0] == 0 and x[19] == 0 and x[20] == pytest.approx(3.0) and x[-1] == pytest.approx(3.0)
    # WALL: a date axis at the points' wall times.
    tab.page.locator("select.x-axis").select_option("wall")
    tab.wait(f"() => {plot}._fullLayout.xaxis.type === 'date'")
    x = traces(tab, "train/loss")[0]["x"]
    assert x[0] == pytest.approx(T0 * 1000) and x[-1] == pytest.approx((T0 + 180) * 1000)
    assert tab.errors == []


def test_live_points_and_new_runs(server, tab):
    line = {"op": "set", "env": "sc_live", "win": "loss", "kind": "line", "opts": {"title": "train/loss"},
            "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, 0.5]}]}
    http(server, "POST", "/api/v1/events", {"events": [line]})
    open_scalars(tab, server, "sc_live")
    append = {**line, "op": "update", "mode": "append", "traces": [{"name": None, "x": [2.0, 3.0], "y": [0.25, 0.2]}]}
    http(server, "POST", "/api/v1/events", {"events": [append]})
    tab.wait(f"() => {CARD.format(tag='train/loss')}.data[0].y.length === 4")
    tr = traces(tab, "train/loss")
    assert same(tr[1]["y"], tb_smooth([1.0, 0.5, 0.25, 0.2], 0.6))
    # A new tag in the shown run appears in its section.
    http(server, "POST", "/api/v1/events", {"events": [{**line, "win": "lr", "opts": {"title": "opt/lr"}}]})
    tab.wait(f"() => !!{CARD.format(tag='opt/lr')}")
    time.sleep(0.2)
    assert tab.js("() => [...document.querySelectorAll('.sc-section')].map(s => s.dataset.section)") == ["opt", "train"]
    assert tab.errors == []


def test_custom_scalars_layout_adds_multiline_and_margin_charts(server, tab):
    x = [0.0, 1.0, 2.0]
    events = [{"op": "set", "env": "sc_cs", "win": w, "kind": "line", "t": T0, "opts": {"title": w},
               "traces": [{"name": None, "x": x, "y": ys}]}
              for w, ys in (("loss/train", [3, 2, 1]), ("loss/val", [4, 3, 2]), ("acc/train", [0, 1, 1]),
                            ("m/mid", [1, 1, 1]), ("m/lo", [0, 0, 0]), ("m/hi", [2, 2, 2]))]
    events.append({"op": "custom_scalars", "env": "sc_cs", "layout": {
        "Losses": {"both": ["Multiline", ["loss/.*", "nope[("]]},  # an invalid regex matches nothing
        "Bands": {"mid": ["Margin", ["m/mid", "m/lo", "m/hi"]]}}})
    assert http(server, "POST", "/api/v1/events", {"events": events})["errors"] == []
    tab.open(f"{server.url}/scalars?envs=sc_cs")
    wait_traces(tab, "custom: Losses/both", 4)  # loss/train and loss/val (raw + smoothed each), not acc/train
    labels = tab.js(f"() => {CARD.format(tag='custom: Losses/both')}.data.map(s => s.name)")
    assert [n for n in labels if "(raw)" not in n] == ["sc_cs · loss/train", "sc_cs · loss/val"]
    wait_traces(tab, "custom: Bands/mid", 6)
    margin = tab.js(f"() => {CARD.format(tag='custom: Bands/mid')}.data.filter(s => s.meta.role === 'smoothed')"
                    ".map(s => s.name)")
    assert margin == ["sc_cs · value", "sc_cs · lower", "sc_cs · upper"]
    sections = tab.js("() => [...document.querySelectorAll('.sc-section')].map(s => s.dataset.section)")
    assert {"custom: Bands", "custom: Losses", "loss", "m"} <= set(sections)
    assert tab.errors == []
