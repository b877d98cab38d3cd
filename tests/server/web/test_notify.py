"""Notifications to a real webhook receiver on 127.0.0.1: run events, a first NaN, the SDK's alerts and threshold
rules; at least once while the receiver is down, once per event, across a server restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from paneboard.server.notify import payload


class Receiver:
    """A webhook receiver on a fixed loopback port that can go down and come back."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.httpd: ThreadingHTTPServer | None = None
        probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
        self.port = probe.server_address[1]
        probe.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.cond:
                    owner.posts.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                        "at": time.monotonic()})
                    owner.cond.notify_all()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, name="test-receiver", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def events(self) -> list[dict[str, Any]]:
        with self.cond:
            return [json.loads(p["body"]) for p in self.posts]

    def wait_for(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.posts) >= n, timeout), self.posts
        return self.events()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def all_delivered(srv: Any, timeout: float = 30.0) -> None:
    """Until the outbox holds nothing undelivered (then every post that will come has come)."""
    store = srv.app.services.store
    deadline = time.monotonic() + timeout
    while store.next_notification_due() is not None:
        assert time.monotonic() < deadline, "notifications still pending"
        time.sleep(0.05)


JOB = textwrap.dedent("""
    import sys, time, paneboard
    c = paneboard.Client(port=int(sys.argv[1]), env="crashy", spool_dir=False)
    for step, loss in enumerate([1.0, 0.5, float("nan"), float("nan"), 0.2]):
        c.line(X=[step], Y=[loss], win="loss", update="append")
    assert c.flush(30)
    sys.__stdout__.write("ready\\n")
    sys.__stdout__.flush()
    time.sleep(600)
""")


def test_a_receiver_that_starts_late_gets_exactly_one_crash_post_and_one_nan_post(make_server: Any, receiver: Any,
                                                                                 tmp_path: Any):
    srv = make_server(notify=(receiver.url,), run_crash_grace_s=1.0, public_url="https://dash.example/pb")
    job = subprocess.Popen([sys.executable, "-c", JOB, str(srv.port)], cwd=tmp_path, stdout=subprocess.PIPE,
                           text=True, env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    try:
        assert job.stdout is not None and job.stdout.readline().strip() == "ready"
        job.send_signal(signal.SIGKILL)
        job.wait(30)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    deadline = time.monotonic() + 30
    while srv.get_json("/api/v1/envs/crashy/run")["status"] != "crashed":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    came_back = time.monotonic()
    receiver.start()
    got = receiver.wait_for(2)
    assert receiver.posts[1]["at"] - came_back < 2.0  # within 2 s of the receiver's return
    all_delivered(srv)
    got = receiver.events()
    assert sorted(e["event"] for e in got) == ["crashed", "nan"]
    crash = next(e for e in got if e["event"] == "crashed")
    assert crash["text"].startswith("Run crashy crashed") and crash["url"] == "https://dash.example/pb/env/crashy"
    assert crash["attachments"][0]["fields"][0] == {"title": "status", "value": "crashed", "short": True}
    assert crash["fields"]["console"] == "https://dash.example/pb/console/crashy#error"
    nan = next(e for e in got if e["event"] == "nan")
    assert nan["title"] == "Run crashy: NaN in loss at step 2"


def test_delivery_survives_a_server_restart_and_a_finished_run_posts_once(make_server: Any, receiver: Any):
    srv = make_server("restart", notify=(receiver.url,))
    srv.http("POST", "/api/v1/events", {"events": [{"op": "run_start", "env": "done", "client": "c1"},
                                                   {"op": "run_end", "env": "done", "client": "c1"}]})
    store = srv.app.services.store
    deadline = time.monotonic() + 30
    while not store.due_notifications(time.time() + 60):  # in the outbox, not delivered (receiver down)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    srv.stop()
    again = make_server("restart", notify=(receiver.url,))
    receiver.start()
    receiver.wait_for(1)
    all_delivered(again)
    assert [e["event"] for e in receiver.events()] == ["finished"]
    # editing the finished run's tags republishes it: the same event, not posted again
    again.http("PUT", "/api/v1/envs/done/tags", {"add": ["kept"]})
    all_delivered(again)
    assert len(receiver.events()) == 1


def test_a_threshold_rule_notifies_matching_runs_in_scope_once_per_cooldown(make_server: Any, receiver: Any):
    srv = make_server(notify=(receiver.url,))
    receiver.start()
    with pytest.raises(urllib.error.HTTPError) as err:
        srv.http("POST", "/api/v1/alert-rules", {"query": "loss.last >"})
    assert err.value.code == 400 and "position" in json.loads(err.value.read())
    rule = srv.http("POST", "/api/v1/alert-rules", {"query": "loss.last > 5", "scope": "tags:watched",
                                                    "cooldown_s": 3600, "name": "loss blew up"})
    assert rule["rule"]["query"] == "loss.last > 5" and rule["receivers"] == 1
    events = []
    for env, tags, loss in (("a", ["watched"], 7.0), ("b", [], 9.0), ("c", ["watched"], 1.0)):
        events += [{"op": "run_start", "env": env, "client": env}, {"op": "run_tags", "env": env, "set": tags},
                   {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append", "name": None,
                    "traces": [{"x": [0.0], "y": [loss]}]}]
    srv.http("POST", "/api/v1/events", {"events": events})
    got = receiver.wait_for(1)
    assert got[0]["event"] == "rule" and got[0]["run"] == "a"
    assert got[0]["title"] == "Run a matched alert rule loss blew up"
    # still above the threshold: the cool-down holds it back (the rule was evaluated again meanwhile)
    srv.http("POST", "/api/v1/events", {"events": [{"op": "update", "env": "a", "win": "loss", "kind": "line",
                                                    "mode": "append", "name": None, "traces": [{"x": [1.0], "y": [8.0]}]}]})
    fired = srv.app.services.store.list_alert_rules()[0].fired
    deadline = time.monotonic() + 10
    while srv.app.services.notifier.last_rules <= fired["a"] + 1.0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    all_delivered(srv)
    assert [e["run"] for e in receiver.events()] == ["a"]
    assert srv.http("GET", "/api/v1/alert-rules")["rules"][0]["fired"].keys() == {"a"}
    # the SDK hooks' alerts pane: each new row is one post
    srv.http("POST", "/api/v1/events", {"events": [{"op": "update", "env": "a", "win": "alerts", "kind": "text",
                                                    "mode": "append", "name": None,
                                                    "content": "12:00 · step 3 · <b>stalled</b>: no step for 60 s"}]})
    got = receiver.wait_for(2)
    assert got[1]["event"] == "alert" and got[1]["fields"]["alert"] == "12:00 · step 3 · stalled: no step for 60 s"


@pytest.mark.parametrize(("target", "fmt"), [
    ("https://hooks.slack.com/services/T/B/X", "slack"), ("https://discord.com/api/webhooks/1/x", "discord"),
    ("https://ntfy.sh/mytopic", "ntfy"), ("ntfy:http://127.0.0.1:9/topic", "ntfy"), ("http://127.0.0.1:9/x", "json")])
def test_each_receiver_gets_its_own_format(target: str, fmt: str):
    got_fmt, url = payload.split_target(target)
    assert got_fmt == fmt and "://" in url and not url.startswith("ntfy:")
    ev = payload.event("crashed", "r1", "Run r1 crashed", {"status": "crashed"}, "http://x/env/r1", "run:r1")
    body, headers = payload.request(fmt, ev)
    if fmt == "ntfy":
        assert headers["Title"] == "Run r1 crashed" and headers["Click"] == "http://x/env/r1"
        assert body.decode().startswith("Run r1 crashed")
        return
    doc = json.loads(body)
    if fmt == "discord":
        assert doc["content"].startswith("Run r1 crashed") and doc["embeds"][0]["fields"][0]["name"] == "status"
    else:
        assert doc["text"].startswith("Run r1 crashed") and doc["attachments"][0]["fields"]
        assert ("event" in doc) == (fmt == "json")


def test_each_stall_is_an_event_but_a_republished_stall_is_not():
    from paneboard.server.notify.events import Links, events_of

    links, seen, last = Links("http://x"), set(), {}

    def run(status: str) -> list:
        m = {"type": "run", "env": "r", "run": {"status": status, "started": 1.0, "ended": None}}
        return events_of(m, None, links, seen, last)  # run messages never read the store

    keys = [e["key"] for status in ("stalled", "stalled", "running", "stalled") for e in run(status)]
    assert len(keys) == 2 and len(set(keys)) == 2 and all(k.startswith("run:r:stalled:") for k in keys)
