"""Server-side stall alert: a real SDK job frozen with SIGSTOP raises it; a job that ends cleanly does not."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
import urllib.error

import pytest

JOB = textwrap.dedent("""
    import sys, time
    import paneboard
    client = paneboard.Client(port=int(sys.argv[1]), env=sys.argv[2], spool_dir=False)
    end = time.monotonic() + float(sys.argv[3])
    step = 0
    while time.monotonic() < end:  # a steady training loop: one loss every 20 ms
        client.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append")
        step += 1
        time.sleep(0.02)
    client.close_connection(timeout=10)
""")


@pytest.fixture
def stall_server(make_server):
    return make_server(stall_after_s=1.0)  # dash-server --stall-after 1


def start_job(server, env: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", JOB, str(server.port), env, str(seconds)])


def alerts_html(server, env: str) -> str:
    try:
        return server.get_json(f"/api/v1/envs/{env}/panes/alerts")["data"]["html"]
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return ""
        raise


def wait_points(server, env: str, n: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if server.get_json(f"/api/v1/envs/{env}/panes/loss")["data"]["traces"][0]["total"] >= n:
                return
        except urllib.error.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{env}: fewer than {n} points after {timeout}s")


@pytest.mark.long
def test_a_frozen_job_raises_the_stall_alert(stall_server):
    from websockets.sync.client import connect

    # A browser follows the run, so the SDK sends a frame per 20 ms (unwatched: one a second, and the rhythm
    # of 10 batches the alert needs would take 10 s to learn). It reads nothing, so its queue is unbounded:
    # a full one stops reading the socket, and closing would wait 10 s for a reply stuck behind the updates.
    browser = connect(f"ws://127.0.0.1:{stall_server.port}/ws", open_timeout=10, max_queue=None).__enter__()
    browser.send('{"subscribe": "frozen"}')
    job = start_job(stall_server, "frozen", 60)
    try:
        wait_points(stall_server, "frozen", 40)  # the rhythm is known (>= 10 batches)
        job.send_signal(signal.SIGSTOP)          # the whole process freezes: its socket stays open
        stopped = time.monotonic()
        deadline = stopped + 15
        while "stalled" not in alerts_html(stall_server, "frozen") and time.monotonic() < deadline:
            time.sleep(0.1)
        html = alerts_html(stall_server, "frozen")
        assert "<b>stalled</b>" in html and "may be hung" in html, stall_server.log()[-2000:]
        assert time.monotonic() - stopped >= 1.0  # not before the configured silence
        assert html.count("stalled") == 1  # once per silence, not every check
        run_status = lambda: stall_server.get_json("/api/v1/envs/frozen/run")["status"]  # noqa: E731
        deadline = time.monotonic() + 10
        while run_status() != "stalled" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert run_status() == "stalled"  # the run record says so too
        job.send_signal(signal.SIGCONT)   # it logs again: running again
        deadline = time.monotonic() + 15
        while run_status() != "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert run_status() == "running"
    finally:
        job.send_signal(signal.SIGCONT)
        job.kill()
        job.wait(10)
        browser.close()


def test_a_healthy_job_that_ends_cleanly_raises_nothing(stall_server):
    job = start_job(stall_server, "healthy", 1.5)
    assert job.wait(30) == 0
    wait_points(stall_server, "healthy", 40)
    time.sleep(2.5)  # well past the 1 s stall threshold: the closed socket means the job ended
    assert alerts_html(stall_server, "healthy") == ""
    assert stall_server.get_json("/api/v1/envs/healthy/run")["status"] == "finished"
