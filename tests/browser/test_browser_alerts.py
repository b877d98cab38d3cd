"""Alerts banner (Chromium, real server and SDK): shown when the env's alerts pane has rows, live, dismissible
until the next alert, absent on a healthy env."""

from __future__ import annotations

import paneboard
from helpers.browser import READY, env_url, flushed

BANNER = "document.querySelector('.alerts-banner')"
SHOWN = f"() => {{ const b = {BANNER}; return !!b && !b.hidden && b.getBoundingClientRect().height > 0; }}"


def banner(tab) -> dict:
    return tab.js(f"() => {{ const b = {BANNER}; return {{ hidden: b.hidden, count: b.dataset.count, "
                  f"text: b.querySelector('.alerts-text').textContent }}; }}")


def test_alerts_banner_appears_live_dismisses_and_returns_on_a_new_alert(server, sdk, tab):
    c = sdk("alerting")
    c.line(Y=[1, 2], X=[0, 1], win="loss")
    paneboard.alerts.check_loss(c, float("nan"), 7)
    flushed(c)
    tab.open(env_url(server, "alerting"))
    tab.wait(SHOWN)
    b = banner(tab)
    assert b["count"] == "1" and "loss_nonfinite" in b["text"] and "step 7" in b["text"]
    assert "<b>" not in b["text"]  # the row's markup is text here, never HTML

    tab.page.click(".alerts-dismiss")
    assert banner(tab)["hidden"] is True
    tab.page.reload()
    tab.wait(READY)
    assert banner(tab)["hidden"] is True  # dismissed for this tab until the next alert

    paneboard.alerts.get(c).alert("stall", 42, "no training step for 99 s")  # arrives live
    flushed(c)
    tab.wait(f"() => {BANNER}.dataset.count === '2' && !{BANNER}.hidden")
    assert "stall" in banner(tab)["text"] and "step 42" in banner(tab)["text"]

    tab.page.click(".alerts-show")  # scrolls the alerts card into view
    tab.wait("() => { const r = document.querySelector('[data-win=\"alerts\"]').getBoundingClientRect();"
             " return r.top >= 0 && r.top < innerHeight; }")
    assert tab.errors == []


def test_no_banner_on_a_healthy_env(server, sdk, tab):
    c = sdk("calm")
    c.line(Y=[1, 2], X=[0, 1], win="loss")
    flushed(c)
    tab.open(env_url(server, "calm"))
    assert banner(tab)["hidden"] is True and banner(tab)["count"] == "0"
    assert tab.errors == []
