"""Runs that resume, rewind and fork, with the real SDK against a real in-process server."""

from __future__ import annotations

import paneboard
from helpers.waiting import wait_for


def client(server, env, **kw):
    return paneboard.Client(port=server.port, env=env, spool_dir=False, **kw)


def log(c, steps, value):
    for s in steps:
        c.line(X=[s], Y=[value(s)], win="loss", update="append")


def test_rewind_hides_later_points_and_keeps_them(server):
    c = client(server, "job")
    log(c, range(300), lambda s: 1.0 / (s + 1))
    c.rewind(250)
    log(c, range(251, 281), lambda s: -float(s))  # the second life, from its step-250 checkpoint
    assert c.flush(30)
    pts = server.series("job", "loss")["1"]
    assert [x for x, _ in pts] == list(range(281))  # every step once
    assert pts[260] == (260, -260.0) and pts[250] == (250, 1.0 / 251)
    rewinds = server.get_json("/api/v1/envs/job/rewinds")["rewinds"]
    assert [(r["step"], r["points"]) for r in rewinds] == [(250, 49)]
    hidden = server.get_json(f"/api/v1/envs/job/rewinds/{rewinds[0]['id']}")["traces"]
    assert hidden[0]["win"] == "loss" and hidden[0]["x"] == list(range(251, 300))  # recoverable
    c.close_connection(5)


def test_resume_reattaches_to_the_ended_run(server):
    c = client(server, "r")
    log(c, range(10), float)
    assert c.close_connection(10)
    first = wait_for(lambda: (r := server.get_json("/api/v1/envs/r/run")) and r["status"] == "finished" and r,
                     every=0.02)
    c2 = client(server, "r", resume=True)
    assert c2.flush(30)
    run = wait_for(lambda: (r := server.get_json("/api/v1/envs/r/run")) and r["status"] == "running" and r,
                   every=0.02)
    assert run["started"] == first["started"] and run["ended"] is None
    c2.close_connection(5)


def test_fork_shares_history_up_to_the_step(server):
    a = client(server, "a")
    log(a, range(200), float)
    assert a.flush(30)
    b = client(server, "b", fork_from="a", fork_step=100)
    log(b, range(101, 121), lambda s: -float(s))
    assert b.flush(30)
    pts = server.series("b", "loss")["1"]
    assert pts == [(s, float(s)) for s in range(101)] + [(s, -float(s)) for s in range(101, 121)]
    assert len(server.series("a", "loss")["1"]) == 200  # the source keeps its history
    run = server.get_json("/api/v1/envs/b/run")
    assert run["fork"] == {"from": "a", "step": 100} and run["status"] == "running"
    assert server.get_json("/api/v1/envs/b/rewinds")["rewinds"] == []  # a fork keeps no copy of a's later points
    b.close_connection(5)
    b2 = client(server, "b", fork_from="a", fork_step=100, resume=True)  # the forked job restarted: no error
    assert b2.flush(30) and b2.rejected == 0
    b2.close_connection(5)
    a.close_connection(5)
