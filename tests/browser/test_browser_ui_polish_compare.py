"""Compare's and Scalars' layout at 1600 px in Chromium against a real server (ui-polish, issue 42 item 5, found on
the final screenshots): a comparison of one chart, or a Scalars section of one chart, fills the width instead of
leaving half the screen empty, and the seed groups' "group by" list is as wide as its keys, not the whole row."""

from __future__ import annotations

import urllib.parse

from helpers.browser import http

CARD = "document.querySelector('.compare-grid .card[data-title=\"loss\"]')"


def test_one_chart_fills_the_width_and_the_group_by_list_stays_narrow(make_server, open_tab):
    server = make_server("compare")
    events = [{"op": "set", "env": f"seeds/lr{i}_s{s}", "win": "loss", "kind": "line", "opts": {"title": "loss"},
               "traces": [{"name": None, "x": [0, 1, 2], "y": [1.0, 0.5 + i / 10 + s / 100, 0.3 + i / 10]}]}
              for i in range(2) for s in range(2)]
    events += [{"op": "set_meta", "env": f"seeds/lr{i}_s{s}", "meta": {"lr": [0.1, 0.01][i], "seed": s}}
               for i in range(2) for s in range(2)]
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]
    tab = open_tab(server.url + "/compare?q=" + urllib.parse.quote('name ~ "^seeds/"'), width=1600)
    tab.wait(f"() => {{ const c = {CARD}; return c && c.querySelector('.main-svg'); }}")
    card, grid = tab.js(f"() => [{CARD}.getBoundingClientRect().width, document.querySelector('.compare-grid').getBoundingClientRect().width]")
    assert card > 0.95 * grid, (card, grid)
    tab.page.check(".group-seeds")
    tab.wait("() => document.querySelectorAll('.group-legend-item').length === 2")
    by, row = tab.js("() => [document.querySelector('.group-by').getBoundingClientRect().width,"
                     " document.querySelector('.compare-controls').getBoundingClientRect().width]")
    assert by < row / 3, (by, row)
    assert tab.errors == []


def test_a_scalars_section_of_one_chart_fills_the_row_and_two_share_it(make_server, open_tab):
    server = make_server("scalars")
    events = [{"op": "set", "env": f"sweep/t{i}", "win": win, "kind": "line", "opts": {"title": title},
               "traces": [{"name": None, "x": [0, 1, 2], "y": [1.0, 0.6 - i / 20, 0.4 - i / 20]}]}
              for i in range(3) for win, title in (("loss", "loss"), ("train_a", "train/a"), ("train_b", "train/b"))]
    assert http(server, "POST", "/api/v1/events", {"events": events})["ok"]
    tab = open_tab(server.url + "/scalars?q=" + urllib.parse.quote('name ~ "^sweep/"'), width=1600)
    tab.wait("() => document.querySelectorAll('.sc-card .main-svg').length >= 3")
    widths = tab.js("() => Object.fromEntries([...document.querySelectorAll('.sc-section')].map(s => [s.dataset.section,"
                    " [...s.querySelectorAll('.sc-card')].map(c => c.getBoundingClientRect().width / s.querySelector('.sc-grid').getBoundingClientRect().width)]))")
    assert widths["loss"][0] > 0.95, widths
    assert len(widths["train"]) == 2 and all(0.4 < w < 0.55 for w in widths["train"]), widths
    assert tab.errors == []
