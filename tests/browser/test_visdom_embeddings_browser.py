"""Visdom embeddings in Chromium: points drawn per label group; hover and lasso reach the script's handlers."""

from __future__ import annotations

import numpy as np
import visdom

from helpers.visdom_page import open_env, wait


def test_embeddings_pane_renders_and_reports_hover_and_lasso(server, viz, page, monkeypatch):
    pg, errors = page
    # The client's t-SNE backend (bhtsne) is not installable here: a fixed projection stands in for it.
    monkeypatch.setattr(visdom, "do_tsne", lambda X: [tuple(r) for r in np.asarray(X)[:, :2]])
    features = np.random.default_rng(0).random((30, 4))
    labels = [str(i % 3) for i in range(30)]
    viz.embeddings(features, labels, data_getter=lambda i: f"<b>item {i}</b><script>window.__xss=1</script>",
                   data_type="html", win="emb")
    open_env(pg, server, "vb")
    sel = '[data-win="emb"] .js-plotly-plot'
    wait(pg, "s => { const d = document.querySelector(s); return d && d.data && d.data.length === 3; }", sel)
    counts = pg.evaluate("s => document.querySelector(s).data.map(t => t.x.length)", sel)
    assert sorted(counts) == [10, 10, 10]
    # Hover a point (Plotly's own event, as the pointer would raise it): the script answers with its preview.
    pg.evaluate("""s => { const d = document.querySelector(s);
        d.emit('plotly_hover', {points: [{customdata: d.data[0].customdata[1]}]}); }""", sel)
    wait(pg, "() => { const p = document.querySelector('[data-win=\"emb\"] .embeddings-preview');"
             " return p && p.textContent.startsWith('item '); }")
    assert pg.evaluate("() => document.querySelector('[data-win=\"emb\"] .embeddings-preview b') !== null")
    # A lasso over three points: the script re-runs its projection on them and the pane shows only those.
    pg.evaluate("""s => { const d = document.querySelector(s);
        d.emit('plotly_selected', {points: [0, 1, 2].map(i => ({customdata: d.data[0].customdata[i]}))}); }""", sel)
    wait(pg, """s => { const d = document.querySelector(s);
        return d && d.data && d.data.reduce((n, t) => n + t.x.length, 0) === 3; }""", sel)
    assert pg.evaluate("() => window.__xss") is None
    assert errors == []
