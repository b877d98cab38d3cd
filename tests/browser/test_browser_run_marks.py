"""What a user sets on a sweep and keeps (real server, Chromium, a 200-run sweep): pins and the baseline after a
reload and in saved views, on Scalars and Compare; a chosen run colour kept on the server, so another browser
draws it too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.browser import SMOOTHED_LINES, Tab, http
from helpers.sweep import log_sweep

RUNS = [f"keep-lr{i % 5}-s{i:03d}" for i in range(200)]
STEPS = 20
PIN, BASE = "keep-lr3-s123", "keep-lr0-s005"  # far apart in the list
CARD = "[data-tag=\"train/loss\"]"
MARKED = ("() => [...document.querySelectorAll('.sc-run.pinned, .sc-run.baseline')].map(r => [r.dataset.run, "
          "r.classList.contains('pinned') ? 'pinned' : 'baseline'])")


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("keep") / "paneboard.db").start()
    log_sweep(srv, RUNS, STEPS)
    try:
        yield srv
    finally:
        srv.stop()


def drawn(t: Tab, card: str, n: int) -> None:
    t.wait(f"() => {{ const c = document.querySelector('{card}'); return !!c && Number(c.dataset.series) === {n}; }}")


def mark(t: Tab, run: str, act: str) -> None:
    row = t.page.locator(f'.sc-run[data-run="{run}"]')
    row.scroll_into_view_if_needed()
    row.hover()
    row.locator(act).click()


def test_scalars_pins_and_baseline_survive_a_reload_and_a_new_visit(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1400, "height": 900})
    t.open(f"{server.url}/scalars")
    drawn(t, CARD, len(RUNS))
    mark(t, PIN, ".run-pin")
    mark(t, BASE, ".run-base")
    t.wait(f"() => new URL(location.href).searchParams.get('baseline') === '{BASE}'")
    assert t.js("() => new URL(location.href).searchParams.get('pinned')") == PIN
    t.page.reload()
    t.wait(f"() => document.querySelectorAll('.sc-run').length === {len(RUNS)}")
    assert t.js(MARKED) == [[PIN, "pinned"], [BASE, "baseline"]]  # listed first, still marked
    # A pinned run stays drawn whatever the search, after the reload too.
    t.page.locator("input.run-filter").fill("s00[0-4]$")
    drawn(t, CARD, 7)  # five matches, the pinned run and the baseline
    # A new visit without them in the URL: this browser kept them.
    t.open(f"{server.url}/scalars")
    t.wait(f"() => document.querySelectorAll('.sc-run').length === {len(RUNS)}")
    assert t.js(MARKED) == [[PIN, "pinned"], [BASE, "baseline"]]
    assert not t.errors, t.errors


def test_a_saved_scalars_view_keeps_pins_and_baseline(server, tab: Tab):
    t = tab
    t.open(f"{server.url}/scalars")
    drawn(t, CARD, len(RUNS))
    mark(t, PIN, ".run-pin")
    mark(t, BASE, ".run-base")
    t.page.once("dialog", lambda d: d.accept("marked"))
    t.page.locator(".scalars-save-view").click()
    t.wait("() => new URL(location.href).searchParams.get('view') === 'marked'")
    saved = http(server, "GET", f"/api/v1/envs/{RUNS[0]}/meta")["meta"]["views"]["marked"]["scalars"]
    assert saved["pinned"] == [PIN] and saved["baseline"] == BASE
    # Unmark both, then pick the view: they come back.
    mark(t, PIN, ".run-pin")
    mark(t, BASE, ".run-base")
    t.wait("() => document.querySelectorAll('.sc-run.pinned, .sc-run.baseline').length === 0")
    t.page.select_option(".scalars-views", "")
    t.page.select_option(".scalars-views", "marked")
    t.wait("() => document.querySelectorAll('.sc-run.pinned, .sc-run.baseline').length === 2")
    assert t.js(MARKED) == [[PIN, "pinned"], [BASE, "baseline"]]
    assert not t.errors, t.errors


def test_compare_pins_and_baseline_survive_a_reload(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1400, "height": 900})
    t.open(f"{server.url}/compare?envs={','.join(RUNS)}")
    card = ".compare-grid [data-title=\"train/loss\"]"
    drawn(t, card, len(RUNS))
    mark(t, PIN, ".run-pin")
    mark(t, BASE, ".run-base")
    t.wait(f"() => new URL(location.href).searchParams.get('baseline') === '{BASE}'")
    t.page.reload()
    drawn(t, card, len(RUNS))
    assert t.js(MARKED) == [[PIN, "pinned"], [BASE, "baseline"]]
    # The baseline is the tooltip's: hovering shows it with Δ% for the others.
    x, y = t.js(f"""() => {{ const d = document.querySelector('{card} .js-plotly-plot'); const xa = d._fullLayout.xaxis;
      const r = d.querySelector('.nsewdrag').getBoundingClientRect();
      return [r.left + xa.c2p({STEPS // 2}), r.top + r.height * 0.7]; }}""")
    t.page.mouse.move(x - 3, y)
    t.page.mouse.move(x, y)
    t.wait(f"() => document.querySelector('.run-tip-row.baseline[data-env=\"{BASE}\"]') !== null")
    t.wait(f"() => document.querySelector('.run-tip-row.pinned[data-env=\"{PIN}\"]') !== null")
    assert not t.errors, t.errors


def test_a_chosen_colour_is_kept_on_the_server_for_every_browser(server, browser, tab: Tab):
    t = tab
    run = RUNS[7]
    drawn_in = f"() => {SMOOTHED_LINES}(document.querySelector('{CARD} .js-plotly-plot'))" \
               f".some(([r, colour]) => r === '{run}' && colour === '#123456')"
    # Another browser (its own storage, empty) has the sweep open already: the colour reaches it live.
    other = browser.new_context()
    try:
        o = Tab(other.new_page())
        o.open(f"{server.url}/scalars")
        drawn(o, CARD, len(RUNS))
        t.open(f"{server.url}/scalars")
        drawn(t, CARD, len(RUNS))
        t.page.locator(f'.sc-run[data-run="{run}"] .run-color').click()
        t.page.locator(f'.sc-run[data-run="{run}"] input.run-color-input').fill("#123456")
        t.wait(drawn_in)
        t.wait(f"() => fetch('/api/v1/runs/colors').then(r => r.json()).then(j => j.colors['{run}'] === '#123456')")
        o.wait(drawn_in)
        assert o.js(f"() => document.querySelector('.sc-run[data-run=\"{run}\"] .run-color').style.background")\
            .replace(" ", "") == "rgb(18,52,86)"
        # Pages opened later (Compare, the runs table) draw it from the server.
        o.open(f"{server.url}/compare?envs={run},{RUNS[8]}")
        o.wait("() => { const d = document.querySelector('.compare-grid [data-title=\"train/loss\"] .js-plotly-plot');"
               f" return !!(d && d.data && d.data.some(s => s.meta.env === '{run}' && s.line.color === '#123456')); }}")
        assert o.js("() => localStorage.getItem('paneboard.runColors')") in (None, "{}")
        o.open(f"{server.url}/runs")
        o.wait(f"() => !!document.querySelector('tr[data-env=\"{run}\"] .run-chip')")
        assert o.js(f"() => document.querySelector('tr[data-env=\"{run}\"] .run-chip').style.background") \
            .replace(" ", "") == "rgb(18,52,86)"
    finally:
        other.close()
    # Forgotten on the server: a reload draws the name's colour again.
    http(server, "PUT", f"/api/v1/envs/{run}/color", {"color": None})
    t.page.reload()
    drawn(t, CARD, len(RUNS))
    want = t.js("r => import('/static/js/run_colors.js').then(m => m.hashedColor(r))", run)
    t.wait(f"() => {SMOOTHED_LINES}(document.querySelector('{CARD} .js-plotly-plot'))"
           f".some(([r, colour]) => r === '{run}' && colour === '{want}')")
    assert not t.errors, t.errors
