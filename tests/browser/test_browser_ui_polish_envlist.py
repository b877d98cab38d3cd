"""Visdom's env list (/envs) opening ticked envs in Chromium against a real server (ui-polish, issue 42 item 2):
more than a few ticked become a short saved selection (?sel=, POST /api/v1/selections as /runs does), not a URL
of names; a few stay named in the URL."""

from __future__ import annotations

import re
import urllib.parse

from helpers.browser import http

NAMES = [f"proj_run{i}" for i in range(8)]


def logged(server) -> None:
    events = [{"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
               "traces": [{"name": None, "x": [0, 1, 2], "y": [1.0, 0.6 - i / 50, 0.4 - i / 50]}]}
              for i, env in enumerate(NAMES)]
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]


def tick(tab, envs: list[str]) -> None:
    tab.wait(f"() => document.querySelectorAll('tr[data-env] input.pick').length === {len(NAMES)}")
    for env in envs:
        tab.page.check(f'tr[data-env="{env}"] input.pick')


def test_many_ticked_envs_open_as_a_saved_selection_and_a_few_by_name(make_server, open_tab):
    server = make_server("envlist")
    logged(server)
    tab = open_tab(server.url + "/envs", width=1600)
    tick(tab, NAMES[:6])
    tab.page.click(".scalars-btn")
    tab.page.wait_for_url(re.compile(r"/scalars\?sel="))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(tab.page.url).query)
    assert set(query) == {"sel"} and len(tab.page.url) < len(server.url) + 40, tab.page.url
    tab.wait("() => document.body.dataset.ready === '1' && document.querySelectorAll('.sc-run').length === 6")
    assert sorted(tab.js("() => [...document.querySelectorAll('.sc-run')].map(r => r.dataset.run)")) == NAMES[:6]
    # The selection is the server's: it names exactly the ticked envs.
    assert sorted(http(server, "GET", f"/api/v1/scope?sel={query['sel'][0]}")["envs"]) == NAMES[:6]
    # Compare and HParams take it the same way.
    tab.page.go_back()
    tick(tab, NAMES[:6])
    tab.page.click(".compare-btn")
    tab.page.wait_for_url(re.compile(r"/compare\?sel="))
    # Two ticked: a readable URL of their names, as before.
    few = open_tab(server.url + "/envs", width=1600)
    tick(few, NAMES[:2])
    few.page.click(".compare-btn")
    few.page.wait_for_url(re.compile(r"/compare\?envs="))
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(few.page.url).query)["envs"] == [",".join(NAMES[:2])]
    assert tab.errors == [] and few.errors == []
