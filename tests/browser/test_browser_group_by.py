"""Grouping by chosen config keys in Chromium (real server): a sweep whose runs form groups is offered the grouped
view first; picking a key regroups the bands; a median centre; Compare groups by a key too."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from helpers.browser import Tab, http

SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at
SEEDS = 6
RUNS = [(f"{opt}-lr{lr}-s{seed}", lr, opt, seed) for lr in (0.1, 0.01) for opt in ("adam", "sgd") for seed in range(SEEDS)]
PLOT = "document.querySelector('[data-tag=\"loss\"] .js-plotly-plot, [data-title=\"loss\"] .js-plotly-plot')"
MEANS = f"() => {{ const d = {PLOT}; return d && d.data ? d.data.filter(t => t.meta.role === 'mean').map(t => t.name) : []; }}"


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("groupby") / "paneboard.db").start()
    rng = np.random.default_rng(5)
    x = np.arange(80)
    events = []
    for env, lr, opt, seed in RUNS:
        events.append({"op": "set_meta", "env": env, "meta": {"lr": lr, "optim": {"name": opt}, "seed": seed}})
        floor = (0.2 if opt == "adam" else 0.6) + (0.05 if lr == 0.01 else 0)
        y = floor + np.exp(-x / 15) + rng.normal(0, 0.03, len(x))
        events.append({"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
                       "traces": [{"name": None, "x": x.tolist(), "y": y.tolist()}]})
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def wait_means(t: Tab, n: int) -> list[str]:
    t.wait(f"() => ({MEANS})().length === {n}")
    return t.js(MEANS)


def test_scalars_offers_groups_then_groups_by_a_picked_key(server, tab: Tab):
    t = tab
    t.page.set_viewport_size({"width": 1600, "height": 1000})
    t.open(f"{server.url}/scalars")
    t.wait("() => !!document.querySelector('.group-offer')")
    assert "form 4 groups" in t.js("() => document.querySelector('.group-offer').textContent")
    t.page.locator(".group-offer-yes").click()
    names = wait_means(t, 4)
    assert all(f"(n={SEEDS})" in n for n in names)
    assert t.js(f"() => {PLOT}.data.filter(t => t.fill === 'tonexty').length") == 4  # a band per group
    assert not t.js("() => !!document.querySelector('.group-offer')")
    # Group by the optimizer alone: two groups of twelve; then a median centre with a min–max band.
    assert t.js("() => [...document.querySelectorAll('.group-by option')].map(o => o.value)") == ["lr", "optim.name", "seed"]
    t.page.select_option(".group-by", ["optim.name"])
    t.wait(f"() => ({MEANS})().join('|') === 'optim.name=adam (n=12)|optim.name=sgd (n=12)'")
    t.page.select_option(".group-center", "median")
    t.page.select_option(".group-band", "minmax")
    t.wait(f"() => ({MEANS})().every(n => n.startsWith('median · '))")
    # The adam group's median sits below the sgd group's, each inside its min–max band.
    tr = t.js(f"() => {PLOT}.data.map(t => ({{role: t.meta.role, y: t.y[40]}}))")
    lo, hi, mid = tr[0]["y"], tr[1]["y"], tr[2]["y"]
    assert lo <= mid <= hi and mid < tr[5]["y"]
    # Every key: 24 groups of one, more than a chart draws a trace apiece: a band and a line per colour instead.
    t.page.select_option(".group-by", ["lr", "optim.name", "seed"])
    t.wait("() => Number(document.querySelector('[data-grouped=\"1\"]').dataset.series) === 24")
    t.wait(f"() => {PLOT}.data.some(t => t.meta.role === 'band')")
    packed = t.js(f"() => {PLOT}.data.map(t => ({{role: t.meta.role, fill: t.fill || '', groups: t.meta.groups.length}}))")
    bands = [p for p in packed if p["role"] == "band"]
    assert len(packed) == 2 * len(bands) and len(bands) < 24 and all(p["fill"] == "toself" for p in bands)
    assert sum(p["groups"] for p in bands) == 24
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "group_by_packed.png"))
    t.page.select_option(".group-by", ["optim.name"])
    t.wait(f"() => ({MEANS})().length === 2")
    if SHOTS:
        t.page.screenshot(path=os.path.join(SHOTS, "group_by_light.png"))
        t.page.emulate_media(color_scheme="dark")
        t.page.screenshot(path=os.path.join(SHOTS, "group_by_dark.png"))
        t.page.emulate_media(color_scheme="light")
    assert not t.errors, t.errors


def test_compare_groups_by_a_picked_key(server, tab: Tab):
    t = tab
    t.open(f"{server.url}/compare?envs={','.join(r[0] for r in RUNS)}")
    t.wait("() => !!document.querySelector('.group-offer')")
    t.page.check(".group-seeds")
    wait_means(t, 4)
    t.page.select_option(".group-by", ["lr"])
    t.wait(f"() => ({MEANS})().join('|') === 'lr=0.1 (n=12)|lr=0.01 (n=12)'")
    assert not t.errors, t.errors
