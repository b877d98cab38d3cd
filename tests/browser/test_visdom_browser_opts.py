"""Chromium: Visdom window opts (legend renames, Plotly layout) shown on line/scatter panes; embeddings; close event."""

from __future__ import annotations

import numpy as np

from helpers.visdom_page import open_env, plotted, wait


def test_update_window_opts_renames_traces_and_applies_the_layout(server, viz, page):
    pg, errors = page
    viz.line(Y=np.array([[1.0, 10.0], [2.0, 20.0]]), X=np.array([0, 1]), win="ln",
             opts={"legend": ["a", "b"], "ytype": "log", "xtickmin": 0, "xtickmax": 5})
    open_env(pg, server, "vb")
    assert [t["name"] for t in plotted(pg, "ln")] == ["a", "b"]
    axes = "() => { const d = document.querySelector('[data-win=\"ln\"] .js-plotly-plot'); " \
           "return [d.layout.yaxis.type, d.layout.xaxis.range]; }"
    assert pg.evaluate(axes) == ["log", [0, 5]]  # the Visdom layout (log axis, tick range) is applied
    viz.update_window_opts(win="ln", opts={"legend": ["train", "val"], "xtickmin": 0, "xtickmax": 9})
    wait(pg, "() => { const d = document.querySelector('[data-win=\"ln\"] .js-plotly-plot');"
             " return d && d.data.map(t => t.name).join() === 'train,val'"
             " && d.layout.xaxis.range[1] === 9; }")
    viz.line(Y=np.array([3.0]), X=np.array([2]), win="ln", update="append", name="val")  # the new name pairs
    wait(pg, "() => document.querySelector('[data-win=\"ln\"] .js-plotly-plot').data[1].y.length === 3")
    assert [t["n"] for t in plotted(pg, "ln")] == [2, 3]
    assert errors == []


def test_closing_a_pane_in_the_browser_sends_visdoms_close_event(server, viz, page):
    pg, errors = page
    got: list[dict] = []
    viz.text("close me", win="doomed")
    viz.text("stays", win="kept")
    viz.register_event_handler(got.append, "doomed")
    open_env(pg, server, "vb")
    wait(pg, "() => !!document.querySelector('[data-win=\"doomed\"] .text-pane')")
    pg.once("dialog", lambda d: d.accept())
    pg.locator('[data-win="doomed"] .pane-menu-btn').click()
    pg.locator('[data-win="doomed"] .m-close').click()
    wait(pg, "() => !document.querySelector('[data-win=\"doomed\"]')")
    for _ in range(200):  # delivered over the client's /vis_socket thread
        if got:
            break
        pg.wait_for_timeout(50)
    assert [(e["event_type"], e["target"], e["eid"]) for e in got] == [("close", "doomed", "vb")]
    assert got[0]["pane_data"]["content"] == "close me"  # the window as it was, as Visdom sends it
    assert not viz.win_exists("doomed", env="vb") and viz.win_exists("kept", env="vb")
    assert errors == []
