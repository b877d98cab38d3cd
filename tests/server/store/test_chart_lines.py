"""chart_lines, the multi-metric chart's listing: only the traces of panes whose chart title matches, in the order
chart_panes lists them (the base Store's default, built on it), on SQLite and PostgreSQL, in one query."""

from __future__ import annotations

from fnmatch import fnmatchcase

import numpy as np
from sqlalchemy import event

from paneboard.server.store import Store


def test_lines_of_matching_tags_in_chart_panes_order(store):
    x = np.arange(5, dtype=np.float64)
    with store.transaction() as tx:
        for env in ("b", "a"):
            for i in (3, 1, 2, 0):  # positions follow creation, not the titles' order
                for what in ("grad_norm", "weight_norm"):
                    pane = tx.put_pane(env, f"w{i}{what[0]}", "line", f"layer{i}/{what}", {}, None)
                    for name in ("one", "two"):
                        tx.append_points(tx.add_trace(pane, name, {"color": "red"}), x, x * i, x)
            untitled = tx.put_pane(env, "layer9/grad_norm", "line", "", {}, None)  # its win is its chart title
            tx.append_points(tx.add_trace(untitled, "", {}), x, x, x)
            tx.put_pane(env, "pts", "scatter", "layer5/grad_norm", {}, None)  # not a line
    match = (lambda tag: fnmatchcase(tag, "layer*/grad_norm"))  # noqa: E731
    queries: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: queries.append(a[2]))
    got = store.chart_lines(["a", "b", "missing"], ("line",), match)
    assert len(queries) == 1
    want = Store.chart_lines(store, ["a", "b", "missing"], ("line",), match)
    flat = (lambda listed: {e: [(ln.win, ln.title, ln.trace.id, ln.trace.name, ln.trace.total) for ln in v]  # noqa: E731
                            for e, v in listed.items()})
    assert flat(got) == flat(want)
    assert [ln.title for ln in got["a"]][::2] == ["layer3/grad_norm", "layer1/grad_norm", "layer2/grad_norm",
                                                  "layer0/grad_norm", "layer9/grad_norm"]
    assert [ln.trace.name for ln in got["b"]][:2] == ["one", "two"] and got["missing"] == []
    assert all(ln.trace.total == 5 for ln in got["a"])


GLOBS = ["layer*/grad_norm", "layer?/grad_norm", "LAYER*", "*", "layer[0-2]/*", "layer[!0]/grad_norm", "a_b%*",
         "a\\b*", "[ab]*", "layer1/grad_norm", "*_c", "?", "odd[", "*norm"]


def test_a_glob_narrows_the_query_to_the_same_lines(store):
    titles = ["layer0/grad_norm", "layer1/grad_norm", "layer12/grad_norm", "Layer1/grad_norm", "layerX/weight_norm",
              "a_b%c", "aXb%c", "a\\b\\c", "b_c", "odd[", "x", ""]
    x = np.arange(3, dtype=np.float64)
    with store.transaction() as tx:
        for env in ("a", "b"):
            for i, title in enumerate(titles):
                pane = tx.put_pane(env, title or "untitled_c", "line", title, {}, None)  # "" -> its win's title
                tx.append_points(tx.add_trace(pane, f"t{i}", {}), x, x, x)
    for glob in GLOBS:
        match = (lambda tag, g=glob: fnmatchcase(tag, g))  # noqa: E731
        got = store.chart_lines(["a", "b"], ("line",), match, glob)
        want = store.chart_lines(["a", "b"], ("line",), match)
        flat = {e: [(ln.win, ln.title, ln.trace.id) for ln in v] for e, v in got.items()}
        assert flat == {e: [(ln.win, ln.title, ln.trace.id) for ln in v] for e, v in want.items()}, glob
        assert [ln.title for ln in got["a"]] == [t or "untitled_c" for t in titles if fnmatchcase(t or "untitled_c", glob)]
