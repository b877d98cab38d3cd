"""A run's artifacts on its run panel in headless Chromium: version, step, size, aliases, lineage, a download;
checkpoint steps marked on the run's curves."""

from __future__ import annotations

import paneboard


def test_run_panel_lists_the_artifacts_with_a_download(server, tab, tmp_path):
    f = tmp_path / "model.pt"
    f.write_bytes(b"w" * 2500)
    train = paneboard.Client(port=server.port, env="train", spool_dir=False)
    train.line(X=list(range(300)), Y=[1.0 / (s + 1) for s in range(300)], win="loss")
    assert train.log_artifact(f, name="model", step=250, aliases=["best"]).wait(30) == "model:v1"
    evaluate = paneboard.Client(port=server.port, env="eval", spool_dir=False)
    evaluate.use_artifact("model:best", root=tmp_path / "cache")
    assert train.flush(30) and evaluate.flush(30)
    tab.open(server.env_url("train"))
    tab.page.click("button.act-run")
    tab.wait("() => document.querySelector('.run-artifacts tr[data-ref=\"model:v1\"]') !== null")
    row = tab.js("() => [...document.querySelectorAll('.run-artifacts tr[data-ref=\"model:v1\"] td')]"
                 ".map(td => td.textContent)")
    assert row[:6] == ["model:v1", "model", "250", "2.5 KB", "bestlatest", "eval"]
    href = tab.js("() => document.querySelector('.run-artifacts a.artifact-download').href")
    assert tab.page.request.get(href).body() == f.read_bytes()
    # the checkpoint's step is marked on the run's curves
    tab.wait("() => { const d = document.querySelector('.xy-plot'); return d && d.layout && "
             "(d.layout.shapes || []).some(s => s.name === 'checkpoint' && s.x0 === 250); }")
    tab.open(server.env_url("eval"))
    tab.page.click("button.act-run")
    tab.wait("() => document.querySelectorAll('.run-artifacts tr[data-ref=\"model:v1\"]').length === 1")
    assert "train" in tab.js("() => document.querySelector('.run-artifacts tr[data-ref=\"model:v1\"]').textContent")
    train.close_connection(5)
    evaluate.close_connection(5)
