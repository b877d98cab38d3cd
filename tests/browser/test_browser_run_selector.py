"""The run selector in Chromium (real server, a 220-run sweep logged in bulk): search, "only these", pins, a baseline
with Δ% in the tooltip, a tooltip of the 5 runs nearest the cursor sorted by value, and the hovered run highlighted
on every chart."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from helpers.browser import Tab
from helpers.sweep import log_sweep

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
RUNS = [f"sel-lr{i % 7}-s{i:03d}" for i in range(220)]
STEPS = 200
PLOT = "document.querySelector('[data-tag=\"{tag}\"] .js-plotly-plot')"
ROWS = "() => [...document.querySelectorAll('.run-tip-row')].map(r => ({env: r.dataset.env, cls: r.className, " \
       "val: Number(r.querySelector('.tip-val').textContent), delta: r.querySelector('.tip-delta').textContent}))"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("selector") / "paneboard.db").start()
    log_sweep(srv, RUNS, STEPS)
    try:
        yield srv
    finally:
        srv.stop()


def series(tab: Tab, tag: str) -> int:
    return tab.js(f"() => Number((document.querySelector('[data-tag=\"{tag}\"]') || {{dataset: {{}}}}).dataset.series)")


def wait_series(tab: Tab, tag: str, n: int) -> None:
    tab.wait(f"() => {{ const c = document.querySelector('[data-tag=\"{tag}\"]'); return !!c && "
             f"Number(c.dataset.series) === {n}; }}")


def hover(tab: Tab, tag: str, step: float, frac: float = 0.5) -> None:
    """Move the real mouse over `step` of the chart of `tag`, at `frac` of the plot area's height."""
    x, y = tab.js(f"""() => {{ const d = {PLOT.format(tag=tag)}; const xa = d._fullLayout.xaxis;
      const r = d.querySelector('.nsewdrag').getBoundingClientRect();
      return [r.left + xa.c2p({step}), r.top + r.height * {frac}]; }}""")
    tab.page.mouse.move(x - 3, y)
    tab.page.mouse.move(x, y)


@pytest.fixture
def sweep(server, tab: Tab) -> Tab:
    tab.page.set_viewport_size({"width": 1600, "height": 1000})
    tab.open(f"{server.url}/scalars")
    wait_series(tab, "train/loss", len(RUNS))
    return tab


def test_search_and_only_these_filter_the_charts(sweep):
    t = sweep
    t.page.locator("input.run-filter").fill("s00[0-9]$")
    wait_series(t, "train/loss", 10)
    assert "10 of 220 shown" in t.js("() => document.querySelector('.runs-count').textContent")
    # "only these": the matching runs are the picked ones, so clearing the search keeps just them.
    t.page.locator(".runs-only").click()
    t.page.locator("input.run-filter").fill("")
    wait_series(t, "train/loss", 10)
    assert t.js("() => document.querySelectorAll('.run-pick:checked').length") == 10
    # One row's "only" and its show/hide box.
    t.page.locator('.sc-run[data-run="sel-lr3-s003"]').hover()
    t.page.locator('.sc-run[data-run="sel-lr3-s003"] .run-only').click()
    wait_series(t, "train/loss", 1)
    t.page.locator('.sc-run[data-run="sel-lr4-s004"] input.run-pick').check()
    wait_series(t, "train/loss", 2)
    assert not t.errors, t.errors


def test_tooltip_lists_the_five_nearest_sorted_with_pins_and_baseline(sweep):
    t = sweep
    hover(t, "train/loss", STEPS / 2, 0.6)
    t.wait("() => document.querySelectorAll('.run-tip-row').length === 5")
    rows = t.js(ROWS)
    vals = [r["val"] for r in rows]
    assert vals == sorted(vals, reverse=True)  # sorted by value
    assert sum("near" in r["cls"] for r in rows) == 1
    assert float(t.js("() => document.body.dataset.tipMs")) <= 50
    # Pin a run far from the cursor and make another the baseline: both join the five, with Δ% to the baseline.
    pin, base = "sel-lr0-s000", "sel-lr1-s001"
    for run, act in ((pin, ".run-pin"), (base, ".run-base")):
        t.page.locator(f'.sc-run[data-run="{run}"]').hover()
        t.page.locator(f'.sc-run[data-run="{run}"] {act}').click()
    assert t.js("() => [...document.querySelectorAll('.sc-run')].slice(0, 2).map(r => r.dataset.run)") == [pin, base]
    hover(t, "train/loss", STEPS / 2, 0.6)
    t.wait(f"() => document.querySelector('.run-tip-row.baseline[data-env=\"{base}\"]') !== null")
    rows = t.js(ROWS)
    assert any(r["env"] == pin and "pinned" in r["cls"] for r in rows)
    others = [r for r in rows if r["env"] != base]
    assert others and all(r["delta"].endswith("%") for r in others)
    b = next(r["val"] for r in rows if r["env"] == base)
    for r in others:
        assert float(r["delta"].rstrip("%")) == pytest.approx((r["val"] - b) / abs(b) * 100, abs=0.6)
    # A pinned run stays drawn whatever the search.
    t.page.locator("input.run-filter").fill("s01[0-9]$")
    wait_series(t, "train/loss", 12)
    assert not t.errors, t.errors


def test_hovered_run_is_highlighted_on_every_chart(sweep):
    t = sweep
    wait_series(t, "val/loss", len(RUNS))
    hover(t, "train/loss", STEPS / 3, 0.5)
    # The hovered run is the tooltip's nearest, highlighted on every chart. Read in one frame: under load the
    # page may draw the mouse's first position before its last, and each draw moves all three together.
    t.wait("""() => { const run = document.body.dataset.hoveredRun;
        const near = document.querySelector('.run-tip-row.near');
        return !!run && !!near && near.dataset.env === run && ['train/loss', 'val/loss'].every(tag => {
          const s = document.querySelector(`[data-tag="${tag}"] svg.run-hl`);
          return s && s.dataset.env === run && s.querySelector('.run-hl-line').getAttribute('d').length > 100; }); }""")
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "selector_light.png"))
    # Hovering a row of the run list highlights that run too; leaving clears it.
    t.page.locator('.sc-run[data-run="sel-lr5-s005"]').hover()
    t.wait("() => document.body.dataset.hoveredRun === 'sel-lr5-s005'")
    t.page.mouse.move(800, 5)
    t.wait("() => document.body.dataset.hoveredRun === ''")
    if SHOTS:
        t.page.emulate_media(color_scheme="dark")
        hover(t, "train/loss", STEPS / 3, 0.5)
        t.wait("() => !!document.body.dataset.hoveredRun")
        t.page.screenshot(path=os.path.join(SHOTS, "selector_dark.png"))
        t.page.emulate_media(color_scheme="light")
        t.page.set_viewport_size({"width": 390, "height": 900})
        t.page.screenshot(path=os.path.join(SHOTS, "selector_390.png"))
        t.page.locator(".sc-side-toggle").click()
        t.page.locator('.sc-run[data-run="sel-lr0-s000"]').hover()
        t.page.screenshot(path=os.path.join(SHOTS, "selector_390_open.png"))
    assert not t.errors, t.errors


def test_compare_has_the_selector_tooltip_and_baseline(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1600, "height": 1000})
    t.open(f"{server.url}/compare?envs={','.join(RUNS)}")
    card = "document.querySelector('.compare-grid [data-title=\"train/loss\"]')"
    t.wait(f"() => {{ const c = {card}; return !!c && Number(c.dataset.series) === {len(RUNS)}; }}")
    t.page.locator(".compare-runs input.run-filter").fill("s00[0-9]$")
    t.wait(f"() => Number({card}.dataset.series) === 10")
    base = "sel-lr2-s002"
    t.page.locator(f'.sc-run[data-run="{base}"]').hover()
    t.page.locator(f'.sc-run[data-run="{base}"] .run-base').click()
    x, y = t.js(f"""() => {{ const d = {card}.querySelector('.js-plotly-plot'); const xa = d._fullLayout.xaxis;
      const r = d.querySelector('.nsewdrag').getBoundingClientRect();
      return [r.left + xa.c2p({STEPS // 2}), r.top + r.height * 0.7]; }}""")
    t.page.mouse.move(x - 3, y)
    t.page.mouse.move(x, y)
    t.wait(f"() => document.querySelector('.run-tip-row.baseline[data-env=\"{base}\"]') !== null")
    rows = t.js(ROWS)
    assert 2 <= len(rows) <= 6 and [r["val"] for r in rows] == sorted((r["val"] for r in rows), reverse=True)
    assert all(r["delta"].endswith("%") for r in rows if r["env"] != base)
    assert t.js("() => document.body.dataset.hoveredRun") in {r["env"] for r in rows}
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "selector_compare.png"))
    assert not t.errors, t.errors
