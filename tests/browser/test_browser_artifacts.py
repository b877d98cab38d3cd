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


def test_lineage_graph_and_compare_of_two_versions(server, tab, tmp_path):
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    for folder, files in ((v1, {"model.pt": b"a" * 3000, "tokenizer.json": b"{}", "old.txt": b"gone"}),
                          (v2, {"model.pt": b"b" * 4500, "tokenizer.json": b"{}", "new.txt": b"here"})):
        folder.mkdir()
        for name, data in files.items():
            (folder / name).write_bytes(data)
    data_dir = tmp_path / "data.csv"
    data_dir.write_bytes(b"x,y\n1,2\n")
    prep = paneboard.Client(port=server.port, env="prep", spool_dir=False)
    assert prep.log_artifact(data_dir, name="data", type="dataset").wait(30) == "data:v1"
    train = paneboard.Client(port=server.port, env="train", spool_dir=False)
    train.use_artifact("data:v1", root=tmp_path / "cache")
    assert train.log_artifact(v1, name="model", metadata={"acc": 0.8, "lr": 0.1}).wait(30) == "model:v1"
    assert train.log_artifact(v2, name="model", metadata={"acc": 0.9, "lr": 0.1, "note": "ft"}).wait(30) == "model:v2"
    evaluate = paneboard.Client(port=server.port, env="eval", spool_dir=False)
    evaluate.use_artifact("model:v2", root=tmp_path / "cache")
    assert prep.flush(30) and train.flush(30) and evaluate.flush(30)

    tab.open(server.env_url("train"))
    tab.page.click("button.act-run")
    tab.wait("() => document.querySelector('.lineage-graph [data-id=\"run:eval\"]') !== null")
    nodes = tab.js("() => [...document.querySelectorAll('.lineage-graph .lg-node')].map(n => n.dataset.id)")
    assert nodes == ["run:prep", "ver:data:v1", "run:train", "ver:model:v1", "ver:model:v2", "run:eval"]
    edges = tab.js("() => [...document.querySelectorAll('.lineage-graph .lg-edge')]"
                   ".map(e => e.dataset.from + ' > ' + e.dataset.to)")
    assert sorted(edges) == sorted(["run:prep > ver:data:v1", "ver:data:v1 > run:train", "run:train > ver:model:v1",
                                    "run:train > ver:model:v2", "ver:model:v2 > run:eval"])
    href = tab.js("() => document.querySelector('.lineage-graph [data-id=\"run:eval\"]').closest('a')"
                  ".getAttribute('href')")
    assert href.endswith("/env/eval")

    tab.page.click('.run-artifacts tr[data-ref="model:v2"] button.artifact-compare-btn')
    tab.wait("() => document.querySelector('.artifact-diff-files') !== null")
    files = tab.js("() => [...document.querySelectorAll('.artifact-diff-files tbody tr')]"
                   ".map(r => [...r.children].slice(0, 4).map(td => td.textContent))")
    assert files == [["changed", "model.pt", "3.0 KB", "4.5 KB"], ["added", "new.txt", "–", "4 B"],
                     ["removed", "old.txt", "4 B", "–"], ["same", "tokenizer.json", "2 B", "2 B"]]
    meta = tab.js("() => [...document.querySelectorAll('.artifact-diff-meta tbody tr')]"
                  ".map(r => [...r.children].map(td => td.textContent))")
    assert meta == [["changed", "acc", "0.8", "0.9"], ["added", "note", "–", "ft"]]
    assert "model:v1 → model:v2: 1 changed, 1 added, 1 removed, 1 same" in \
        tab.js("() => document.querySelector('.compare-summary').textContent")
    tab.page.select_option("select.compare-a", "2")  # either side switches to any version
    tab.wait("() => (document.querySelector('.compare-summary') || {}).textContent?.startsWith('model:v2 → model:v2')")
    assert tab.errors == []
    for c in (prep, train, evaluate):
        c.close_connection(5)
