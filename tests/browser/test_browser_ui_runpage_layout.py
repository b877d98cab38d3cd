"""A run page's layout in Chromium against a real server (issue 42 item 5): the user's metrics first, media and text
below them with text cards as tall as their text, a framework's bookkeeping (Lightning's epoch and status) last,
charts filling the width with an S/M/L chart-size control, and a section's lone chart taking the whole row."""

from __future__ import annotations

import numpy as np

from helpers.browser import flushed

SECTIONS = "() => [...document.querySelectorAll('.pane-section')].map(s => [s.dataset.section, [...s.querySelectorAll('.card')].map(c => c.dataset.win)])"
WIDTH = "(win) => document.querySelector(`[data-win=\"${win}\"]`).getBoundingClientRect().width"
GRID = "() => document.querySelector('#grid').getBoundingClientRect().width"
PLOT_WIDTH = "(win) => { const s = document.querySelector(`[data-win=\"${win}\"] .main-svg`); return s ? s.getBoundingClientRect().width : 0; }"


def lightning_style_run(server, env: str) -> None:
    """What PaneboardLogger writes for a fit (epoch first, its status text last) beside the user's own panes."""
    import paneboard

    w = paneboard.SummaryWriter(env, server="http://127.0.0.1", port=server.port)
    for step in range(20):
        w.add_scalar("epoch", step // 10, step)
        w.add_scalar("train_loss", 1 / (step + 1), step)
        w.add_scalar("val_loss", 1.2 / (step + 1), step)
    w.add_image("samples", np.random.default_rng(0).random((3, 32, 32)), 19)
    w.add_text("notes", "lr warm-up done", 19)
    w.add_scalar("val/acc", 0.9, 19)
    w.add_text("status", "run success", 19)
    flushed(w.client)
    w.close()


def wait_drawn(tab, wins):
    tab.wait("(wins) => wins.every(w => document.querySelector(`[data-win=\"${w}\"] .main-svg`))", wins)


def test_metrics_first_media_below_bookkeeping_last_and_charts_fill_the_width(make_server, open_tab):
    server = make_server("layout")  # an ephemeral port of its own
    lightning_style_run(server, "lit")
    tab = open_tab(server.env_url("lit"), width=1600)
    tab.wait("() => document.querySelectorAll('.card').length === 7")
    assert tab.js(SECTIONS) == [["metrics", ["train_loss", "val_loss"]], ["val", ["val/acc"]],
                                ["media & text", ["samples", "notes"]], ["bookkeeping", ["epoch", "status"]]]
    wait_drawn(tab, ["train_loss", "val_loss", "val/acc"])
    grid = tab.js(GRID)
    # M (the default): two charts a row; a section's lone chart takes the whole row, and its plot follows.
    assert abs(tab.js(WIDTH, "train_loss") - (grid - 10) / 2) < 4
    assert tab.js(WIDTH, "val/acc") > grid - 4
    tab.wait(f"() => ({PLOT_WIDTH})('val/acc') > {grid * 0.9}")
    # A one-line text card is as tall as its text, not a chart's height.
    tab.page.locator("[data-win='notes']").scroll_into_view_if_needed()
    tab.wait("() => document.querySelector('[data-win=\"notes\"] .media-text')?.textContent.includes('warm-up')")
    tab.wait("() => document.querySelector('[data-win=\"notes\"]').getBoundingClientRect().height < 160")
    assert tab.js("() => document.querySelector('[data-win=\"train_loss\"]').getBoundingClientRect().height") > 250
    # L: one chart a row, redrawn to the new width; S: three a row. The choice is kept for the next visit.
    tab.page.click(".chart-size-btn[data-size='L']")
    tab.wait(f"() => ({WIDTH})('train_loss') > {grid - 4} && ({PLOT_WIDTH})('train_loss') > {grid * 0.9}")
    tab.page.click(".chart-size-btn[data-size='S']")
    tab.wait(f"() => Math.abs(({WIDTH})('train_loss') - {(grid - 20) / 3}) < 4")
    tab.page.reload()
    tab.wait("() => document.querySelectorAll('.card').length === 7")
    assert tab.js("() => document.querySelector('.chart-size-btn[aria-pressed=\"true\"]').dataset.size") == "S"
    assert abs(tab.js(WIDTH, "train_loss") - (grid - 20) / 3) < 4
    assert tab.errors == []
