"""Scalars with thousands of tags (static/js/pages/scalars_window.js, scalars_match.js) in real Chromium against a
real server: the DOM stays bounded (collapsed sections with counts, cards a page at a time), the tag regex narrows
the chart list at once, the multi-metric chart draws every tag matching a glob, and a section's only card takes the
whole row."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from helpers.browser import Tab, http

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
RUNS = ["mt_a", "mt_b"]
LAYERS = 1500  # 3,000 tags a run: layerNNNN/grad_norm and layerNNNN/weight_norm, a section per layer
STEPS = 30
TAGS = 2 * LAYERS + 1  # and train/loss
NODES = "() => document.getElementsByTagName('*').length"
MATCH_CARD = "custom: matching/layer*/grad_norm"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("many_tags") / "paneboard.db").start()
    x = [float(s) for s in range(STEPS)]
    events = []
    for r, env in enumerate(RUNS):
        events.append({"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "train/loss"},
                       "traces": [{"name": None, "x": x, "y": [1 / (s + 1 + r) for s in range(STEPS)]}]})
        for i in range(LAYERS):
            for what in ("grad_norm", "weight_norm"):
                events.append({"op": "set", "env": env, "win": f"l{i}_{what}", "kind": "line",
                               "opts": {"title": f"layer{i:04d}/{what}"},
                               "traces": [{"name": None, "x": x, "y": [r + i / LAYERS + s / 100 for s in range(STEPS)]}]})
    for k in range(0, len(events), 1000):
        assert http(srv, "POST", "/api/v1/events", {"events": events[k:k + 1000]})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def open_scalars(t: Tab, server, width: int = 1600) -> None:
    t.page.set_viewport_size({"width": width, "height": 900})
    t.open(f"{server.url}/scalars")
    t.wait("n => document.body.dataset.scalarsTags === String(n)", TAGS)
    t.wait("() => !!document.querySelector('.sc-card[data-drawn]')")  # the first chart is drawn


def test_thousands_of_tags_keep_the_dom_bounded(server, tab: Tab):
    t = tab
    open_scalars(t, server)
    assert t.js("() => document.body.dataset.scalarsMany") == "1"
    assert t.js(NODES) < 8000
    # Sections come a page at a time, collapsed past the first few, each with its tag count.
    sections = t.js("() => [...document.querySelectorAll('.sc-section')].map(s => [s.dataset.section, "
                    "s.dataset.collapsed, s.querySelector('.sc-section-count').textContent])")
    assert len(sections) < 200 and sections[0][0] == "layer0000"
    assert sections[0][1] == "" and sections[-1][1] == "1" and sections[-1][2] == "2"
    assert t.js("() => document.querySelectorAll('.sc-card').length") <= 30
    assert "not shown" in t.js("() => document.querySelector('.sc-more-sections').textContent")
    # The overlay picker does not list 3,000 options until it is opened.
    assert t.js("() => document.querySelectorAll('.overlay-tags option').length") == 0
    # Scroll to the end and list every section: still bounded, the cards drawn there cleared past a cap.
    for _ in range(25):
        if not t.js("() => !!document.querySelector('.sc-more-sections')?.isConnected"):
            break
        t.page.locator(".sc-more-sections").click()
    assert t.js("() => document.querySelectorAll('.sc-section').length") == LAYERS + 1
    t.js("() => window.scrollTo(0, document.body.scrollHeight)")
    assert t.js(NODES) < 20000  # 1,501 collapsed headers; no card was built for them
    # Opening a collapsed section builds its two cards, and they draw.
    last = "layer1499"
    t.page.locator(f'.sc-section[data-section="{last}"] .sc-section-toggle').click()
    t.wait("() => document.querySelectorAll('.sc-section[data-section=\"layer1499\"] .sc-card[data-drawn]').length === 2")
    assert not t.errors, t.errors


def test_the_tag_regex_narrows_the_cards_and_opens_their_sections(server, tab: Tab):
    t = tab
    open_scalars(t, server)
    t.page.locator("input.tag-filter").fill(r"layer000[0-4]/grad")
    t.wait("() => document.body.dataset.scalarsTags === '5'")
    assert t.js("() => document.body.dataset.scalarsMany") == ""  # few: every section open, no counts
    # Each card is one section's only card, a whole row: those in view draw, the last one once scrolled to.
    t.page.locator('.sc-card[data-tag="layer0004/grad_norm"]').scroll_into_view_if_needed()
    t.wait("() => !!document.querySelector('.sc-card[data-tag=\"layer0004/grad_norm\"][data-drawn]')")
    cards = t.js("() => [...document.querySelectorAll('.sc-card')].map(c => c.dataset.tag)")
    assert cards == [f"layer000{i}/grad_norm" for i in range(5)]
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "many_tags_filtered.png"))
    t.page.locator("input.tag-filter").fill("")
    t.wait("n => document.body.dataset.scalarsTags === String(n)", TAGS)
    assert t.js(NODES) < 8000
    assert not t.errors, t.errors


def test_the_multi_metric_chart_draws_every_matching_tag(server, tab: Tab):
    t = tab
    open_scalars(t, server)
    t.page.locator("input.match-pattern").fill("layer*/grad_norm")
    t.wait(f"() => document.querySelector('.match-count').textContent === '{LAYERS} tags'")
    t.page.locator(".match-add").click()
    card = f'[data-tag="{MATCH_CARD}"]'
    t.wait(f"n => Number(document.querySelector('{card}')?.dataset.series) === n", LAYERS * len(RUNS))
    # One line per tag and run, painted on the chart's canvas, named by run and tag.
    names = t.js(f"""() => document.querySelector('{card} .js-plotly-plot').data
        .flatMap(s => s.meta.role === 'lines' ? s.meta.paths.flatMap(p => p.envs) : [])""")
    assert len(names) == LAYERS * len(RUNS)
    assert t.js(f"() => document.querySelector('{card}').closest('.sc-section').dataset.section") == "custom: matching"
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "many_tags_match.png"))
    t.page.locator(".match-clear").click()
    t.wait(f"() => !document.querySelector('{card}')")
    assert not t.errors, t.errors


def test_a_sections_only_card_takes_the_whole_row(server, tab: Tab):
    t = tab
    open_scalars(t, server)
    t.page.locator("input.tag-filter").fill("^train/loss$|^layer0001/")
    t.wait("() => document.querySelectorAll('.sc-card[data-drawn]').length === 3")
    widths = t.js("""() => Object.fromEntries([...document.querySelectorAll('.sc-section')].map(s => [s.dataset.section,
        [...s.querySelectorAll('.sc-card')].map(c => c.getBoundingClientRect().width / s.querySelector('.sc-grid').clientWidth)]))""")
    assert widths["train"] == [pytest.approx(1.0, abs=0.01)]
    assert all(w < 0.55 for w in widths["layer0001"]) and len(widths["layer0001"]) == 2
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "one_card_row.png"))
    assert not t.errors, t.errors
