"""chart_panes(bare=True), the multi-metric chart's listing of thousands of line panes: the same panes and traces in
the same order as the full listing, without the JSON columns it does not need (opts, layout, style)."""

from __future__ import annotations

import numpy as np


def test_bare_listing_has_the_same_panes_and_traces_without_their_json(store):
    x = np.arange(5, dtype=np.float64)
    with store.transaction() as tx:
        for env in ("a", "b"):
            for i in range(3):
                title = f"layer{i}/grad_norm"
                pane = tx.put_pane(env, f"w{i}", "line", title, {"title": title, "ytype": "log"}, None)
                for name in ("one", "two"):
                    tx.append_points(tx.add_trace(pane, name, {"color": "red"}), x, x * i, x)
            tx.put_pane(env, "notes", "text", "notes", {}, {"text": "hi"})
    full = store.chart_panes(["a", "b"], ("line",))
    bare = store.chart_panes(["a", "b"], ("line",), bare=True)
    ids = lambda listed: {e: [(p.id, p.win, p.title, [(t.id, t.name, t.total) for t in ts]) for p, ts in v]  # noqa: E731
                          for e, v in listed.items()}
    assert ids(bare) == ids(full)
    assert len(bare["a"]) == 3 and bare["a"][0][1][0].total == 5
    assert full["a"][0][0].opts["ytype"] == "log" and full["a"][0][1][0].style == {"color": "red"}
    assert all(p.opts == {} and p.layout is None and all(t.style == {} for t in ts) for p, ts in bare["b"])
