"""Helpers for the visdom-client browser tests: open an env page and read what Plotly drew."""

from __future__ import annotations

import urllib.parse

from helpers.browser import POLL_MS  # noqa: F401  (the visdom tests' waits take it from here)

TIMEOUT_MS = 20_000
# The page CSP forbids eval, so every wait is a JS function, never an expression string.
READY = "() => document.body.dataset.ready === '1' && document.body.dataset.live === '1'"
PLOT = "win => { const d = document.querySelector(`[data-win=\"${win}\"] .js-plotly-plot`); return d && d.data; }"


def open_env(pg, server, env: str) -> None:
    pg.goto(f"{server.url}/env/{urllib.parse.quote(env, safe='')}")
    pg.wait_for_function(READY, timeout=TIMEOUT_MS, polling=POLL_MS)


def plotted(pg, win: str) -> list[dict]:
    """The traces Plotly drew in pane `win` (type and point count), once it has drawn."""
    pg.wait_for_function(PLOT, arg=win, timeout=TIMEOUT_MS, polling=POLL_MS)
    return pg.evaluate("win => (" + PLOT + ")(win).map(t => ({type: t.type || 'scatter', "
                       "n: (t.z || t.y || t.values || t.labels || []).length, name: t.name || null}))", win)
