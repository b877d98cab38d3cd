"""The home page's runs table in Chromium against a real server (ui-polish, issue 42 item 2): nested config shows
as dotted columns (model.depth, model.act) named as the runs query names them, not as JSON strings; such a column
sorts by its value and the same name filters in the query box."""

from __future__ import annotations

from helpers.browser import http

HEADS = "() => [...document.querySelectorAll('.runs-table thead th[data-key]')].map(t => t.dataset.key)"
ROWS = "() => [...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => r.dataset.env)"


def configured(env: str, config: dict) -> list[dict]:
    return [{"op": "run_config", "env": env, "config": config},
            {"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
             "traces": [{"name": "loss", "x": [0, 1], "y": [1.0, 0.5]}]}]


def test_nested_config_shows_as_dotted_columns_that_sort_and_query(make_server, open_tab):
    server = make_server("nested")
    events = configured("deep", {"lr": 0.1, "model": {"depth": 8, "act": "gelu"}})
    events += configured("shallow", {"lr": 0.2, "model": {"depth": 2, "act": "relu"}})
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]
    tab = open_tab(server.url + "/", width=1600)
    tab.wait("() => document.body.dataset.runsShown === '2'")
    heads = tab.js(HEADS)
    assert "config:model.depth" in heads and "config:model.act" in heads and "config:model" not in heads, heads
    cells = tab.js("() => Object.fromEntries([...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => {"
                   " const keys = [...document.querySelectorAll('.runs-table thead th[data-key]')].map(t => t.dataset.key);"
                   " const tds = [...r.querySelectorAll('td')].slice(1);"
                   " return [r.dataset.env, [tds[keys.indexOf('config:model.depth')].textContent,"
                   " tds[keys.indexOf('config:model.act')].textContent]]; }))")
    assert cells == {"deep": ["8", "gelu"], "shallow": ["2", "relu"]}, cells
    assert '{"' not in tab.page.inner_text(".runs-table")
    # The column sorts by the nested value (the server sorts: config:model.depth) ...
    tab.page.click(".runs-table thead th[data-key='config:model.depth']")
    tab.wait(f"() => ({ROWS})().join() === 'shallow,deep'")
    tab.page.click(".runs-table thead th[data-key='config:model.depth']")
    tab.wait(f"() => ({ROWS})().join() === 'deep,shallow'")
    # ... and its name is the query's.
    tab.page.fill(".runs-query", "model.depth = 8")
    tab.page.press(".runs-query", "Enter")
    tab.wait("() => document.body.dataset.runsShown === '1'")
    assert tab.js(ROWS) == ["deep"]
    assert tab.errors == []
