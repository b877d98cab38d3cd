"""Seed groups that can be read, in Chromium against a real server (issue 42 item 3): a legend naming each group,
one colour per group (its band, line and chips), a baseline group the user picks, and the A-vs-B table compact
(one row per group against the baseline, collapsible) under the charts."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from helpers.browser import http

LRS = [0.3, 0.1, 0.03, 0.01, 0.003, 0.001]
SEEDS = 3
RUNS = [f"lr{i}_s{s}" for i in range(len(LRS)) for s in range(SEEDS)]
CARD = "document.querySelector('.card[data-title=\"loss\"] .js-plotly-plot')"


def seed_sweep(server) -> dict[str, float]:
    """Six configs of three seeds each; their final losses apart by config. Returns each run's final loss."""
    rng = np.random.default_rng(7)
    x = np.arange(50)
    events, finals = [], {}
    for i, lr in enumerate(LRS):
        for s in range(SEEDS):
            env = f"lr{i}_s{s}"
            y = 0.2 + 0.1 * i + np.exp(-x / 10) + rng.normal(0, 0.02, len(x))
            finals[env] = float(y[-1])
            events.append({"op": "set_meta", "env": env, "meta": {"lr": lr, "seed": s}})
            events.append({"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
                           "traces": [{"name": None, "x": x.tolist(), "y": y.tolist()}]})
    assert http(server, "POST", "/api/v1/events", {"events": events})["errors"] == []
    return finals


def shot(tab, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tab.page.screenshot(path=str(folder / f"runpage-{name}.png"), full_page=False)


def open_grouped(open_tab, server, width=1600, scheme="light"):
    tab = open_tab(f"{server.url}/compare?envs={','.join(RUNS)}", width=width, scheme=scheme)
    tab.wait(f"() => {{ const d = {CARD}; return d && d.data && d.data.length > 0; }}")
    tab.page.check(".group-seeds")
    tab.wait(f"() => {{ const d = {CARD}; return d && d.data && d.data.filter(t => t.meta && t.meta.role === 'mean').length === 6; }}")
    tab.wait("() => document.querySelectorAll('.group-legend-item').length === 6 && document.querySelector('.ab-table')")
    return tab


def test_groups_have_a_legend_their_own_colours_and_a_compact_table_against_a_chosen_baseline(make_server, open_tab, tmp_path):
    from scipy import stats

    server = make_server("groups")  # an ephemeral port of its own
    finals = seed_sweep(server)
    tab = open_grouped(open_tab, server)
    legend = tab.js("() => [...document.querySelectorAll('.group-legend-item')].map(e => [e.dataset.group, e.textContent, getComputedStyle(e.querySelector('.chip')).backgroundColor])")
    assert [text for _, text, _ in legend] == [f"lr={lr} (n=3)" for lr in LRS]
    # One colour per group, the same for its legend chip, its line and its band.
    means = tab.js(f"() => {CARD}.data.filter(t => t.meta.role === 'mean').map(t => [t.meta.group, t.line.color])")
    bands = tab.js(f"() => {CARD}.data.filter(t => t.meta.role === 'hi').map(t => [t.meta.group, t.fillcolor])")
    assert len({color for _, color in means}) == 6
    rgb = lambda hex_: tuple(int(hex_[k:k + 2], 16) for k in (1, 3, 5))  # noqa: E731
    chips = {g: tuple(int(v) for v in c[c.index("(") + 1:c.index(")")].split(",")[:3]) for g, _, c in legend}
    assert all(chips[g] == rgb(color) for g, color in means)
    assert all(fill.startswith("rgba({},{},{},".format(*rgb(dict(means)[g]))) for g, fill in bands)
    # The table sits under the charts, one row per group, each against the baseline (the first group).
    assert tab.js("() => !!(document.querySelector('#grid').compareDocumentPosition(document.querySelector('.ab-box')) & Node.DOCUMENT_POSITION_FOLLOWING)")
    rows = "() => [...document.querySelectorAll('.ab-table tr[data-group], .ab-table tr.ab-pair')].map(r => [r.className.split(' ')[0], r.dataset.group || r.dataset.a, r.dataset.b || '', r.dataset.p || ''])"
    got = tab.js(rows)
    assert [r[0] for r in got] == ["ab-base"] + ["ab-pair"] * 5 and got[0][1] == "g0"
    assert all(r[2] == "g0" for r in got[1:])
    # Another baseline: every row is tested against it (Welch's test, as scipy computes it).
    tab.page.select_option(".ab-baseline", "g3")
    tab.wait("() => document.querySelector('.ab-table tr.ab-base')?.dataset.group === 'g3'")
    got = tab.js(rows)
    assert [r[1] for r in got] == ["g0", "g1", "g2", "g3", "g4", "g5"]
    assert [r[0] for r in got] == ["ab-pair"] * 3 + ["ab-base"] + ["ab-pair"] * 2
    pairs = [r for r in got if r[0] == "ab-pair"]
    assert all(r[2] == "g3" for r in pairs)
    base = [finals[f"lr3_s{s}"] for s in range(SEEDS)]
    for _, group, _, p in pairs:
        i = int(group[1:])
        want = stats.ttest_ind([finals[f"lr{i}_s{s}"] for s in range(SEEDS)], base, equal_var=False).pvalue
        assert abs(float(p) - want) < 1e-6 * max(1.0, want) + 1e-9, (group, p, want)
    assert tab.js("() => document.querySelector('.ab-box summary').textContent").startswith("A vs B: 6 groups against lr=0.01")
    # Collapsible: its summary folds it.
    tab.page.click(".ab-box summary")
    tab.wait("() => !document.querySelector('.ab-box').open")
    shot(tab, "groups-1600-light", tmp_path)
    for name, width, scheme in (("groups-1600-dark", 1600, "dark"), ("groups-390", 390, "light")):
        t = open_grouped(open_tab, server, width, scheme)
        assert t.js("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        shot(t, name, tmp_path)
        assert t.errors == []
    assert tab.errors == []
