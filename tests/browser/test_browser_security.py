"""XSS payloads in real Chromium: text panes, env and window names carrying markup execute nothing."""

from __future__ import annotations

import paneboard

PAYLOADS = [
    "<script>window.__xss = 'script'</script>",
    "<img src=x onerror=\"window.__xss = 'onerror'\">",
    "<svg onload=\"window.__xss = 'svg'\"><circle r=5></circle></svg>",
    "<svg><script>window.__xss = 'svg-script'</script></svg>",
    "<a id=jslink href=\"JaVaScRiPt:window.__xss = 'js-url'\">click me</a>",
    "<div id=css1 style=\"background:url(javascript:window.__xss='css-url'); width: expression(window.__xss='expr')\">"
    "css</div>",
    "<style>body { background: url(\"javascript:window.__xss='style'\") }</style>",
    "<iframe srcdoc=\"<script>parent.__xss='srcdoc'</script>\"></iframe>",
    "<object data=\"javascript:window.__xss='object'\"></object>",
    "<meta http-equiv=refresh content=\"0;url=javascript:window.__xss='meta'\">",
    "<details open ontoggle=\"window.__xss='toggle'\">d</details>",
    "<b>still bold</b>",
]
EVIL_ENV = "<img src=x onerror=window.__xss='env'>"
EVIL_WIN = "<svg onload=window.__xss='win'>"


def test_payloads_in_text_panes_and_names_execute_nothing(server, tab):
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env=EVIL_ENV)
    client.text("".join(PAYLOADS), win=EVIL_WIN, opts={"title": "<script>window.__xss='title'</script>"})
    client.line(X=[0, 1], Y=[1, 2], win="plot", opts={"title": "<img src=x onerror=window.__xss='plot'>"})
    assert client.flush(timeout=15)
    tab.open(server.url + "/")
    tab.wait("() => document.body.textContent.includes(\"<img src=x onerror\")")  # the env name, as text
    from urllib.parse import quote

    tab.open(server.url + "/env/" + quote(EVIL_ENV, safe=""))
    tab.wait("() => [...document.querySelectorAll('main a')].some(a => a.textContent === 'click me')")
    tab.page.get_by_text("click me").click()  # the sanitizer dropped its javascript: href
    tab.page.wait_for_timeout(500)
    assert tab.js("() => window.__xss") is None
    found = tab.js("""() => {
        const bad = [];
        for (const el of document.querySelectorAll('main *')) {
            const tag = el.tagName.toLowerCase();
            if (['script', 'iframe', 'object', 'embed', 'meta', 'style'].includes(tag)) bad.push(tag);
            for (const a of el.attributes) {
                const v = a.value.toLowerCase();
                if (a.name.startsWith('on') || v.includes('javascript:') || v.includes('expression(')) bad.push(tag + ' ' + a.name);
            }
        }
        return bad;
    }""")
    assert found == [], found
    assert tab.js("() => document.querySelector('main b') && document.querySelector('main b').textContent") \
        == "still bold"
    # Names and titles carrying markup are shown as text.
    assert tab.js("(w) => [...document.querySelectorAll('[data-win]')].some(e => e.dataset.win === w)", EVIL_WIN)
    assert "<script>window.__xss='title'</script>" in tab.js("() => document.querySelector('main').textContent")
    assert not [e for e in tab.errors if "Content Security Policy" not in e], tab.errors
    client.close_connection(timeout=5)


def test_embed_page_writes_nothing_whatever_it_is_asked(server, tab):
    client = server.client("emb")
    client.text("notes", win="notes")
    client.line(X=[0, 1], Y=[1, 2], win="loss")
    assert client.flush(timeout=15)
    client.close_connection(timeout=5)
    before = server.get_json("/api/v1/envs/emb/meta")
    tab.open(server.url + "/embed/emb")
    tab.wait("() => document.querySelector('[data-win=\"notes\"]') !== null")
    # Every fetch the page makes is logged, so a key press that would send a Visdom event is seen at once.
    tab.js("() => { window.__sent = []; const f = window.fetch; window.fetch = (u, i) => "
           "{ if (i && i.method && i.method !== 'GET') window.__sent.push(String(u)); return f(u, i); }; }")
    pane = tab.page.locator('[data-win="notes"] .content, [data-win="notes"]').first
    pane.click()
    tab.page.keyboard.press("a")
    assert tab.js("() => window.__sent") == []
    # Whatever script runs in the embed page (its own code, or a drag handler), the server refuses its writes.
    statuses = tab.js("""async () => {
        const put = await fetch('/api/v1/envs/emb/panes/loss/layout', {method: 'PUT',
            headers: {'Content-Type': 'application/json'}, body: JSON.stringify({x: 6, y: 0, w: 6, h: 4})});
        const ev = await fetch('/vis_event', {method: 'POST', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({event_type: 'KeyPress', key: 'a', target: 'notes', eid: 'emb'})});
        return [put.status, ev.status, (await put.json()).error];
    }""")
    assert statuses[:2] == [403, 403] and "read-only" in statuses[2]
    assert server.get_json("/api/v1/envs/emb/meta") == before
    assert [e for e in tab.errors if "403" not in e] == []  # only the refusals asked for above


LINK = '<a href="https://evil.example/">click</a>'


def test_trace_names_and_titles_are_plain_text_in_legends_and_snapshots(server, tab):
    import numpy as np

    client = server.client("legend")
    client.line(X=np.column_stack([np.arange(3.0)] * 2), Y=np.column_stack([np.arange(3.0), -np.arange(3.0)]),
                win="loss", opts={"title": LINK, "legend": [LINK, "b"], "ylabel": LINK})
    assert client.flush(timeout=15)
    client.close_connection(timeout=5)
    links = """() => [...document.querySelectorAll('.js-plotly-plot svg a')].length"""
    shown = """() => [...document.querySelectorAll('.js-plotly-plot .legendtext, .js-plotly-plot .ytitle')]
                     .map(e => e.textContent)"""
    tab.open(server.url + "/env/legend")
    tab.wait("() => document.querySelectorAll('.js-plotly-plot .legendtext').length === 2")
    assert tab.js(links) == 0
    assert LINK in tab.js(shown)  # shown as typed
    tab.page.goto("about:blank")  # the snapshot is served as a download: opened as a file would be, no CSP of ours
    tab.page.set_content(server.get_text("/api/v1/envs/legend/snapshot.html"))
    tab.wait("() => document.querySelectorAll('.js-plotly-plot .legendtext').length === 2")
    assert tab.js(links) == 0
    assert LINK in tab.js(shown)
