"""The HParams view in Chromium for real sweeps: Client(config=...) runs as axes, a missing value as a gap, the axes
picker (kept in the URL), importance beside the plot, and one HF run with 100 args/* keys drawn legibly."""

from __future__ import annotations

from helpers.browser import flushed, http
from helpers.hparams_sweep import hf_args, sweep_events

LABELS = "() => [...document.querySelectorAll('.pc-axis .pc-title')].map((t) => t.textContent)"
AXIS_X = "(i) => document.querySelector(`.pc-axis[data-dim=\"${i}\"] .pc-axis-line`).getAttribute('x1')"


def test_client_config_runs_are_axes_and_a_missing_value_is_a_gap(server, tab):
    import paneboard

    configs = [("run_a", {"lr": 1e-4, "dropout": 0.1, "width": 64}), ("run_b", {"lr": 1e-3, "width": 128}),
               ("run_c", {"lr": 1e-2, "dropout": 0.3, "width": 256})]
    for i, (env, config) in enumerate(configs):
        c = paneboard.Client(server="http://127.0.0.1", port=server.port, env=env, config=config, spool_dir=False)
        c.line(X=[0, 1], Y=[1.0, 0.2 * (i + 1)], win="loss")
        flushed(c)
        c.close_connection()

    tab.open(server.url + "/hparams")
    tab.wait("() => document.querySelectorAll('.pc-lines path').length === 3")
    assert tab.js(LABELS) == ["lr (log)", "dropout", "width", "loss"]
    # run_b has no dropout: its line stops at lr and starts again at width, never crossing the dropout axis.
    rows = tab.js("() => [...document.querySelectorAll('.hp-table tbody tr')].map((r) => r.dataset.env)")
    d = tab.js("(i) => document.querySelector(`.pc-lines path[data-row=\"${i}\"]`).getAttribute('d')",
               rows.index("run_b"))
    x_dropout = float(tab.js(AXIS_X, 1))
    assert d.count("M") == 2, d
    assert all(abs(float(p.split(",")[0]) - x_dropout) > 1 for p in d.replace("M", " ").replace("L", " ").split())
    full = tab.js("(i) => document.querySelector(`.pc-lines path[data-row=\"${i}\"]`).getAttribute('d')",
                  rows.index("run_a"))
    assert full.count("M") == 1 and full.count("L") == 3
    # The log axis has decade ticks; the table shows the empty cell.
    ticks = tab.js("() => [...document.querySelectorAll('.pc-axis[data-dim=\"0\"] .pc-tick')].map((t) => t.textContent)")
    assert ticks == ["1e-4", "1e-3", "1e-2"]
    assert tab.js("() => document.querySelector('.hp-table tbody tr[data-env=\"run_b\"] td:nth-child(3)').textContent") == "–"
    tab.wait("() => document.querySelectorAll('.hp-imp-table tbody tr').length === 3")
    # Brushing the log axis works in decades: from the top (1e-2) to 60% down (10^-3.2) keeps 1e-3 and 1e-2.
    axis = tab.js("() => { const r = document.querySelector('.pc-axis[data-dim=\"0\"] .pc-axis-line')"
                  ".getBoundingClientRect(); return {x: r.left, top: r.top, h: r.height}; }")
    tab.page.mouse.move(axis["x"], axis["top"] - 6)
    tab.page.mouse.down()
    tab.page.mouse.move(axis["x"], axis["top"] + 0.3 * axis["h"], steps=3)
    tab.page.mouse.move(axis["x"], axis["top"] + 0.6 * axis["h"], steps=3)
    tab.page.mouse.up()
    tab.wait("() => document.querySelectorAll('.hp-table tbody tr').length === 2")
    assert sorted(tab.js("() => [...document.querySelectorAll('.hp-table tbody tr')].map((r) => r.dataset.env)")) \
        == ["run_b", "run_c"]
    assert tab.errors == []


def test_the_picker_changes_the_axes_of_a_200_run_sweep_and_the_url_keeps_them(server, tab):
    assert http(server, "POST", "/api/v1/events", {"events": sweep_events(200)})["ok"]
    tab.open(server.url + "/hparams")
    tab.wait("() => document.querySelectorAll('.pc-lines path').length === 200")
    default = ["lr (log)", "weight_decay (log)", "batch_size", "optimizer", "seed", "model.depth", "dropout", "loss"]
    assert tab.js(LABELS) == default
    assert tab.js("() => document.querySelector('.hp-count').textContent") == "200 of 200 runs"
    # Importance beside the plot: lr first (the loss depends mostly on it); a click on a name toggles its axis.
    tab.wait("() => document.querySelector('.hp-imp-table tbody tr')?.dataset.param === 'lr'")
    assert tab.js("() => document.querySelector('.hp-importance').getBoundingClientRect().left"
                  " > document.querySelector('.hp-parcoords').getBoundingClientRect().left")

    tab.page.click(".hp-columns summary")
    assert tab.js("() => document.querySelector('.hp-columns summary').textContent") == "axes: 8 of 12"  # 10 hparams, 2 metrics
    tab.page.check('.hp-column-list input[data-col="h:dataset"]')   # a key with one value: offered, not drawn
    tab.page.uncheck('.hp-column-list input[data-col="h:seed"]')
    tab.wait("() => document.querySelectorAll('.pc-axis').length === 8")
    picked = ["lr (log)", "weight_decay (log)", "batch_size", "optimizer", "model.depth", "dataset", "dropout", "loss"]
    assert tab.js(LABELS) == picked
    heads = tab.js("() => [...document.querySelectorAll('.hp-table th')].map((t) => t.dataset.col)")
    assert "h:dataset" in heads and "h:seed" not in heads
    assert "ax=h%3Adataset" in tab.page.url and "ax=h%3Aseed" not in tab.page.url

    tab.page.reload()
    tab.wait("() => document.querySelectorAll('.pc-lines path').length === 200")
    assert tab.js(LABELS) == picked
    tab.page.click('.hp-imp-table button:text-is("seed")')
    tab.wait("() => document.querySelectorAll('.pc-axis').length === 9")
    tab.page.click(".hp-columns summary")
    tab.page.fill(".hp-pick-filter", "depth")
    assert tab.js("() => [...document.querySelectorAll('.hp-pick')].filter((l) => !l.hidden).map((l) => l.title)") \
        == ["model.depth"]
    # Another metric colours the lines and ranks the hparams against itself; the URL keeps it.
    tab.page.select_option(".hp-metric", "val/acc")
    tab.wait("() => document.querySelector('.hp-imp-head').textContent === 'parameter importance for val/acc'")
    assert tab.js("() => document.querySelector('.hp-legend').textContent").startswith("colour: val/acc")
    assert "metric=val%2Facc" in tab.page.url
    tab.page.select_option(".hp-metric", "loss")
    tab.wait("() => document.querySelector('.hp-imp-head').textContent === 'parameter importance for loss'")
    tab.page.click('.hp-pick-tools button:text-is("defaults")')
    tab.wait("(want) => JSON.stringify([...document.querySelectorAll('.pc-axis .pc-title')].map((t) => t.textContent))"
             " === JSON.stringify(want)", default)
    assert "ax=" not in tab.page.url and "metric=loss" in tab.page.url
    assert tab.errors == []


def test_one_hf_run_with_a_hundred_args_draws_legibly_without_console_errors(server, tab):
    ev = {"op": "hparams", "env": "hf", "hparams": hf_args(100), "metrics": {"eval/loss": 0.4}}
    assert http(server, "POST", "/api/v1/events", {"events": [ev]})["ok"]
    tab.open(server.url + "/hparams")
    tab.wait("() => document.querySelectorAll('.pc-lines path').length === 1")
    labels = tab.js(LABELS)
    assert len(labels) == 7 and labels[0] == "args/learning_rate (log)"
    # No two axis titles overlap, and every one stays inside the plot.
    boxes = tab.js("() => [...document.querySelectorAll('.pc-axis .pc-title')].map((t) => {"
                   " const r = t.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; })")
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a[1] <= b[0] or a[3] <= b[2] or b[3] <= a[2], (a, b)
    svg = tab.js("() => { const r = document.querySelector('.parcoords-svg').getBoundingClientRect();"
                 " return [r.left, r.right]; }")
    assert all(svg[0] <= b[0] and b[1] <= svg[1] for b in boxes), (svg, boxes)
    # All 100 keys are a click away; drawing 40 of them scrolls sideways instead of overprinting.
    tab.page.click(".hp-columns summary")
    assert tab.js("() => document.querySelectorAll('.hp-column-list input[data-col^=\"h:\"]').length") == 100
    for k in range(31, 64):
        tab.page.check(f'.hp-column-list input[data-col="h:args/option_with_a_rather_long_name_{k:02d}"]')
    tab.wait("() => document.querySelectorAll('.pc-axis').length === 40")
    gaps = tab.js("() => [...document.querySelectorAll('.pc-axis-line')].map((l) => +l.getAttribute('x1'))")
    assert min(b - a for a, b in zip(gaps, gaps[1:], strict=False)) >= 90
    assert tab.js("() => { const s = document.querySelector('.hp-plot-scroll'); return s.scrollWidth > s.clientWidth; }")
    assert tab.errors == []
