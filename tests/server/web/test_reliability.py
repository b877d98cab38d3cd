"""Reliability with the real server and SDK: disk spool while the server is away, sync, kill -9 mid-ingest."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time

import pytest

import paneboard


def xs_of(server, env: str, win: str) -> list[float]:
    return [float(row[1]) for row in server.export_rows(env, win)]


def test_events_beyond_the_memory_bound_spill_to_disk_and_arrive_exactly_once(tmp_path, make_server_process):
    srv = make_server_process("spill")  # not started yet: the server is away
    spool_dir = tmp_path / "spool"
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="spill", max_queue=1000,
                              spool_dir=spool_dir)
    for i in range(6000):
        client.line(X=[i], Y=[i], win="w", update="append")
        if i % 100 == 0:
            time.sleep(0.005)  # ~20k events/s: a busy training loop, still 6x the memory bound
    deadline = time.monotonic() + 15
    while not list(spool_dir.glob("*.spool")) and time.monotonic() < deadline:
        time.sleep(0.1)
    (spool,) = spool_dir.glob("*.spool")
    assert spool.stat().st_size > 0
    assert client.transport.dropped == 0
    assert client.flush(timeout=0.2) is False
    srv.start()
    try:
        assert client.flush(timeout=60)
        assert xs_of(srv, "spill", "w") == list(range(6000))
        assert not spool.exists()
        client.close_connection(timeout=5)
    finally:
        srv.stop()


def test_a_job_that_exits_while_the_server_is_down_leaves_a_spool_that_sync_uploads_once(tmp_path, make_server_process):
    srv = make_server_process("sync")
    spool_dir = tmp_path / "spool"
    script = (
        "import paneboard\n"
        f"c = paneboard.Client(server='http://127.0.0.1', port={srv.port}, env='offline', exit_timeout=1,"
        f" spool_dir={str(spool_dir)!r})\n"
        "for i in range(2500):\n"
        "    c.line(X=[i], Y=[i * 2], win='w', update='append')\n"
        "c.text('bye', win='log')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "paneboard sync" in out.stderr
    (spool,) = spool_dir.glob("*.spool")
    copy = tmp_path / "copy.spool"
    shutil.copy(spool, copy)
    srv.start()
    try:
        sync = [sys.executable, "-m", "paneboard.cli", "sync"]
        done = subprocess.run([*sync, str(spool)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not spool.exists()
        assert xs_of(srv, "offline", "w") == list(range(2500))
        # Uploading the same spool again (a copy) stores nothing twice.
        again = subprocess.run([*sync, str(copy)], capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert xs_of(srv, "offline", "w") == list(range(2500))
        assert srv.get_json("/api/v1/envs/offline/panes/log")["data"]["html"] == "bye"
    finally:
        srv.stop()


JOB = """
import sys, time, paneboard
port, k, n, spool = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = paneboard.Client(server="http://127.0.0.1", port=port, env="chaos", spool_dir=spool, exit_timeout=60)
for i in range(n):
    c.line(X=[i], Y=[k], win=f"w{k}", update="append")
    if i % 500 == 0:
        time.sleep(0.03)  # a training loop's pace (~2 s in all), so both kills land mid-stream
sys.exit(0 if c.flush(timeout=120) else 3)
"""


@pytest.mark.long
def test_three_jobs_survive_two_kill_9_restarts_without_gaps_or_duplicates(tmp_path, make_server_process):
    srv = make_server_process("chaos").start()
    n = 34_000  # 102,000 events in all
    jobs = [subprocess.Popen([sys.executable, "-c", JOB, str(srv.port), str(k), str(n), str(tmp_path / "sp")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in range(3)]
    try:
        for _ in range(2):
            time.sleep(0.4)
            srv.stop(signal.SIGKILL)
            time.sleep(0.3)
            srv.start()
        for k, job in enumerate(jobs):
            out, _ = job.communicate(timeout=180)
            assert job.returncode == 0, f"job {k} did not get every ack:\n{out}"
        for k in range(3):
            assert xs_of(srv, "chaos", f"w{k}") == list(range(n))
    finally:
        for job in jobs:
            job.kill()
        srv.stop()


_BACKLOG_RSS = """
import paneboard
def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
client = paneboard.Client(server="http://127.0.0.1", port={port}, env="mem", spool_dir=False, max_queue=50_000,
                          capture=False, console=False)  # only the calls below are queued: no run, no console
client.line(X=[0], Y=[0.0], win="w")
before = rss_kb()
for i in range(40_000):
    client.line(X=[i], Y=[0.5], win="w", update="append")
print(rss_kb() - before, client.transport.pending_count())
"""


def test_a_backlog_of_queued_events_costs_memory_in_proportion_to_their_size(tmp_path, unused_port):
    # While the server is away every call stays queued. Each event is ~180 bytes of JSON; keeping the
    # encoder's whole output buffer instead used a page per event (40k events: ~160 MB, was a fault per call).
    port = unused_port
    out = subprocess.run([sys.executable, "-c", _BACKLOG_RSS.replace("{port}", str(port))], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    grown_kb, pending = int(out[0]), int(out[1])
    assert pending == 40_001
    assert grown_kb < 40_000 * 0.5, f"40k queued events grew RSS by {grown_kb / 1024:.0f} MB"


def test_deferred_telemetry_waits_for_the_sender_tick_or_a_flush_and_arrives_once(server):
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="deferred", spool_dir=False,
                              capture=False, console=False)  # no run or console events among those counted
    client.line(X=[0], Y=[0.0], win="w")
    assert client.flush(timeout=10)
    with client.transport.deferred():  # what the training hooks log: no wake-up of the sender per call
        client.line(X=[1], Y=[1.0], win="w", update="append")
    time.sleep(0.2)
    assert client.transport.pending_count() == 1, "a deferred event woke the sender"
    deadline = time.monotonic() + 5  # the sender's idle tick (1 s) takes it without any flush
    while client.transport.pending_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.transport.pending_count() == 0
    with client.transport.deferred():
        client.line(X=[2], Y=[2.0], win="w", update="append")
    client.line(X=[3], Y=[3.0], win="w", update="append")  # an ordinary call still goes at once, taking it along
    t0 = time.monotonic()
    assert client.flush(timeout=10)
    assert time.monotonic() - t0 < 0.9
    with client.transport.deferred():
        client.line(X=[4], Y=[4.0], win="w", update="append")
    t0 = time.monotonic()
    assert client.flush(timeout=10)  # flush() does not wait for the tick either
    assert time.monotonic() - t0 < 0.9
    assert xs_of(server, "deferred", "w") == [0.0, 1.0, 2.0, 3.0, 4.0]
    client.close_connection(timeout=5)
