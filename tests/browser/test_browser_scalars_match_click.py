"""Scalars' multi-metric chart (static/js/pages/scalars.js, scalars_match.js) in real Chromium against a real server:
the "chart matching" click reads and draws the chart at once, not after the live updates' REFRESH_MS throttle."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.browser import Tab, http

RUNS = ["mc_a", "mc_b"]
LAYERS = 12
CARD = '[data-tag="custom: matching/layer*/grad_norm"]'
# Timers of REFRESH_MS (300 ms) or longer are held back from now on (never run): whatever the click needs must not
# wait on one. Shorter ones (a 0 ms refresh, Plotly's own) run as usual.
HOLD_SLOW_TIMERS = """() => {
  const real = window.setTimeout;
  window.heldTimers = [];
  window.setTimeout = (fn, ms, ...rest) => (ms >= 300 ? (window.heldTimers.push(ms), -1) : real(fn, ms, ...rest));
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("match_click") / "paneboard.db").start()
    x = [float(s) for s in range(40)]
    events = [{"op": "set", "env": env, "win": f"l{i}_{what}", "kind": "line", "opts": {"title": f"layer{i:02d}/{what}"},
               "traces": [{"name": None, "x": x, "y": [r + i / 10 + s / 100 for s in x]}]}
              for r, env in enumerate(RUNS) for i in range(LAYERS) for what in ("grad_norm", "weight_norm")]
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def test_the_matching_chart_is_read_on_the_click_not_after_the_throttle(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1600, "height": 900})
    t.open(f"{server.url}/scalars")
    t.wait("n => document.body.dataset.scalarsTags === String(n)", 2 * LAYERS)
    t.wait("() => !!document.querySelector('.sc-card[data-drawn]')")
    t.page.locator("input.match-pattern").fill("layer*/grad_norm")
    t.js(HOLD_SLOW_TIMERS)
    t.page.locator(".match-add").click()
    t.wait(f"n => Number(document.querySelector('{CARD}')?.dataset.series) === n", LAYERS * len(RUNS))
    assert not t.errors, t.errors
