"""Issue 42 item 9 (first half) in Chromium against a real server: the empty states teach. The home page and
/scalars with no runs show how to log one to this server (its URL filled in), and the snippets work as shown."""

from __future__ import annotations

import subprocess
import sys
import urllib.parse

SNIPPETS = "() => [...document.querySelectorAll('.first-run pre code')].map(c => c.textContent)"


def run_snippet(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_empty_home_page_shows_this_servers_snippets_and_they_log_a_run(server, tab):
    tab.open(server.url + "/")
    tab.wait("() => !!document.querySelector('.runs-empty:not([hidden]) .first-run')")
    assert tab.js("() => document.querySelector('.runs-wrap').hidden")  # no empty table beside it
    client, writer = tab.js(SNIPPETS)
    assert f'paneboard.Client(server="{server.url}", env="my-project/run-1"' in client
    assert f'SummaryWriter("my-project/run-1", server="{server.url}")' in writer
    # Pasted as shown, the client snippet logs a run: it appears on the page, which stops teaching.
    run_snippet(client)
    tab.wait("() => document.body.dataset.runsShown === '1'")
    assert tab.js("() => document.querySelector('.runs-empty').hidden")
    assert tab.js("() => [...document.querySelectorAll('.runs-table tbody tr[data-env]')].map(r => r.dataset.env)") \
        == ["my-project/run-1"]
    run_snippet(writer)
    assert tab.errors == []


def test_a_query_that_matches_nothing_says_so_and_scalars_with_no_runs_teaches(server, tab):
    tab.open(server.url + "/runs?q=" + urllib.parse.quote('name ~ "^nope/"'))
    tab.wait("() => !!document.querySelector('.runs-empty:not([hidden]) .no-match')")
    assert "No run matches this query" in tab.page.inner_text(".runs-empty")
    tab.open(server.url + "/scalars")
    tab.wait("() => !!document.querySelector('.sc-content .first-run')")
    text = tab.page.inner_text(".sc-content .empty")
    assert "tick runs on the left" not in text
    assert f'server="{server.url}"' in text
    assert tab.errors == []
