"""A run's console view in headless Chromium against a real server: lines in order, tracebacks highlighted and
linked from the run, search, live follow with a progress bar rewritten in place, ranks, the download."""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from pathlib import Path

from helpers.browser import Tab, http

TRACEBACK = ["Traceback (most recent call last):", '  File "train.py", line 12, in <module>', "    loss = step()",
             "ZeroDivisionError: division by zero"]
LINES = "() => [...document.querySelectorAll('.console-view .cl:not([hidden]) .tx')].map(e => e.textContent)"


def seed(server, env: str = "job") -> None:
    rows = [[n, 1000.0 + n, "stdout", f"epoch {n} loss {1 / n:.3f}"] for n in range(1, 41)]
    rows += [[41 + i, 1100.0, "stderr", text] for i, text in enumerate(TRACEBACK)]
    assert http(server, "POST", "/api/v1/events", {"events": [
        {"op": "run_start", "env": env, "client": "c1", "provenance": {"host": "box"}},
        {"op": "console", "env": env, "rank": 0, "lines": rows},
        {"op": "console", "env": env, "rank": 1, "lines": [[1, 1000.0, "stdout", "rank one says hi"]]},
        {"op": "run_end", "env": env, "client": "c1", "status": "failed", "error": "\n".join(TRACEBACK)}]})["ok"]


def console_url(server, env: str) -> str:
    return f"{server.url}/console/{urllib.parse.quote(env, safe='')}"


def shot(tab: Tab, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tab.page.screenshot(path=str(folder / f"console-{name}.png"), full_page=False)


def test_console_view_highlights_the_traceback_searches_follows_and_downloads(server, open_tab, tmp_path):
    seed(server)
    tab = open_tab(server.env_url("job"))
    href = tab.js("() => document.querySelector('.run-panel .act-console-error')?.getAttribute('href') ?? "
                  "document.querySelector('.act-console').getAttribute('href')")
    assert href.startswith("/console/job")
    tab = open_tab(console_url(server, "job") + "#error")
    tab.wait(f"() => ({LINES})().length === 44")
    assert tab.js(LINES)[:2] == ["epoch 1 loss 1.000", "epoch 2 loss 0.500"]
    # the traceback is one highlighted block, and #error (the run's link) scrolled to its first line
    assert tab.js("() => [...document.querySelectorAll('.cl.tb')].map(e => e.dataset.n)") == ["41", "42", "43", "44"]
    assert tab.js("() => document.querySelector('.cl.current')?.dataset.n") == "41"
    assert tab.js("() => document.querySelector('.run-badge .run-status').textContent") == "failed"
    shot(tab, "light", tmp_path)
    # search
    tab.page.fill(".console-search", "LOSS 0.050")
    tab.wait(f"() => ({LINES})().join('|') === 'epoch 20 loss 0.050'")
    assert "1 match of 44 lines" in tab.js("() => document.querySelector('.console-count').textContent")
    tab.page.fill(".console-search", "")
    # live: a new line and a progress bar rewritten in place
    tab.page.check(".act-follow")
    http(server, "POST", "/api/v1/events", {"events": [{"op": "console", "env": "job", "lines": [
        [45, 1200.0, "stdout", "resumed"], [46, 1200.0, "stderr", " 10%|#", True]]}]})
    tab.wait(f"() => ({LINES})().slice(-2).join('|') === 'resumed| 10%|#'")
    http(server, "POST", "/api/v1/events", {"events": [{"op": "console", "env": "job", "lines": [
        [46, 1200.0, "stderr", "100%|##########|"], [47, 1201.0, "stdout", "done"]]}]})
    tab.wait(f"() => ({LINES})().slice(-2).join('|') === '100%|##########||done'")
    assert tab.js("() => document.querySelectorAll('.cl[data-n=\"46\"]').length") == 1
    # ranks kept apart: rank 1 is one choice away
    tab.page.select_option(".console-rank", "1")
    tab.wait(f"() => ({LINES})().join('|') === 'rank one says hi'")
    download = tab.js("() => document.querySelector('.act-download').href")
    with urllib.request.urlopen(download) as r:
        assert r.read().decode() == "rank one says hi\n"
    assert tab.errors == []


def test_console_view_in_dark_mode_and_on_a_phone(server, open_tab, tmp_path):
    seed(server, "dark job")
    for name, width, scheme in (("dark", 1280, "dark"), ("phone", 390, "light")):
        tab = open_tab(console_url(server, "dark job"), width=width, scheme=scheme)
        tab.wait(f"() => ({LINES})().length === 44")
        # nothing runs off the side of a phone: long lines wrap inside the view
        assert tab.js("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        tab.page.click(".act-next-error")
        tab.wait("() => document.querySelector('.cl.current')?.dataset.n === '41'")
        shot(tab, name, tmp_path)
        assert tab.errors == []
