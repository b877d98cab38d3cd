"""wandb.Table as a table pane (server/panes/table.py, static/js/panes/table.js): cells of numbers, text, booleans and
pictures stored as logged, bad tables refused with a message, and columns sorted by a click in Chromium."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse

import numpy as np
import pytest

import paneboard
from helpers.browser import env_url

SHOTS = os.environ.get("PANEBOARD_SHOTS")



def _log_table(tmp_path) -> None:
    paneboard.init(project="tbl", name="preds", dir=tmp_path)
    table = paneboard.Table(columns=["id", "label", "score", "ok", "picture"])
    for k, score in enumerate([9.0, 10.0, 2.5, float("nan"), 100.0]):
        shade = np.full((6, 6, 3), 50 * k, np.uint8)
        table.add_data(k, f"item {k}", score, k % 2 == 0, paneboard.Image(shade, caption=f"pic {k}"))
    paneboard.log({"predictions": table, "loss": 0.5})
    paneboard.finish()


def _pane(server) -> dict:
    return server.get_json("/api/v1/envs/tbl%2Fpreds/panes/predictions")


def test_a_logged_table_is_a_table_pane_with_its_cells(online, tmp_path) -> None:
    _log_table(tmp_path)
    pane = _pane(online)
    assert pane["kind"] == "table" and pane["opts"]["step"] == 0
    data = pane["data"]
    assert data["columns"] == ["id", "label", "score", "ok", "picture"]
    assert [r[:4] for r in data["rows"]] == [[0, "item 0", 9.0, True], [1, "item 1", 10.0, False],
                                             [2, "item 2", 2.5, True], [3, "item 3", None, False],  # NaN: empty
                                             [4, "item 4", 100.0, True]]
    pic = data["rows"][1][4]["image"]
    assert pic["mime"] == "image/png" and (pic["width"], pic["height"]) == (6, 6) and pic["caption"] == "pic 1"


@pytest.mark.parametrize(("table", "message"), [
    ({"columns": ["a", "b"], "rows": [[1]]}, "one cell per column"),
    ({"columns": [], "rows": []}, "columns must be"),
    ({"columns": ["a"], "rows": [[{"image": {"mime": "image/png", "data": "bm90IGFuIGltYWdl"}}]]}, "not a readable"),
    ({"columns": ["a"], "rows": [[[1, 2]]]}, "a cell must be"),
])
def test_a_bad_table_is_refused_with_its_reason(server, table, message) -> None:
    event = {"op": "set", "env": "badtable", "win": "t", "kind": "table", "opts": {}, "table": table}
    try:
        reply = server.http("POST", "/api/v1/events", {"events": [event]})
    except urllib.error.HTTPError as exc:
        assert exc.code == 400
        reply = json.loads(exc.read())
    assert message in json.dumps(reply)


def test_table_columns_sort_on_click_in_chromium(online, tab, tmp_path) -> None:
    _log_table(tmp_path)
    tab.open(env_url(online, "tbl/preds"))
    card = '[data-win="predictions"]'
    tab.page.locator(card).scroll_into_view_if_needed()
    tab.wait(f"() => document.querySelectorAll('{card} tbody tr').length === 5")
    column = f"""(k) => [...document.querySelectorAll('{card} tbody tr')].map(tr => tr.children[k].textContent)"""
    assert tab.js(column, 2) == ["9", "10", "2.5", "", "100"]  # as logged
    header = tab.page.locator(f"{card} thead th", has_text="score")
    header.click()
    tab.wait(f"() => document.querySelector('{card} thead th[data-sort]')?.dataset.sort === 'asc'")
    assert tab.js(column, 2) == ["2.5", "9", "10", "100", ""]  # numbers as numbers, empty last
    header.click()
    tab.wait(f"() => document.querySelector('{card} thead th[data-sort]')?.dataset.sort === 'desc'")
    assert tab.js(column, 2) == ["100", "10", "9", "2.5", ""]  # the other way; empty cells stay last
    tab.page.locator(f"{card} thead th", has_text="label").click()
    tab.wait(f"() => document.querySelector('{card} thead th[data-sort]')?.textContent.startsWith('label')")
    assert tab.js(column, 1) == [f"item {k}" for k in range(5)]
    tab.wait(f"() => [...document.querySelectorAll('{card} tbody img')].every(i => i.complete && i.naturalWidth === 6)")
    assert tab.js(f"() => document.querySelectorAll('{card} tbody img').length") == 5
    header.click()
    tab.page.locator(card).screenshot(path=os.path.join(SHOTS or str(tmp_path), "table_sorted.png"))
    assert tab.errors == []
