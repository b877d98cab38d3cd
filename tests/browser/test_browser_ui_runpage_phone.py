"""A run page on a phone and its config, in Chromium against a real server (issue 42 item 9, second half): the
header keeps "console" whole at 390 px, media stay below the metrics and short, and the config is shown once, as
one tree with nested keys under their parent (not JSON strings)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from helpers.browser import flushed

CONFIG = {"lr": 0.001, "optim": {"name": "adam", "betas": [0.9, 0.999], "sched": {"warmup": 100}}, "seed": 3}


def shot(tab, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tab.page.screenshot(path=str(folder / f"runpage-{name}.png"), full_page=False)


def make_run(server, env: str):
    import paneboard

    c = paneboard.Client(port=server.port, env=env, config=CONFIG, spool_dir=False)
    rng = np.random.default_rng(0)
    for k in range(3):  # images logged first: they used to fill a phone's first screens
        c.image(rng.random((3, 64, 64)), win=f"sample{k}", opts={"title": f"sample {k}"})
    c.line(X=list(range(30)), Y=list(np.exp(-np.arange(30) / 8)), win="train_loss", opts={"title": "train loss"})
    c.line(X=list(range(30)), Y=list(np.exp(-np.arange(30) / 9)), win="val_loss", opts={"title": "val loss"})
    flushed(c)
    return c


def test_a_phone_sees_the_whole_header_and_the_metrics_first(make_server, open_tab, tmp_path):
    server = make_server("phone")  # an ephemeral port of its own
    c = make_run(server, "a_fairly_long_run_name_lr0.001_seed3")
    tab = open_tab(server.env_url("a_fairly_long_run_name_lr0.001_seed3"), width=390)
    tab.wait("() => document.querySelector('.run-badge .run-status')?.textContent === 'running'")
    # "console" is whole, inside the header's crumbs, and so are the run's status and name's start.
    link = tab.js("() => { const a = document.querySelector('.crumb-console'), c = document.querySelector('.crumbs');"
                  " const r = a.getBoundingClientRect(), cr = c.getBoundingClientRect();"
                  " return [a.textContent, r.right <= cr.right + 0.5, a.scrollWidth <= a.clientWidth + 1 || a.scrollWidth <= r.width + 1, r.width]; }")
    assert link[0] == "console" and link[1] and link[2] and link[3] > 30, link
    assert tab.js("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    # The first screen shows the metrics, not the images logged before them.
    order = tab.js("() => [...document.querySelectorAll('.card')].map(c => c.dataset.win)")
    assert order[:2] == ["train_loss", "val_loss"], order
    first = tab.js("() => document.querySelector('[data-win=\"train_loss\"]').getBoundingClientRect().top")
    assert first < 800
    image_h = tab.js("() => document.querySelector('[data-win=\"sample0\"]').getBoundingClientRect().height")
    chart_h = tab.js("() => document.querySelector('[data-win=\"train_loss\"]').getBoundingClientRect().height")
    assert image_h < chart_h, (image_h, chart_h)
    shot(tab, "run-390", tmp_path)
    c.close_connection(5)
    assert tab.errors == []


def test_the_config_is_shown_once_as_one_tree(make_server, open_tab, tmp_path):
    server = make_server("tree")
    c = make_run(server, "cfg")
    tab = open_tab(server.env_url("cfg"), width=1600)
    tab.wait("() => !document.querySelector('.act-config').hidden")
    tab.page.click(".act-config")  # the header's config button opens the run panel at its config
    tab.wait("() => !document.querySelector('.run-panel').hidden && document.querySelector('.config-tree')")
    rows = tab.js("() => [...document.querySelectorAll('.run-config .config-tree tr')].map(r => [r.dataset.key,"
                  " r.querySelector('td').textContent, parseFloat(r.querySelector('th').style.paddingLeft || '0')])")
    assert rows == [["lr", "0.001", 0], ["optim", "", 0], ["optim.name", "adam", 14], ["optim.betas", "[0.9,0.999]", 14],
                    ["optim.sched", "", 14], ["optim.sched.warmup", "100", 28], ["seed", "3", 0]]
    # Shown once: no second config table on the page, and no JSON string of a nested key anywhere.
    assert tab.js("() => document.querySelectorAll('table.config, .config-tree').length") == 1
    assert "{\"name\"" not in tab.page.inner_text("main")
    shot(tab, "run-1600-light", tmp_path)
    dark = open_tab(server.env_url("cfg"), width=1600, scheme="dark")
    dark.wait("() => document.querySelector('[data-win=\"train_loss\"] .main-svg')")
    shot(dark, "run-1600-dark", tmp_path)
    c.close_connection(5)
    assert tab.errors == [] and dark.errors == []
