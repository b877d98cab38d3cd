"""Group commit at low rates: jobs arriving while the writer is busy share a transaction; a lone one does not wait.

The writer runs on real services over a temp SQLite file; the SDK side streams through the real server.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.waiting import wait_for
from paneboard.server.commands.jobs import Job, JobResult
from paneboard.server.dispatch.parse import parse_event
from paneboard.server.services import Services
from paneboard.server.settings import Settings


def _append(s: int, win: str, x: float) -> Any:
    return parse_event({"s": s, "t": time.time(), "op": "update", "env": "gc", "win": win, "kind": "line",
                        "mode": "append", "name": None, "opts": {}, "traces": [{"x": [x], "y": [x * 2]}]})


@pytest.fixture
def services(tmp_path: Path):
    svc = Services.open(Settings(db=str(tmp_path / "gc.db")))
    svc.start()
    yield svc
    svc.stop()


def _submit(svc: Services, client: str, seq: int, win: str, x: float) -> tuple[threading.Event, list[JobResult]]:
    done, box = threading.Event(), []

    def finish(result: JobResult) -> None:
        box.append(result)
        done.set()

    svc.writer.submit(Job([_append(seq, win, x)], client_id=client, ack_seq=seq, done=finish))
    return done, box


def test_jobs_of_a_busy_writer_share_one_commit_and_a_lone_job_waits_for_none(services: Services) -> None:
    # Lingers far longer than any wait below: a job that waited for the linger would fail its wait, so the
    # test asserts the grouping itself and never how long the machine took.
    writer = services.writer
    writer.group_linger = 120.0
    first, _ = _submit(services, "a", 1, "w", 0.0)
    assert first.wait(60)

    # Idle (nothing committed for longer than busy_gap): committed at once, not after the linger.
    time.sleep(writer.busy_gap * 5)
    before = writer.commits
    lone, _ = _submit(services, "a", 2, "w", 1.0)
    assert lone.wait(60)
    assert writer.commits == before + 1

    # Busy: jobs of three producers arriving while the first lingers share one transaction (and its acks).
    writer.busy_gap = 3600.0
    before = writer.commits
    waits = [_submit(services, "a", 3, "w", 2.0)]
    assert wait_for(lambda: writer.backlog == 0, timeout=60, every=0.005)  # the writer holds it, lingering for more
    waits += [_submit(services, "b", 1, "w", 3.0), _submit(services, "c", 1, "v", 4.0)]
    assert wait_for(lambda: writer.backlog == 0, timeout=60, every=0.005)  # both joined the lingering group
    writer.stop()  # ends the linger: the group commits as one transaction
    for done, box in waits:
        assert done.wait(60)
        assert box[0].failed is None and box[0].errors == []
    assert writer.commits == before + 1
    for client, seq in (("a", 3), ("b", 1), ("c", 1)):
        assert services.store.client_last_seq(client) == seq
    pane = services.store.get_pane("gc", "w")
    assert pane is not None
    (trace,) = services.store.list_traces(pane)
    assert trace.total == 4  # x = 0, 1, 2, 3: each stored once


def test_a_paced_stream_goes_out_in_few_frames_and_arrives_whole(server) -> None:
    """500 appends over ~0.5 s from one client: frames while streaming are at least FRAME_INTERVAL apart."""
    from paneboard.transport.sender import FRAME_INTERVAL

    client = server.client("paced")
    client.line(X=[0], Y=[0.0], win="w")
    assert client.flush(timeout=30)
    sender = client.transport.sender
    before = sender.frames_sent
    n, rate = 500, 1000.0
    t0 = time.perf_counter()
    for i in range(1, n + 1):
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        client.line(X=[i], Y=[float(i)], win="w", update="append")
    took = time.perf_counter() - t0
    assert client.flush(timeout=30)
    frames = sender.frames_sent - before
    # One frame per event before; now about one per FRAME_INTERVAL of the stream (+ the first and the flush).
    assert frames <= took / FRAME_INTERVAL + 5, (frames, took)
    points = server.series("paced", "w")["1"]
    assert [x for x, _ in points] == list(range(n + 1))  # every point once, in order
    client.close_connection(timeout=10)


def test_live_env_summaries_reach_a_subscriber_but_cost_nothing_without_one(server) -> None:
    """The writer skips env summaries while no browser listens; one that subscribes still gets them."""
    from websockets.sync.client import connect

    client = server.client("quiet")
    client.line(X=[0], Y=[0.0], win="w")
    assert client.flush(timeout=30)
    services = server.app.services
    assert not services.hub.has_subscribers()
    assert services.writer._dirty_envs == {}  # nobody listening: nothing is queued for a summary
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=10) as ws:
        ws.send(json.dumps({"subscribe": "quiet"}))
        # The server confirms once the hub has the subscription: only changes committed after it reach us.
        seen: list[dict] = []
        while not any(m["type"] == "subscribed" for m in seen):
            seen += json.loads(ws.recv(timeout=30))
        client.line(X=[1], Y=[1.0], win="w", update="append")
        # Both arrive for a change committed while we listen (the summary up to ENV_SUMMARY_INTERVAL later):
        # wait for that condition itself; recv's timeout bounds the wait.
        while not (any(m["type"] == "env" for m in seen) and any(m["type"] == "extend" for m in seen)):
            seen += json.loads(ws.recv(timeout=30))
        envs = [m for m in seen if m["type"] == "env"]
        assert envs[-1]["env"]["name"] == "quiet"
    client.close_connection(timeout=10)


def test_a_producer_hears_at_once_when_a_browser_starts_watching_its_env(server) -> None:
    """Acks say whether a browser follows the batch's envs (the SDK paces quietly while none does), and a
    subscribe tells the producer at once; a hello that does not ask gets plain acks."""
    from websockets.sync.client import connect

    def batch(ws: Any, s: int) -> dict:
        ws.send(json.dumps({"batch": [{"s": s, "t": time.time(), "op": "update", "env": "watched", "win": "w",
                                       "kind": "line", "mode": "append", "name": None, "opts": {},
                                       "traces": [{"x": [float(s)], "y": [1.0]}]}]}))
        return json.loads(ws.recv(timeout=30))

    url = f"ws://127.0.0.1:{server.port}"
    with connect(url + "/ingest", open_timeout=5) as plain, connect(url + "/ingest", open_timeout=5) as ws:
        plain.send(json.dumps({"hello": {"client": "plain", "sdk": "test"}}))
        json.loads(plain.recv(timeout=10))
        ws.send(json.dumps({"hello": {"client": "asks", "sdk": "test", "watched": True}}))
        json.loads(ws.recv(timeout=10))
        assert batch(plain, 1) == {"ack": 1}
        assert batch(ws, 1) == {"ack": 1, "watched": False}
        with connect(url + "/ws", open_timeout=5) as browser:
            browser.send(json.dumps({"subscribe": "other"}))
            browser.recv(timeout=10)
            browser.send(json.dumps({"subscribe": "watched"}))
            assert json.loads(ws.recv(timeout=10)) == {"watched": True}  # pushed, before any new batch
            assert batch(ws, 2) == {"ack": 2, "watched": True}
            assert batch(plain, 2) == {"ack": 2}


def test_the_sdk_paces_quietly_until_a_browser_watches(server, monkeypatch) -> None:
    from websockets.sync.client import connect

    from paneboard.transport import sender as sender_module

    # Quiet pacing far longer than the waits below: an append held for it would never arrive in time.
    monkeypatch.setattr(sender_module, "QUIET_INTERVAL", 300.0)
    client = server.client("quiet_sdk")
    client.line(X=[0], Y=[0.0], win="w")
    assert client.flush(timeout=30)
    sender = client.transport.sender
    assert sender.watched is False  # nobody follows the env: frames go out once per QUIET_INTERVAL
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=5) as browser:
        browser.send(json.dumps({"subscribe": "quiet_sdk"}))
        deadline = time.monotonic() + 60
        while not sender.watched and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sender.watched
        client.line(X=[1], Y=[1.0], win="w", update="append")
        got: list[dict] = []
        while not any(m.get("type") == "extend" for m in got):
            got += json.loads(browser.recv(timeout=60))  # not held for the quiet pacing (300 s)
    client.close_connection(timeout=10)
