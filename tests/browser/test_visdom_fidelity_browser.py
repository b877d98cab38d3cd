"""Every one of Visdom 0.2.4's 62 runnable demo functions, drawn in Chromium, shows what Visdom shows.

The demos (tests/helpers/visdom_examples, copied from Visdom's git tag) run unchanged with the real visdom client,
one env per component file. What each window should look like comes from the real Visdom 0.2.4 server: its stored
window dicts after the same demos, reduced to what its plotly.js 2.11 draws (string titles drawn, plotly's default
trace mode, heatmap labels as stored) and recorded in helpers/visdom_demo_pictures.json by
helpers/make_visdom_pictures.py. What paneboard drew is read from the page: Plotly's full layout and DOM (axis
titles, trace types and modes, heatmap shape, typeset TeX), text, images, SVG geometry. The two demos that download
from the internet (misc_video_download, misc_audio_download) are left out, as upstream's offline runs do.
"""

from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from helpers.paths import TESTS
from helpers.visdom_fidelity import (
    ALL_DRAWN_JS,
    DEMOS,
    DRAWN_JS,
    differences,
    env_windows,
    run_demos,
    window_facts,
)
from helpers.visdom_page import TIMEOUT_MS, open_env, wait

pytestmark = pytest.mark.long  # one module fixture runs every Visdom demo: start it first

VISDOM = json.loads((TESTS / "helpers" / "visdom_demo_pictures.json").read_text())["demos"]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, server_types, chromium):
    """Run all demos (one env per component file), open each env once, and read every window's picture."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import visdom

    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("fidelity") / "paneboard.db").start()
    viz = visdom.Visdom(server="http://127.0.0.1", port=srv.port, raise_exceptions=True)
    try:
        touched = run_demos(viz)
        windows = env_windows(viz)
        pictures: dict[tuple[str, str], dict | None] = {}
        mathjax: dict[str, tuple[bool, bool]] = {}  # env -> (MathJax loaded, a window holds "$")
        context = chromium.new_context(viewport={"width": 1400, "height": 7000})  # every card in view: all draw
        errors: list[str] = []
        try:
            pg = context.new_page()
            pg.set_default_timeout(TIMEOUT_MS)
            pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
            for env, wins in windows.items():
                if not wins:
                    continue
                open_env(pg, srv, env)
                wait(pg, ALL_DRAWN_JS)
                if any("$" in json.dumps(w.get("content", ""))[:100000] for w in wins.values()):
                    try:  # TeX is typeset after the first draw, once MathJax has loaded
                        wait(pg, "() => document.querySelector('g[class*=\"math-group\"] svg')", timeout=10_000)
                    except PlaywrightTimeout:
                        errors.append(f"{env}: no TeX label was typeset")
                for win in wins:
                    pictures[(env, win)] = pg.evaluate(DRAWN_JS, win)
                mathjax[env] = (pg.evaluate("() => !!document.querySelector('script[src*=\"mathjax\"]')"),
                                any("$" in json.dumps(w.get("content", ""))[:100000] for w in wins.values()))
        finally:
            context.close()
        result = {"touched": touched, "windows": windows, "pictures": pictures, "errors": errors, "mathjax": mathjax}
        if os.environ.get("PANEBOARD_DEMO_REPORT"):
            write_report(result, os.environ["PANEBOARD_DEMO_REPORT"])
        yield result
    finally:
        viz.use_socket = False
        if getattr(viz, "socket", None) is not None:
            viz.socket.close()
        assert " 500 " not in srv.log(), "the server answered 500 during the demos"
        srv.stop()


def demo_report(drawn: dict, name: str) -> list[str]:
    """How one demo's windows differ from Visdom's (those it created or changed, in order; None: gone at the end)."""
    ours = drawn["touched"][name]
    if len(ours) != len(VISDOM[name]):
        return [f"touched {len(ours)} windows, Visdom's run {len(VISDOM[name])}"]
    out = []
    for (env, win), exp in zip(ours, VISDOM[name], strict=True):
        exists = win in drawn["windows"][env]
        if exp is None or not exists:
            if exists or exp is not None:
                out.append(f"{win}: {'still exists' if exists else 'is gone'}, unlike in Visdom")
            continue
        out += differences(exp, drawn["pictures"].get((env, win)), win)
    return out


def write_report(drawn: dict, path: str) -> None:
    """The per-demo table (drawn-equal / different) as Markdown, for PANEBOARD_DEMO_REPORT=path."""
    rows = ["| demo | drawn | windows | notes |", "|---|---|---|---|"]
    for _, name in DEMOS:
        diffs = demo_report(drawn, name)
        wins = [w for e, w in drawn["touched"][name] if w in drawn["windows"][e]]
        rows.append(f"| `{name}` | {'different' if diffs else 'equal'} | {len(wins)} | {'; '.join(diffs)} |")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def test_all_62_demos_ran():
    assert len(DEMOS) == 62, [n for _, n in DEMOS]


@pytest.mark.parametrize("name", [n for _, n in DEMOS])
def test_demo_draws_what_visdom_draws(drawn, name):
    assert demo_report(drawn, name) == []


def test_win_data_holds_what_visdom_holds(drawn):
    """/win_data of every demo window: Visdom's top-level keys (the opts each /update copies there) and integer
    axes (appended integers stay integers)."""
    diffs = {}
    for name, wins in drawn["touched"].items():
        for (env, win), exp in zip(wins, VISDOM[name], strict=False):
            if exp is not None and win in drawn["windows"][env]:
                ours = window_facts(drawn["windows"][env][win])
                if ours != exp["facts"]:
                    diffs[f"{name}/{win}"] = {k: (ours[k], exp["facts"][k]) for k in ours if ours[k] != exp["facts"][k]}
    assert diffs == {}, json.dumps(diffs, indent=None)


def test_mathjax_loads_only_for_tex(drawn):
    """The 2 MB MathJax bundle is fetched by pages whose figures hold TeX, and only by those."""
    assert drawn["mathjax"] and all(loaded == tex for loaded, tex in drawn["mathjax"].values()), drawn["mathjax"]
    assert sum(tex for _, tex in drawn["mathjax"].values()) == 1  # misc: the two LaTeX demos


def test_no_page_errors(drawn):
    assert drawn["errors"] == []
