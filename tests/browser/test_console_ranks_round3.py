"""The console page's rank selector lists every rank of a run, not only the 256 that X-Console-Ranks names
(issue 40): headless Chromium against a real server."""

from __future__ import annotations

import urllib.parse

from helpers.browser import http
from paneboard.server.web.console_api import MAX_HEADER_RANKS

RANKS = MAX_HEADER_RANKS + 44


def test_the_rank_selector_lists_ranks_beyond_the_header(server, open_tab):
    assert http(server, "POST", "/api/v1/events", {"events": [
        {"op": "console", "env": "wide", "rank": r, "lines": [[1, 1000.0, "stdout", f"rank {r} up"]]}
        for r in range(RANKS)]})["ok"]
    tab = open_tab(f"{server.url}/console/{urllib.parse.quote('wide', safe='')}")
    options = "() => [...document.querySelectorAll('.console-rank option')].map(o => Number(o.value))"
    tab.wait(f"() => ({options})().length === {RANKS}")
    assert tab.js(options) == list(range(RANKS))
    # The last rank is selectable and shows its own line.
    tab.page.select_option(".console-rank", str(RANKS - 1))
    tab.wait(f"() => [...document.querySelectorAll('.console-view .cl .tx')].some(e => e.textContent === 'rank {RANKS - 1} up')")
