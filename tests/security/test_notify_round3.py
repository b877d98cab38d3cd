"""The notifier against hostile or broken receivers on loopback (issue 40): no redirect followed, a hung receiver
delays no other, and the outbox stays bounded (settled rows deleted, the oldest pending dropped and counted)."""

from __future__ import annotations

import json
import time
import urllib.error
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.waiting import wait_for
from helpers.webhooks import Hook
from paneboard.server.notify import notifier as notifier_module


@pytest.fixture
def hooks() -> Iterator[Any]:
    made: list[Hook] = []

    def make(behaviour: str = "ok") -> Hook:
        made.append(Hook(behaviour))
        return made[-1]
    yield make
    for hook in made:
        hook.close()


def finish(srv: Any, *envs: str) -> None:
    srv.http("POST", "/api/v1/events", {"events": [ev for env in envs for ev in (
        {"op": "run_start", "env": env, "client": env}, {"op": "run_end", "env": env, "client": env})]})


def alert(srv: Any, text: str) -> None:
    srv.http("POST", "/api/v1/events", {"events": [{"op": "update", "env": "a", "win": "alerts", "kind": "text",
                                                    "mode": "append", "name": None, "content": text}]})


def alerts_pane(srv: Any, env: str) -> str:
    """The env's alerts pane as JSON text; "" while it does not exist."""
    try:
        return json.dumps(srv.get_json(f"/api/v1/envs/{env}/panes/alerts"))
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
        return ""


def test_a_receivers_redirect_is_not_followed(make_server: Any, hooks: Any):
    internal = hooks()  # an address only the server's network reaches: the redirect's target
    redirector = hooks(internal.url.replace("/hook", "/latest/meta-data"))
    srv = make_server(notify=(redirector.url,))
    finish(srv, "r")
    store = srv.app.services.store
    assert wait_for(lambda: len(redirector.requests) >= 3 and store.next_notification_due() is None)  # given up
    assert internal.requests == []
    assert {r["method"] for r in redirector.requests} == {"POST"}


def test_a_hung_receiver_delays_no_other(make_server: Any, hooks: Any, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(notifier_module, "POST_TIMEOUT", 60.0)  # longer than the wait below: no timeout hides it
    hung, healthy = hooks("hang"), hooks()
    srv = make_server(notify=(hung.url, healthy.url))  # the hung one first: its rows come first
    try:
        finish(srv, "x", "y", "z")
        got = healthy.wait_for(3)
        assert sorted(e["run"] for e in got) == ["x", "y", "z"]
        assert len(hung.requests) == 1 and not hung.released.is_set()  # still holding its first post
    finally:
        hung.released.set()  # its worker then ends before the server stops
    assert sorted(e["run"] for e in hung.wait_for(3)) == ["x", "y", "z"]  # and it gets its own, in turn


def test_the_oldest_pending_rows_beyond_the_cap_are_dropped_and_counted_in_the_alerts_pane(make_server: Any,
                                                                                        unused_port: int):
    srv = make_server(notify=(f"http://127.0.0.1:{unused_port}/down",))  # nothing listens: all rows stay pending
    notifier = srv.app.services.notifier
    notifier.max_pending, notifier.prune_every = 3, 0.0
    store = srv.app.services.store
    envs = [f"e{i}" for i in range(6)]
    finish(srv, *envs)
    assert wait_for(lambda: notifier.dropped == 3 and store.notification_counts()["pending"] == 3)
    left = store.due_notifications(time.time() + 1e9)
    assert sorted(r.payload["run"] for r in left) == ["e3", "e4", "e5"]  # the newest kept
    assert {r.payload["event"] for r in left} == {"finished"}  # the counting rows notify nobody
    for env in ("e0", "e1", "e2"):  # the count is written through the writer: the pane comes a moment later
        assert wait_for(lambda env=env: "notifications dropped</b>: 1 " in alerts_pane(srv, env))
    assert "notifications dropped" not in alerts_pane(srv, "e3")


def test_settled_rows_are_deleted_and_an_alert_row_is_told_once(make_server: Any, hooks: Any):
    healthy = hooks()
    srv = make_server(notify=(healthy.url,))
    notifier, store = srv.app.services.notifier, srv.app.services.store
    notifier.keep_settled_s, notifier.prune_every = 0.0, 0.0
    finish(srv, "a")
    alert(srv, "12:00 · step 3 · <b>nan</b>: loss is NaN")
    assert wait_for(lambda: len(healthy.events()) == 2 and store.notification_counts() == {"pending": 0, "settled": 0})
    alert(srv, "12:01 · step 4 · <b>nan</b>: loss is NaN again")  # the first row's outbox row is gone by now
    healthy.wait_for(3)
    assert wait_for(lambda: store.notification_counts()["pending"] == 0)
    assert [e["fields"]["alert"] for e in healthy.events() if e["event"] == "alert"] == [
        "12:00 · step 3 · nan: loss is NaN", "12:01 · step 4 · nan: loss is NaN again"]
