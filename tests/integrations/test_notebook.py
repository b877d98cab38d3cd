"""Jupyter: the embed page framed by another origin in Chromium, and paneboard.show / %paneboard run by a real
kernel through nbclient."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.browser import TIMEOUT_MS, flushed


@pytest.fixture
def other_origin(tmp_path: Any) -> Iterator[tuple[str, Any]]:
    """A static web server on another port (another origin), serving tmp_path: stands in for Jupyter."""
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **kw)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", tmp_path
    finally:
        httpd.shutdown()
        thread.join(5)


def test_the_embed_page_renders_inside_another_origins_iframe_without_chrome(server: Any, sdk: Any, tab: Any,
                                                                              other_origin: Any):
    import paneboard

    c = sdk("nb")
    c.line(X=[0, 1, 2], Y=[1.0, 0.5, 0.25], win="loss", opts={"title": "loss"})
    c.text("hello", win="note")
    flushed(c)
    origin, folder = other_origin
    whole = paneboard.show("nb", port=server.port, server="http://127.0.0.1")
    one = paneboard.show("nb", "loss", port=server.port, server="http://127.0.0.1", height=300)
    (folder / "nb.html").write_text('<html><head><link rel="icon" href="data:,"></head>'
                                    f"<body>{whole._repr_html_()}{one._repr_html_()}</body></html>")
    tab.page.goto(f"{origin}/nb.html")
    frames = tab.page.frame_locator("iframe")
    frames.nth(0).locator('[data-win="loss"] .js-plotly-plot').wait_for(timeout=TIMEOUT_MS)
    frames.nth(0).locator('[data-win="note"]').wait_for(timeout=TIMEOUT_MS)
    frames.nth(1).locator('[data-win="loss"] .js-plotly-plot').wait_for(timeout=TIMEOUT_MS)
    assert frames.nth(1).locator('[data-win="note"]').count() == 0  # one pane only
    assert not frames.nth(0).locator(".topbar").is_visible()  # no page chrome
    assert frames.nth(0).locator(".pane-menu").count() == 0 or not frames.nth(0).locator(".pane-menu").first.is_visible()
    tab.page.screenshot(path=str(folder / "embed.png"))
    assert tab.errors == []


def run_notebook(cells: list[str]) -> list[dict]:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return [out for cell in nb.cells for out in cell.get("outputs", [])]


def html_of(outputs: list[dict]) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in outputs)


def test_show_in_a_notebook_outputs_an_iframe_of_the_env(server: Any):
    outputs = run_notebook([f"import paneboard\npaneboard.show('nb run', port={server.port})"])
    out = html_of(outputs)
    assert "<iframe" in out and f":{server.port}/embed/nb%20run" in out


def test_the_magic_attaches_to_a_running_server_and_shows_the_env(server: Any):
    outputs = run_notebook(["%load_ext paneboard", f"%paneboard magic-env --port {server.port} --height 400"])
    out = html_of(outputs)
    assert f"127.0.0.1:{server.port}/embed/magic-env" in out and 'height="400"' in out
