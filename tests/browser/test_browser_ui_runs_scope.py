"""Issue 42 items 6 and 2 in Chromium against a real server: the home page is the runs table with projects, and the
runs query (or a ticked set, saved as a short selection) scopes Scalars, Compare and HParams."""

from __future__ import annotations

import re
import urllib.parse

from helpers.browser import http
from helpers.hparams_sweep import sweep_events

ROWS = "() => [...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => r.dataset.env)"
HEADS = "() => [...document.querySelectorAll('.runs-table thead th[data-key]')].map(t => t.dataset.key)"
SWEEP_Q = 'name ~ "^sweep/"'


def seed(server, n: int = 12) -> None:
    """A sweep project (config + loss), a second project and a run of no project, with other config keys."""
    events = sweep_events(n, prefix="sweep/t")
    for env, cfg in (("mnist/a", {"aaa_alpha": 1, "hidden": 32}), ("mnist/b", {"aaa_alpha": 2, "hidden": 64}),
                     ("scratch", {"aaa_beta": "x"})):
        events += [{"op": "run_config", "env": env, "config": cfg},
                   {"op": "set", "env": env, "win": "acc", "kind": "line", "opts": {"title": "acc"},
                    "traces": [{"name": "acc", "x": [0, 1], "y": [0.5, 0.7]}]}]
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]


def test_home_is_the_runs_table_with_projects_and_opens_the_query_in_scalars_and_hparams(server, tab):
    seed(server)
    tab.open(server.url + "/")
    tab.wait("() => document.body.dataset.runsShown === '15'")
    assert tab.page.inner_text("#crumbs").strip() == "runs"
    projects = tab.js("() => [...document.querySelectorAll('.runs-projects .project')].map(a => a.dataset.project)")
    assert projects == ["all runs", "mnist", "sweep", "(no project)"]
    # Visdom's env list stays one click away under its own word.
    assert tab.page.get_attribute("a.envs-link", "href").endswith("/envs")
    tab.page.click(".runs-projects .project[data-project='sweep']")
    tab.wait("() => document.body.dataset.runsShown === '12'")
    assert tab.page.input_value(".runs-query") == SWEEP_Q
    # The columns are the sweep's: its metric and its varying hparams, not the other runs' alphabetical keys.
    heads = tab.js(HEADS)
    assert "series:loss.best" in heads and "config:lr" in heads and "config:aaa_alpha" not in heads
    assert heads.index("series:loss.best") < heads.index("config:lr")
    # Open the query in Scalars: the URL carries the query, the selector holds exactly the sweep.
    tab.page.click(".scalars-btn")
    tab.page.wait_for_url(re.compile(r"/scalars\?q="))
    tab.wait("() => document.body.dataset.ready === '1' && document.querySelectorAll('.sc-run').length === 12")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(tab.page.url).query)["q"] == [SWEEP_Q]
    assert tab.page.input_value(".scope-query") == SWEEP_Q
    assert "12 runs matching" in tab.page.inner_text(".scope-count")
    assert all(r.startswith("sweep/") for r in tab.js("() => [...document.querySelectorAll('.sc-run')].map(r => r.dataset.run)"))
    # And in HParams: the rows, the axes and the importance are the sweep's only.
    tab.page.go_back()
    tab.wait("() => document.body.dataset.runsShown === '12'")
    tab.page.click(".hparams-btn")
    tab.page.wait_for_url(re.compile(r"/hparams\?q="))
    tab.wait("() => document.querySelectorAll('.pc-lines path').length === 12")
    assert tab.js("() => document.querySelector('.hp-metric').value") == "loss"
    tab.wait("() => !!document.querySelector('.hp-imp-table')")
    assert "12 runs with a value" in tab.page.inner_text(".hp-imp-foot")
    assert tab.errors == []


def test_ticked_runs_become_a_short_saved_selection_in_compare(server, tab):
    seed(server, 40)
    tab.open(server.url + "/runs?q=" + urllib.parse.quote(SWEEP_Q))
    tab.wait("() => document.body.dataset.runsShown === '40'")
    tab.page.click(".runs-table thead th.col-pick input")  # every run shown: 40 names
    tab.page.click(".compare-btn")
    tab.page.wait_for_url(re.compile(r"/compare\?sel=[0-9a-f]{10}$"))
    assert len(tab.page.url) < len(server.url) + 40  # not a URL of 40 names
    tab.wait("() => document.body.dataset.ready === '1' && document.querySelectorAll('.sc-run').length === 40")
    assert "40 runs (selection" in tab.page.inner_text(".scope-count")
    # The same runs get the same id; the API answers who they are.
    sel = urllib.parse.parse_qs(urllib.parse.urlsplit(tab.page.url).query)["sel"][0]
    assert len(http(server, "GET", f"/api/v1/selections/{sel}")["envs"]) == 40
    assert tab.errors == []


def test_a_bad_query_on_scalars_says_where_as_runs_does_and_an_unknown_selection_is_named(server, tab):
    seed(server, 3)
    tab.open(server.url + "/scalars?q=" + urllib.parse.quote("loss.min % 0.5"))
    tab.wait("() => !!document.querySelector('.scope-error')")
    assert "position 9" in tab.page.inner_text(".scope-error")
    assert tab.page.get_attribute(".scope-query", "aria-invalid") == "true"
    assert tab.js("() => document.querySelectorAll('.sc-run').length") == 0
    tab.page.goto(server.url + "/hparams?sel=0123456789")
    tab.wait("() => !!document.querySelector('.scope-error')")
    assert "no saved selection 0123456789" in tab.page.inner_text(".scope-error")


def test_the_run_selector_search_takes_a_runs_query_with_its_errors(server, tab):
    seed(server, 12)
    tab.open(server.url + "/scalars?q=" + urllib.parse.quote(SWEEP_Q))
    tab.wait("() => document.querySelectorAll('.sc-run').length === 12")
    shown = "() => [...document.querySelectorAll('.sc-run')].filter(r => !r.hidden).map(r => r.dataset.run)"
    # A query in the search box is the server's answer: the runs with a small lr, whatever their names.
    lr = {f"sweep/t{i:04d}": c["lr"] for i, c in enumerate(e["config"] for e in sweep_events(12, prefix="sweep/t")
                                                             if e["op"] == "run_config")}
    want = sorted(env for env, v in lr.items() if v < 0.001)
    assert 0 < len(want) < 12
    tab.page.fill(".run-filter", "lr < 0.001")
    tab.wait(f"() => ({shown})().sort().join() === {','.join(want)!r}")
    assert f"{len(want)} of 12 shown" in tab.page.inner_text(".sc-label .runs-count")
    # A malformed one marks the box, says where, and shows no run; a regex still searches names.
    tab.page.fill(".run-filter", "lr < < 1")
    tab.wait("() => document.querySelector('.run-filter').getAttribute('aria-invalid') === 'true'")
    assert "position" in tab.page.get_attribute(".run-filter", "title")
    assert tab.js(shown) == []
    tab.page.fill(".run-filter", "t000[12]$")
    tab.wait(f"() => ({shown})().sort().join() === 'sweep/t0001,sweep/t0002'")
    tab.wait("() => !document.querySelector('.run-filter').hasAttribute('aria-invalid')")
    assert [e for e in tab.errors if "400" not in e] == []
