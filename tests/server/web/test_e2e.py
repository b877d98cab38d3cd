"""End to end: a real dash-server subprocess driven by the real SDK over its websocket."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from websockets.sync.client import connect

import paneboard


def test_ten_thousand_appends_arrive_and_survive_a_restart(server_process):
    server = server_process  # restarted on the same database: the process boundary is the point
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="exp1")
    for step in range(10_000):
        client.line(X=[step], Y=[1.0 / (step + 1)], win="loss", update="append", opts={"title": "loss"})
    assert client.flush(timeout=60)
    rows = server.export_rows("exp1", "loss")
    assert len(rows) == 10_000
    assert [float(r[1]) for r in rows] == list(range(10_000))
    server.stop()
    server.start()
    assert len(server.export_rows("exp1", "loss")) == 10_000
    pane = server.get_json("/api/v1/envs/exp1/panes/loss")
    assert pane["title"] == "loss" and pane["data"]["traces"][0]["total"] == 10_000
    client.close_connection(timeout=5)


def test_two_million_points_read_at_a_budget_keep_an_injected_spike(server):
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="big")
    n = 2_000_000
    x = np.arange(n, dtype=np.float64)
    y = np.cos(x / 10_000.0)
    y[1_500_001] = 50.0
    for start in range(0, n, 200_000):
        client.line(X=x[start:start + 200_000], Y=y[start:start + 200_000], win="big", update="append")
    assert client.flush(timeout=120)
    pane = server.get_json("/api/v1/envs/big/panes/big?points=2000")
    (trace,) = pane["data"]["traces"]
    assert trace["total"] == n and trace["downsampled"] is True
    assert len(trace["x"]) <= 2002
    assert max(trace["y"]) == 50.0
    assert trace["x"][trace["y"].index(50.0)] == 1_500_001
    client.close_connection(timeout=5)


def test_sdk_never_blocks_or_raises_while_the_server_is_down(caplog, unused_port):
    caplog.set_level(logging.WARNING, logger="paneboard")
    client = paneboard.Client(server="http://127.0.0.1", port=unused_port, env="down", exit_timeout=0.5)
    t0 = time.perf_counter()
    for step in range(20_000):
        client.line(X=[step], Y=[step], win="loss", update="append")
    client.text("still fine", win="log")
    elapsed = time.perf_counter() - t0
    assert elapsed < 2.0, f"20,000 calls took {elapsed:.2f}s with the server down"
    assert client.flush(timeout=0.5) is False
    time.sleep(1.0)  # let the sender retry a few times: it must still warn only once
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and "127.0.0.1" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    client.close_connection(timeout=0.2)


def test_events_buffered_while_the_server_is_away_are_delivered_once_when_it_returns(server_process):
    server = server_process  # restarted on the same database: the process boundary is the point
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="gap")
    for step in range(100):
        client.line(X=[step], Y=[step], win="w", update="append")
    assert client.flush(timeout=30)
    server.stop()
    for step in range(100, 200):
        client.line(X=[step], Y=[step], win="w", update="append")
    assert client.flush(timeout=0.3) is False
    server.start()
    assert client.flush(timeout=30)
    xs = [float(r[1]) for r in server.export_rows("gap", "w")]
    assert xs == list(range(200))  # nothing lost, nothing duplicated
    client.close_connection(timeout=5)


def test_acknowledged_events_survive_kill_9(server_process):
    server = server_process  # restarted on the same database: the process boundary is the point
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="crash")
    for step in range(5_000):
        client.line(X=[step], Y=[step], win="w", update="append")
    assert client.flush(timeout=60)
    server.stop(signal.SIGKILL)
    server.start()
    assert len(server.export_rows("crash", "w")) == 5_000
    client.close_connection(timeout=1)


def test_browser_channel_receives_extends_after_commit(server):
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="live")
    client.line(X=[0], Y=[0], win="w", opts={"title": "t"})
    assert client.flush(timeout=10)
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=5) as ws:
        ws.send(json.dumps({"subscribe": "live"}))
        first: list[dict] = []
        while {"type": "subscribed", "env": "live"} not in first:  # env-list messages may come first
            first = json.loads(ws.recv(timeout=5))
            assert all(m["type"] in ("env", "subscribed") for m in first), first
        for step in range(1, 11):
            client.line(X=[step], Y=[step * 2], win="w", update="append")
        seen_x: list[float] = []
        versions: list[int] = []
        deadline = time.monotonic() + 10
        while len(seen_x) < 10 and time.monotonic() < deadline:
            for msg in json.loads(ws.recv(timeout=5)):
                if msg["type"] == "extend":
                    assert msg["win"] == "w" and msg["traces"][0]["idx"] == 0
                    seen_x += msg["traces"][0]["x"]
                    versions.append(msg["version"])
        assert seen_x == list(range(1, 11))
        # Appends committed together may share one version; versions only ever grow.
        assert versions == sorted(set(versions)) and versions[0] > 1
        assert server.get_json("/api/v1/envs/live/panes/w")["version"] == versions[-1]
    client.close_connection(timeout=5)


def test_demo_streams_line_text_and_image_panes(make_server_process):
    srv = make_server_process("demo", extra_args=["--demo"]).start()  # the CLI starts the demo
    try:
        deadline = time.monotonic() + 30
        kinds: set[str] = set()
        while time.monotonic() < deadline:
            try:
                kinds = {p["kind"] for p in srv.get_json("/api/v1/envs/demo")["panes"]}
            except OSError:
                pass
            if {"line", "text", "image"} <= kinds:
                break
            time.sleep(0.3)
        assert {"line", "text", "image"} <= kinds
        def total() -> int:
            return srv.get_json("/api/v1/envs/demo/panes/loss")["data"]["traces"][0]["total"]

        # Live: the loss gains points. Waited for, not slept on: under load the demo's next tick may take seconds.
        first = total()
        deadline = time.monotonic() + 60
        while total() <= first and time.monotonic() < deadline:
            time.sleep(0.2)
        assert total() > first
    finally:
        srv.stop()


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_db_commands_report_and_upgrade_the_schema(tmp_path):
    db = tmp_path / "cli.db"
    run = [sys.executable, "-m", "paneboard.server", "db"]
    out = subprocess.run([*run, "current", "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "(empty)" in out.stdout
    out = subprocess.run([*run, "upgrade", "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "up to date" in out.stdout


def test_pending_events_are_flushed_at_interpreter_exit(server):
    script = (
        "import paneboard\n"
        f"c = paneboard.Client(server='http://127.0.0.1', port={server.port}, env='atexit')\n"
        "for i in range(3000):\n"
        "    c.line(X=[i], Y=[i], win='w', update='append')\n"
        "c.text('done', win='log')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert len(server.export_rows("atexit", "w")) == 3000
    assert server.get_json("/api/v1/envs/atexit/panes/log")["data"]["html"] == "done"


def test_dash_server_runs_on_postgresql(make_server_process, postgres):
    srv = make_server_process("pg", db_url=postgres.new_database()).start()
    try:
        client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="pg")
        for step in range(3000):
            client.line(X=[step], Y=[step * 0.5], win="w", update="append")
        client.image(np.zeros((3, 8, 8)), win="img")
        assert client.flush(timeout=60)
        srv.stop(signal.SIGKILL)
        srv.start()
        assert len(srv.export_rows("pg", "w")) == 3000
        assert {p["kind"] for p in srv.get_json("/api/v1/envs/pg")["panes"]} == {"line", "image"}
        client.close_connection(timeout=5)
    finally:
        srv.stop()


def test_two_servers_on_one_postgresql_share_live_updates(make_server_process, postgres):
    url = postgres.new_database()
    a = make_server_process("a", db_url=url).start()  # two processes, as deployed: peers over PostgreSQL
    b = make_server_process("b", db_url=url).start()
    try:
        client = paneboard.Client(server="http://127.0.0.1", port=a.port, env="shared")
        client.line(X=[0], Y=[0], win="w")
        assert client.flush(timeout=30)
        with connect(f"ws://127.0.0.1:{b.port}/ws", open_timeout=5) as ws:
            ws.send(json.dumps({"subscribe": "shared"}))
            seen: list[dict] = []
            deadline = time.monotonic() + 15
            sent = False
            while time.monotonic() < deadline and not any(m["type"] == "extend" for m in seen):
                if not sent and any(m["type"] == "subscribed" for m in seen):
                    client.line(X=[1, 2], Y=[5, 6], win="w", update="append")  # written through server A
                    sent = True
                try:
                    seen += json.loads(ws.recv(timeout=1))
                except TimeoutError:
                    pass
            extend = next(m for m in seen if m["type"] == "extend")
            assert extend["win"] == "w" and extend["traces"][0]["x"] == [1, 2]
        assert len(b.export_rows("shared", "w")) == 3
        client.close_connection(timeout=5)
    finally:
        a.stop()
        b.stop()
