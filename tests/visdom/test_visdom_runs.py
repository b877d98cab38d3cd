"""A job logging through the real `visdom` client is a run: first and last write, the remote address, `active`
while it writes and `idle` once quiet (the client never says it ended); SDK runs are left as they are."""

from __future__ import annotations

import time
import urllib.error

import numpy as np
import pytest
import visdom  # required: a missing client fails these tests

import paneboard
from helpers.waiting import wait_for
from paneboard.server.runs import record


def client(server, env: str) -> visdom.Visdom:
    return visdom.Visdom(server="http://127.0.0.1", port=server.port, env=env, use_incoming_socket=False,
                         raise_exceptions=True)


def test_a_visdom_clients_env_is_an_active_run_with_what_the_server_saw(server):
    before = time.time()
    v = client(server, "gan_zoo")
    v.line(Y=np.array([1.0, 2.0]), X=np.array([0, 1]), win="loss", opts={"title": "loss"})
    run = server.get_json("/api/v1/envs/gan_zoo/run")
    assert run["status"] == "active" and run["ended"] is None
    prov = run["provenance"]
    assert prov["source"] == "visdom" and prov["remote_addr"] == "127.0.0.1" == prov["host"]
    assert before <= run["started"] == prov["first_write"] <= prov["last_write"] <= time.time()
    # The runs listing and its query know the status.
    listed = server.get_json("/api/v1/runs?q=status:active")["runs"]
    assert [r["env"] for r in listed] == ["gan_zoo"] and listed[0]["provenance"]["host"] == "127.0.0.1"
    # A later write moves the last write on (the server notes it at most once a second per env).
    first = prov["last_write"]

    def later_write() -> float:
        v.line(Y=np.array([3.0]), X=np.array([2]), win="loss", update="append")
        last = server.get_json("/api/v1/envs/gan_zoo/run")["provenance"]["last_write"]
        return last if last > first else 0.0
    assert wait_for(later_write, timeout=10, every=0.3)
    assert server.get_json("/api/v1/envs/gan_zoo/panes/loss")["data"]  # its points are all there


def test_a_quiet_visdom_run_is_idle_and_active_again_when_it_writes(server, monkeypatch):
    monkeypatch.setattr(record, "IDLE_AFTER_S", 0.5)  # the quiet period (a minute by default), shortened
    v = client(server, "quiet")
    v.text("epoch 1", win="log")

    def status() -> str:
        return server.get_json("/api/v1/envs/quiet/run")["status"]
    assert wait_for(lambda: status() == "idle", timeout=10)
    run = server.get_json("/api/v1/envs/quiet/run")
    assert run["ended"] == run["provenance"]["last_write"]  # an idle run's end is its last write
    assert [r["env"] for r in server.get_json("/api/v1/runs?q=status:idle")["runs"]] == ["quiet"]

    def active_again() -> bool:
        v.text("epoch 2", win="log", append=True)
        return status() == "active"
    assert wait_for(active_again, timeout=10, every=0.3)


def test_an_sdk_run_written_to_by_a_visdom_client_stays_the_sdk_jobs(server):
    c = paneboard.Client(server=server.url, env="mixed")
    c.line([1.0, 2.0], win="sdk")
    assert c.flush(timeout=10)
    c.close_connection()
    assert wait_for(lambda: server.get_json("/api/v1/envs/mixed/run")["status"] == "finished")
    client(server, "mixed").line(Y=np.array([1.0]), X=np.array([0]), win="viz")
    run = server.get_json("/api/v1/envs/mixed/run")
    assert run["status"] == "finished" and run["provenance"].get("source") != "visdom"


def test_a_refused_visdom_write_makes_no_env_and_no_run(server):
    bad = {"eid": "refused", "win": "bad", "layout": {}, "data": "not a list of traces"}
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.http("POST", "/events", bad)
    assert refused.value.code == 400
    assert "refused" not in [e["name"] for e in server.get_json("/api/v1/envs")["envs"]]
