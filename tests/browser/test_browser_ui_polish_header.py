"""A run page's header in Chromium against a real server (ui-polish, issue 42 items 1 and 6): the back crumb says
"← runs" and goes home, nothing in the crumbs runs under the tools from 390 to 1600 px ("console" was cut to
"conso" at 1400 px), "repack" is "tidy layout" with a tooltip, and a run no job reported shows a dash, not "no job"."""

from __future__ import annotations

import numpy as np

from helpers.browser import flushed, http

LONG = "imagenet_resnet50_lr0.001_wd0.05_seed3_bs256"
# Every crumb that must stay whole: inside the crumbs' box, clear of every visible tool, and its text not clipped.
CLEAR = """() => {
  const crumbs = document.querySelector('.crumbs').getBoundingClientRect();
  const tools = [...document.querySelectorAll('#tools > *')].map(t => t.getBoundingClientRect()).filter(r => r.width > 0);
  const bad = [];
  for (const sel of ['.crumbs a.back', '.run-badge', '.crumb-console']) {
    const el = document.querySelector(sel), r = el.getBoundingClientRect();
    if (r.width === 0) bad.push(sel + ' hidden');
    if (r.right > crumbs.right + 0.5) bad.push(sel + ' past the crumbs');
    if (tools.some(t => t.left < r.right - 0.5 && t.right > r.left + 0.5 && t.top < r.bottom && t.bottom > r.top)) bad.push(sel + ' under a tool');
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) bad.push(sel + ' clipped');
  }
  // And the tools themselves stay in their box, clear of the theme button.
  const box = document.querySelector('#tools').getBoundingClientRect(), theme = document.querySelector('.theme-toggle').getBoundingClientRect();
  if (tools.some(t => t.right > box.right + 0.5) || (box.width > 0 && box.right > theme.left + 0.5 && box.top < theme.bottom)) bad.push('tools overflow');
  if (document.documentElement.scrollWidth > window.innerWidth + 1) bad.push('page scrolls sideways');
  return bad.length ? bad.join('; ') : 'ok';
}"""


def test_the_header_says_runs_and_nothing_overlaps_from_phone_to_desktop(make_server, open_tab):
    import paneboard

    server = make_server("header")
    c = paneboard.Client(port=server.port, env=LONG, spool_dir=False)
    c.line(X=list(range(20)), Y=list(np.exp(-np.arange(20) / 5)), win="loss", opts={"title": "loss"})
    flushed(c)
    tab = open_tab(server.env_url(LONG), width=1600)
    tab.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'running'")
    back = tab.page.locator(".crumbs a.back")
    assert back.inner_text() == "← runs" and back.get_attribute("title") == "all runs"
    assert back.get_attribute("href") == "/"
    tidy = tab.page.locator("#tools .act-repack")
    assert tidy.inner_text() == "tidy layout" and "default size" in tidy.get_attribute("title")
    header = tab.page.inner_text(".topbar")
    assert "envs" not in header and "repack" not in header, header
    # Every 10 px of a desktop's range: the console link overflowed only where the name and status just fit.
    for width in [*range(1600, 1270, -10), 1024, 800, 600, 390]:
        tab.page.set_viewport_size({"width": width, "height": 800})
        # The header folds its tools into the menu after a resize (chrome.js): wait for it to settle clear.
        tab.wait(f"() => ({CLEAR})() === 'ok'")
    # A short name keeps every tool unfolded at 1280 px (the filter narrows first), all of them clear.
    c2 = paneboard.Client(port=server.port, env="job", spool_dir=False)
    c2.line(X=[0, 1], Y=[1.0, 0.5], win="loss")
    flushed(c2)
    short = open_tab(server.env_url("job"), width=1280)
    short.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'running'")
    short.wait(f"() => ({CLEAR})() === 'ok'")
    assert short.page.locator("#tools .act-repack").is_visible() and short.js("() => document.querySelector('.topbar').dataset.crowded !== '1'")
    c2.close_connection(5)
    tab.page.click(".crumbs a.back")
    tab.page.wait_for_url(server.url + "/")
    c.close_connection(5)
    assert tab.errors == []


def test_a_run_no_job_reported_shows_a_dash_with_the_reason(make_server, open_tab):
    server = make_server("nojob")
    event = {"op": "set", "env": "imported_tb", "win": "loss", "kind": "line", "opts": {"title": "loss"},
             "traces": [{"name": None, "x": [0, 1], "y": [1.0, 0.5]}]}
    assert http(server, "POST", "/api/v1/events", {"events": [event]})["ok"]  # no Client: no run record
    tab = open_tab(server.env_url("imported_tb"), width=1600)
    tab.wait("() => document.querySelector('.run-badge .run-status')")
    badge = tab.js("() => { const b = document.querySelector('.run-badge .run-status'); return [b.textContent, b.title]; }")
    assert badge == ["—", "no job has reported to this run (an import, or logged without a Client)"], badge
    home = open_tab(server.url + "/", width=1600)
    home.wait("() => document.querySelector('.runs-table tr[data-env=\"imported_tb\"] .run-status')")
    cell = home.js("() => { const b = document.querySelector('.runs-table tr[data-env=\"imported_tb\"] .run-status');"
                   " return [b.textContent, b.title]; }")
    assert cell == badge
    assert "no job" not in tab.page.inner_text("body") and "no job" not in home.page.inner_text("body").replace(
        "no job has", "")
    assert tab.errors == [] and home.errors == []


def test_an_imported_run_says_where_it_came_from(make_server, open_tab):
    server = make_server("imported")
    record = {"op": "run_import", "env": "from_wandb", "status": "finished", "started": 1.7e9, "ended": 1.7e9 + 60,
              "provenance": {"source": "wandb", "host": "box"}, "tags": [], "notes": "", "error": None}
    line = {"op": "set", "env": "from_wandb", "win": "loss", "kind": "line", "opts": {"title": "loss"},
            "traces": [{"name": None, "x": [0, 1], "y": [1.0, 0.5]}]}
    assert http(server, "POST", "/api/v1/events", {"events": [record, line]})["ok"]
    # The listing carries the source (it used to drop it with the rest of the provenance it does not list).
    assert http(server, "GET", "/api/v1/runs")["runs"][0]["provenance"] == {"host": "box", "source": "wandb"}
    home = open_tab(server.url + "/", width=1600)
    pill = "document.querySelector('.runs-table tr[data-env=\"from_wandb\"] .run-status')"
    home.wait(f"() => !!{pill}")
    assert home.js(f"() => [{pill}.textContent, {pill}.title]") == ["finished", "run finished · imported from wandb"]
    tab = open_tab(server.env_url("from_wandb"), width=1600)
    tab.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'finished'")
    assert tab.js("() => document.querySelector('.run-badge .run-status').title") == "run finished · imported from wandb"
    console = open_tab(server.url + "/console/from_wandb", width=1600)
    console.wait("() => document.querySelector('.run-badge .run-status')?.title === 'run finished · imported from wandb'")
    assert home.errors == [] and tab.errors == [] and console.errors == []
