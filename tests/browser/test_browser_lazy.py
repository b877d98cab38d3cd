"""Only panes in view load and update (Chromium, real server and SDK): a pane far below the fold is fetched when
scrolled to, and live appends it missed while off-screen are there when it is."""

from __future__ import annotations

import time

from helpers.browser import XY, env_url, flushed

PANES = 30  # two cards per row at 1280 px: the last ones are thousands of px below the fold


def xs(tab, win: str) -> list[float]:
    return tab.js(f"() => {{ const d = {XY.format(win=win)}; return d && d.data ? Array.from(d.data[0].x) : []; }}")


def test_pane_below_the_fold_loads_when_scrolled_to_with_the_appends_it_missed(server, sdk, tab):
    c = sdk("lazy")
    for i in range(PANES):
        c.line(Y=[i, i + 1, i + 2], X=[0, 1, 2], win=f"p{i}")
    flushed(c)
    reads: list[str] = []
    tab.page.on("request", lambda r: reads.append(r.url) if "/api/v1/envs/lazy/panes" in r.url else None)
    last = f"p{PANES - 1}"

    tab.open(env_url(server, "lazy"))
    assert tab.js("() => document.querySelectorAll('[data-win]').length") == PANES  # every card, placeholders
    assert xs(tab, "p0") == [0, 1, 2]
    assert not any("/panes?" in u for u in reads), "the page must not read every pane in one request"
    assert not any(f"/panes/{last}?" in u for u in reads), "an off-screen pane was fetched before it was in view"
    assert 0 < len(reads) < PANES // 2, reads
    assert tab.js(f"() => !document.querySelector('[data-win=\"{last}\"] .js-plotly-plot')")
    assert tab.js(f"() => document.querySelector('[data-win=\"{last}\"]').dataset.inview") is None

    # Live appends to the off-screen pane, then one to a pane in view: the socket delivers in order, so once p0
    # shows its point the off-screen extends have been handled (marked stale, not drawn, not fetched).
    for step in (3, 4):
        c.line(Y=[100 + step], X=[step], win=last, update="append")
    flushed(c)
    c.line(Y=[9], X=[3], win="p0", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='p0')}.data[0].x.length === 4")
    time.sleep(0.3)  # a wrong fetch of the off-screen pane would show up here
    assert not any(f"/panes/{last}?" in u for u in reads)

    tab.page.locator(f'[data-win="{last}"]').scroll_into_view_if_needed()
    tab.wait(f"() => {{ const d = {XY.format(win=last)}; return !!(d && d.data && d.data[0].x.length === 5); }}")
    assert xs(tab, last) == [0, 1, 2, 3, 4]
    assert sum(f"/panes/{last}?" in u for u in reads) == 1

    # Now in view, it follows live appends without another read.
    c.line(Y=[200], X=[5], win=last, update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win=last)}.data[0].x.length === 6")
    assert sum(f"/panes/{last}?" in u for u in reads) == 1

    # Scrolled away again: its appends are not drawn (the pane goes stale) and come with one read on return.
    tab.page.locator('[data-win="p0"]').scroll_into_view_if_needed()
    tab.wait(f"() => !document.querySelector('[data-win=\"{last}\"]').dataset.inview")  # the observer saw it leave
    c.line(Y=[300], X=[6], win=last, update="append")
    flushed(c)
    c.line(Y=[9], X=[4], win="p0", update="append")
    flushed(c)
    tab.wait(f"() => {XY.format(win='p0')}.data[0].x.length === 5")
    time.sleep(0.3)
    assert len(xs(tab, last)) == 6 and sum(f"/panes/{last}?" in u for u in reads) == 1
    tab.page.locator(f'[data-win="{last}"]').scroll_into_view_if_needed()
    tab.wait(f"() => {XY.format(win=last)}.data[0].x.length === 7")
    assert xs(tab, last) == [0, 1, 2, 3, 4, 5, 6]
    assert sum(f"/panes/{last}?" in u for u in reads) == 2
    assert tab.errors == []
