"""Nothing leaves the origin: no pane offers to send a figure to a plotly host, and no page asks another origin."""

from __future__ import annotations

import urllib.parse

import numpy as np

from helpers.browser import XY, env_url, flushed

# Mode-bar buttons plotly.js would add to send a figure off the machine (its defaults differ across versions).
CLOUD_BUTTONS = ("sendDataToCloud", "editInChartStudio", "Share", "Chart Studio")


def test_no_pane_kind_offers_a_cloud_button_or_asks_another_origin(server, sdk, tab):
    c = sdk("origin")
    c.line(X=[0, 1, 2], Y=[1.0, 3.0, 2.0], win="line")
    c.scatter(X=np.random.default_rng(0).normal(size=(20, 2)), win="scatter")
    c.bar(X=[1.0, 2.0, 3.0], win="bar")
    c.heatmap(X=np.arange(12.0).reshape(3, 4), win="heat")
    c.histogram(X=np.random.default_rng(1).normal(size=100), win="hist")
    flushed(c)
    foreign: list[str] = []
    origin = urllib.parse.urlsplit(server.url).netloc
    tab.page.on("request", lambda r: foreign.append(r.url)
                if urllib.parse.urlsplit(r.url).netloc not in (origin, "") else None)
    tab.open(env_url(server, "origin"))
    for win in ("line", "scatter", "bar", "heat", "hist"):
        tab.wait(f"() => !!{XY.format(win=win)}")
    tab.page.hover('[data-win="line"] .js-plotly-plot')  # the mode bar appears on hover
    buttons = tab.js("() => [...document.querySelectorAll('.modebar-btn')].map(b => "
                     "(b.getAttribute('data-title') || '') + ' ' + (b.getAttribute('data-attr') || ''))")
    assert buttons, "no mode bar was drawn: the check below would pass vacuously"
    offers = [b for b in buttons if any(word in b for word in CLOUD_BUTTONS)]
    assert offers == []
    assert foreign == []
    assert tab.errors == []
