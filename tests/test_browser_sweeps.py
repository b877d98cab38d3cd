"""A sweep in Chromium (real server, runs logged in bulk through the HTTP API): Scalars and Compare take every run,
one read per chart, live updates fetch only new points; each run keeps one colour from its name on every page and
after a reload, a user's colour sticks; add_scalars keys get distinct colours; Compare keys panes by (win, title)."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator

import pytest

from helpers.browser import SMOOTHED_LINES, Tab, http
from helpers.sweep import log_sweep

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
RUNS = [f"sweep-lr{i % 7}-s{i:03d}" for i in range(210)]
STEPS = 400  # 84,000 points a tag: more than a chart's shared budget (24,000)
CARD = "document.querySelector('[data-tag=\"{tag}\"] .js-plotly-plot')"
# [pixels painted, a checksum of where] on the lines canvas of the chart of tag t (a sweep's: canvas_lines.js).
PAINTED = ("t => { const c = document.querySelector(`[data-tag=\"${t}\"] canvas.run-lines`); if (!c) return [0, 0];"
           " const a = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0, sum = 0;"
           " for (let i = 3; i < a.length; i += 4) if (a[i]) { n += 1; sum = (sum * 31 + i) % 1000000007; }"
           " return [n, sum]; }")
# [run, colour, dash, name] of each smoothed line of the chart of tag t.
SMOOTHED = f"t => {SMOOTHED_LINES}(document.querySelector(`[data-tag=\"${{t}}\"] .js-plotly-plot`))"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("sweeps") / "paneboard.db").start()
    log_sweep(srv, RUNS, STEPS)
    keys = [{"op": "set", "env": env, "win": "losses", "kind": "line", "opts": {"title": "losses"},
             "traces": [{"name": k, "x": [0.0, 1.0, 2.0], "y": [v, v / 2, v / 3]} for k, v in (("train", 1.0),
                        ("val", 2.0), ("test", 3.0))]} for env in ("keys_a", "keys_b")]
    panes = [{"op": "set", "env": env, "win": win, "kind": "line", "opts": {"title": "loss"},
              "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, 0.5]}]}
             for env, win in (("cmp_a", "loss_iter"), ("cmp_a", "loss_epoch"), ("cmp_b", "loss_iter"))]
    # The system hook's charts (win sys_*), a title with "/" inside a word group, and user tags.
    hooks = [{"op": "set", "env": "hooked", "win": win, "kind": "line", "opts": {"title": title},
              "traces": [{"name": None, "x": [0.0, 1.0, 2.0], "y": [1.0, 3.0, 2.0]}]}
             for win, title in (("sys_disk", "disk I/O (MiB/s)"), ("sys_cpu", "cpu (%)"), ("loss", "train/loss"),
                                ("zz", "zeta/metric"), ("io", "net I/O"))]
    # Twelve sections of one chart each: most of them far below the fold.
    tall = [{"op": "set", "env": env, "win": f"m{k}", "kind": "line", "opts": {"title": f"s{k:02d}/metric"},
             "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, float(k)]}]} for k in range(12)
            for env in ("tall_a", "tall_b")]
    assert http(srv, "POST", "/api/v1/events", {"events": keys + panes + hooks + tall})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def reads(tab: Tab, path: str) -> list[str]:
    out: list[str] = []
    tab.page.on("request", lambda r: out.append(r.url) if path in r.url else None)
    return out


def sweep_url(server) -> str:
    return f"{server.url}/scalars?envs={','.join(RUNS)}"


def wait_runs(tab: Tab, tag: str, n: int) -> None:
    """Until the chart of `tag` has drawn n series (runs, packed or not)."""
    tab.wait(f"() => {{ const c = document.querySelector('[data-tag=\"{tag}\"]'); return !!c && "
             f"Number(c.dataset.series) === {n}; }}")


def test_scalars_draws_every_run_of_a_sweep_in_one_read_per_chart(server, tab):
    charts = reads(tab, "/api/v1/chart?")
    tab.page.set_viewport_size({"width": 1600, "height": 1000})
    tab.open(sweep_url(server))
    wait_runs(tab, "train/loss", len(RUNS))
    assert tab.js("() => document.getElementById('notice').hidden")  # no cap, no banner
    assert sum("title=train%2Floss" in u for u in charts) == 1  # every run's series in one read
    assert not any("after=" in u for u in charts)
    # Two charts a row at 1600 px; the spike-keeping budget is shared, so the chart holds far fewer than all points.
    widths = tab.js("() => [...document.querySelectorAll('.sc-card')].slice(0, 2).map(c => c.getBoundingClientRect())"
                    ".map(r => [Math.round(r.top), Math.round(r.width)])")
    assert widths[0][0] == widths[1][0] and widths[0][1] > 500
    held = tab.js(f"() => Number({CARD.format(tag='train/loss')}.closest('.sc-card').dataset.points)")
    assert 0 < held <= 24_000 + 2 * len(RUNS) < len(RUNS) * STEPS
    # Packed: the lines painted on a canvas as a path per (colour, dash), under Plotly's axes (one invisible trace).
    assert tab.js(f"() => {CARD.format(tag='train/loss')}.data.length") == 1
    paths = tab.js(f"() => {CARD.format(tag='train/loss')}.data[0].meta.paths")
    assert len(paths) <= 30 and sorted(e for p in paths for e in p["envs"]) == sorted(RUNS)
    assert tab.js(PAINTED, "train/loss")[0] > 5_000  # pixels: hundreds of lines across the plot area
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "sweep_scalars_light.png"))
        tab.page.emulate_media(color_scheme="dark")
        tab.page.screenshot(path=os.path.join(SHOTS, "sweep_scalars_dark.png"))
        tab.page.emulate_media(color_scheme="light")
    # A slider drag (20 changes at once) redraws once with the last value, not 20 times.
    drawn = "() => Number(document.querySelector('[data-tag=\"train/loss\"]').dataset.drawn)"
    before = tab.js(drawn)
    painted = tab.js(PAINTED, "train/loss")
    tab.js("() => { const s = document.querySelector('input.smoothing'); for (let i = 0; i < 20; i++) {"
           " s.value = String(0.5 + i / 50); s.dispatchEvent(new Event('input')); } }")
    tab.wait(f"() => {drawn}() > {before} && "
             "document.querySelector('[data-tag=\"train/loss\"]').dataset.smoothing === '0.88'")
    assert tab.js(drawn) - before <= 2
    after = tab.js(PAINTED, "train/loss")
    assert after[1] != painted[1], (painted, after)  # smoother lines cover other pixels
    # Unpicking runs draws from what the page holds: no new read, and one draw (the update that follows the
    # search finds nothing new, so it does not draw the sweep's charts a second time).
    before = len(charts)
    drawn_before = tab.js(drawn)
    tab.page.locator("input.run-filter").fill("s00[0-9]$")
    wait_runs(tab, "train/loss", 10)
    tab.wait("() => document.body.dataset.scalarsUpdated === '10'")
    assert len(charts) == before
    assert tab.js(drawn) == drawn_before + 1
    # A live append to one run reads only that run's new points.
    http(server, "POST", "/api/v1/events", {"events": [{"op": "update", "env": RUNS[3], "win": "train_loss",
         "kind": "line", "mode": "append", "traces": [{"name": None, "x": [float(STEPS)], "y": [0.5]}]}]})
    tab.wait(f"() => {CARD.format(tag='train/loss')}.data.some(s => s.meta.env === '{RUNS[3]}' && "
             f"s.x[s.x.length - 1] === {STEPS})")
    live = [u for u in charts[before:] if "title=train%2Floss" in u]
    assert live and all("after=" in u and f"envs={RUNS[3]}&" in u for u in live), live
    assert tab.errors == []


def test_a_sweep_chart_zooms_and_downloads_with_its_canvas_lines(server, tab):
    from PIL import Image

    tab.open(sweep_url(server))
    wait_runs(tab, "train/loss", len(RUNS))
    # A zoom is Plotly's own redraw: the canvas follows its new axes, clipped to the plot area.
    whole = tab.js(PAINTED, "train/loss")
    tab.js(f"() => window.Plotly.relayout({CARD.format(tag='train/loss')}, {{'xaxis.range': [100, 150]}})")
    tab.wait(f"([t, sum]) => ({PAINTED})(t)[1] !== sum", ["train/loss", whole[1]])
    assert tab.js(PAINTED, "train/loss")[0] > 5_000
    with tab.page.expect_download() as dl:
        tab.page.locator('[data-tag="train/loss"] .sc-download').click()
    assert dl.value.suggested_filename == "train_loss.png"
    picture = Image.open(dl.value.path()).convert("RGB")
    # Coloured pixels: the runs' lines (axes, grid and labels are grey); Plotly's picture alone has none.
    coloured = sum(1 for r, g, b in picture.getdata() if max(r, g, b) - min(r, g, b) > 60)
    assert coloured > 5_000, coloured
    assert tab.errors == []


def test_run_colours_come_from_names_and_stay_across_pages_and_reloads(server, tab):
    tab.open(sweep_url(server))
    wait_runs(tab, "train/loss", len(RUNS))
    smoothed = tab.js(SMOOTHED, "train/loss")
    colours = {env: colour for env, colour, _, _ in smoothed}
    assert len(set(colours.values())) >= 20  # a palette of at least 20, spread by the name hash
    expect = tab.js("names => import('/static/js/run_colors.js').then(m => names.map(m.hashedColor))", RUNS)
    assert [colours[r] for r in RUNS] == expect  # derived from the name alone, not the list position
    assert {c for _, c, _, _ in tab.js(SMOOTHED, "val/loss")} == set(colours.values())  # every chart alike
    pick = RUNS[:3]
    # Compare: the same colours for the same runs; a subset does not shift them.
    tab.open(f"{server.url}/compare?envs={','.join(pick)}")
    tab.wait("() => { const d = document.querySelector('[data-title=\"train/loss\"] .js-plotly-plot');"
             " return !!(d && d.data && d.data.length === 3); }")
    got = tab.js("() => document.querySelector('[data-title=\"train/loss\"] .js-plotly-plot').data"
                 ".map(s => [s.meta.env, s.line.color])")
    assert got == [[r, colours[r]] for r in pick]
    # The runs table shows the same swatch.
    tab.open(f"{server.url}/runs?q=" + urllib.parse.quote(f'name ~ "{pick[0]}$"'))
    tab.wait(f"() => !!document.querySelector('tr[data-env=\"{pick[0]}\"] .run-chip')")
    chip = tab.js(f"() => document.querySelector('tr[data-env=\"{pick[0]}\"] .run-chip').style.background")
    assert chip.replace(" ", "") == _rgb(colours[pick[0]])

    # A user's colour: picked on Scalars, kept after a reload and on Compare.
    tab.open(f"{server.url}/scalars?envs={','.join(pick)}")
    wait_runs(tab, "train/loss", 3)
    tab.page.locator(f'.sc-run[data-run="{pick[1]}"] .run-color').click()
    tab.page.locator(f'.sc-run[data-run="{pick[1]}"] input.run-color-input').fill("#123456")
    tab.wait(f"() => {CARD.format(tag='train/loss')}.data.some(s => s.meta.env === '{pick[1]}' && "
             "s.line.color === '#123456')")
    tab.page.reload()
    tab.wait(f"() => {{ const d = {CARD.format(tag='train/loss')}; return !!(d && d.data && d.data.length === 6); }}")
    assert dict((e, c) for e, c, _, _ in tab.js(SMOOTHED, "train/loss"))[pick[1]] == "#123456"
    tab.open(f"{server.url}/compare?envs={','.join(pick)}")
    tab.wait("() => { const d = document.querySelector('[data-title=\"train/loss\"] .js-plotly-plot');"
             " return !!(d && d.data && d.data.some(s => s.line.color === '#123456')); }")
    assert tab.errors == []


def _rgb(hex_colour: str) -> str:
    n = int(hex_colour[1:], 16)
    return f"rgb({n >> 16 & 255},{n >> 8 & 255},{n & 255})"


def test_colours_survive_a_browser_that_refuses_storage(server, browser):
    context = browser.new_context()
    # A browser (or frame) that refuses localStorage: reading it throws.
    context.add_init_script("Object.defineProperty(window, 'localStorage', { get() { throw new DOMException("
                            "'denied', 'SecurityError'); } });")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        t = Tab(page)
        t.open(f"{server.url}/scalars?envs=keys_a,keys_b")
        t.wait(f"() => {{ const d = {CARD.format(tag='losses')}; return !!(d && d.data && d.data.length === 12); }}")
        page.locator('.sc-run[data-run="keys_a"] .run-color').click()
        page.locator('.sc-run[data-run="keys_a"] input.run-color-input').fill("#654321")
        t.wait(f"() => {CARD.format(tag='losses')}.data.some(s => s.line.color === '#654321')")  # kept for the page
        assert errors == []
    finally:
        context.close()


def test_series_of_one_run_by_dash_and_add_scalars_keys_by_colour(server, tab):
    tab.open(f"{server.url}/scalars?envs=keys_a,keys_b")
    tab.wait(f"() => {{ const d = {CARD.format(tag='losses')}; return !!(d && d.data && d.data.length === 12); }}")
    both = tab.js(SMOOTHED, "losses")
    if SHOTS:
        tab.page.set_viewport_size({"width": 1600, "height": 700})
        tab.page.screenshot(path=os.path.join(SHOTS, "keys_dashes.png"))
    for env in ("keys_a", "keys_b"):
        mine = [s for s in both if s[0] == env]
        assert len({c for _, c, _, _ in mine}) == 1  # one run, one colour ...
        assert [d for _, _, d, _ in mine] == ["solid", "dash", "dot"]  # ... its keys by dash
        assert [n for _, _, _, n in mine] == [f"{env}/train", f"{env}/val", f"{env}/test"]
    tab.page.locator('.sc-run[data-run="keys_b"] input.run-pick').uncheck()
    tab.wait(f"() => {CARD.format(tag='losses')}.data.length === 6")
    one = tab.js(SMOOTHED, "losses")
    assert len({c for _, c, _, _ in one}) == 3  # a lone run's add_scalars keys: three colours
    assert tab.errors == []


def test_user_metrics_first_hook_groups_last_and_titles_kept(server, tab):
    tab.page.set_viewport_size({"width": 1600, "height": 1000})
    tab.open(f"{server.url}/scalars?envs=hooked")
    tab.wait("() => document.querySelectorAll('.sc-card').length === 5")
    sections = tab.js("() => [...document.querySelectorAll('.sc-section')].map(s => [s.dataset.section, "
                      "[...s.querySelectorAll('.sc-card')].map(c => c.dataset.tag)])")
    assert sections == [["net I/O", ["net I/O"]], ["train", ["train/loss"]], ["zeta", ["zeta/metric"]],
                        ["system", ["cpu (%)", "disk I/O (MiB/s)"]]]
    # The legend sits outside the plot area (right of a wide chart); the robust range keeps single points inside.
    plot = CARD.format(tag="train/loss")
    tab.wait(f"() => !!({plot} && {plot}._fullLayout)")
    assert tab.js(f"() => {plot}._fullLayout.legend.x") > 1
    lo, hi = tab.js(f"() => {plot}._fullLayout.yaxis.range")
    assert lo < 1.0 and hi > 3.0
    assert tab.errors == []


def test_charts_below_the_fold_are_read_when_scrolled_to(server, tab):
    charts = reads(tab, "/api/v1/chart?")
    tab.open(f"{server.url}/scalars?envs=tall_a,tall_b")
    tab.wait("() => document.querySelectorAll('.sc-card').length === 12")
    wait_runs(tab, "s00/metric", 2)
    first = sorted(urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)["title"][0] for u in charts)
    assert "s00/metric" in first and "s11/metric" not in first and len(first) < 8, first
    assert tab.js("() => !document.querySelector('[data-tag=\"s11/metric\"] .js-plotly-plot')")
    tab.js("() => document.querySelector('[data-tag=\"s11/metric\"]').scrollIntoView()")
    wait_runs(tab, "s11/metric", 2)
    assert sum("title=s11%2Fmetric" in u for u in charts) == 1
    assert tab.errors == []


def test_compare_keys_panes_by_win_and_title(server, tab):
    tab.open(f"{server.url}/compare?envs=cmp_a,cmp_b")
    tab.wait("() => document.querySelectorAll('.compare-grid .card[data-title=\"loss\"] .js-plotly-plot').length === 2")
    cards = tab.js("() => [...document.querySelectorAll('.compare-grid .card')].map(c => [c.dataset.paneWin, "
                   "c.querySelector('.js-plotly-plot').data.map(s => s.meta.env)])")
    assert sorted(cards) == [["loss_epoch", ["cmp_a"]], ["loss_iter", ["cmp_a", "cmp_b"]]]
    infos = tab.js("() => [...document.querySelectorAll('.compare-grid .card')].map(c => [c.dataset.paneWin, "
                   "c.querySelector('.card-info').textContent])")
    assert dict(infos)["loss_epoch"].endswith("1 run") and dict(infos)["loss_iter"].endswith("2 runs")
    assert tab.errors == []


def test_compare_takes_a_sweep_and_a_narrow_screen(server, tab):
    tab.page.set_viewport_size({"width": 390, "height": 844})
    tab.open(f"{server.url}/compare?envs={','.join(RUNS)}")
    tab.js("() => document.querySelector('[data-title=\"train/loss\"]').scrollIntoView()")  # read when in view
    tab.wait(f"() => Number(document.querySelector('[data-title=\"train/loss\"]').dataset.series) === {len(RUNS)}")
    assert tab.js("() => document.getElementById('notice').hidden")
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "sweep_compare_390.png"))
        tab.open(sweep_url(server))
        wait_runs(tab, "train/loss", len(RUNS))
        tab.page.screenshot(path=os.path.join(SHOTS, "sweep_scalars_390.png"))
    assert tab.errors == []


def test_compare_leaves_out_a_run_that_is_gone_and_says_so_once(server, tab):
    charts = reads(tab, "/api/v1/charts?")
    tab.open(f"{server.url}/compare?envs=cmp_a,ghost_run")
    tab.wait("() => document.querySelectorAll('.compare-grid .card .js-plotly-plot').length === 2")
    notice = tab.page.locator("#notice")
    assert notice.is_visible() and "ghost_run" in notice.inner_text() and "left out" in notice.inner_text()
    asked = len(charts)
    # A live change of the run shown reads its new points; the missing run is not asked for again.
    http(server, "POST", "/api/v1/events", {"events": [{"op": "update", "env": "cmp_a", "win": "loss_iter",
         "kind": "line", "mode": "append", "traces": [{"name": None, "x": [2.0], "y": [0.25]}]}]})
    tab.wait("() => [...document.querySelectorAll('.compare-grid .card')].some(c => c.dataset.paneWin === 'loss_iter'"
             " && c.querySelector('.js-plotly-plot').data[0].x.length === 3)")
    assert all("ghost_run" not in u for u in charts[asked:])
    # The only console errors are the browser's logs of the refused reads (404).
    assert all("404" in e for e in tab.errors), tab.errors
