"""A failed or crashed run's page in Chromium against a real server (issue 42 item 4): a banner with the
exception's last line and the step, the traceback one click away from it and from the status badge, a kill -9
run's duration ending at its last contact, and "jump to the error" only where there is an error."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from helpers.waiting import wait_for

FAILS = """
    c = paneboard.Client(port=port, env=env)
    for step in range(5):
        c.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append")
    def train():
        raise ZeroDivisionError("loss went to infinity")
    train()
"""
# Logs, says so, then waits to be killed (its stdin stays open until the test ends).
WAITS = """
    c = paneboard.Client(port=port, env=env)
    for step in range(3):
        c.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append")
    assert c.flush(30)
    print("ready", flush=True)
    sys.stdin.read()
"""
BANNER = "() => { const b = document.querySelector('.run-error-banner'); return b && !b.hidden ? b.innerText : null; }"


def job_args(srv: Any, env: str, body: str) -> list[str]:
    script = "import sys, paneboard\nport, env = int(sys.argv[1]), sys.argv[2]\n" + textwrap.dedent(body)
    return [sys.executable, "-c", script, str(srv.port), env]


def shot(tab: Any, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    tab.page.screenshot(path=str(folder / f"runpage-{name}.png"), full_page=False)


def test_a_failed_runs_page_shows_its_error_and_step_with_the_traceback_a_click_away(make_server, open_tab, tmp_path):
    server = make_server("failed")  # an ephemeral port of its own
    done = subprocess.run(job_args(server, "boom", FAILS), cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr
    tab = open_tab(server.env_url("boom"), width=1600)
    tab.wait(f"() => ({BANNER}) !== null")
    text = tab.js(BANNER)
    assert "failed at step 4" in text and "ZeroDivisionError: loss went to infinity" in text, text
    # The traceback is folded under the banner; the header's status badge opens it.
    assert tab.js("() => document.querySelector('.run-error-trace').open") is False
    tab.page.click(".run-badge a.run-status-link")
    tab.wait("() => document.querySelector('.run-error-trace').open")
    assert "in train" in tab.page.inner_text(".run-error-trace pre")
    assert tab.js("() => document.querySelector('.run-error-banner .act-console-error').getAttribute('href')") == "/console/boom#error"
    # The run panel's own status badge leads there too, and its console link jumps to the error.
    tab.page.click(".act-run")
    assert tab.page.locator(".run-facts a.run-status-link").count() == 1
    assert tab.page.inner_text(".run-console-link") == "console (jump to the error)"
    shot(tab, "failed-1600-light", tmp_path)
    for name, width, scheme in (("failed-1600-dark", 1600, "dark"), ("failed-390", 390, "light")):
        t = open_tab(server.env_url("boom"), width=width, scheme=scheme)
        t.wait(f"() => ({BANNER}) !== null")
        # The banner fits the screen: nothing runs off its side on a phone.
        assert t.js("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        shot(t, name, tmp_path)
        assert t.errors == []
    assert tab.errors == []


def test_a_killed_runs_duration_ends_at_its_last_contact_and_offers_no_error_to_jump_to(make_server, open_tab, tmp_path):
    grace = 3.0
    srv = make_server("killed", run_crash_grace_s=grace)
    job = subprocess.Popen(job_args(srv, "killed", WAITS), cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    try:
        assert job.stdout is not None and job.stdout.readline().strip() == "ready", job.stderr.read() if job.stderr else ""
        killed = time.time()
        job.send_signal(signal.SIGKILL)
        job.wait(30)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert wait_for(lambda: srv.get_json("/api/v1/envs/killed/run")["status"] == "crashed", timeout=30)
    run = srv.get_json("/api/v1/envs/killed/run")
    # It ends when its connection dropped, not when the grace ran out (which would add the 3 s of grace).
    assert run["ended"] < killed + grace / 2, (run["ended"] - killed)
    assert run["ended"] >= run["started"]
    tab = open_tab(srv.env_url("killed"), width=1600)
    tab.wait(f"() => ({BANNER}) !== null")
    text = tab.js(BANNER)
    assert "crashed at step 2" in text and "stopped without a clean end" in text, text
    # No traceback: no folded traceback, and the console is offered without a jump to an error.
    assert tab.page.locator(".run-error-trace").count() == 0
    assert tab.js("() => document.querySelector('.run-error-banner .act-console-error').getAttribute('href')") == "/console/killed"
    tab.page.click(".act-run")
    assert tab.page.inner_text(".run-console-link") == "console"
    shown = tab.page.locator(".run-facts tr", has_text="duration").locator("td").inner_text()
    seconds = float(re.match(r"([\d.]+) s$", shown).group(1))
    assert seconds <= killed - run["started"] + grace / 2, shown
    assert tab.errors == []
