"""Model graph pane and HParams view in Chromium against a real server: module boxes that expand on click; the
hparams table sorting, parallel coordinates (SVG without WebGL), brushing and CSV download."""

from __future__ import annotations

import pytest

from helpers.browser import env_url, http

GRAPH = '[data-win="graph"]'
GROUPS = f"() => [...document.querySelectorAll('{GRAPH} .mg-group')].map((g) => g.dataset.scope).sort()"
TOP = ["Net/Block[res]", "Net/Linear[head]", "Net/Sequential[features]"]


def test_graph_pane_shows_top_level_modules_and_expands_one_on_click(server, tab):
    torch = pytest.importorskip("torch")
    import paneboard
    from helpers.model_graph import Net

    w = paneboard.SummaryWriter("graphrun", server="http://127.0.0.1", port=server.port)
    w.add_graph(Net(), torch.randn(2, 3, 32, 32))
    assert w.flush(timeout=10)
    w.close()

    tab.open(env_url(server, "graphrun"))
    tab.wait(f"() => document.querySelectorAll('{GRAPH} .mg-group').length === 3")
    assert tab.js(GROUPS) == TOP
    ops = tab.js(f"() => [...document.querySelectorAll('{GRAPH} .mg-op')].map((g) => g.dataset.op).sort()")
    assert ops == ["aten::flatten", "input", "output"]  # flatten sits in Net itself, outside every module
    # Module boxes show what they output; edges carry the shapes that cross them.
    features = f'{GRAPH} .mg-group[data-scope="Net/Sequential[features]"]'
    texts = tab.js(f"() => [...document.querySelectorAll('{features} text')].map((t) => t.textContent)")
    assert texts == ["Sequential[features]", "[2, 8, 16, 16]"]
    labels = tab.js(f"() => [...document.querySelectorAll('{GRAPH} .mg-edge-label')].map((t) => t.textContent)")
    assert sorted(labels) == ["[2, 10]", "[2, 2048]", "[2, 3, 32, 32]", "[2, 8, 16, 16]", "[2, 8, 16, 16]"]

    tab.page.click(features)
    tab.wait(f"() => !document.querySelector('{features}')")
    assert tab.js(GROUPS) == ["Net/Block[res]", "Net/Linear[head]", "Net/Sequential[features]/Conv2d[0]",
                              "Net/Sequential[features]/MaxPool2d[2]", "Net/Sequential[features]/ReLU[1]"]
    assert tab.js(f"() => !!document.querySelector('{GRAPH} .mg-frame[data-scope=\"Net/Sequential[features]\"]')")
    # Layers run top to bottom: conv above relu above pool.
    ys = tab.js(f"""() => ["Conv2d[0]", "ReLU[1]", "MaxPool2d[2]"].map((m) => document.querySelector(
        '{GRAPH} .mg-group[data-scope="Net/Sequential[features]/' + m + '"]').getBoundingClientRect().top)""")
    assert ys[0] < ys[1] < ys[2]

    tab.page.click(f'{GRAPH} .mg-frame[data-scope="Net/Sequential[features]"] .mg-frame-title')
    tab.wait(f"() => document.querySelectorAll('{GRAPH} .mg-group').length === 3")
    assert tab.errors == []


def _hparams(env: str, session: str, lr: float, opt: str, bn: bool, acc: float, loss: float) -> dict:
    return {"op": "hparams", "env": env, "session": session, "hparams": {"lr": lr, "opt": opt, "bn": bn},
            "metrics": {"acc": acc, "loss": loss}, "domains": {"opt": ["sgd", "adam", "lamb"]}}


def rows(tab) -> list[str]:
    return tab.js("() => [...document.querySelectorAll('.hp-table tbody tr')]"
                  ".map((r) => r.dataset.env + '/' + r.dataset.session)")


def test_hparams_table_sorts_filters_and_parcoords_has_a_dimension_per_column(server, tab):
    res = http(server, "POST", "/api/v1/events", {"events": [
        _hparams("hp_a", "s1", 0.1, "sgd", True, 0.80, 0.5),
        _hparams("hp_a", "s2", 0.01, "adam", False, 0.95, 0.2),
        _hparams("hp_b", ".", 0.001, "lamb", True, 0.90, 0.3),
    ]})
    assert res["ok"], res

    tab.open(server.url + "/hparams")
    tab.wait("() => document.querySelectorAll('.hp-table tbody tr').length === 3")
    heads = tab.js("() => [...document.querySelectorAll('.hp-table th')].map((t) => t.dataset.col)")
    assert heads == ["env", "session", "h:lr", "h:opt", "h:bn", "m:acc", "m:loss"]

    tab.page.click('.hp-table th[data-col="m:acc"]')
    assert rows(tab) == ["hp_a/s1", "hp_b/.", "hp_a/s2"]
    tab.page.click('.hp-table th[data-col="m:acc"]')
    assert rows(tab) == ["hp_a/s2", "hp_b/.", "hp_a/s1"]
    assert tab.js("() => document.querySelector('.hp-table tbody tr td:nth-child(5)').textContent") == "false"

    # The parallel coordinates are SVG (Plotly's WebGL parcoords cannot leave a gap for a missing value).
    tab.wait("() => document.querySelectorAll('.hp-parcoords svg .pc-axis').length === 5")
    labels = tab.js("() => [...document.querySelectorAll('.pc-axis')].map((g) => g.querySelector('text').textContent)")
    assert labels == ["lr (log)", "opt", "bn", "acc", "loss"]  # three decades of learning rate: a log axis
    ticks = tab.js("() => [...document.querySelectorAll('.pc-axis[data-dim=\"1\"] text')].slice(1)"
                   ".map((t) => t.textContent)")
    assert ticks == ["sgd", "adam", "lamb"]
    assert tab.js("() => document.querySelectorAll('.pc-lines path').length") == 3

    # Brushing the acc axis with the mouse (from above its top down to about 0.85) filters the table.
    axis = tab.js("() => { const r = document.querySelector('.pc-axis[data-dim=\"3\"] .pc-axis-line')"
                  ".getBoundingClientRect(); return {x: r.left, top: r.top, h: r.height}; }")
    y_085 = axis["top"] + (0.95 - 0.85) / 0.15 * axis["h"]  # acc runs from 0.95 (top) to 0.80 (bottom)
    tab.page.mouse.move(axis["x"], axis["top"] - 6)  # just above the axis top (0.95, the largest acc)
    tab.page.mouse.down()
    tab.page.mouse.move(axis["x"], axis["top"] + 20, steps=3)
    tab.page.mouse.move(axis["x"], y_085, steps=3)
    tab.page.mouse.up()
    tab.wait("() => document.querySelectorAll('.hp-table tbody tr').length === 2")
    assert rows(tab) == ["hp_a/s2", "hp_b/."]
    assert tab.js("() => document.querySelector('.hp-count').textContent") == "2 of 3 runs"
    faded = tab.js("() => [...document.querySelectorAll('.pc-lines path')].map((p) => p.getAttribute('stroke-opacity'))")
    assert sorted(faded) == ["0.08", "0.9", "0.9"]

    # Hiding an axis drops it from the plot, the table and the CSV, which holds what the table shows.
    tab.page.click(".hp-columns summary")
    tab.page.uncheck('.hp-column-list input[data-col="h:bn"]')
    assert "h:bn" not in tab.js("() => [...document.querySelectorAll('.hp-table th')].map((t) => t.dataset.col)")
    with tab.page.expect_download() as dl:
        tab.page.click(".hp-csv")
    with open(dl.value.path()) as f:
        csv = f.read()
    assert csv == "run,trial,lr,opt,acc,loss\nhp_a,s2,0.01,adam,0.95,0.2\nhp_b,.,0.001,lamb,0.9,0.3\n"
    assert tab.errors == []
