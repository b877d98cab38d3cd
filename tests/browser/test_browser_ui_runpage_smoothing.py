"""Smoothing and legends shared by run pages, Compare and Scalars in Chromium against a real server (issue 42
item 7): one smoothing setting and slider (TensorBoard's debiased EMA over the raw line, which stays faded
underneath), live points smoothed as they come, and legends beside a chart only while their names are short."""

from __future__ import annotations

import numpy as np

from helpers.browser import flushed

LONG = "a rather long series name of a run in a sweep"


def tb_smooth(ys: list[float], w: float) -> list[float]:
    """TensorBoard's classic smoothing, written out again here so the test does not read the page's own."""
    out, last = [], 0.0
    for n, y in enumerate(ys, start=1):
        last = last * w + (1 - w) * y
        out.append(last / (1 - w ** n))
    return out


def smoothed_of(tab, win: str):
    return tab.js("(win) => { const d = document.querySelector(`[data-win=\"${win}\"] .js-plotly-plot`);"
                  " return d && d.data ? d.data.filter(t => t.meta && t.meta.role === 'smoothed').map(t => t.y) : null; }", win)


def test_one_smoothing_setting_for_run_pages_compare_and_scalars_and_legends_that_fit(make_server, open_tab):
    import paneboard

    server = make_server("smooth")  # an ephemeral port of its own
    rng = np.random.default_rng(1)
    ys = {env: (np.exp(-np.arange(40) / 10) + rng.normal(0, 0.05, 40)).round(4).tolist() for env in ("sa", "sb")}
    clients = {env: paneboard.Client(port=server.port, env=env, spool_dir=False) for env in ys}
    for env, c in clients.items():
        c.line(X=list(range(40)), Y=ys[env], win="loss", opts={"title": "loss"})
        c.line(X=[0, 1, 2], Y=np.array([[1.0, 2.0], [0.5, 1.5], [0.2, 1.2]]), win="long",
               opts={"title": "long names", "legend": [LONG + " one", LONG + " two"]})
        c.line(X=[0, 1, 2], Y=np.array([[1.0, 2.0], [0.5, 1.5], [0.2, 1.2]]), win="short",
               opts={"title": "short names", "legend": ["a", "b"]})
        flushed(c)
    tab = open_tab(server.env_url("sa"), width=1600)
    tab.wait("() => ['loss', 'long', 'short'].every(w => document.querySelector(`[data-win=\"${w}\"] .main-svg`))")
    # Off until chosen: the raw line alone, as a Visdom user expects it.
    assert smoothed_of(tab, "loss") == []
    # Legends: beside a wide chart while the names are short, under it when they are long (the plot keeps its width).
    legend = "(win) => document.querySelector(`[data-win=\"${win}\"] .js-plotly-plot`).layout.legend"
    assert tab.js(legend, "short")["x"] == 1.02
    assert tab.js(legend, "long")["orientation"] == "h"
    plot_share = tab.js("() => { const d = document.querySelector('[data-win=\"long\"] .js-plotly-plot');"
                        " return d._fullLayout._size.w / d._fullLayout.width; }")
    assert plot_share > 0.85, plot_share
    # The run page's slider smooths its line panes; the raw line stays, faded, underneath.
    tab.page.fill("input.smoothing", "0.9")
    tab.wait("() => document.querySelector('.smoothing-value').textContent === '0.90'")
    tab.wait("() => { const d = document.querySelector('[data-win=\"loss\"] .js-plotly-plot');"
             " return d.data.some(t => t.meta && t.meta.role === 'smoothed'); }")
    assert np.allclose(smoothed_of(tab, "loss")[0], tb_smooth(ys["sa"], 0.9), atol=1e-9)
    assert tab.js("() => document.querySelector('[data-win=\"loss\"] .js-plotly-plot').data[0].opacity") == 0.3
    assert tab.js("() => document.querySelector('[data-win=\"loss\"]').dataset.points") == "40"  # raw points only
    # Live points are smoothed as they come.
    clients["sa"].line(X=[40, 41], Y=[0.5, 0.5], win="loss", update="append")
    flushed(clients["sa"])
    tab.wait("() => document.querySelector('[data-win=\"loss\"] .js-plotly-plot').data.find(t => t.meta && t.meta.role === 'smoothed').y.length === 42")
    assert np.allclose(smoothed_of(tab, "loss")[0], tb_smooth(ys["sa"] + [0.5, 0.5], 0.9), atol=1e-9)
    # Compare and Scalars start from the same setting; Compare smooths its run lines the same way.
    cmp = open_tab(f"{server.url}/compare?envs=sa,sb", width=1600)
    assert cmp.js("() => document.querySelector('input.smoothing').value") == "0.9"
    cmp.wait("() => { const d = document.querySelector('.card[data-title=\"loss\"] .js-plotly-plot');"
             " return d && d.data && d.data.some(t => t.meta && t.meta.role === 'raw'); }")
    drawn = cmp.js("() => document.querySelector('.card[data-title=\"loss\"] .js-plotly-plot').data"
                   ".filter(t => t.meta && t.meta.role !== 'raw').map(t => [t.meta.env, t.y])")
    assert {env for env, _ in drawn} == {"sa", "sb"}
    for env, y in drawn:
        assert np.allclose(y[:40], tb_smooth(ys[env], 0.9), atol=1e-9)
    cmp.page.fill("input.smoothing", "0.3")
    sc = open_tab(f"{server.url}/scalars?envs=sa", width=1600)
    assert sc.js("() => document.querySelector('input.smoothing').value") == "0.3"
    for c in clients.values():
        c.close_connection(5)
    assert tab.errors == [] and cmp.errors == [] and sc.errors == []
