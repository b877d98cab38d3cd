"""Panes written by the real `visdom` client render in headless Chromium: figures draw, hostile HTML runs nothing."""

from __future__ import annotations

import numpy as np

from helpers.visdom_page import open_env, plotted, wait

XSS = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
       '<svg onload="window.__xss=3"><circle r="4"/></svg><a href="javascript:window.__xss=4" id="jslink">link</a>'
       '<iframe src="javascript:parent.__xss=5"></iframe><b>bold text</b>')


def test_visdom_figures_render(server, viz, page):
    pg, errors = page
    viz.heatmap(np.arange(12).reshape(3, 4), win="hm", opts={"title": "heat"})
    viz.heatmap(np.ones((1, 4)), win="hm", update="appendRow")
    viz.bar(X=np.array([[1, 2], [3, 4], [5, 6]]), win="bar", opts={"legend": ["p", "q"]})
    viz.surf(X=np.outer(np.arange(5), np.arange(6)), win="surf")  # a 3-D scene
    viz.pie(X=np.array([1, 2, 3]), win="pie", opts={"legend": ["x", "y", "z"]})
    viz._send({"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4], "name": '<img src=x onerror="window.__xss=9">'}],
               "layout": {"title": "raw"}, "win": "raw"})
    viz.line(Y=np.array([1.0, 2.0, 3.0]), X=np.array([0, 1, 2]), win="ln")
    open_env(pg, server, "vb")
    assert plotted(pg, "hm") == [{"type": "heatmap", "n": 4, "name": None}]
    assert [t["type"] for t in plotted(pg, "bar")] == ["bar", "bar"]
    assert plotted(pg, "surf")[0]["type"] == "surface"
    assert pg.evaluate("() => !!document.querySelector('[data-win=\"surf\"] .gl-container, "
                       "[data-win=\"surf\"] canvas')")
    assert plotted(pg, "pie") == [{"type": "pie", "n": 3, "name": None}]
    assert plotted(pg, "raw")[0]["n"] == 2
    assert plotted(pg, "ln") == [{"type": "scatter", "n": 3, "name": "1"}]
    assert pg.evaluate("() => document.querySelector('[data-win=\"hm\"]').dataset.kind") == "figure"
    # a live update of a figure (a new row) re-renders it without a reload
    viz.heatmap(np.zeros((1, 4)), win="hm", update="appendRow")
    wait(pg, "() => { const d = document.querySelector('[data-win=\"hm\"] .js-plotly-plot');"
             " return d && d.data && d.data[0].z.length === 5; }")
    assert pg.evaluate("() => window.__xss") is None
    assert errors == []


def test_visdom_text_pane_with_xss_payloads_executes_nothing(server, viz, page):
    pg, errors = page
    viz.text(XSS, win="note", opts={"title": '<img src=x onerror="window.__xss=6">'})
    viz.text(XSS, win="note", append=True)
    open_env(pg, server, "vb")
    wait(pg, "() => { const b = document.querySelector('[data-win=\"note\"] .text-pane b');"
             " return b && b.textContent === 'bold text'; }")
    html = pg.evaluate("() => document.querySelector('[data-win=\"note\"] .text-pane').innerHTML")
    assert "onerror" not in html and "javascript:" not in html and "<script" not in html and "<iframe" not in html
    pg.evaluate("() => { const a = document.querySelector('#jslink, [data-win=\"note\"] a'); if (a) a.click(); }")
    pg.wait_for_timeout(300)
    assert pg.evaluate("() => window.__xss") is None
    assert errors == []


def test_image_history_slider(server, viz, page):
    pg, errors = page
    for shade in (0.0, 1.0, 0.5):
        viz.image(np.full((3, 8, 8), shade), win="ih", opts={"store_history": True, "caption": f"c{shade}"})
    open_env(pg, server, "vb")
    sel = '[data-win="ih"]'
    wait(pg, "s => { const r = document.querySelector(s + ' input.image-history');"
             " return r && !r.hidden && r.max === '2' && r.value === '2'; }", sel)
    newest = pg.evaluate("s => document.querySelector(s + ' img').getAttribute('src')", sel)
    pg.evaluate("s => { const r = document.querySelector(s + ' input.image-history'); r.value = '0';"
                " r.dispatchEvent(new Event('input')); }", sel)
    first = pg.evaluate("s => document.querySelector(s + ' img').getAttribute('src')", sel)
    assert first != newest and "api/v1/blobs/" in first
    assert pg.evaluate("s => document.querySelector(s + ' figcaption').textContent", sel) == "c0.0"
    wait(pg, "s => { const i = document.querySelector(s + ' img'); return i.complete && i.naturalWidth === 8; }", sel)
    assert errors == []


def test_browser_interactions_reach_visdom_event_handlers(server, viz, page):
    pg, errors = page
    got: list[dict] = []
    viz.properties([{"type": "text", "name": "lr", "value": "0.1"},
                    {"type": "checkbox", "name": "on", "value": False},
                    {"type": "select", "name": "color", "value": 0, "values": ["Red", "Green"]}], win="props")
    viz.text("press a key here", win="keys")
    viz.image(np.zeros((3, 10, 20)), win="clickme")
    for win in ("props", "keys", "clickme"):
        viz.register_event_handler(got.append, win)
    open_env(pg, server, "vb")
    wait(pg, "() => document.querySelectorAll('[data-win=\"props\"] .properties-pane tr').length === 3")
    props = pg.locator('[data-win="props"] .properties-pane')
    props.locator("input[type=text]").fill("0.01")
    props.locator("input[type=text]").press("Enter")  # change fires on commit
    props.locator("input[type=checkbox]").check()
    props.locator("select").select_option("1")
    pg.locator('[data-win="keys"] .text-pane').focus()
    pg.keyboard.press("ArrowRight")
    img = pg.locator('[data-win="clickme"] img')
    wait(pg, "() => { const i = document.querySelector('[data-win=\"clickme\"] img');"
             " return i.complete && i.naturalWidth === 20; }")
    box = img.bounding_box()
    img.click(position={"x": box["width"] * 0.75, "y": box["height"] * 0.25})
    for _ in range(200):  # the events come back over the client's /vis_socket thread
        if len(got) >= 5:
            break
        pg.wait_for_timeout(50)
    seen = [(e["event_type"], e["target"]) for e in got]
    updates = [(e["propertyId"], e["value"]) for e in got if e["event_type"] == "PropertyUpdate"]
    assert updates == [(0, "0.01"), (1, True), (2, 1)], seen
    keys = [e for e in got if e["event_type"] == "KeyPress"]
    assert [(k["target"], k["key"]) for k in keys] == [("keys", "ArrowRight")]
    clicks = [e for e in got if e["event_type"] == "Click"]
    assert len(clicks) == 1 and clicks[0]["target"] == "clickme"
    assert clicks[0]["image_coord"] == {"x": 15, "y": 2}  # image pixels, not screen pixels
    assert clicks[0]["pane_data"]["type"] == "image" and clicks[0]["eid"] == "vb"
    assert errors == []


def test_visdom_svg_and_audio_panes_render_sanitized(server, viz, page):
    pg, errors = page
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" onload="window.__xss=7">'
           '<rect id="r" width="30" height="10" fill="red"/><use href="javascript:window.__xss=8"/>'
           '<a href="javascript:window.__xss=9"><text x="1" y="18">t</text></a></svg>')
    viz.svg(svgstr=svg, win="svg")
    viz.audio(tensor=np.sin(np.linspace(0, 440 * 2 * np.pi, 8000)), win="snd", opts={"sample_frequency": 8000})
    open_env(pg, server, "vb")
    wait(pg, "() => { const r = document.querySelector('[data-win=\"svg\"] svg rect');"
             " return r && r.getBBox().width === 30; }")
    html = pg.evaluate("() => document.querySelector('[data-win=\"svg\"] .text-pane').innerHTML")
    assert "onload" not in html and "javascript:" not in html
    pg.evaluate("() => { const a = document.querySelector('[data-win=\"svg\"] a'); if (a) a.dispatchEvent("
                "new MouseEvent('click', {bubbles: true})); }")
    # the <audio> keeps its data: URI and loads it (a CSP media-src violation would be a console error)
    wait(pg, "() => { const a = document.querySelector('[data-win=\"snd\"] audio');"
             " return a && a.currentSrc.startsWith('data:audio/wav;base64,') && a.readyState >= 1; }")
    pg.wait_for_timeout(200)
    assert pg.evaluate("() => window.__xss") is None
    assert errors == []


def test_network_pane_draws_nodes_and_edges(server, viz, page):
    pg, errors = page
    viz.graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)], nodeLabels=["<b>a</b>", "b", "c", "d"],
              opts={"directed": True, "showVertexLabels": True}, win="net")
    open_env(pg, server, "vb")
    traces = plotted(pg, "net")
    assert [t["name"] for t in traces] == ["edges", "edge labels", "nodes"]
    nodes = pg.evaluate("() => { const d = document.querySelector('[data-win=\"net\"] .js-plotly-plot').data[2];"
                        " return {n: d.x.length, text: Array.from(d.text), finite: d.x.every(Number.isFinite)}; }")
    assert nodes == {"n": 4, "text": ["<b>a</b>", "b", "c", "d"], "finite": True}
    edges = pg.evaluate("() => document.querySelector('[data-win=\"net\"] .js-plotly-plot').data[0].x.length")
    assert edges == 15  # 5 edges × (2 ends + a gap)
    assert pg.evaluate("() => document.querySelectorAll('[data-win=\"net\"] .annotation').length") == 5  # arrows
    assert pg.evaluate("() => document.querySelectorAll('[data-win=\"net\"] b').length") == 0  # labels are text
    assert errors == []
