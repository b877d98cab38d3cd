"""The runs table and an env's run panel in headless Chromium against a real server: query, errors at their
position, sorting, column chooser, saved filters, selection into Compare, status badge, tags and notes editing."""

from __future__ import annotations

from helpers.browser import flushed, http

ROWS = "() => [...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => r.dataset.env)"
HEADS = "() => [...document.querySelectorAll('.runs-table thead th[data-key]')].map(t => t.dataset.key)"


def wait_rows(tab, envs):
    """Until the table shows exactly these runs, in this order (sorting and filtering fetch from the server)."""
    tab.wait(f"() => ({ROWS})().join() === {','.join(envs)!r}")


def seed(server):
    events = []
    for i, (lr, loss, tags) in enumerate([(0.001, 0.2, ["baseline"]), (0.1, 0.4, []), (0.005, 0.6, ["baseline"]),
                                          (0.2, 0.9, [])]):
        env = f"run{i}"
        events += [{"op": "run_start", "env": env, "client": f"c{i}", "provenance": {"host": "box"}},
                   {"op": "run_config", "env": env, "config": {"lr": lr, "seed": i}},
                   {"op": "run_tags", "env": env, "set": tags},
                   {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append", "name": None,
                    "traces": [{"x": [0.0, 1.0], "y": [1.0, loss]}]}]
        if i != 3:
            events.append({"op": "run_end", "env": env, "client": f"c{i}"})
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]


def test_runs_table_query_sort_columns_saved_filters_and_compare(server, tab):
    seed(server)
    tab.open(server.url + "/envs")
    tab.page.click("a.runs-link")
    tab.wait("() => document.body.dataset.runsShown === '4'")
    assert sorted(tab.js(ROWS)) == ["run0", "run1", "run2", "run3"]
    assert {"env", "status", "tags", "config:lr", "series:loss.best"} <= set(tab.js(HEADS))
    # A query filters on the server; the URL keeps it.
    tab.page.fill(".runs-query", "lr < 0.01 and tags:baseline and status:finished")
    tab.wait("() => document.body.dataset.runsShown === '2'")
    assert sorted(tab.js(ROWS)) == ["run0", "run2"]
    assert "lr+%3C+0.01" in tab.page.url or "lr%20%3C%200.01" in tab.page.url
    # A malformed one says where it went wrong and keeps the last good rows.
    tab.page.fill(".runs-query", "loss.min % 0.5")
    tab.wait("() => document.querySelector('.runs-query').getAttribute('aria-invalid') === 'true'")
    assert "position 9" in tab.page.inner_text(".runs-error")
    assert sorted(tab.js(ROWS)) == ["run0", "run2"]
    tab.page.fill(".runs-query", "loss.min < 0.5")
    tab.wait("() => document.querySelector('.runs-error').hidden && "
             "[...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => r.dataset.env).sort().join() === 'run0,run1'")
    # Sorting by a summary column, both ways.
    tab.page.fill(".runs-query", "")
    tab.wait("() => document.body.dataset.runsShown === '4'")
    tab.page.click("th[data-key='series:loss.best']")
    wait_rows(tab, ["run0", "run1", "run2", "run3"])
    tab.page.click("th[data-key='series:loss.best']")
    wait_rows(tab, ["run3", "run2", "run1", "run0"])
    # The column chooser hides a column, and the choice survives a reload.
    tab.page.click(".runs-columns summary")
    tab.page.locator(".runs-columns label", has_text="seed").locator("input").uncheck()
    assert "config:seed" not in tab.js(HEADS)
    tab.page.reload()
    tab.wait("() => document.body.dataset.runsShown === '4'")
    assert "config:seed" not in tab.js(HEADS) and "config:lr" in tab.js(HEADS)
    # Saved filters: save the query under a name, then apply it from the list.
    tab.page.fill(".runs-query", "status:running")
    tab.wait("() => document.body.dataset.runsShown === '1'")
    tab.page.once("dialog", lambda d: d.accept("live ones"))
    tab.page.click(".runs-saved summary")
    tab.page.click(".act-save-filter")
    tab.page.fill(".runs-query", "")
    tab.wait("() => document.body.dataset.runsShown === '4'")
    tab.page.click("a.saved-filter:has-text('live ones')")
    wait_rows(tab, ["run3"])
    # Ticked runs open in Compare.
    tab.page.fill(".runs-query", "tags:baseline")
    tab.wait("() => document.body.dataset.runsShown === '2'")
    for env in ("run0", "run2"):
        tab.page.check(f"tr[data-env='{env}'] td.col-pick input")
    tab.page.click(".compare-btn")
    tab.page.wait_for_url("**/compare?sel=*")  # a short saved selection, not a URL of names
    sel = tab.page.url.split("sel=")[1]
    assert sorted(http(server, "GET", f"/api/v1/selections/{sel}")["envs"]) == ["run0", "run2"]
    assert tab.errors == [e for e in tab.errors if "400" in e]  # only the malformed query's refused request


def test_ten_thousand_rows_are_windowed(server, tab):
    events = [{"op": "run_config", "env": f"r{i:05d}", "config": {"lr": i / 10_000}} for i in range(2_000)]
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]
    tab.open(server.url + "/runs")
    tab.wait("() => document.body.dataset.runsShown === '2000'")
    drawn = tab.js("() => document.querySelectorAll('.runs-table tbody tr[data-env]').length")
    assert 0 < drawn < 200  # only the rows in view and a margin are in the DOM
    tab.page.click("th[data-key='env']")
    tab.wait("() => document.querySelector('.runs-table tbody tr[data-env]').dataset.env === 'r00000'")
    tab.js("() => { const w = document.querySelector('.runs-wrap'); w.scrollTop = w.scrollHeight; }")
    tab.wait("() => [...document.querySelectorAll('.runs-table tbody tr[data-env]')].some(r => r.dataset.env === 'r01999')")
    assert tab.js("() => document.querySelectorAll('.runs-table tbody tr[data-env]').length") < 200


def test_env_page_shows_the_run_and_edits_tags_and_notes(server, tab):
    import paneboard

    c = paneboard.Client(port=server.port, env="job", config={"lr": 0.03}, tags=["first"], spool_dir=False)
    c.line(X=[0, 1], Y=[1.0, 0.5], win="loss")
    flushed(c)
    tab.open(server.env_url("job"))
    tab.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'running'")
    tab.page.click(".act-run")
    panel = tab.page.locator(".run-panel")
    assert "0.03" in panel.inner_text() and "pid" in panel.inner_text()
    tab.page.fill(".tag-input", "second")
    tab.page.press(".tag-input", "Enter")
    tab.wait("() => [...document.querySelectorAll('.run-tags .tag')].length === 2")
    assert http(server, "GET", "/api/v1/envs/job/tags")["tags"] == ["first", "second"]
    tab.page.click(".run-tags .tag-x[aria-label='remove tag first']")
    tab.wait("() => [...document.querySelectorAll('.run-tags .tag')].length === 1")
    tab.page.click(".act-edit-notes")
    tab.page.fill(".notes-input", "**tuned** <img src=x onerror=\"document.body.dataset.pwned=1\">")
    tab.page.click(".act-save-notes")
    tab.wait("() => document.querySelector('.run-notes strong')?.textContent === 'tuned'")
    assert tab.js("() => document.body.dataset.pwned") is None
    assert "onerror" not in tab.js("() => document.querySelector('.run-notes').innerHTML")
    c.close_connection(10)  # the live channel turns the badge to finished without a reload
    tab.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'finished'")
    assert tab.errors == []
