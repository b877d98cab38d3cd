"""Helpers for the visdom-client browser tests: open an env page and read what Plotly drew."""

from __future__ import annotations

import urllib.parse

from helpers.browser import POLL_MS, READY

TIMEOUT_MS = 20_000
PLOT = "win => { const d = document.querySelector(`[data-win=\"${win}\"] .js-plotly-plot`); return d && d.data; }"


def wait(pg, js: str, arg=None, timeout: int = TIMEOUT_MS) -> None:
    """Until the JS function `js` (the page CSP forbids eval: never an expression string) returns truthy."""
    pg.wait_for_function(js, arg=arg, timeout=timeout, polling=POLL_MS)


def open_env(pg, server, env: str) -> None:
    pg.goto(f"{server.url}/env/{urllib.parse.quote(env, safe='')}")
    wait(pg, READY)


def plotted(pg, win: str) -> list[dict]:
    """The traces Plotly drew in pane `win` (type and point count), once it has drawn."""
    wait(pg, PLOT, win)
    return pg.evaluate("win => (" + PLOT + ")(win).map(t => ({type: t.type || 'scatter', "
                       "n: (t.z || t.y || t.values || t.labels || []).length, name: t.name || null}))", win)
