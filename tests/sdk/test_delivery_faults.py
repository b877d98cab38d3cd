"""Exactly-once delivery through faults: outages under load, overload while connected, a killed sync."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

import paneboard
from helpers.waiting import wait_for


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Server arguments for each store: its SQLite file (the default), or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return {}
    return {"db_url": request.getfixturevalue("postgres").new_database()}


def xs_of(server: Any, env: str, win: str) -> list[float]:
    return [float(row[1]) for row in server.export_rows(env, win)]


def test_an_outage_under_load_loses_and_duplicates_nothing(tmp_path, make_server_process, backend):
    # The minimal case, scaled down: a small memory bound, steady appends, the server away mid-run.
    srv = make_server_process("outage", **backend).start()
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="outage", max_queue=500,
                              spool_dir=tmp_path / "spool")
    n = 8000

    def restart() -> None:
        time.sleep(1.0)
        srv.stop(signal.SIGKILL)
        time.sleep(1.5)
        srv.start()

    chaos = threading.Thread(target=restart)
    chaos.start()
    try:
        for i in range(n):
            client.line(X=[i], Y=[i], win="w", update="append")
            if i % 20 == 0:
                time.sleep(0.01)  # ~2,000 appends/s for ~4 s
        chaos.join()
        assert client.flush(timeout=60)
        assert client.transport.dropped == 0
        assert xs_of(srv, "outage", "w") == list(range(n))
        assert not list((tmp_path / "spool").glob("*.spool"))  # fully acknowledged, so deleted
        client.close_connection(timeout=5)
    finally:
        chaos.join()
        srv.stop()


def test_overload_while_connected_spills_to_disk_instead_of_dropping(tmp_path, make_server_process):
    srv = make_server_process("overload").start()
    # A tiny window and memory bound: the loop outruns delivery at once, so the overflow must go to the spool.
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="over", max_queue=50,
                              spool_dir=tmp_path / "spool")
    client.transport.outbox.window = 1
    client.transport.outbox.batch_events = 20
    try:
        assert client.check_connection(timeout_seconds=10)
        for i in range(5000):
            client.line(X=[i], Y=[i], win="w", update="append")
        assert client.flush(timeout=60)
        assert client.transport.dropped == 0
        assert xs_of(srv, "over", "w") == list(range(5000))
        client.close_connection(timeout=5)
    finally:
        srv.stop()


def test_overflow_while_the_sender_takes_queued_events_keeps_seq_order(tmp_path):
    """The server skips any seq at or below the highest it stored, so events must leave in seq order. Calls
    that overflow the queue while the sender takes a batch move its oldest events to the spool: the batch must
    not leave before them (it did, and a kill -9 run lost those events although every one was acked)."""
    from paneboard.transport.outbox import Outbox
    from paneboard.transport.spool import Spool

    spool = Spool(tmp_path / "c.spool", "ws://127.0.0.1:9/ingest", "c", 1 << 30)
    ob = Outbox(10, spool, batch_events=100, batch_bytes=1 << 20, window=8)
    seqs = iter(range(1, 1000))

    def call() -> None:  # a training loop's call, as Transport._enqueue makes it
        with ob.lock:
            ob.put_locked(b'{"op":"noop","n":%d}' % next(seqs))

    sent: list[int] = []

    def send_all() -> None:  # the sender's loop: spill the overflow first, then take batches until none
        while True:
            if ob.to_spill:
                ob.spill()
            batch = ob.take_batch()
            if batch is None and not ob.to_spill:
                return
            if batch is not None:
                sent.extend(s for s, _ in batch.items)

    for _ in range(12):
        call()  # two over max_queue: seqs 1 and 2 go to the spool, 3 to 12 fill the queue
    ob.spill()
    first = ob.take_batch()
    assert first is not None and [s for s, _ in first.items] == [1, 2]
    sent += [1, 2]
    read_after = spool.read_after

    def read_while_calls_overflow(*args: Any) -> list:
        got = read_after(*args)
        spool.read_after = read_after  # type: ignore[method-assign]
        for _ in range(3):
            call()  # the caller runs between the sender's look at the spool and its look at the queue
        return got

    spool.read_after = read_while_calls_overflow  # type: ignore[method-assign]
    send_all()
    assert sent == list(range(1, len(sent) + 1)) and len(sent) == 15, sent


def test_drops_when_memory_and_spool_are_full_show_as_an_alert_in_the_env(tmp_path, make_server_process):
    srv = make_server_process("drops")  # away: the tiny memory bound overflows, no spool to spill to
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="drops", max_queue=20,
                              spool_dir=False)
    try:
        for i in range(100):
            client.line(X=[i], Y=[i], win="w", update="append")
        assert client.transport.dropped >= 80  # (the alert itself may push out one more)
        srv.start()
        assert client.flush(timeout=30) is False  # events were lost: flush says so once
        html = srv.get_json("/api/v1/envs/drops/panes/alerts")["data"]["html"]
        assert "dropped" in html and "event(s) dropped" in html
        client.line(X=[100], Y=[100], win="w", update="append")
        assert client.flush(timeout=30) is True  # nothing lost since
        client.close_connection(timeout=5)
    finally:
        srv.stop()


SPOOL_JOB = """
import sys, paneboard
port, n, spool = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = paneboard.Client(server="http://127.0.0.1", port=port, env="synced", exit_timeout=1, spool_dir=spool)
for i in range(n):
    c.line(X=[i], Y=[i], win="w", update="append")
"""


def test_a_sync_killed_mid_way_and_run_again_stores_everything_exactly_once(tmp_path, make_server_process,
                                                                             backend):
    srv = make_server_process("sync", **backend)  # away while the job runs: it leaves a spool
    n = 60_000
    job = subprocess.run([sys.executable, "-c", SPOOL_JOB, str(srv.port), str(n), str(tmp_path / "sp")],
                         capture_output=True, text=True, timeout=120)
    assert job.returncode == 0, job.stderr
    (spool,) = (tmp_path / "sp").glob("*.spool")
    srv.start()
    try:
        sync = [sys.executable, "-m", "paneboard.cli", "sync", str(spool)]
        proc = subprocess.Popen(sync, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # kill it once part, not all, of the spool is stored
            stored = srv.get_json("/api/v1/envs").get("envs", [])
            points = sum(e.get("points", 0) for e in stored if e.get("name") == "synced")
            if points > 0:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert spool.exists(), "the spool must outlive an interrupted upload"
        again = subprocess.run(sync, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert xs_of(srv, "synced", "w") == [float(i) for i in range(n)]
        assert not spool.exists()
    finally:
        srv.stop()


@pytest.fixture
def small_disk(tmp_path: Any) -> Any:
    """A 12 MB tmpfs (skipped where this process may not mount one)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mnt)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.long
def test_a_full_disk_acknowledges_nothing_unstored_and_loses_nothing_once_freed(tmp_path, small_disk,
                                                                                   make_server_process):
    srv = make_server_process("full", db=small_disk / "full.db").start()
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (9 << 20))
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="full", spool_dir=tmp_path / "spool")
    rng = random.Random(0)
    n, per_call = 400_000, 10_000
    try:
        for i in range(0, n, per_call):  # random y: chunks do not compress, so they outgrow the free space
            client.line(X=list(range(i, i + per_call)), Y=[rng.random() for _ in range(per_call)], win="w",
                        update="append")
        # The disk is full: the server refuses to acknowledge what it could not store, and still has not later.
        assert wait_for(lambda: "database or disk is full" in srv.log(), timeout=60), srv.log()
        assert client.flush(timeout=1) is False
        filler.unlink()
        assert client.flush(timeout=60)
        assert client.transport.dropped == 0
        assert xs_of(srv, "full", "w") == [float(i) for i in range(n)]
        client.close_connection(timeout=5)
    finally:
        srv.stop()
