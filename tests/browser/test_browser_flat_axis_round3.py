"""A constant series (SB3's train/learning_rate: 3e-4 at every step) is drawn on a y range around its value, as
TensorBoard draws it, on the env page's line panes and on the Scalars page; Plotly alone opens it by ±1."""

from __future__ import annotations

import os

import pytest

from helpers.browser import XY, Tab, env_url, http

LR = 3e-4
RANGE = "(d => d && d._fullLayout && d.data && d.data.length ? d._fullLayout.yaxis.range : null)"


def line(env: str, win: str, ys: list[float], x0: int = 0, update: bool = False) -> dict:
    ev = {"op": "update" if update else "set", "env": env, "win": win, "kind": "line", "t": 1_750_000_000.0,
          "opts": {"title": win}, "traces": [{"name": None, "x": [float(x0 + i) for i in range(len(ys))], "y": ys}]}
    return {**ev, "mode": "append"} if update else ev


def post(server, *events: dict) -> None:
    assert http(server, "POST", "/api/v1/events", {"events": list(events)})["errors"] == []


def y_range(tab: Tab, win: str) -> list[float]:
    expr = f"() => {RANGE}({XY.format(win=win)})"
    tab.wait(expr)
    return tab.js(expr)


def centred(rng: list[float], value: float) -> bool:
    lo, hi = rng
    return lo < value < hi and abs((lo + hi) / 2 - value) < 1e-3 * abs(value) and hi - lo < abs(value)


def test_env_page_draws_a_constant_series_around_its_value(server, tab, tmp_path):
    post(server,
         line("sb3", "train/learning_rate", [LR] * 50),
         line("sb3", "train/clip_range", [0.2 + 1e-9 * (i % 3) for i in range(50)]),  # float noise: still flat
         line("sb3", "train/loss", [1.0 / (1 + i) for i in range(50)]))
    tab.open(env_url(server, "sb3"))
    assert centred(y_range(tab, "train/learning_rate"), LR)
    assert centred(y_range(tab, "train/clip_range"), 0.2)
    lo, hi = y_range(tab, "train/loss")  # a varying series keeps Plotly's autoscale around its data
    assert lo <= 1 / 50 and hi >= 1.0 and hi - lo < 1.5
    os.makedirs(shots := os.environ.get("PANEBOARD_SHOTS", str(tmp_path)), exist_ok=True)
    tab.page.screenshot(path=os.path.join(shots, "flat_axis_env.png"))
    # Live: the schedule decays; the pane leaves the constant range and shows both values.
    post(server, line("sb3", "train/learning_rate", [1e-4] * 5, x0=50, update=True))
    tab.wait(f"() => {{ const r = {RANGE}({XY.format(win='train/learning_rate')});"
             " return !!r && r[0] <= 1e-4 && r[1] >= 3e-4; }")
    assert tab.errors == []


def test_a_window_that_sets_its_own_y_range_keeps_it(server, tab):
    ev = line("vis", "fixed", [LR] * 10)
    ev["opts"]["plotly_layout"] = {"yaxis": {"range": [-2, 2]}}
    post(server, ev)
    tab.open(env_url(server, "vis"))
    assert y_range(tab, "fixed") == pytest.approx([-2, 2])


def test_scalars_page_centres_a_constant_chart_with_and_without_outlier_scaling(server, tab):
    post(server, line("sb3s", "lr", [LR] * 40))
    tab.open(f"{server.url}/scalars?envs=sb3s")
    card = "document.querySelector('[data-tag=\"lr\"] .js-plotly-plot')"
    expr = f"() => {RANGE}({card})"
    tab.wait(expr)
    assert centred(tab.js(expr), LR)
    tab.page.locator(".ignore-outliers").uncheck()
    tab.wait(f"() => {{ const d = {card}; return !!d && d.closest('.sc-card').dataset.drawn >= '2'; }}")
    assert centred(tab.js(expr), LR)
    assert tab.errors == []
