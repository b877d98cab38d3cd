"""Seed groups in real Chromium (static/js/pages/seed_groups.js): five seeds of two configs drawn as two mean ± band
curves in Scalars and Compare, n per group shown, and the A-vs-B table with Welch's p-value."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from helpers.browser import Tab, http

SEEDS = 5
CONFIGS = {"a": 0.1, "b": 0.01}
RUNS = [f"{name}_s{seed}" for name in CONFIGS for seed in range(SEEDS)]
CARD = "document.querySelector('[data-tag=\"loss\"] .js-plotly-plot, [data-title=\"loss\"] .js-plotly-plot')"
SHOTS = os.environ.get("PANEBOARD_SHOTS")  # a folder: save screenshots there to look at


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("groups") / "paneboard.db").start()
    rng = np.random.default_rng(3)
    events = []
    x = np.arange(60)
    for name, lr in CONFIGS.items():
        floor = 0.3 if name == "a" else 0.5
        for seed in range(SEEDS):
            env = f"{name}_s{seed}"
            events.append({"op": "set_meta", "env": env, "meta": {"lr": lr, "seed": seed}})
            y = floor + np.exp(-x / 12) + rng.normal(0, 0.03, len(x))
            events.append({"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
                           "traces": [{"name": None, "x": x.tolist(), "y": y.tolist()}]})
    assert http(srv, "POST", "/api/v1/events", {"events": events})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def band_traces(t: Tab) -> list[dict]:
    return t.js(f"""() => {{ const d = {CARD};
        return d && d.data ? d.data.map((tr) => ({{ name: tr.name || '', fill: tr.fill || '', role: tr.meta && tr.meta.role,
            group: tr.meta && tr.meta.group, n: tr.x.length, y0: tr.y[0] }})) : []; }}""")


def check_bands(t: Tab) -> None:
    t.wait(f"() => {{ const d = {CARD}; return d && d.data && d.data.length === 6; }}")
    traces = band_traces(t)
    assert [tr["role"] for tr in traces] == ["lo", "hi", "mean"] * 2
    assert [tr["fill"] for tr in traces if tr["role"] == "hi"] == ["tonexty", "tonexty"]
    means = [tr for tr in traces if tr["role"] == "mean"]
    assert [m["name"] for m in means] == ["lr=0.1 (n=5)", "lr=0.01 (n=5)"]
    assert all(tr["n"] == 60 for tr in traces)
    lo, hi, mean = traces[0], traces[1], traces[2]
    assert lo["y0"] < mean["y0"] < hi["y0"]
    rows = t.js("""() => [...document.querySelectorAll('.ab-table tr.ab-pair')].map((r) => ({
        p: r.dataset.p, text: r.textContent }))""")
    assert len(rows) == 1 and float(rows[0]["p"]) < 1e-3 and "significant" in rows[0]["text"]
    assert "n=5" in t.js("() => document.querySelector('.ab-box summary').textContent")
    assert "n=5, 5 · all aligned on 60 steps" in t.js("() => document.querySelector('[data-grouped=\"1\"] .card-info').textContent")


def test_scalars_groups_seeds_into_bands(server, tab: Tab) -> None:
    tab.open(f"{server.url}/scalars?envs={','.join(RUNS)}")
    tab.wait("() => document.querySelectorAll('.sc-card').length === 1")
    tab.page.check(".group-seeds")
    check_bands(tab)
    tab.page.select_option(".group-band", "minmax")
    tab.wait("() => document.querySelector('[data-grouped=\"1\"] .card-info').textContent.startsWith('min')")
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "scalars_groups.png"), full_page=True)
        tab.page.set_viewport_size({"width": 390, "height": 900})
        tab.page.screenshot(path=os.path.join(SHOTS, "scalars_groups_390.png"), full_page=True)
    # Ignoring nothing: every seed is its own group of one, and the table says n is too small (10 groups: more
    # than 8, so each is compared with the first only).
    tab.page.fill(".group-ignore", "")
    tab.page.dispatch_event(".group-ignore", "change")
    tab.wait(f"() => {{ const d = {CARD}; return d && d.data && d.data.length === 30; }}")
    tab.wait("() => document.querySelectorAll('.ab-table tr.ab-pair.too-small').length === 9")
    assert not tab.errors, tab.errors


def test_compare_groups_seeds_into_bands(server, tab: Tab) -> None:
    tab.open(f"{server.url}/compare?envs={','.join(RUNS)}")
    tab.wait(f"() => {{ const d = {CARD}; return d && d.data && d.data.length === 10; }}")
    tab.page.check(".group-seeds")
    check_bands(tab)
    if SHOTS:
        tab.page.screenshot(path=os.path.join(SHOTS, "compare_groups.png"), full_page=True)
    assert not tab.errors, tab.errors
