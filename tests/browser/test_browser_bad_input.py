"""Bad input says what is wrong (Chromium, real server): an invalid regex in the env page's pane filter, and an
unknown field in the runs query (`loss.mean`, `status:banana`), which the server refuses with a message naming it."""

from __future__ import annotations

import urllib.parse

import pytest

from helpers.browser import http


def _line(env: str, win: str, title: str) -> dict:
    return {"op": "set", "env": env, "win": win, "kind": "line", "opts": {"title": title},
            "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, 0.5]}]}


def test_invalid_pane_filter_regex_says_so(server, tab):
    http(server, "POST", "/api/v1/events", {"events": [_line("bad_in", "loss", "train/loss"),
                                                       _line("bad_in", "acc", "train/acc")]})
    tab.open(server.env_url("bad_in"))
    tab.wait("() => document.querySelectorAll('[data-win]').length === 2")
    f = tab.page.locator("input.filter")
    f.fill("loss(")
    tab.wait("() => !document.querySelector('.filter-error').hidden")
    assert "invalid regex" in tab.page.locator(".filter-error").inner_text()
    assert tab.js("() => document.querySelector('input.filter').hasAttribute('aria-invalid')")
    assert tab.js("() => [...document.querySelectorAll('[data-win]')].filter(c => !c.hidden).length") == 2
    f.fill("loss")
    tab.wait("() => document.querySelector('.filter-error').hidden")
    assert tab.js("() => [...document.querySelectorAll('[data-win]')].filter(c => !c.hidden).map(c => c.dataset.win)"
                  ) == ["loss"]
    assert tab.errors == []


@pytest.mark.parametrize(("query", "words"), [("loss.mean < 1", ["unknown statistic", "'mean'"]),
                                               ("status:banana", ["unknown status", "'banana'"])])
def test_unknown_field_in_the_runs_query_is_named(server, tab, query, words):
    http(server, "POST", "/api/v1/events", {"events": [_line("q_run", "loss", "loss")]})
    tab.open(f"{server.url}/runs?q={urllib.parse.quote(query)}")
    tab.wait("() => { const e = document.querySelector('.runs-error'); return !!(e && !e.hidden && e.textContent); }")
    text = tab.page.locator(".runs-error").inner_text()
    assert all(w in text for w in words), text
    # The browser logs the refused request (400) as a console error: that is the only one.
    assert all("400" in e for e in tab.errors), tab.errors
